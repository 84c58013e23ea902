"""From the intermediate form to parser states: one Compiler per JsonSchemaParser, memoising start states.

``start(node)`` is the state that reads one JSON value of ``node``; container contexts (objects.py,
arrays.py) ask it for the start of each child when that child begins, so recursive schemas compile lazily.
``check_all`` walks every node reachable from the root once at build time, so a combination that cannot be
enforced is refused with ``UnsupportedSchemaError`` before generation starts, never in the middle of it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable

from ..core.cache_release import register_memo
from ..core.charset import ANY
from ..core.errors import Problem, SchemaError, UnsupportedSchemaError
from ..core.protocol import CharacterParser
from ..parsers.build_budget import over_budget
from ..parsers.choice import CharTrie, ChoiceParser
from ..parsers.combinators import UnionParser
from ..parsers.regex import timed_out
from .arrays import ArrayContext
from .config import JsonConfig
from .finite import FiniteCheck
from .numbers import NumberParser
from .objects import ObjectContext
from .schema.ir import (
    AnyValue,
    Array,
    Boolean,
    Never,
    Node,
    Null,
    Number,
    Object,
    Ref,
    Side,
    String,
    Union,
    Unsupported,
    deref,
)
from .schema.merge import Merger
from .schema.number_bounds import NumberContext
from .string_content import string_content
from .strings import NON_ASCII_ESCAPES, StringParser
from .whitespace import Whitespace

_MISSING = object()
_CONTAINING = frozenset({Object, Array, Union, Never})
"""The node kinds whose finiteness ``_start_new`` checks (finite.py): a value of the others holds no value."""
_NULL = ("null",)


class _Scope:
    """One ``Compiler.settled_start`` in progress."""

    __slots__ = ("depth", "read", "unsettled")

    def __init__(self, depth: int) -> None:
        self.depth = depth
        """How many starts were being built when it began (the flags of ``Compiler._unsettled`` it owns)."""
        self.read = False
        """Whether its start read a placeholder, directly or through a start it built."""
        self.unsettled: list[int] = []
        """ids of the starts built in it that read a placeholder (dropped when it returns)."""


class Compiler:
    """Start states by node, plus the contexts they share. Per schema, except the compiler of any value (one
    per ``JsonConfig``, ``any_value_start``), whose states every schema shares."""

    def __init__(self, config: JsonConfig, merger: Merger, origin: Callable[[Node], str]) -> None:
        self.lenient = False
        self.config = config
        self.ws = Whitespace(config)
        self.escapable = ANY if config.ascii_escapes else NON_ASCII_ESCAPES
        self.merger = merger
        self.origin = origin
        self._starts: dict[int, CharacterParser | None] = {}
        self._building: set[int] = set()
        """ids of the nodes whose start is being built (``start`` answers None for them meanwhile)."""
        self._unsettled: list[bool] = []
        """One flag per ``start`` being built (innermost last): whether its build read a placeholder None
        (of a node being built) inside the innermost ``settled_start``, or an unsettled start (below)."""
        self._scopes: list[_Scope] = []
        """The ``settled_start`` calls in progress (innermost last)."""
        self._unsettled_ids: set[int] = set()
        """ids of the starts built inside a ``settled_start`` in progress that read a placeholder: kept while
        it runs (a second ask in the same build reads them as unsettled too), dropped when it returns."""
        self._keep: list[object] = []
        self._any_value: CharacterParser | None = None
        self._shares_any = False
        """Whether this is the compiler of "any value" itself (``any_value_start``), which builds the union."""
        self._finite = FiniteCheck(merger, self.string_has_value)
        self._min_depths: dict[int, int | None] = {}
        # merged value schemas of named keys (a property and the patternProperties its name matches): not
        # sub-schemas of the IR, so check_all compiles them as the object contexts name them
        self.named_values: list[Node] = []
        self.numbers: list[NumberContext] = []
        """The number contexts built so far (``forget_memos`` empties their memos when the document goes)."""

    def finite(self, node: Node) -> bool:
        """Whether ``node`` has a finite instance (finite.py)."""
        return self._finite.finite(node)

    def min_depth(self, node: Node) -> int | None:
        """The fewest arrays and objects open at once in a value of ``node`` (finite.py), memoised: asked
        by the containers near ``JsonConfig.max_depth`` (depth_room.py) at every key and item."""
        node = deref(node)
        hit = self._min_depths.get(id(node), _MISSING)
        if hit is _MISSING:
            hit = self._min_depths[id(node)] = self._finite.min_depth(node)
            self._keep.append(node)
        return hit  # type: ignore[return-value]

    def string_has_value(self, node: Node) -> bool:
        """False only for a string node no text satisfies (its content automaton is empty): for finite.py
        and ``arrays.no_array``. Other nodes answer True; a refusal is reported where it is built. A build
        that ran out of time (``regex.timed_out``) answers nothing: on a quieter machine it may find no text,
        so it raises Unsupported (``arrays.no_array`` names it by its ``contains`` schema)."""
        node = deref(node)
        if not isinstance(node, String):
            return True
        try:
            return self.start(node) is not None
        except UnsupportedSchemaError as error:
            if timed_out(error) and error.problems:
                problem = error.problems[0]
                raise Unsupported(problem.keyword, problem.reason) from error
            return True
        except SchemaError:
            return True

    def start(self, node: Node) -> CharacterParser | None:
        """The state before the first character of a value of ``node``; None if no value can match."""
        node = deref(node)
        hit = self._starts.get(id(node), _MISSING)
        if hit is not _MISSING:
            if (hit is None and id(node) in self._building) or id(node) in self._unsettled_ids:
                self._read_unsettled()
            return hit  # type: ignore[return-value]
        self._unsettled.append(False)
        try:
            return self._start_new(node)
        finally:
            if self._unsettled.pop() and self._scopes and id(node) in self._starts:
                self._unsettled_ids.add(id(node))
                self._scopes[-1].unsettled.append(id(node))

    def _read_unsettled(self) -> None:
        """A start being built read a placeholder (or a start that did): every start being built inside the
        innermost ``settled_start`` may hold it, so each is unsettled; those outside it are not (the
        container that called ``settled_start`` builds that child when first needed instead)."""
        if self._scopes:
            scope = self._scopes[-1]
            scope.read = True
            flags = self._unsettled
            for i in range(scope.depth, len(flags)):
                flags[i] = True

    def _start_new(self, node: Node) -> CharacterParser | None:
        self._starts[id(node)] = None  # a value cannot contain itself at its own first character
        self._building.add(id(node))
        try:
            try:
                # (a string, number, boolean, null or any value contains no other value: finite unless it has
                # none, which its own build answers)
                if node.__class__ in _CONTAINING and not self.finite(node):
                    self._keep.append(node)
                    return None  # every instance would contain another: none can be written (finite.py)
                refused = self._finite.timed_out.get(id(node))
                if refused is not None:
                    raise refused  # its finiteness check ran out of time: refused alike here (finite.py)
                state = self._build(node)
            except Unsupported as problem:
                checked = getattr(problem, "node", node)  # a TimedOut names the node whose check ran out of time
                if not self.lenient:
                    named = getattr(problem, "named", None) or checked  # (a contains match: its contains)
                    found = Problem(self.origin(named), problem.keyword, problem.reason)
                    raise UnsupportedSchemaError([found]) from None
                if checked is not node:  # another node, now answered "possible" and relaxed at its own start
                    self._starts.pop(id(node), None)
                    return self.start(node)
                relaxed = relax(node)
                self._keep.append(relaxed)
                try:
                    state = self._build(relaxed)
                except Unsupported:  # its key patterns refused again (an automaton out of time): dropped too
                    relaxed = relax(relaxed, patterns=False)
                    self._keep.append(relaxed)
                    state = self._build(relaxed)
        except BaseException:
            # not "no value" (an error, a build deadline, also inside the finiteness check): the lenient retry
            # (check_all) and any later ask must build this node again, not read the placeholder's None
            self._starts.pop(id(node), None)
            raise
        finally:
            self._building.discard(id(node))
        self._keep.append(node)
        self._starts[id(node)] = state
        return state

    def settled_start(self, node: Node) -> tuple[CharacterParser | None, bool]:
        """``(start(node), True)``, or ``(None, False)`` when that build read the placeholder None of a node
        being built (``start``): for a container's builds of its items and ``contains`` trackers, which
        happen while the container is being built. The placeholder stands for "no value" only at the node's
        own first character; an item (or a ``contains`` match) of an array whose items recurse to it reads
        it one bracket further in, where it is no answer, so a union holding it would be kept without that
        branch (``[[1]]`` refused under ``items: anyOf [{"$ref": "#"}, integer]``). Then the starts of that
        build that read it (the ones being built when it was read, and those that read them) are dropped,
        and the caller builds this one when first needed, once no node is being built. The other starts of
        that build are kept: dropping them all made each nested container build its children again, once
        per ask above it, which is exponential in the nesting of arrays whose ``contains`` matches hold
        each other."""
        scope = _Scope(len(self._unsettled))
        self._scopes.append(scope)
        try:
            state = self.start(node)
        finally:
            self._scopes.pop()
            for ident in scope.unsettled:
                self._starts.pop(ident, None)
                self._unsettled_ids.discard(ident)
        return (None, False) if scope.read else (state, True)

    def building(self, node: Node) -> bool:
        """Whether the start of ``node`` is being built (further up this build): ``start`` answers None for it
        until then, which says nothing of whether it has a value (an array whose items recurse to itself)."""
        return id(deref(node)) in self._building

    def _build(self, node: Node) -> CharacterParser | None:
        # the most frequent kinds first (the node classes of schema/ir.py have no subclasses, so order is free)
        if isinstance(node, String):
            content = string_content(node)
            return None if content is None else StringParser(content, escapable=self.escapable)
        if isinstance(node, Object):
            return ObjectContext(node, self).start()
        if isinstance(node, Number):
            context = NumberContext(node)
            self.numbers.append(context)
            return NumberParser(context)
        if isinstance(node, Union):
            starts = [s for s in (self.start(option) for option in node.options) if s is not None]
            if not starts:
                return None
            return starts[0] if len(starts) == 1 else UnionParser(starts)
        if isinstance(node, Array):
            return ArrayContext(node, self).start()
        if isinstance(node, Boolean):
            words = tuple(sorted("true" if v else "false" for v in node.values))
            return ChoiceParser(_literal_trie(words) if words else words)  # (no value: ChoiceParser refuses it)
        if isinstance(node, Null):
            return ChoiceParser(_literal_trie(_NULL))
        if isinstance(node, Never):
            return None
        if isinstance(node, AnyValue):
            if self._any_value is None:  # every `true` of every schema reads the same values: one union state
                if not self._shares_any:
                    self._any_value = any_value_start(self.config)
                else:
                    kinds = [Null(), Boolean(), Number(), String(), Array(), Object()]
                    self._keep.extend(kinds)
                    starts = [s for s in (self.start(k) for k in kinds) if s is not None]
                    self._any_value = AnyValueStart(starts, self.config)
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
            over_budget()  # (the format's whole build budget, JsonConfig.build_seconds)
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
            todo.extend(self.named_values)
            self.named_values.clear()
        self.lenient = lenient
        return problems


_LITERAL_TRIES: dict[tuple[str, ...], CharTrie] = {}


def _literal_trie(words: tuple[str, ...]) -> CharTrie:
    """The trie of ``null`` or of a set of booleans, shared by every schema (a handful of them, read-only)."""
    hit = _LITERAL_TRIES.get(words)
    if hit is None:
        hit = _LITERAL_TRIES[words] = CharTrie(words)
    return hit


def relax(node: Node, patterns: bool = True) -> Node:
    """``node`` without the constraints that made it unsupported (lenient mode); ``patterns=False`` also
    drops an object's ``patternProperties``."""
    if isinstance(node, String):
        return String(node.min_length, node.max_length)
    if isinstance(node, Array):
        return Array(node.prefix, node.items, node.min_items, node.max_items)
    if isinstance(node, Object):
        sides = tuple(Side(s.properties, s.patterns if patterns else (), AnyValue()) for s in node.sides)
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
        out.extend(part for pair in node.exists for part in pair)
        return out + ([node.property_names] if node.property_names is not None else [])
    if isinstance(node, Union):
        return list(node.options)
    if isinstance(node, Array):
        out = [*node.prefix, node.items]
        return out + ([node.contains] if node.contains is not None else []) + [c for c, _ in node.also_contains]
    if isinstance(node, Ref):
        return [node.get()]
    return []


class AnyValueStart(UnionParser):
    """The first state of any JSON value under one ``JsonConfig``: the union of the six kinds, built once per
    config by a compiler of its own (``any_value_start``) and shared by every schema, so the walks from it (the
    value of an extra key of every open object, every ``{}`` or ``true`` sub-schema, a ``JsonParser``) are
    cached per vocabulary once, by value, instead of once per schema."""

    __slots__ = ("_config",)

    def __init__(self, starts: list[CharacterParser], config: JsonConfig) -> None:
        super().__init__(starts)
        self._config = config

    def shared_lexeme_key(self, horizon: int) -> Hashable | None:
        return ("json-any", self._config)


_ANY_STARTS: dict[JsonConfig, CharacterParser] = {}
_ANY_LOCK = threading.Lock()
_ANY_NUMBERS: list[NumberContext] = []
"""The number contexts of the shared compilers: their memos are emptied when a burst of enforcers ends
(core/cache_release.py), as a dropped document's are (``forget_memos``)."""


def any_value_start(config: JsonConfig) -> CharacterParser:
    """The shared first state of any JSON value under ``config`` (``AnyValueStart``), made at the first call.
    Its contexts belong to a compiler that lives as long as the process: they hold no schema, and every
    schema with the same config reads the same values there."""
    found = _ANY_STARTS.get(config)
    if found is None:
        with _ANY_LOCK:
            found = _ANY_STARTS.get(config)
            if found is None:
                compiler = Compiler(config, Merger(), lambda n: "#")
                compiler._shares_any = True
                compiler.numbers = _ANY_NUMBERS
                found = compiler.start(AnyValue())
                _ANY_STARTS[config] = found  # type: ignore[assignment]
    return found  # type: ignore[return-value]


def _forget_shared_numbers() -> None:
    forget_memos(_ANY_NUMBERS)


def forget_memos(contexts: list[NumberContext]) -> None:
    """Empties the memos of a dropped document's number contexts (pure speed caches: answers never change).

    Why: the vocabulary's shared lexeme walks outlive the document that made them (a schema with the same
    bounds reuses them) and hold their end states, which hold their NumberContext, and often, through an
    object key's states, the whole Compiler; a context's ``feasible`` memo grows to hundreds of entries
    (~100 KB) per walked number, which the cache budget's flat charge per state does not see."""
    for context in contexts:
        context.feasible.clear()
        context.charsets.clear()


register_memo(_forget_shared_numbers)
