"""Regular expressions as character-level parsers: an ``interegular`` DFA walked one character at a time.

A pattern is compiled once (and memoised per pattern text) into a deterministic automaton whose dead states
are pruned, so every state the parser can reach still has a way to a full match: the enforcer can never be
led into a dead end by a regex. A parser state is then one integer over that shared automaton.

Cost: compiling is interegular's subset construction (milliseconds for typical patterns, bounded by a time
limit for hostile ones); a step is two dict look-ups. ``\\w``, ``\\d`` and ``\\s`` follow interegular and match
ASCII characters only, a subset of Python's ``re``: output always matches under ``re.fullmatch``. (JSON Schema
patterns are ECMA-262 and are translated first, see jsonschema/ecma/parse.py; their large classes arrive here as
*stand-ins*, one character per block of characters, which ``CompiledRegex`` maps back with a range look-up.)
"""

from __future__ import annotations

import os
import re
import threading
import time
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import interegular
from interegular.fsm import anything_else

from ..core import disk_cache
from ..core.budget import checked_megabytes, checked_seconds
from ..core.cache_release import register_memo
from ..core.charset import ANY, EMPTY, CharSet
from ..core.errors import RegexError
from ..core.hooks import FreeRun
from ..core.protocol import CharacterParser
from . import fsm_crawl, regex_build
from .build_budget import build_budget, over_budget

COMPILE_SECONDS = 5.0
"""A pattern whose automaton takes longer than this to build is refused with RegexError (no hang)."""

_FREE_RUN_MIN_CHARS = 8

StandIns = tuple[tuple[str, tuple[tuple[int, int], ...]], ...]
"""(stand-in character, code-point intervals it stands for): see ``compile_regex``."""

_UNSUPPORTED = [
    (re.compile(r"\(\?<?[=!]"), "lookaround assertions ((?=...), (?!...), (?<=...), (?<!...))"),
    (re.compile(r"(?<!\\)(?:\\\\)*\\[1-9]"), "back-references (\\1 ...)"),
    (re.compile(r"\(\?P="), "named back-references ((?P=name))"),
    (re.compile(r"(?<!\\)(?:\\\\)*\\[bBAZz]"), "word-boundary and string anchors (\\b, \\B, \\A, \\Z)"),
    (re.compile(r"(?<!\\)(?:\\\\)*\\[pP]\{"), "unicode property classes (\\p{...})"),
]


def time_limit_error(message: str) -> RegexError:
    """A RegexError for an automaton that did not finish building within ``COMPILE_SECONDS``, marked so
    (``timed_out``): unlike the other RegexErrors it depends on the machine's speed and load, so a caller
    that answers a question from a failed build must not assume the next build fails too."""
    error = RegexError(message)
    error.time_limit = True  # type: ignore[attr-defined]
    return error


def timed_out(error: BaseException) -> bool:
    """Whether ``error``, or an error it was raised from or while handling (``raise X from None`` keeps the
    latter), is a build that ran out of ``COMPILE_SECONDS`` (errors converted to Unsupported stay known)."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if getattr(current, "time_limit", False):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def _too_complex(label: str) -> RegexError:
    return time_limit_error(
        f"regular expression {label!r} is too complex: its automaton did not finish "
        f"building within {COMPILE_SECONDS:g} s (nested or large counted repetitions?)"
    )


def _point_runs(points: list[int]) -> list[tuple[int, int]]:
    """Code points as the intervals of their runs of consecutive values (sorted, merged)."""
    points.sort()
    runs: list[tuple[int, int]] = []
    lo = hi = points[0]
    for cp in points[1:]:
        if cp == hi + 1:
            hi = cp
        else:
            runs.append((lo, hi))
            lo = hi = cp
    runs.append((lo, hi))
    return runs


_CLASSES: dict[tuple[tuple[int, int], ...], CharSet] = {}
register_memo(_CLASSES.clear)  # emptied when a burst of enforcers ends (core/cache_release.py)
_CLASSES_KEPT = 4096


def _class_set(intervals: list[tuple[int, int]]) -> CharSet:
    """The CharSet of a symbol's intervals, shared by value: patterns name the same few classes (``[0-9]``,
    ``[A-Za-z]``, what a class leaves out), and a CharSet (read-only) costs more to make than to look up."""
    key = tuple(intervals)
    found = _CLASSES.get(key)
    if found is None:
        if len(_CLASSES) >= _CLASSES_KEPT:
            _CLASSES.clear()  # rare: rebuilt on demand
        found = _CLASSES[key] = CharSet(key)
    return found


class CompiledRegex:
    """A pruned DFA shared by every state of one pattern. Built by ``compile_regex``; read-only after."""

    def __init__(self, pattern: str, fsm=None, parts: tuple | None = None,  # noqa: ANN001 - interegular's FSM
                 stand_ins: StandIns = ()) -> None:  # fmt: skip
        self.pattern = pattern
        self.ident: Hashable = pattern if not stand_ins else (pattern, stand_ins)
        """Identifies the automaton by value (the text alone does not when stand-ins are used)."""
        if parts is not None:
            self._restore(parts)
            return
        fsm = _build_fsm(pattern) if fsm is None else fsm
        mapping = dict(fsm.alphabet.items())
        self.else_symbol = mapping.pop(anything_else, None)
        self.ranges: list[tuple[int, int, int]] = []
        for rep, intervals in stand_ins:
            symbol = mapping.pop(rep, None)
            if symbol is None:
                continue  # a block the pattern never names: it behaves as "anything else"
            for lo, hi in intervals:
                if lo == hi:
                    mapping[chr(lo)] = symbol
                else:
                    self.ranges.append((lo, hi, symbol))
        self.symbol_of: dict[str, int] = mapping
        self._index_symbols()
        live = live_states(fsm.map, fsm.finals)
        if fsm.initial not in live:
            raise RegexError(f"regular expression {pattern!r} matches no string at all")
        order = [fsm.initial, *sorted((s for s in live if s != fsm.initial), key=str)]  # the start, then by text
        number = {state: i for i, state in enumerate(order)}
        self.transitions: list[dict[int, int]] = [
            {symbol: number[target] for symbol, target in fsm.map.get(state, {}).items() if target in live}
            for state in order
        ]
        self.finals = frozenset(number[s] for s in fsm.finals if s in live)
        self._charsets: list[CharSet | None] = [None] * len(order)
        self._runs: list[object] = [None] * len(order)
        self._distances: list[int] | None = None
        self._max_distance: int | None = None

    def distances(self) -> list[int]:
        """Per state, the fewest characters that reach a final state (the automaton is pruned, so every
        state reaches one). Lets a ``maxLength`` check be one comparison instead of a search."""
        cached = self._distances
        if cached is None:
            reverse: dict[int, list[int]] = {}
            for source, edges in enumerate(self.transitions):
                for target in edges.values():
                    reverse.setdefault(target, []).append(source)
            far = len(self.transitions) + 1
            cached = [far] * len(self.transitions)
            layer = sorted(self.finals)
            for state in layer:
                cached[state] = 0
            step = 0
            while layer:
                step += 1
                nxt = []
                for state in layer:
                    for source in reverse.get(state, ()):
                        if cached[source] == far:
                            cached[source] = step
                            nxt.append(source)
                layer = nxt
            self._distances = cached
        return cached

    def max_distance(self) -> int:
        """The largest of ``distances()``: from any state, a final one is at most this far."""
        if self._max_distance is None:
            self._max_distance = max(self.distances(), default=0)
        return self._max_distance

    def parts(self) -> tuple:
        """Plain data (for the on-disk cache) from which ``CompiledRegex(pattern, parts)`` rebuilds it."""
        return (self.symbol_of, self.else_symbol, self.transitions, sorted(self.finals), self.ranges)

    def _index_symbols(self) -> None:
        """``chars_of_symbol`` and the range look-up, from ``symbol_of``, ``ranges`` and ``else_symbol``."""
        self.ranges.sort()
        self._range_starts = [lo for lo, _, _ in self.ranges]
        points: dict[int, list[int]] = {}
        for ch, symbol in self.symbol_of.items():
            found = points.get(symbol)
            if found is None:
                points[symbol] = [ord(ch)]
            else:
                found.append(ord(ch))
        # a class's characters as runs of consecutive code points ([0-9a-f]: 2 intervals, not 16 singletons)
        intervals_by_symbol = {symbol: _point_runs(cps) for symbol, cps in points.items()}
        for lo, hi, symbol in self.ranges:
            intervals_by_symbol.setdefault(symbol, []).append((lo, hi))
        self.chars_of_symbol = {symbol: _class_set(iv) for symbol, iv in intervals_by_symbol.items()}
        if self.else_symbol is not None:
            listed = _class_set(sorted(iv for ivs in intervals_by_symbol.values() for iv in ivs))
            self.chars_of_symbol[self.else_symbol] = ANY - listed  # (memoised on ``listed``)

    def _restore(self, parts: tuple) -> None:
        self.symbol_of, self.else_symbol, self.transitions, finals, self.ranges = parts
        self.finals = frozenset(finals)
        self._index_symbols()
        self._charsets = [None] * len(self.transitions)
        self._runs = [None] * len(self.transitions)
        self._distances = None
        self._max_distance = None

    def step(self, state: int, ch: str) -> int | None:
        """The state after ``ch``, or None."""
        symbol = self.symbol_of.get(ch)
        if symbol is None:
            symbol = self._range_symbol(ord(ch)) if self.ranges else self.else_symbol
            if symbol is None:
                return None
        return self.transitions[state].get(symbol)

    def _range_symbol(self, cp: int) -> int | None:
        i = bisect_right(self._range_starts, cp) - 1
        if i >= 0 and cp <= self.ranges[i][1]:
            return self.ranges[i][2]
        return self.else_symbol

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

    def run(self, state: int) -> Run | None:
        """The longest *uniform run* from ``state``: a class of characters (a set of symbols) that leads
        from ``state`` to one next state, from there to one next, and so on. Counted repeats such as
        ``[a-z0-9-]{0,61}`` or ``[0-9]{4}`` are chains of distinct states with no self-loop; seen as a run
        they are answered from the vocabulary's length-bucketed tables instead of a trie walk. A run that
        reaches a state looping on its class (``.*``) is unbounded. None when no class is big enough."""
        cached = self._runs[state]
        if cached is None:
            cached = self._runs[state] = self._find_run(state) or False
        return cached or None

    def _find_run(self, state: int) -> Run | None:
        transitions, chars_of = self.transitions, self.chars_of_symbol
        groups: dict[int, list[int]] = {}
        for symbol, target in transitions[state].items():
            groups.setdefault(target, []).append(symbol)
        if not groups:
            return None

        def size(symbols: list[int]) -> int:
            return sum(chars_of[s].size() for s in symbols)

        loop = groups.get(state)
        symbols = loop if loop and size(loop) >= _FREE_RUN_MIN_CHARS else max(groups.values(), key=size)
        if size(symbols) < _FREE_RUN_MIN_CHARS:
            return None
        chain, seen, current, loops = [state], {state}, state, False
        while True:
            targets = {transitions[current].get(symbol) for symbol in symbols}
            if targets == {None}:
                break  # no character of the class can follow: a run is cut here, exactly
            # the class splits, or a longer cycle begins ((ab)*): a run that stopped here would refuse tokens
            # that go on with the class, so only the runs ending in a dead end or a loop count
            if len(targets) != 1 or None in targets:
                return None
            (target,) = targets
            if target != current and target in seen:  # one look-up per state: a chain of n states costs O(n)
                return None
            if target == current:
                loops = True
                break
            chain.append(target)
            seen.add(target)
            current = target
        intervals = [interval for symbol in symbols for interval in chars_of[symbol].intervals]
        return Run(CharSet(intervals), tuple(chain), loops)


@dataclass(frozen=True)
class Run:
    """A uniform run of a DFA (see ``CompiledRegex.run``): after ``n`` characters of ``chars`` the DFA is in
    ``chain[n]``; when ``loops`` the last state of the chain stays put on any further such character, else
    at most ``len(chain) - 1`` characters of the class can come in a row from the first state."""

    chars: CharSet
    chain: tuple[int, ...]
    loops: bool

    @property
    def max_length(self) -> int | None:
        return None if self.loops else len(self.chain) - 1

    def state_after(self, n: int) -> int:
        return self.chain[min(n, len(self.chain) - 1)]


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


def _check_encodable(pattern: str) -> None:
    """A lone surrogate (``"\\ud800"``) is no character of any text a model writes (UTF-8 cannot spell it): a
    pattern naming one would build a state that allows only end of sequence."""
    for i, c in enumerate(pattern):
        if "\ud800" <= c <= "\udfff":
            raise RegexError(f"regular expression {pattern!r} holds a lone surrogate U+{ord(c):04X} at position {i}, "
                             "which no UTF-8 text contains")  # fmt: skip


def _validate(pattern: str) -> None:
    try:
        re.compile(pattern)
    except re.error as error:
        raise RegexError(f"invalid regular expression {pattern!r}: {error}") from None


def _anchor_at(body: str, pattern: str | None = None) -> int | None:
    """The position (in ``pattern``, default ``body``) of the first ``^``/``$`` of ``body`` that is an anchor:
    not escaped, not inside a character class; None if there is none."""
    if "^" not in body and "$" not in body:
        return None  # (most patterns: no scan)
    offset = 0 if pattern is None else pattern.find(body)
    i, in_class, class_start = 0, False, False
    while i < len(body):
        c = body[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            if c == "]" and not class_start:
                in_class = False
            class_start = class_start and c == "^"
        elif c == "[":
            in_class, class_start = True, True
        elif c in "^$":
            return i + max(offset, 0)
        i += 1
    return None


def _build_fsm(pattern: str):  # noqa: ANN202 - interegular's FSM type
    _check_constructs(pattern)
    body = _strip_anchors(pattern)
    try:
        with fsm_crawl.deadline(COMPILE_SECONDS):
            try:
                # it reads only syntax that re accepts (anything doubtful is Unhandled), so re.compile's
                # validation (~0.1 ms a pattern) is needed only on the interegular path, and for anchors
                if _anchor_at(body) is not None:
                    _validate(pattern)
                return regex_build.build_fsm(body, fsm_crawl.expired)
            except regex_build.Unhandled:
                pass
            except regex_build.Unsatisfiable:
                raise RegexError(
                    f"regular expression {pattern!r} matches no text here: each of its branches has a '^' after "
                    f"a character or a '$' before one (first anchor at position {_anchor_at(body, pattern)}; "
                    "'^' holds only at the start of the text and '$' only at its end)"
                ) from None
            # re's own check (its charset optimizer: seconds on hundreds of wide classes) and interegular's
            # wide-class work run outside crawl
            with fsm_crawl.interruptible():
                _validate(pattern)
                where = _anchor_at(body, pattern)
                if where is not None:
                    raise RegexError(
                        f"regular expression {pattern!r} is not supported: the anchor at position {where} is "
                        "combined with syntax (inline flags, lookaround...) whose anchors cannot be decided here"
                    )
                return interegular.parse_pattern(body).to_fsm()
    except (fsm_crawl.CrawlTimeout, TimeoutError):
        raise _too_complex(pattern) from None
    except RegexError:
        raise
    except Exception as error:  # interegular reports unsupported syntax with several exception types
        raise RegexError(f"regular expression {pattern!r} is not supported: {error}") from None


def live_states(edges: Mapping[Hashable, Mapping], finals: Iterable[Hashable]) -> set:
    """States from which a final state can be reached (``edges[state]``: its transitions' targets as values).
    Shared by interegular automata here and the table-built ones of parsers/dfa_ops.py."""
    reverse: dict[Hashable, list[Hashable]] = {}
    for source, targets in edges.items():
        for target in targets.values():
            reverse.setdefault(target, []).append(source)
    live = set(finals)
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


@register_memo
def _forget() -> None:
    """Empties the memo when a burst of enforcers ends (core/cache_release.py); skipped when its lock is taken
    (a sweep runs in a finalizer, which may interrupt this module's own use of the memo)."""
    if _CACHE_LOCK.acquire(blocking=False):
        try:
            _CACHE.clear()
        finally:
            _CACHE_LOCK.release()


def compile_regex(pattern: str, stand_ins: StandIns = ()) -> CompiledRegex:
    """The compiled automaton of ``pattern``, memoised (least recently used, 512 patterns). With
    ``stand_ins`` (see jsonschema/ecma/parse.py) each listed character of the pattern stands for a whole block of
    characters: the automaton is built over the stand-ins and each maps back to its block."""
    key = pattern if not stand_ins else (pattern, stand_ins)
    with _CACHE_LOCK:
        hit = _CACHE.get(key)  # type: ignore[call-overload]
        if hit is not None:
            _CACHE.move_to_end(key)  # type: ignore[arg-type]
            return hit
    on_disk = len(pattern) >= _DISK_MIN_TEXT
    compiled = _from_disk(pattern, stand_ins) if on_disk else None
    if compiled is None:
        started = time.monotonic()
        compiled = CompiledRegex(pattern, stand_ins=stand_ins)
        if on_disk and (len(compiled.transitions) >= _DISK_MIN_STATES
                        or time.monotonic() - started > _DISK_MIN_SECONDS):  # fmt: skip
            _to_disk(compiled, stand_ins)
    with _CACHE_LOCK:
        _CACHE[key] = compiled  # type: ignore[index]
        if len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return compiled


_DISK_MIN_TEXT = 100
"""Shorter patterns never touch the disk: the one-pass builder makes them in well under a millisecond, less
than a failed look-up (~0.2-0.3 ms) costs."""

_DISK_MIN_STATES = 100
"""Automata this big (JSON Schema formats such as email, uri, ipv6: 0.3-1.5 s to build) are kept on disk
in ``~/.cache/formatenforcer/regex`` (``FORMATENFORCER_REGEX_CACHE=0`` turns it off), so a new process
reaches its first mask without rebuilding them; small ones build faster than they load."""


def _disk_folder() -> Path | None:
    if os.environ.get("FORMATENFORCER_REGEX_CACHE", "1") == "0":
        return None
    return disk_cache.default_cache_dir() / "regex"


def _disk_key(pattern: str, stand_ins: StandIns) -> str:
    return disk_cache.fingerprint(["regex", pattern, interegular.__version__ if hasattr(interegular, "__version__")
                                    else "?", _DFA_FORMAT, repr(stand_ins)])  # fmt: skip


_DFA_FORMAT = 3
_DISK_MIN_SECONDS = 0.2
"""Smaller automata that took this long (a large class spelled with stand-ins) are kept on disk too."""


def _from_disk(pattern: str, stand_ins: StandIns = ()) -> CompiledRegex | None:
    folder = _disk_folder()
    if folder is None:
        return None
    parts = disk_cache.load(folder, _disk_key(pattern, stand_ins), suffix=".dfa")
    if parts is None or len(parts) != 5:
        return None
    try:
        return CompiledRegex(pattern, parts=parts, stand_ins=stand_ins)
    except (TypeError, ValueError):
        return None


def _to_disk(compiled: CompiledRegex, stand_ins: StandIns = ()) -> None:
    folder = _disk_folder()
    if folder is not None:
        disk_cache.save(folder, _disk_key(compiled.pattern, stand_ins), compiled.parts(), suffix=".dfa")


Clauses = tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]


def compile_boolean(clauses: Clauses, stand_ins: StandIns = ()) -> CompiledRegex:
    """The strings that some clause ``(must, must_not)`` accepts: those fully matching every pattern of
    ``must`` and none of ``must_not``. Expresses what one pattern cannot: two patterns (or a pattern and a
    format) on one string, or "any key but those whose value no schema allows". Memoised like
    ``compile_regex``; built under the same time limit; RegexError when no string is accepted. Every
    pattern must be written over the same ``stand_ins`` (see ``compile_regex``)."""
    label = "|".join("&".join([*(f"({p})" for p in must), *(f"!({p})" for p in never)]) or "*"
                     for must, never in clauses)  # fmt: skip
    key = ("boolean", clauses, stand_ins)  # never equal to a pattern string
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
    compiled = CompiledRegex(label, total, stand_ins=stand_ins)
    with _CACHE_LOCK:
        _CACHE[key] = compiled  # type: ignore[index]
        if len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return compiled


def _timed(label: str, build):  # noqa: ANN001, ANN202 - interegular's FSM type
    """``build()`` under the compile time limit (FSM products can blow up like subset construction)."""
    try:
        with fsm_crawl.deadline(COMPILE_SECONDS):
            return build()
    except fsm_crawl.CrawlTimeout:
        raise _too_complex(label) from None


def _budgeted(pattern: str, seconds: float | None, megabytes: float | None) -> CompiledRegex:
    """``compile_regex`` within ``seconds`` (under the automaton's own ``COMPILE_SECONDS``), else
    ``BuildTimeoutError``, and within ``megabytes`` of growth of the process, else ``BuildMemoryError``."""
    checked_seconds(seconds, "RegexParser's build_seconds")
    checked_megabytes(megabytes, "RegexParser's build_megabytes")
    with build_budget(seconds, "RegexParser(build_seconds=...)", megabytes, "RegexParser(build_megabytes=...)"):
        try:
            return compile_regex(pattern)
        except RegexError:
            over_budget()  # cut short by the budget: that is the reason
            raise


class RegexParser(CharacterParser):
    """Accepts exactly the strings that ``re.fullmatch(pattern, s)`` accepts (see the module notes).
    ``build_seconds`` lowers the automaton's build limit (``COMPILE_SECONDS``, past which it is a
    ``RegexError``), past which the build is a ``BuildTimeoutError``; ``build_megabytes`` bounds how much the
    process's resident memory may grow while the automaton is built (None: no limit), else
    ``BuildMemoryError`` (an automaton whose states explode, such as ``(a|b)*a(a|b){20}``'s)."""

    __slots__ = ("_dfa", "_state", "__weakref__")  # weakly referable: see TokenEnforcer

    def __init__(
        self,
        pattern: str | CompiledRegex,
        _state: int = 0,
        *,
        build_seconds: float | None = None,
        build_megabytes: float | None = 1024.0,
    ) -> None:
        if not isinstance(pattern, (str, CompiledRegex)):
            raise RegexError(f"a regular expression must be a string, not {type(pattern).__name__}")
        if isinstance(pattern, str):
            _check_encodable(pattern)
            if build_seconds is None and build_megabytes is None:
                self._dfa = compile_regex(pattern)
            else:
                self._dfa = _budgeted(pattern, build_seconds, build_megabytes)
        else:
            self._dfa = pattern
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
        return (self._dfa.ident, self._state)

    def free_run(self) -> FreeRun | None:
        run = self._dfa.run(self._state)
        if run is None:
            return None
        if run.loops and len(run.chain) == 1:
            return FreeRun(run.chars, None, self._same)
        dfa = self._dfa
        return FreeRun(run.chars, run.max_length, lambda n: RegexParser(dfa, run.state_after(n)))

    def automaton_state(self) -> tuple[CompiledRegex, int]:
        return self._dfa, self._state

    def _same(self, _n: int) -> RegexParser:
        return self

    def __repr__(self) -> str:
        return f"RegexParser({self._dfa.pattern!r}, state={self._state})"
