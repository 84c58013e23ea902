"""JSON Schema ``pattern``s (ECMA-262 regular expressions, unicode mode) turned into what the automata read.

JSON Schema says patterns are ECMA-262 regexes and that they *search* (``"a+"`` matches ``"xxaayy"``); the
automata (regex.py, interegular) and the enum filter (Python ``re``) read another dialect and match in full.
So a pattern is parsed here by the ECMA-262 grammar (unicode mode, as the 2020-12 test suite expects:
``\\p{Letter}`` is a property class, ``\\a`` a syntax error), and every character matcher becomes an explicit
set (ecma_classes.py), so ``\\d`` is ASCII, ``\\s`` holds U+FEFF and ``$`` does not match before a final
newline, as in JavaScript. Then the search is made a full match:

- ``^`` and ``$`` are allowed at the ends of each top-level alternative (``^a|b$``: "starts with a or ends
  with b"); an unanchored end gets ``[\\s\\S]*``. Anchors elsewhere, ``\\b``/``\\B``, lookaround and back-
  references are not regular (or not handled): ``EcmaUnsupported`` names them.
- ``lenient`` (used for ``pattern``; ``format: regex`` is strict) also reads what JavaScript without the
  ``u`` flag reads as a literal: an escaped punctuation character (``\\-``, ``\\@``) and a lone ``]``, ``{``
  or ``}``; escaped letters keep unicode mode's meaning or error.

Large classes (``\\p{L}``, ``[\\u4e00-\\u9fff]``) would make interegular list every character; then the
classes are partitioned into blocks, each block is spelled by one stand-in character (its first), and the
automaton maps the stand-in back to its block (``regex.compile_regex(text, stand_ins)``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ..charset import ANY, CharSet
from ..regex import StandIns
from .ecma_classes import DOT, ESCAPE_CLASSES, SURROGATES, property_class


class EcmaSyntaxError(ValueError):
    """Not an ECMA-262 (unicode mode) regular expression."""


class EcmaUnsupported(ValueError):
    """A valid ECMA-262 regular expression using something a finite automaton here does not express."""


SYNTAX_CHARACTERS = "^$\\.*+?()[]{}|"
_CONTROL = {"f": 0x0C, "n": 0x0A, "r": 0x0D, "t": 0x09, "v": 0x0B}
_HEX = "0123456789abcdefABCDEF"

# AST: ("set", CharSet) | ("seq", [n]) | ("alt", [n]) | ("rep", n, lo, hi|None) | ("bol",) | ("eol",)
#      | ("unsupported", what)


class _Parser:
    def __init__(self, text: str, lenient: bool) -> None:
        self.s, self.i, self.lenient = text, 0, lenient
        self.groups, self.names, self.refs, self.named_refs = 0, set(), [], []

    def error(self, what: str) -> EcmaSyntaxError:
        return EcmaSyntaxError(f"{what} at offset {self.i} of {self.s!r}")

    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.s[j] if j < len(self.s) else ""

    def parse(self) -> tuple:
        node = self.disjunction()
        if self.i < len(self.s):
            raise self.error("unmatched ')'")
        if self.refs and max(self.refs) > self.groups:
            raise EcmaSyntaxError(f"back-reference \\{max(self.refs)} to a missing group in {self.s!r}")
        for name in self.named_refs:
            if name not in self.names:
                raise EcmaSyntaxError(f"\\k<{name}> names no group in {self.s!r}")
        return node

    def disjunction(self) -> tuple:
        alts = [self.alternative()]
        while self.peek() == "|":
            self.i += 1
            alts.append(self.alternative())
        return alts[0] if len(alts) == 1 else ("alt", alts)

    def alternative(self) -> tuple:
        items = []
        while self.i < len(self.s) and self.peek() not in "|)":
            items.append(self.term())
        return ("seq", items)

    def term(self) -> tuple:
        s, i = self.s, self.i
        if s[i] in "^$":
            self.i += 1
            return ("bol",) if s[i] == "^" else ("eol",)
        if s.startswith(("\\b", "\\B"), i):
            self.i += 2
            return ("unsupported", "word-boundary assertions (\\b, \\B)")
        for opener in ("(?=", "(?!", "(?<=", "(?<!"):
            if s.startswith(opener, i):
                self.i += len(opener)
                self.disjunction()
                self.expect(")")
                return ("unsupported", "lookaround assertions")
        return self.quantifier(self.atom())

    def expect(self, ch: str) -> None:
        if self.peek() != ch:
            raise self.error(f"expected {ch!r}")
        self.i += 1

    def quantifier(self, atom: tuple) -> tuple:
        c = self.peek()
        if c in ("*", "+", "?"):
            self.i += 1
            lo, hi = {"*": (0, None), "+": (1, None), "?": (0, 1)}[c]
        elif c == "{":
            m = re.compile(r"\{([0-9]+)(,([0-9]*))?\}").match(self.s, self.i)
            if m is None:
                if self.lenient:
                    return atom  # Annex B: a brace that starts no quantifier is a literal
                raise self.error("'{' starts no quantifier")
            lo = int(m.group(1))
            hi = lo if m.group(2) is None else (int(m.group(3)) if m.group(3) else None)
            if hi is not None and hi < lo:
                raise self.error("quantifier range out of order")
            self.i = m.end()
        else:
            return atom
        if self.peek() == "?":
            self.i += 1  # lazy: same language
        return ("rep", atom, lo, hi)

    def atom(self) -> tuple:
        s, i, c = self.s, self.i, self.s[self.i]
        if c == ".":
            self.i += 1
            return ("set", DOT)
        if c == "(":
            if s.startswith("(?:", i):
                self.i += 3
            elif s.startswith("(?<", i):
                self.i += 3
                name = self.group_name()
                if name in self.names:
                    raise self.error(f"duplicate group name {name!r}")
                self.names.add(name)
                self.groups += 1
            elif s.startswith("(?", i):
                raise self.error("invalid group ('(?' must be followed by ':', '=', '!', '<=', '<!' or '<name>')")
            else:
                self.i += 1
                self.groups += 1
            node = self.disjunction()
            self.expect(")")
            return node
        if c == "[":
            return ("set", self.char_class())
        if c == "\\":
            return self.atom_escape()
        if c in "*+?{" and not (self.lenient and c == "{"):
            raise self.error(f"nothing to repeat before {c!r}")
        if c in ")]}" and not (self.lenient and c in "]}"):
            raise self.error(f"lone {c!r}")
        self.i += 1
        return ("set", CharSet([(ord(c), ord(c))]))

    def group_name(self) -> str:
        m = re.compile(r"[^\W\d][\w$]*|\$[\w$]*").match(self.s, self.i)
        name = m.group(0) if m else ""
        if not name or not (name[0] in "$_" or name[0].isidentifier()):
            raise self.error("invalid group name")
        self.i = m.end()  # type: ignore[union-attr]
        self.expect(">")
        return name

    def atom_escape(self) -> tuple:
        self.i += 1
        c = self.peek()
        if not c:
            raise self.error("'\\' at the end")
        if c in "123456789":
            m = re.compile(r"[0-9]+").match(self.s, self.i)
            self.refs.append(int(m.group(0)))  # type: ignore[union-attr]
            self.i = m.end()  # type: ignore[union-attr]
            return ("unsupported", "back-references (\\1, \\k<name>)")
        if c == "k":
            self.i += 1
            self.expect("<")
            m = re.compile(r"[^>]*").match(self.s, self.i)
            self.named_refs.append(m.group(0))  # type: ignore[union-attr]
            self.i = m.end()  # type: ignore[union-attr]
            self.expect(">")
            return ("unsupported", "back-references (\\1, \\k<name>)")
        value = self.class_or_char_escape(in_class=False)
        return ("set", value if isinstance(value, CharSet) else CharSet([(value, value)]))

    def class_or_char_escape(self, in_class: bool) -> CharSet | int:
        """After a backslash: a class (``\\d``, ``\\p{L}``) or one code point."""
        s, c = self.s, self.peek()
        if not c:
            raise self.error("'\\' at the end")
        self.i += 1
        if c in ESCAPE_CLASSES:
            return ESCAPE_CLASSES[c]
        if c in "pP":
            m = re.compile(r"\{([A-Za-z0-9_=]+)\}").match(s, self.i)
            if m is None:
                raise self.error("\\p must be followed by {property}")
            chars = property_class(m.group(1))
            if chars is None:
                raise EcmaUnsupported(f"Unicode property \\p{{{m.group(1)}}} (not in Python's unicodedata tables)")
            self.i = m.end()
            return chars if c == "p" else ANY - chars
        if c in _CONTROL:
            return _CONTROL[c]
        if c == "c":
            letter = self.peek()
            if not ("a" <= letter <= "z" or "A" <= letter <= "Z"):
                raise self.error("\\c must be followed by an ASCII letter")
            self.i += 1
            return ord(letter) % 32
        if c == "0":
            if self.peek() in tuple("0123456789"):
                raise self.error("\\0 followed by a digit")
            return 0
        if c == "x":
            m = re.compile(r"[0-9a-fA-F]{2}").match(s, self.i)
            if m is None:
                raise self.error("\\x needs two hex digits")
            self.i = m.end()
            return int(m.group(0), 16)
        if c == "u":
            return self.unicode_escape()
        if in_class and c == "b":
            return 0x08
        if in_class and c == "-":
            return 0x2D
        if c in SYNTAX_CHARACTERS or c == "/":
            return ord(c)
        if self.lenient and not c.isalnum():
            return ord(c)  # Annex B identity escape of punctuation (\- \@ ...)
        raise self.error(f"invalid escape \\{c}")

    def unicode_escape(self) -> int:
        s = self.s
        m = re.compile(r"\{([0-9a-fA-F]+)\}").match(s, self.i)
        if m is not None:
            value = int(m.group(1), 16)
            if value > 0x10FFFF:
                raise self.error("code point above U+10FFFF")
            self.i = m.end()
            return value
        m = re.compile(r"[0-9a-fA-F]{4}").match(s, self.i)
        if m is None:
            raise self.error("\\u needs four hex digits or {code point}")
        self.i = m.end()
        value = int(m.group(0), 16)
        low = re.compile(r"\\u(d[c-f][0-9a-f]{2})", re.IGNORECASE).match(s, self.i)
        if 0xD800 <= value <= 0xDBFF and low is not None:
            self.i = low.end()
            return 0x10000 + (value - 0xD800) * 0x400 + (int(low.group(1), 16) - 0xDC00)
        return value

    def char_class(self) -> CharSet:
        self.i += 1
        negated = self.peek() == "^"
        if negated:
            self.i += 1
        out: list[tuple[int, int]] = []
        while True:
            c = self.peek()
            if not c:
                raise self.error("unterminated character class")
            if c == "]":
                self.i += 1
                break
            low = self.class_atom()
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                self.i += 1
                high = self.class_atom()
                if isinstance(low, CharSet) or isinstance(high, CharSet):
                    raise self.error("a class escape cannot bound a range")
                if low > high:
                    raise self.error("character class range out of order")
                out.append((low, high))
            elif isinstance(low, CharSet):
                out.extend(low.intervals)
            else:
                out.append((low, low))
        chars = CharSet(out)
        return ANY - chars if negated else chars

    def class_atom(self) -> CharSet | int:
        c = self.peek()
        if c == "\\":
            self.i += 1
            if self.peek() in tuple("123456789") or self.peek() == "k":
                raise self.error("back-reference inside a character class")
            return self.class_or_char_escape(in_class=True)
        self.i += 1
        return ord(c)


@lru_cache(maxsize=512)
def parse(pattern: str, lenient: bool = False) -> tuple:
    """The AST of an ECMA-262 (unicode mode) pattern; EcmaSyntaxError when it is not one. Constructs that are
    valid but not translated appear as ``("unsupported", what)`` nodes."""
    return _Parser(pattern, lenient).parse()


def is_valid(pattern: str) -> bool:
    """Whether ``pattern`` is a valid ECMA-262 regular expression in unicode mode (what ``format: regex``
    asserts), as far as the property tables here know (see ecma_classes.py)."""
    try:
        parse(pattern)
    except EcmaSyntaxError:
        return False
    except EcmaUnsupported:
        return False  # an unknown \p{...}: the syntax checker (ecma_syntax.py) refuses it too
    return True


def check_pattern(pattern: str) -> str | None:
    """For ``pattern``/``patternProperties``: raises EcmaSyntaxError for an invalid pattern; returns what is
    not supported (None when the pattern translates)."""
    try:
        _search_parts(parse(pattern, True))
    except EcmaUnsupported as problem:
        return str(problem)
    return None


# --- from the AST to full-match regex text --------------------------------------------------------------


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


__all__ = ["EcmaSyntaxError", "EcmaUnsupported", "Translation", "check_pattern", "is_valid", "literal_pattern",
           "parse", "python_regex", "search", "translate"]  # fmt: skip
