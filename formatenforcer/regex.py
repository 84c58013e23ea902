"""Regular expressions as character-level parsers: an ``interegular`` DFA walked one character at a time.

A pattern is compiled once (and memoised per pattern text) into a deterministic automaton whose dead states
are pruned, so every state the parser can reach still has a way to a full match: the enforcer can never be
led into a dead end by a regex. A parser state is then one integer over that shared automaton.

Cost: compiling is interegular's subset construction (milliseconds for typical patterns, bounded by a time
limit for hostile ones); a step is two dict look-ups. ``\\w``, ``\\d`` and ``\\s`` follow interegular and match
ASCII characters only, a subset of Python's ``re``: output always matches under ``re.fullmatch``.
"""

from __future__ import annotations

import re
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Hashable

import interegular
from interegular.fsm import anything_else

from .charset import ANY, EMPTY, CharSet
from .errors import RegexError
from .parser import CharacterParser, FreeRun

COMPILE_SECONDS = 5.0
"""A pattern whose automaton takes longer than this to build is refused with RegexError (no hang)."""

_FREE_RUN_MIN_CHARS = 8

_UNSUPPORTED = [
    (re.compile(r"\(\?<?[=!]"), "lookaround assertions ((?=...), (?!...), (?<=...), (?<!...))"),
    (re.compile(r"(?<!\\)(?:\\\\)*\\[1-9]"), "back-references (\\1 ...)"),
    (re.compile(r"\(\?P="), "named back-references ((?P=name))"),
    (re.compile(r"(?<!\\)(?:\\\\)*\\[bBAZz]"), "word-boundary and string anchors (\\b, \\B, \\A, \\Z)"),
    (re.compile(r"(?<!\\)(?:\\\\)*\\[pP]\{"), "unicode property classes (\\p{...})"),
]


class _Deadline:
    """Raises RegexError from inside interegular when compiling runs past its time limit."""

    def __init__(self, seconds: float, pattern: str) -> None:
        self.end = time.monotonic() + seconds
        self.pattern = pattern
        self.calls = 0

    def __call__(self, frame, event, arg):  # noqa: ANN001 - sys.settrace signature
        if event == "call":
            self.calls += 1
            if self.calls % 256 == 0 and time.monotonic() > self.end:
                raise RegexError(
                    f"regular expression {self.pattern!r} is too complex: its automaton did not finish "
                    f"building within {COMPILE_SECONDS:g} s (nested or large counted repetitions?)"
                )
        return None


class CompiledRegex:
    """A pruned DFA shared by every state of one pattern. Built by ``compile_regex``; read-only after."""

    def __init__(self, pattern: str, fsm=None) -> None:  # noqa: ANN001 - interegular's FSM type
        self.pattern = pattern
        fsm = _build_fsm(pattern) if fsm is None else fsm
        mapping = dict(fsm.alphabet.items())
        self.else_symbol = mapping.pop(anything_else, None)
        self.symbol_of: dict[str, int] = mapping
        chars_by_symbol: dict[int, list[str]] = {}
        for ch, symbol in mapping.items():
            chars_by_symbol.setdefault(symbol, []).append(ch)
        self.chars_of_symbol = {symbol: CharSet.of(chars) for symbol, chars in chars_by_symbol.items()}
        if self.else_symbol is not None:
            listed = CharSet.of(mapping)
            self.chars_of_symbol[self.else_symbol] = ANY - listed
        live = _live_states(fsm)
        if fsm.initial not in live:
            raise RegexError(f"regular expression {pattern!r} matches no string at all")
        order = sorted(live, key=lambda s: (s != fsm.initial, str(s)))
        number = {state: i for i, state in enumerate(order)}
        self.transitions: list[dict[int, int]] = [
            {symbol: number[target] for symbol, target in fsm.map.get(state, {}).items() if target in live}
            for state in order
        ]
        self.finals = frozenset(number[s] for s in fsm.finals if s in live)
        self._charsets: list[CharSet | None] = [None] * len(order)
        self._free: list[object] = [None] * len(order)

    def step(self, state: int, ch: str) -> int | None:
        """The state after ``ch``, or None."""
        symbol = self.symbol_of.get(ch, self.else_symbol)
        if symbol is None:
            return None
        return self.transitions[state].get(symbol)

    def charset(self, state: int) -> CharSet:
        """Characters with a transition out of ``state``."""
        cached = self._charsets[state]
        if cached is None:
            intervals: list[tuple[int, int]] = []
            for symbol in self.transitions[state]:
                intervals.extend(self.chars_of_symbol[symbol].intervals)
            cached = CharSet(intervals) if intervals else EMPTY
            self._charsets[state] = cached
        return cached

    def self_loop(self, state: int) -> CharSet | None:
        """The characters that lead from ``state`` back to itself, when there are enough to be worth it."""
        cached = self._free[state]
        if cached is None:
            intervals: list[tuple[int, int]] = []
            for symbol, target in self.transitions[state].items():
                if target == state:
                    intervals.extend(self.chars_of_symbol[symbol].intervals)
            loop = CharSet(intervals)
            cached = loop if loop.size() >= _FREE_RUN_MIN_CHARS else False
            self._free[state] = cached
        return cached or None


def _check_constructs(pattern: str) -> None:
    for finder, name in _UNSUPPORTED:
        if finder.search(pattern):
            raise RegexError(f"regular expression {pattern!r} uses {name}, which no finite automaton expresses")


def _strip_anchors(pattern: str) -> str:
    """Full-match semantics are implied, so one leading ``^`` and one trailing unescaped ``$`` are dropped."""
    if pattern.startswith("^"):
        pattern = pattern[1:]
    if pattern.endswith("$") and not re.search(r"(?<!\\)(?:\\\\)*\\\$$", pattern):
        pattern = pattern[:-1]
    return pattern


def _build_fsm(pattern: str):  # noqa: ANN202 - interegular's FSM type
    _check_constructs(pattern)
    try:
        re.compile(pattern)
    except re.error as error:
        raise RegexError(f"invalid regular expression {pattern!r}: {error}") from None
    body = _strip_anchors(pattern)
    deadline = _Deadline(COMPILE_SECONDS, pattern)
    previous = sys.gettrace()
    sys.settrace(deadline)
    try:
        return interegular.parse_pattern(body).to_fsm()
    except RegexError:
        raise
    except Exception as error:  # interegular reports unsupported syntax with several exception types
        raise RegexError(f"regular expression {pattern!r} is not supported: {error}") from None
    finally:
        sys.settrace(previous)


def _live_states(fsm) -> set:  # noqa: ANN001
    """States from which a final state can be reached."""
    reverse: dict[object, set] = {}
    for source, edges in fsm.map.items():
        for target in edges.values():
            reverse.setdefault(target, set()).add(source)
    live = set(fsm.finals)
    todo = list(live)
    while todo:
        for source in reverse.get(todo.pop(), ()):
            if source not in live:
                live.add(source)
                todo.append(source)
    return live


_CACHE: OrderedDict[str, CompiledRegex] = OrderedDict()
_CACHE_LOCK = threading.Lock()
_CACHE_SIZE = 512


def compile_regex(pattern: str) -> CompiledRegex:
    """The compiled automaton of ``pattern``, memoised (least recently used, 512 patterns)."""
    with _CACHE_LOCK:
        hit = _CACHE.get(pattern)
        if hit is not None:
            _CACHE.move_to_end(pattern)
            return hit
    compiled = CompiledRegex(pattern)
    with _CACHE_LOCK:
        _CACHE[pattern] = compiled
        if len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return compiled


Clauses = tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]


def compile_boolean(clauses: Clauses) -> CompiledRegex:
    """The strings that some clause ``(must, must_not)`` accepts: those fully matching every pattern of
    ``must`` and none of ``must_not``. Expresses what one pattern cannot: two patterns (or a pattern and a
    format) on one string, or "any key but those whose value no schema allows". Memoised like
    ``compile_regex``; built under the same time limit; RegexError when no string is accepted."""
    label = "|".join("&".join([*(f"({p})" for p in must), *(f"!({p})" for p in never)]) or "*"
                     for must, never in clauses)  # fmt: skip
    key = ("boolean", clauses)  # never equal to a pattern string
    with _CACHE_LOCK:
        hit = _CACHE.get(key)  # type: ignore[call-overload]
        if hit is not None:
            _CACHE.move_to_end(key)  # type: ignore[arg-type]
            return hit
    total = None
    for must, never in clauses:
        part = _build_fsm(r"[\s\S]*")
        for pattern in must:
            part = _timed(label, lambda a=part, b=pattern: a & _build_fsm(b))
        for pattern in never:
            part = _timed(label, lambda a=part, b=pattern: a & _build_fsm(b).everythingbut())
        total = part if total is None else _timed(label, lambda a=total, b=part: a | b)
    if total is None:
        raise RegexError("no clause: the combination matches no string at all")
    compiled = CompiledRegex(label, total)
    with _CACHE_LOCK:
        _CACHE[key] = compiled  # type: ignore[index]
        if len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return compiled


def _timed(label: str, build):  # noqa: ANN001, ANN202 - interegular's FSM type
    """``build()`` under the compile time limit (FSM products can blow up like subset construction)."""
    deadline = _Deadline(COMPILE_SECONDS, label)
    previous = sys.gettrace()
    sys.settrace(deadline)
    try:
        return build()
    finally:
        sys.settrace(previous)


class RegexParser(CharacterParser):
    """Accepts exactly the strings that ``re.fullmatch(pattern, s)`` accepts (see the module notes)."""

    __slots__ = ("_dfa", "_state")

    def __init__(self, pattern: str | CompiledRegex, _state: int = 0) -> None:
        if not isinstance(pattern, (str, CompiledRegex)):
            raise RegexError(f"a regular expression must be a string, not {type(pattern).__name__}")
        self._dfa = pattern if isinstance(pattern, CompiledRegex) else compile_regex(pattern)
        self._state = _state

    @property
    def pattern(self) -> str:
        return self._dfa.pattern

    def add_character(self, ch: str) -> RegexParser | None:
        target = self._dfa.step(self._state, ch)
        if target is None:
            return None
        if target == self._state:
            return self
        return RegexParser(self._dfa, target)

    def allowed_characters(self) -> CharSet:
        return self._dfa.charset(self._state)

    def can_end(self) -> bool:
        return self._state in self._dfa.finals

    def key(self) -> Hashable:
        return (self._dfa.pattern, self._state)

    def free_run(self) -> FreeRun | None:
        loop = self._dfa.self_loop(self._state)
        if loop is None:
            return None
        return FreeRun(loop, None, self._same)

    def _same(self, _n: int) -> RegexParser:
        return self

    def __repr__(self) -> str:
        return f"RegexParser({self._dfa.pattern!r}, state={self._state})"
