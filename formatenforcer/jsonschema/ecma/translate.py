"""JSON Schema patterns (parsed by ecma/parse.py) turned into full-match regex text for the automata and Python.

Patterns *search* (``"a+"`` matches ``"xxaayy"``); the automata match in full. Per top-level alternative,
``^`` and ``$`` at its ends anchor it and an unanchored end gets ``[\\s\\S]*`` (``^a|b$``: "starts with a or
ends with b"); anchors elsewhere, ``\\b``/``\\B``, lookaround and back-references raise ``EcmaUnsupported``.
Every character matcher is written as an explicit class that interegular and Python's ``re`` read alike, so
``\\d`` stays ASCII and ``$`` does not match before a final newline, as in JavaScript.

Large classes (``\\p{L}``, ``[\\u4e00-\\u9fff]``) would make interegular list every character; then the
classes are partitioned into blocks, each block is spelled by one stand-in character (its first), and the
automaton maps the stand-in back to its block (``regex.compile_regex(text, stand_ins)``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ...core.cache_release import register_memo
from ...core.charset import ANY, CharSet
from ...parsers.regex import StandIns
from .classes import SURROGATES
from .parse import EcmaUnsupported, parse

_CHECKED: dict[str, str | None] = {}
register_memo(_CHECKED.clear)  # emptied when a burst of enforcers ends (core/cache_release.py)
"""pattern -> ``check_pattern``'s answer for a valid pattern (each is asked twice per schema, and schemas
repeat patterns; bounded)."""
_UNCHECKED = object()


def check_pattern(pattern: str) -> str | None:
    """For ``pattern``/``patternProperties``: raises EcmaSyntaxError for an invalid pattern; returns what is
    not supported (None when the pattern translates)."""
    hit = _CHECKED.get(pattern, _UNCHECKED)
    if hit is not _UNCHECKED:
        return hit  # type: ignore[return-value]
    problem: str | None = None
    try:
        _search_parts(parse(pattern, True))
    except EcmaUnsupported as unsupported:
        problem = str(unsupported)
    if len(_CHECKED) >= 1024:
        _CHECKED.clear()
    _CHECKED[pattern] = problem
    return problem


def _splice(node: tuple) -> list[tuple]:
    """A sequence's items with nested plain sequences flattened (groups are transparent here)."""
    if node[0] != "seq":
        return [node]
    out: list[tuple] = []
    for item in node[1]:
        out.extend(_splice(item))
    return out


def _alternatives(node: tuple) -> list[list[tuple]]:
    items = _splice(node)
    if len(items) == 1 and items[0][0] == "alt":
        return [alt for option in items[0][1] for alt in _alternatives(option)]
    return [items]


def _check_inner(node: tuple) -> None:
    kind = node[0]
    if kind in ("bol", "eol"):
        raise EcmaUnsupported("an anchor (^, $) inside a group or in the middle of a pattern")
    if kind == "unsupported":
        raise EcmaUnsupported(node[1])
    if kind in ("seq", "alt"):
        for item in node[1]:
            _check_inner(item)
    elif kind == "rep":
        _check_inner(node[1])


def _search_parts(root: tuple) -> list[tuple[bool, list[tuple], bool]]:
    """(anchored at the start, body items, anchored at the end) per top-level alternative."""
    parts = []
    for items in _alternatives(root):
        start = end = 0
        while start < len(items) and items[start][0] == "bol":
            start += 1
        stop = len(items)
        while stop > start and items[stop - 1][0] == "eol":
            stop -= 1
            end += 1
        body = items[start:stop]
        for item in body:
            _check_inner(item)
        parts.append((start > 0, body, end > 0))
    return parts


_BIG = 1024
"""A class with more characters than this, whose complement is as large, is spelled with stand-ins."""


def _sets(node: tuple, out: list[CharSet]) -> None:
    if node[0] == "set":
        out.append(node[1] - SURROGATES)
    elif node[0] in ("seq", "alt"):
        for item in node[1]:
            _sets(item, out)
    elif node[0] == "rep":
        _sets(node[1], out)


def _char(cp: int) -> str:
    ch = chr(cp)
    if cp < 0x80:
        return ch if ch.isalnum() else f"\\x{cp:02x}"
    return ch


class _Emitter:
    """Writes AST nodes as regex text that both interegular and Python's ``re`` read the same way."""

    def __init__(self, blocks: list[CharSet] | None) -> None:
        self.blocks = blocks

    def chars(self, chars: CharSet) -> str | None:
        chars = chars - SURROGATES
        if not chars:
            return None
        if chars == ANY - SURROGATES:
            return r"[\s\S]"
        if self.blocks is not None:
            reps = [b.intervals[0][0] for b in self.blocks if chr(b.intervals[0][0]) in chars]
            return "[" + "".join(_char(cp) for cp in reps) + "]"
        negate = chars.complement() - SURROGATES
        if negate.size() < chars.size():
            return "[^" + _ranges(negate) + "]"
        return "[" + _ranges(chars) + "]"

    def node(self, node: tuple) -> str | None:
        kind = node[0]
        if kind == "set":
            return self.chars(node[1])
        if kind == "seq":
            parts = [self.node(item) for item in node[1]]
            return None if any(p is None for p in parts) else "".join(parts)
        if kind == "alt":
            parts = [p for p in (self.node(item) for item in node[1]) if p is not None]
            return None if not parts else "(?:" + "|".join(parts) + ")"
        if kind == "rep":
            _, inner, lo, hi = node
            text = self.node(inner)
            if text is None:
                return "" if lo == 0 else None
            if hi == 0:
                return ""
            bound = {(0, None): "*", (1, None): "+", (0, 1): "?"}.get((lo, hi))
            if bound is None:
                bound = f"{{{lo}}}" if lo == hi else f"{{{lo},}}" if hi is None else f"{{{lo},{hi}}}"
            return f"(?:{text}){bound}"
        raise EcmaUnsupported(str(node))

    def search(self, root: tuple) -> str | None:
        options = []
        for start, body, end in _search_parts(root):
            text = self.node(("seq", body))
            if text is not None:
                options.append(("" if start else r"[\s\S]*") + f"(?:{text})" + ("" if end else r"[\s\S]*"))
        return "|".join(options) if options else None


def _ranges(chars: CharSet) -> str:
    return "".join(_char(lo) if lo == hi else f"{_char(lo)}-{_char(hi)}" for lo, hi in chars.intervals)


def _partition(sets: list[CharSet]) -> list[CharSet]:
    """The blocks of characters that every set either holds whole or not at all (characters in no set are
    left out: they behave alike, as the automaton's "anything else")."""
    points = sorted({p for s in sets for lo, hi in s.intervals for p in (lo, hi + 1)})
    blocks: dict[tuple[int, ...], list[tuple[int, int]]] = {}
    for a, b in zip(points, points[1:]):
        ch = chr(a)
        signature = tuple(i for i, s in enumerate(sets) if ch in s)
        if signature:
            blocks.setdefault(signature, []).append((a, b - 1))
    return sorted((CharSet(iv) for iv in blocks.values()), key=lambda block: block.intervals[0][0])


@dataclass(frozen=True)
class Translation:
    """Full-match texts, one per input (None: matches nothing), all over the same ``stand_ins``."""

    texts: tuple[str | None, ...]
    stand_ins: StandIns


def literal_pattern(text: str) -> str:
    """An ECMA-262 pattern matching exactly ``text`` (for values a ``not``/``uniqueItems`` excludes)."""
    return "^" + "".join(f"\\u{{{ord(c):x}}}" for c in text) + "$"


@lru_cache(maxsize=512)
def translate(patterns: tuple[str, ...]) -> Translation:
    """Full-match automaton texts for JSON Schema (searching, lenient) patterns, with shared stand-ins when
    some class is too large to list. Raises EcmaSyntaxError / EcmaUnsupported."""
    roots = [parse(p, True) for p in patterns]
    sets: list[CharSet] = []
    for root in roots:
        _search_parts(root)
        _sets(root, sets)
    big = any(s.size() > _BIG and (ANY - SURROGATES - s).size() > _BIG for s in sets)
    blocks = _partition(list(dict.fromkeys(sets))) if big else None
    emitter = _Emitter(blocks)
    texts = tuple(emitter.search(root) for root in roots)
    stand_ins: StandIns = ()
    if blocks is not None:
        stand_ins = tuple((chr(b.intervals[0][0]), b.intervals) for b in blocks)
    return Translation(texts, stand_ins)


@lru_cache(maxsize=512)
def python_regex(pattern: str) -> re.Pattern[str] | None:
    """A compiled Python regex that full-matches what the JSON Schema pattern searches for (no stand-ins:
    Python's ``re`` reads large ranges directly); None when the pattern matches nothing."""
    text = _Emitter(None).search(parse(pattern, True))
    return None if text is None else re.compile(text)


def search(pattern: str, text: str) -> bool:
    """Whether the JSON Schema ``pattern`` matches somewhere in ``text`` (ECMA-262 semantics)."""
    compiled = python_regex(pattern)
    return compiled is not None and compiled.fullmatch(text) is not None


__all__ = ["Translation", "check_pattern", "literal_pattern", "python_regex", "search", "translate"]
