"""From the intermediate form to parser states: one Compiler per JsonSchemaParser, memoising start states.

``start(node)`` is the state that reads one JSON value of ``node``; container contexts (objects.py,
arrays.py) ask it for the start of each child when that child begins, so recursive schemas compile lazily.
``check_all`` walks every node reachable from the root once at build time, so a combination that cannot be
enforced is refused with ``UnsupportedSchemaError`` before generation starts, never in the middle of it.
"""

from __future__ import annotations

from collections.abc import Callable

from ..core.charset import ANY, EMPTY, CharSet
from ..core.errors import Problem, SchemaError, UnsupportedSchemaError
from ..core.protocol import CharacterParser
from ..parsers.choice import CharTrie, ChoiceParser
from ..parsers.combinators import UnionParser
from ..parsers.dfa_ops import combine
from ..parsers.regex import CompiledRegex, RegexError, compile_boolean, compile_regex
from .config import JsonConfig
from .ecma.parse import EcmaSyntaxError, EcmaUnsupported
from .ecma.translate import Translation, literal_pattern, translate
from .formats.content import Content, ExcludeContent, LengthContent, RegexContent, TrieContent
from .formats.idn import IdnHostnameContent
from .formats.idn_email import IdnEmailContent
from .formats.idna import HostnameContent
from .formats.patterns import FORMAT_MAX_LENGTH, IDN_FORMATS, format_automaton
from .formats.regex_content import RegexSyntaxContent
from .numbers import NumberContext, NumberParser
from .schema.ir import AnyValue, Array, Boolean, Never, Node, Null, Number, Object, Ref, Side, String, Union, deref
from .schema.merge import Merger, Unsupported
from .strings import NON_ASCII_ESCAPES, StringParser
from .whitespace import Whitespace

_MISSING = object()
_NULL = ("null",)


def ecma_full(patterns: tuple[str, ...], keyword: str) -> Translation:
    """Full-match automaton texts for JSON Schema patterns (ECMA-262, searching; see ecma.py), over shared
    stand-ins; Unsupported (naming ``keyword``) for what they cannot express."""
    try:
        return translate(patterns)
    except (EcmaSyntaxError, EcmaUnsupported) as error:
        raise Unsupported(keyword, str(error)) from None


def string_content(node: String) -> Content | None:
    """The content automaton enforcing a string node (None: no string at all); raises Unsupported for
    combinations that could dead-end or whose automaton is too large."""
    if node.values is not None:
        return TrieContent(node.values)
    if not (node.patterns or node.formats or node.not_patterns or node.not_formats):  # lengths, excluded values
        if not node.excluded:
            return LengthContent(node.min_length, node.max_length)
        if node.max_length is None:
            return ExcludeContent(node.excluded, node.min_length)
    if "regex" in node.formats or "regex" in node.not_formats:
        return regex_syntax_content(node)
    if any(f in IDN_FORMATS for f in node.formats + node.not_formats):
        return idn_content(node)
    if node.excluded and not (node.not_patterns or node.not_formats or node.max_length is not None
                              or node.patterns or node.formats):  # fmt: skip
        return ExcludeContent(node.excluded, node.min_length)
    if not (node.patterns or node.formats or node.not_patterns or node.not_formats or node.excluded):
        return LengthContent(node.min_length, node.max_length)
    keyword = "format" if node.formats and not node.patterns else "pattern"
    wanted = tuple(dict.fromkeys(node.patterns))
    unwanted = tuple(dict.fromkeys(node.not_patterns)) + tuple(literal_pattern(v) for v in sorted(node.excluded))
    translation = ecma_full(wanted + unwanted, keyword)
    if any(text is None for text in translation.texts[: len(wanted)]):
        return None  # a pattern that matches nothing (an empty class)
    formats = [format_automaton(f) for f in node.formats]
    not_formats = [format_automaton(f) for f in node.not_formats]
    if translation.stand_ins and (formats or not_formats):
        raise Unsupported(keyword, "a pattern with a large Unicode class together with a format")
    full = list(dict.fromkeys([t for t in translation.texts[: len(wanted)] if t is not None] + formats))
    never = [t for t in translation.texts[len(wanted):] if t is not None] + not_formats
    stand_ins = translation.stand_ins
    if never or len(full) > 1 or not full:
        # several patterns, a pattern and a format, or what a `not` excludes: one product automaton
        try:
            clauses = ((tuple(full), tuple(never)),)
            # (stand-ins never meet a format: refused above)
            dfa = compile_boolean(clauses, stand_ins) if stand_ins else combine(clauses)  # type: ignore[arg-type]
        except RegexError as error:
            if "no string" in str(error):
                return None
            raise Unsupported(keyword if full else "not", str(error)) from None
        content = RegexContent(dfa, node.min_length, node.max_length)
        return content if content.satisfiable() else None
    try:
        dfa = full[0] if isinstance(full[0], CompiledRegex) else compile_regex(full[0], stand_ins)
    except RegexError as error:
        raise Unsupported(keyword, str(error)) from None
    caps = [FORMAT_MAX_LENGTH[f] for f in node.formats if f in FORMAT_MAX_LENGTH]
    high = min(caps + ([] if node.max_length is None else [node.max_length]), default=None)
    content = RegexContent(dfa, node.min_length, high)
    if not content.satisfiable():
        raise Unsupported(keyword, "no string matches the pattern within the length limits")
    if node.formats == ("hostname",) and not node.patterns:
        return HostnameContent(content)  # A-labels: punycode and IDNA2008 (formats_idna.py)
    return content


def idn_content(node: String) -> Content:
    """``idn-hostname``/``idn-email``: their own automata (formats_idn.py), alone on the string; a length
    limit, pattern, other format, excluded value or ``not`` with them is refused (lengths count code points
    there but octets of the A-label form here, and the automata are not product-combinable DFAs)."""
    if node.not_formats and any(f in IDN_FORMATS for f in node.not_formats):
        raise Unsupported("format", "'not' of an idn format")
    names = set(node.formats)
    if (len(names) > 1 or node.patterns or node.not_patterns or node.not_formats or node.excluded
            or node.min_length > 1 or node.max_length is not None):  # fmt: skip
        raise Unsupported("format", f"format {sorted(names)[0]!r} together with a pattern, another format, "
                          "a length limit or excluded values")
    return IdnEmailContent() if "idn-email" in names else IdnHostnameContent()


def regex_syntax_content(node: String) -> Content | None:
    """``format: regex``: the ECMA-262 syntax automaton (ecma_regex_content.py) with lengths or excluded
    values; a pattern or another format on the same string is refused."""
    if "regex" in node.not_formats:
        raise Unsupported("format", "'not' of format 'regex' (strings that are not regular expressions)")
    if node.patterns or node.not_patterns or len(set(node.formats)) > 1 or node.not_formats:
        raise Unsupported("format", "format 'regex' together with a pattern or another format")
    if node.max_length is not None and node.excluded:
        raise Unsupported("format", "format 'regex' with maxLength and excluded values (could end on one)")
    if node.max_length is not None and node.max_length < node.min_length:
        return None
    return RegexSyntaxContent(node.min_length, node.excluded, node.max_length)


_CONTEXTS: dict[type, Callable] = {}
"""Array and Object -> their context classes, loaded on first use: arrays.py and objects.py import this
module (an import statement inside ``_build`` would run the import machinery for every container node)."""


def _load_contexts() -> dict[type, Callable]:
    from .arrays import ArrayContext
    from .objects import ObjectContext

    _CONTEXTS.update({Array: ArrayContext, Object: ObjectContext})
    return _CONTEXTS


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
        self._any_value: CharacterParser | None = None

    def start(self, node: Node) -> CharacterParser | None:
        """The state before the first character of a value of ``node``; None if no value can match."""
        node = deref(node)
        hit = self._starts.get(id(node), _MISSING)
        if hit is not _MISSING:
            return hit  # type: ignore[return-value]
        self._starts[id(node)] = None  # a value cannot contain itself at its own first character
        try:
            try:
                state = self._build(node)
            except Unsupported as problem:
                if not self.lenient:
                    found = Problem(self.origin(node), problem.keyword, problem.reason)
                    raise UnsupportedSchemaError([found]) from None
                relaxed = relax(node)
                self._keep.append(relaxed)
                state = self._build(relaxed)
        except BaseException:
            # not "no value": the lenient retry (check_all) must build this node again, not read None
            self._starts.pop(id(node), None)
            raise
        self._keep.append(node)
        self._starts[id(node)] = state
        return state

    def _build(self, node: Node) -> CharacterParser | None:
        # the most frequent kinds first (the node classes of ir.py have no subclasses, so order is free)
        if isinstance(node, String):
            content = string_content(node)
            return None if content is None else StringParser(content, escapable=self.escapable)
        if isinstance(node, Object):
            return (_CONTEXTS or _load_contexts())[Object](node, self).start()
        if isinstance(node, Number):
            return NumberParser(NumberContext(node))
        if isinstance(node, Union):
            starts = [s for s in (self.start(option) for option in node.options) if s is not None]
            if not starts:
                return None
            return starts[0] if len(starts) == 1 else UnionParser(starts)
        if isinstance(node, Array):
            return (_CONTEXTS or _load_contexts())[Array](node, self).start()
        if isinstance(node, Boolean):
            words = tuple(sorted("true" if v else "false" for v in node.values))
            return ChoiceParser(_literal_trie(words) if words else words)  # (no value: ChoiceParser refuses it)
        if isinstance(node, Null):
            return ChoiceParser(_literal_trie(_NULL))
        if isinstance(node, Never):
            return None
        if isinstance(node, AnyValue):
            if self._any_value is None:  # every `true` of the schema reads the same values: one union state
                kinds = [Null(), Boolean(), Number(), String(), Array(), Object()]
                self._keep.extend(kinds)
                self._any_value = UnionParser([s for s in (self.start(k) for k in kinds) if s is not None])
            return self._any_value
        raise SchemaError(f"internal: unknown schema node {node!r}")

    def check_all(self, root: Node, lenient: bool = False) -> list[Problem]:
        """Compiles every node reachable from ``root`` so unsupported combinations surface now; returns
        them as ``Problem``s. With ``lenient`` such nodes are compiled without the offending keyword."""
        problems: list[Problem] = []
        seen: set[int] = set()
        todo = [root]
        while todo:
            node = todo.pop()
            if type(node) is Ref:
                node = deref(node)
            if id(node) in seen:
                continue
            seen.add(id(node))
            if isinstance(node, AnyValue):
                # nothing in "any value" can be unsupported, and it has no sub-schemas: its union of the six
                # kinds (a third of a small schema's build) is built when a value first needs it
                continue
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


_LITERAL_TRIES: dict[tuple[str, ...], CharTrie] = {}


def _literal_trie(words: tuple[str, ...]) -> CharTrie:
    """The trie of ``null`` or of a set of booleans, shared by every schema (a handful of them, read-only)."""
    hit = _LITERAL_TRIES.get(words)
    if hit is None:
        hit = _LITERAL_TRIES[words] = CharTrie(words)
    return hit


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
    if isinstance(node, Object):
        out = []
        for side in node.sides:
            out.extend(schema for _, schema in side.properties)
            out.extend(schema for _, schema in side.patterns)
            out.append(side.additional)
        return out + ([node.property_names] if node.property_names is not None else [])
    if isinstance(node, Union):
        return list(node.options)
    if isinstance(node, Array):
        out = [*node.prefix, node.items]
        return out + ([node.contains] if node.contains is not None else []) + [c for c, _ in node.also_contains]
    if isinstance(node, Ref):
        return [node.get()]
    return []
