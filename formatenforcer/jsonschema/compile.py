"""From the intermediate form to parser states: one Compiler per JsonSchemaParser, memoising start states.

``start(node)`` is the state that reads one JSON value of ``node``; container contexts (objects.py,
arrays.py) ask it for the start of each child when that child begins, so recursive schemas compile lazily.
``check_all`` walks every node reachable from the root once at build time, so a combination that cannot be
enforced is refused with ``UnsupportedSchemaError`` before generation starts, never in the middle of it.
"""

from __future__ import annotations

from collections.abc import Callable

from ..charset import ANY, EMPTY, CharSet
from ..choice import ChoiceParser
from ..combinators import UnionParser
from ..dfa_ops import combine
from ..errors import SchemaError, UnsupportedSchemaError
from ..parser import CharacterParser
from ..regex import CompiledRegex, RegexError, compile_regex
from .config import JsonConfig
from .content import Content, ExcludeContent, LengthContent, RegexContent, TrieContent
from .formats import FORMAT_MAX_LENGTH, format_automaton
from .formats_idna import HostnameContent
from .ir import AnyValue, Array, Boolean, Never, Node, Null, Number, Object, Ref, Side, String, Union, deref
from .merge import Merger, Unsupported
from .numbers import NumberContext, NumberParser
from .strings import NON_ASCII_ESCAPES, StringParser
from .whitespace import Whitespace

_MISSING = object()
_NULL = ("null",)


def search_to_full(pattern: str) -> str:
    """A full-match pattern for JSON Schema's unanchored ``pattern`` (a search): ``.*`` is added on each side
    that the pattern does not anchor itself."""
    head = "" if pattern.startswith("^") else r"[\s\S]*"
    body = pattern[1:] if pattern.startswith("^") else pattern
    anchored_end = body.endswith("$") and not body.endswith("\\$")
    body = body[:-1] if anchored_end else body
    tail = "" if anchored_end else r"[\s\S]*"
    return f"{head}(?:{body}){tail}"


def literal_regex(text: str) -> str:
    """A full-match regex for exactly ``text``, spelled with escapes interegular reads (no ``re.escape``)."""
    out = []
    for ch in text:
        code = ord(ch)
        out.append(ch if ch.isalnum() else f"\\x{code:02x}" if code < 256 else f"[{ch}]")
    return "".join(out)


def string_content(node: String) -> Content | None:
    """The content automaton enforcing a string node (None: no string at all); raises Unsupported for
    combinations that could dead-end or whose automaton is too large."""
    if node.values is not None:
        return TrieContent(node.values)
    never: list[str | CompiledRegex] = [search_to_full(p) for p in node.not_patterns]
    never += [format_automaton(f) for f in node.not_formats]
    if node.excluded and not (never or node.max_length is not None or node.patterns or node.formats):
        return ExcludeContent(node.excluded, node.min_length)
    full: list[str | CompiledRegex] = [search_to_full(p) for p in node.patterns]
    full += [format_automaton(f) for f in node.formats]
    if not full and not never and not node.excluded:
        return LengthContent(node.min_length, node.max_length)
    keyword = "format" if node.formats and not node.patterns else "pattern"
    if never or node.excluded or len(set(full)) > 1:
        # several patterns, a pattern and a format, or what a `not` excludes: one product automaton
        never += [literal_regex(v) for v in sorted(node.excluded)]
        try:
            dfa = combine(((tuple(dict.fromkeys(full)), tuple(dict.fromkeys(never))),))
        except RegexError as error:
            if "no string" in str(error):
                return None
            raise Unsupported(keyword if full else "not", str(error)) from None
        content = RegexContent(dfa, node.min_length, node.max_length)
        return content if content._can_finish(0, node.min_length, node.max_length) else None
    try:
        dfa = full[0] if isinstance(full[0], CompiledRegex) else compile_regex(full[0])
    except RegexError as error:
        raise Unsupported("pattern", str(error)) from None
    caps = [FORMAT_MAX_LENGTH[f] for f in node.formats if f in FORMAT_MAX_LENGTH]
    high = min(caps + ([] if node.max_length is None else [node.max_length]), default=None)
    content = RegexContent(dfa, node.min_length, high)
    if not content._can_finish(0, node.min_length, high):
        raise Unsupported("pattern", "no string matches the pattern within the length limits")
    if node.formats == ("hostname",) and not node.patterns:
        return HostnameContent(content)  # A-labels: punycode and IDNA2008 (formats_idna.py)
    return content


class Compiler:
    """Start states by node, plus the contexts they share. Per schema; never shared between schemas."""

    def __init__(self, config: JsonConfig, merger: Merger, origin: Callable[[Node], str]) -> None:
        self.lenient = False
        self.config = config
        self.ws = Whitespace(config)
        self.escapable = ANY if config.ascii_escapes else NON_ASCII_ESCAPES
        self.merger = merger
        self.origin = origin
        self._starts: dict[int, CharacterParser | None] = {}
        self._keep: list[object] = []

    def start(self, node: Node) -> CharacterParser | None:
        """The state before the first character of a value of ``node``; None if no value can match."""
        node = deref(node)
        hit = self._starts.get(id(node), _MISSING)
        if hit is not _MISSING:
            return hit  # type: ignore[return-value]
        self._starts[id(node)] = None  # a value cannot contain itself at its own first character
        try:
            state = self._build(node)
        except Unsupported as problem:
            if not self.lenient:
                raise UnsupportedSchemaError([(self.origin(node), problem.keyword)]) from None
            relaxed = relax(node)
            self._keep.append(relaxed)
            state = self._build(relaxed)
        self._keep.append(node)
        self._starts[id(node)] = state
        return state

    def _build(self, node: Node) -> CharacterParser | None:
        from .arrays import ArrayContext
        from .objects import ObjectContext

        if isinstance(node, Never):
            return None
        if isinstance(node, AnyValue):
            kinds = [Null(), Boolean(), Number(), String(), Array(), Object()]
            self._keep.extend(kinds)
            return UnionParser([s for s in (self.start(k) for k in kinds) if s is not None])
        if isinstance(node, Null):
            return ChoiceParser(["null"])
        if isinstance(node, Boolean):
            return ChoiceParser(sorted("true" if v else "false" for v in node.values))
        if isinstance(node, Number):
            return NumberParser(NumberContext(node))
        if isinstance(node, String):
            content = string_content(node)
            return None if content is None else StringParser(content, escapable=self.escapable)
        if isinstance(node, Array):
            return ArrayContext(node, self).start()
        if isinstance(node, Object):
            return ObjectContext(node, self).start()
        if isinstance(node, Union):
            starts = [s for s in (self.start(option) for option in node.options) if s is not None]
            if not starts:
                return None
            return starts[0] if len(starts) == 1 else UnionParser(starts)
        raise SchemaError(f"internal: unknown schema node {node!r}")

    def check_all(self, root: Node, lenient: bool = False) -> list[tuple[str, str]]:
        """Compiles every node reachable from ``root`` so unsupported combinations surface now; returns
        them as (pointer, keyword). With ``lenient`` such nodes are compiled without the offending keyword."""
        problems: list[tuple[str, str]] = []
        seen: set[int] = set()
        todo = [root]
        while todo:
            node = deref(todo.pop())
            if id(node) in seen:
                continue
            seen.add(id(node))
            try:
                self.start(node)
            except UnsupportedSchemaError as error:
                problems.extend(error.problems)
                if lenient:
                    self.lenient = True
                    self._starts.pop(id(node), None)
                    self.start(node)
                    self.lenient = False
            todo.extend(children(node))
        self.lenient = lenient
        return problems


def union_memo(memo: dict, parts: tuple) -> CharSet:
    """The union of CharSets ``parts``, memoised in ``memo`` (a container context's: the same few unions
    recur at every step, and building a CharSet is the expensive part of a step)."""
    if len(parts) == 1:
        return parts[0]
    hit = memo.get(parts)
    if hit is None:
        intervals = [iv for part in parts for iv in part.intervals]
        hit = memo[parts] = CharSet(intervals) if intervals else EMPTY
        if len(memo) > 4096:
            memo.clear()
    return hit


def relax(node: Node) -> Node:
    """``node`` without the constraints that made it unsupported (lenient mode)."""
    if isinstance(node, String):
        return String(node.min_length, node.max_length)
    if isinstance(node, Array):
        return Array(node.prefix, node.items, node.min_items, node.max_items)
    if isinstance(node, Object):
        sides = tuple(Side(s.properties, s.patterns, AnyValue()) for s in node.sides)
        return Object(sides, node.required, None, node.min_properties, node.max_properties, node.dependent_required)
    return AnyValue()


def children(node: Node) -> list[Node]:
    """The sub-schemas a node refers to (for the build-time walk)."""
    if isinstance(node, Union):
        return list(node.options)
    if isinstance(node, Array):
        out = [*node.prefix, node.items]
        return out + ([node.contains] if node.contains is not None else [])
    if isinstance(node, Object):
        out = []
        for side in node.sides:
            out.extend(schema for _, schema in side.properties)
            out.extend(schema for _, schema in side.patterns)
            out.append(side.additional)
        return out + ([node.property_names] if node.property_names is not None else [])
    if isinstance(node, Ref):
        return [node.get()]
    return []
