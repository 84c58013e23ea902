"""Lexemes walked in C: a lexeme's inner state explored into an automaton, and its walk with end points.

A JSON string under a pattern is a small machine: the pattern's automaton, the escapes it allows and the
closing quote. Its parser states (``lexeme_automaton``: a key by value and the code points where characters
may be treated differently) are explored once, breadth first, with one representative character per
interval: every state's transition per interval, its allowed characters (for the bytes of a character split
across tokens) and whether it ends the lexeme. The compiled walker (``_native.walk_lexeme``) then walks the
vocabulary with that automaton, stops where the lexeme ends and returns those points, which the Python
walk resumes from exactly as it does after its own lexeme walk (core/walk.py, ``lexeme_result``). The mask
is bit-identical to the Python walk's (tests/test_native_lexeme.py).

Explored lazily, once per state key (shared by every schema with the same pattern), and only when the
states are few. A state that offers no ``lexeme_automaton`` (inside a ``\\uXXXX`` escape, whose hex digits would
make thousands of states) is a frontier: the compiled walk stops there and returns the point, and the
Python walk goes on below it within the same lexeme walk.

A lexeme that is one regex automaton (a grammar's terminal, ``lexeme_dfa``) needs no exploring: its DFA's
export (core/automaton.py) is walked as it is, from the root or below the end points of the lexeme before
(``compiled_below``), and it may end and read on in the same state, so C goes on past those points and
returns only those where a token leaves the automaton.
"""

from __future__ import annotations

import threading
import weakref
from bisect import bisect_right
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import backend
from .automaton import native_automaton
from .cache_release import register_memo
from .compiled_walk import native_run
from .flat_trie import arrays, flat_trie
from .protocol import CharacterParser
from .trie import IDS, Trie

MAX_STATES = 1024
"""Explorations that reach more states than this stay on the Python walk."""
_END = 0x110000
_SURROGATES = (0xD800, 0xDFFF)
_LOCK = threading.Lock()
_STATE_BYTES = 512
"""Approximate bytes of one explored parser state (the object, its key and its allowed characters)."""
_SHARED_START_BYTES = 160
"""Approximate bytes of one more start state of an automaton already counted (its key and entry)."""


def _representative(lo: int, hi: int) -> int | None:
    """A code point of [lo, hi] that UTF-8 can encode (not a surrogate), or None."""
    if _SURROGATES[0] <= lo <= _SURROGATES[1]:
        lo = _SURROGATES[1] + 1
    return lo if lo <= hi else None


def _columns(allowed: Any, edges: list[int]) -> list[int]:
    """The intervals (``edges[i]:edges[i+1]``) that meet the allowed characters."""
    out: list[int] = []
    for lo, hi in allowed.intervals:
        first, last = bisect_right(edges, lo) - 1, bisect_right(edges, hi) - 1
        out.extend(range(max(first, out[-1] + 1 if out else 0), last + 1))
    return out


def explore(start: CharacterParser) -> tuple[Any, list[CharacterParser], bytes, dict] | None:
    """The automaton of the states reachable from ``start``: (``_native.Automaton``, the parser state of
    each number, one stop byte per state — 1 where the lexeme has ended —, key -> number); None when a
    state offers no ``lexeme_automaton``, a character interval is not treated alike, or there are too many
    states."""
    found = start.lexeme_automaton()
    if found is None:
        return None
    key, points = found
    edges = sorted({0, _END, *(point for point in points if 0 <= point <= _END)})
    intervals = [(lo, hi - 1) for lo, hi in zip(edges, edges[1:])]
    reps = [_representative(lo, hi) for lo, hi in intervals]
    states: list[CharacterParser] = [start]
    index = {key: 0}
    rows: list[list[int]] = []
    frontier: set[int] = set()
    for number, state in enumerate(states):
        row = [-1] * len(intervals)
        if number in frontier:  # not explored: the walk stops here and Python goes on
            rows.append(row)
            continue
        allowed = state.allowed_characters()
        if state.can_end() and allowed.intervals:
            return None  # the walk stops where the lexeme may end: a lexeme that may also go on is not one
        for column in _columns(allowed, edges):
            lo, hi = intervals[column]
            rep = reps[column]
            if rep is None:
                continue
            if not allowed.contains_interval(lo, hi):
                return None  # the points do not separate what this state allows
            nxt = state.add_character(chr(rep))
            if nxt is None:
                continue
            got = nxt.lexeme_automaton()
            key = ("frontier", nxt.key()) if got is None else got[0]
            number = index.get(key)
            if number is None:
                if len(states) >= MAX_STATES:
                    return None
                number = index[key] = len(states)
                states.append(nxt)
                if got is None:
                    frontier.add(number)
            row[column] = number
        rows.append(row)
    table = np.array(rows, dtype=np.int32).reshape(len(states), len(intervals))
    allow_start = [0]
    allow_lo: list[int] = []
    allow_hi: list[int] = []
    for number, state in enumerate(states):
        if number not in frontier:
            for lo, hi in state.allowed_characters().intervals:
                allow_lo.append(lo)
                allow_hi.append(hi)
        allow_start.append(len(allow_lo))
    stop = bytes(1 if number in frontier or state.can_end() else 0 for number, state in enumerate(states))
    automaton = backend.native.Automaton(  # type: ignore[union-attr]
        class_lo=np.array([lo for lo, _ in intervals], dtype=np.int32),
        class_hi=np.array([hi for _, hi in intervals], dtype=np.int32),
        class_id=np.arange(len(intervals), dtype=np.int32),
        transitions=table.reshape(-1),
        accepting=np.array([state.can_end() for state in states], dtype=np.uint8),
        allow_start=np.array(allow_start, dtype=np.int32),
        allow_lo=np.array(allow_lo, dtype=np.int32),
        allow_hi=np.array(allow_hi, dtype=np.int32),
        classes=len(intervals),
    )
    return automaton, states, stop, index


_Export = tuple[Any, Callable[[int], CharacterParser], tuple[bytes, bytes], int]
"""(``_native.Automaton``, parser state by number, stop bytes unchecked and checked, start number)."""


def _stops(ended: bytes, frontier: bytes) -> tuple[bytes, bytes]:
    """``walk_lexeme``'s stop bytes: for an unchecked walk (1 at an end or a frontier state) and for a
    checked one (2 at an end: the caller decides those tokens too; 1 at a frontier state)."""
    unchecked = bytes(1 if e or f else 0 for e, f in zip(ended, frontier))
    checked = bytes(2 if e else (1 if f else 0) for e, f in zip(ended, frontier))
    return unchecked, checked


_UNEXPLORED = (None,)
"""The cached answer for a state whose automaton is not explored (``explore`` returned None)."""


def _export(memo: Any, state: CharacterParser) -> _Export | None:
    """The explored automaton of ``state``, cached in ``memo`` (the vocabulary's ``lexeme_automata``, under
    its memory budget: an evicted automaton is explored again, identically) by state key; every state
    explored is a start for later walks, so each is cached too."""
    found = state.lexeme_automaton()
    if found is None:
        return None
    key = found[0]
    hit = memo.get(key)
    if hit is not None:
        return hit[0]
    with _LOCK:
        hit = memo.get(key)
        if hit is not None:
            return hit[0]
        explored = explore(state)
        if explored is None:
            memo.put(key, _UNEXPLORED, _SHARED_START_BYTES)
            return None
        automaton, states, stop, index = explored
        ended = bytes(1 if state.can_end() else 0 for state in states)
        frontier = bytes(1 if s and not e else 0 for s, e in zip(stop, ended))
        stops = _stops(ended, frontier)
        columns = max(1, len(found[1]))  # (the start's class points: about the automaton's columns)
        export: _Export = (automaton, states.__getitem__, stops, index[key])
        memo.put(key, (export,), len(states) * (_STATE_BYTES + 4 * columns))
        for other, number in index.items():  # every state explored is a start for later walks
            if other != key and not (other.__class__ is tuple and other and other[0] == "frontier"):
                if memo.get(other) is None:
                    memo.put(other, ((automaton, states.__getitem__, stops, number),), _SHARED_START_BYTES)
        return export


def _from_tables(state: CharacterParser) -> _Export | None:
    """The export of a state whose parser builds its lexeme's tables itself (``lexeme_tables``)."""
    found = state.lexeme_tables()
    if found is None:
        return None
    tables, number = found
    compiled = tables.compiled
    if compiled is None:
        with _LOCK:
            compiled = tables.compiled
            if compiled is None:
                transitions = np.asarray(tables.transitions, dtype=np.int32).reshape(-1)
                classes = len(tables.class_lo)
                automaton = backend.native.Automaton(  # type: ignore[union-attr]
                    class_lo=np.asarray(tables.class_lo, dtype=np.int32),
                    class_hi=np.asarray(tables.class_hi, dtype=np.int32),
                    class_id=np.arange(classes, dtype=np.int32),
                    transitions=transitions,
                    accepting=np.frombuffer(tables.ends, dtype=np.uint8),
                    allow_start=np.asarray(tables.allow_start, dtype=np.int32),
                    allow_lo=np.asarray(tables.allow_lo, dtype=np.int32),
                    allow_hi=np.asarray(tables.allow_hi, dtype=np.int32),
                    classes=classes,
                )
                compiled = tables.compiled = (automaton, _stops(tables.ends, tables.frontier))
                tables.transitions = None  # (the automaton holds its own copy)
    automaton, stops = compiled
    return automaton, tables.state_of, stops, number


_NODES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
"""Per vocabulary: its flat trie's arrays, and flat trie node -> dict trie node (for the points a compiled
walk returns)."""
_NODES_KEPT = 1 << 16


@register_memo
def _forget_nodes() -> None:
    """Empties the node memos when a burst of enforcers ends (core/cache_release.py): their int keys, made
    one at a time during walks, would each keep an arena of the small-object allocator."""
    for _, memo in list(_NODES.values()):
        memo.clear()
    for memo in list(_FLAT.values()):
        memo.clear()


def _flat_arrays(vocabulary: Any, trie: Any) -> dict[str, np.ndarray]:
    """The flat trie's arrays of a vocabulary (kept with its node memo)."""
    held = _NODES.get(vocabulary)
    if held is None:
        held = _NODES.setdefault(vocabulary, (arrays(trie), {}))
    return held[0]


def _dict_node(vocabulary: Any, trie: Any, node: int, depth: int) -> Trie:
    """The dict trie node of flat node ``node`` (at ``depth`` bytes), memoised per vocabulary."""
    held = _NODES.get(vocabulary)
    if held is None:
        held = _NODES.setdefault(vocabulary, (arrays(trie), {}))
    flat, memo = held
    hit = memo.get(node)
    if hit is None:
        path = vocabulary.token_bytes[int(flat["tok_ids"][flat["tok_start"][node]])][:depth]
        hit = vocabulary.trie
        for byte in path:
            hit = hit[byte]
        if len(memo) >= _NODES_KEPT:
            memo.clear()
        memo[node] = hit
    return hit


def compiled_lexeme(
    vocabulary: Any, inner: CharacterParser, checked: bool = False, first: bytes | None = None
) -> tuple[np.ndarray, list, list] | None:
    """The walk of a lexeme's inner state in C, as ``walk.lexeme_result`` needs it: the packed mask of the
    tokens that stay inside the lexeme (and, unless ``checked``, of those that end where it ends); the end
    points — the vocabulary trie node and the parser state there — where tokens go on past its end (when
    ``checked``, every point where it ends: the full state decides those tokens); and the frontier points,
    where the walk reached a state it does not follow (inside a ``\\uXXXX`` escape) and tokens go on, for
    the Python walk to continue from. ``first``: only the tokens starting with these bytes. None where the
    Python walk answers."""
    if not backend.active():
        return None
    export = _from_tables(inner) or _export(vocabulary.lexeme_automata, inner)
    if export is None:
        return None
    automaton, state_of, stops, number = export
    trie = flat_trie(vocabulary)
    mask = np.empty((vocabulary.size + 31) // 32, dtype=np.int32)
    stop = stops[1] if checked else stops[0]
    if first is None:
        run = native_run(vocabulary, inner) if automaton.wide_run(number) else None
        raw = backend.native.walk_lexeme(trie, automaton, number, stop, mask, None, run)  # type: ignore[union-attr]
    else:
        raw = backend.native.walk_lexeme(trie, automaton, number, stop, mask, first)  # type: ignore[union-attr]
    ends: list[tuple[Trie, CharacterParser]] = []
    frontier: list[tuple[Trie, CharacterParser]] = []
    if raw:
        states: dict[int, CharacterParser] = {}
        for node, state, depth in np.frombuffer(raw, dtype=np.int32).reshape(-1, 3).tolist():
            found = states.get(state)
            if found is None:
                found = states[state] = state_of(state)
            (ends if found.can_end() else frontier).append((_dict_node(vocabulary, trie, node, depth), found))
    return mask, ends, frontier


_FLAT: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
"""Per vocabulary: id(dict trie node) -> (the node, (its flat trie node, its depth in bytes), or None for a
trie that is not the vocabulary's)."""
_STOPS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
"""Per regex automaton: ``walk_lexeme_below``'s stop bytes (see ``_dfa_stops``)."""
_BELOW_MIN_TOKENS = 64
"""Below nodes with fewer tokens than this in all, the Python walk (a few steps, its ids as a list) is
cheaper than a compiled walk and a packed mask."""


def _node_memo(vocabulary: Any) -> dict:
    held = _FLAT.get(vocabulary)
    if held is None:
        held = _FLAT.setdefault(vocabulary, {})
    return held


def _flat_node(vocabulary: Any, trie: Any, node: Trie) -> tuple[int, int] | None:
    """(flat trie node, depth in bytes) of a vocabulary trie node, memoised per vocabulary; None for a trie
    that is not the vocabulary's own (the exits of a free-run table, a merged copy)."""
    held = _node_memo(vocabulary)
    hit = held.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    found = _locate(vocabulary, trie, node) if node.__class__ is dict else None
    if len(held) >= _NODES_KEPT:
        held.clear()
    held[id(node)] = (node, found)  # holds ``node``: its id stays unique
    return found


def _locate(vocabulary: Any, trie: Any, node: Trie) -> tuple[int, int] | None:
    """The flat node of ``node``: the bytes leading to it are the first bytes of any token below it."""
    steps, current = 0, node
    while True:
        if current.__class__ is int:
            token = current
            break
        below = current.get(IDS)
        if below is not None:
            token = below if below.__class__ is int else below[0]
            break
        current = next((child for byte, child in current.items() if byte != IDS), None)
        if current is None:
            return None  # (an empty trie)
        steps += 1
    data = vocabulary.token_bytes[token]
    depth = len(data) - steps
    starts, edge_bytes, children = _flat_views(vocabulary, trie)
    number = 0
    for byte in data[:depth]:
        at = edge_bytes.find(byte, starts[number], starts[number + 1])
        if at < 0:
            return None
        number = children[at]
    if _dict_node(vocabulary, trie, number, depth) is not node:
        return None  # a trie of its own (the exits of a free-run table), not a node of the vocabulary's
    return number, depth


_VIEWS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _flat_views(vocabulary: Any, trie: Any) -> tuple[memoryview, bytes, memoryview]:
    """Edge starts, edge bytes and edge children of a vocabulary's flat trie, as Python reads them fastest
    one item at a time."""
    found = _VIEWS.get(vocabulary)
    if found is None:
        found = _VIEWS.setdefault(
            vocabulary,
            (memoryview(trie.edge_start).cast("i"), trie.edge_byte, memoryview(trie.edge_child).cast("i")),
        )
    return found


def _dfa_stops(dfa: Any) -> bytes:
    """Per automaton state: 3 where it accepts and reads on (the lexeme may end and go on), 1 where it
    accepts and reads nothing more (the lexeme has ended), 0 elsewhere."""
    found = _STOPS.get(dfa)
    if found is None:
        found = _STOPS[dfa] = _stop_bytes(dfa.finals, dfa.transitions)
    return found


def _stop_bytes(finals: frozenset, transitions: list) -> bytes:
    """``_dfa_stops`` where not memoised yet (apart: its generator would make ``finals`` a cell at every
    call)."""
    return bytes((3 if moves else 1) if state in finals else 0 for state, moves in enumerate(transitions))


class FlatSources:
    """Trie nodes of the vocabulary to walk below in C (``compiled_below``), each with the bytes of its edges
    to walk (``sources``), and where the compiled walk starts below them (their flat trie nodes and depths,
    the bytes, made at the first compiled walk): every terminal walked below the same nodes (each branch a
    fresh set may start) reuses them."""

    __slots__ = ("sources", "_flat")

    def __init__(self, sources: tuple[tuple[Trie, bytes], ...]) -> None:
        self.sources = sources
        self._flat: tuple | None | bool = False


def _flat_sources(vocabulary: Any, trie: Any, sources: Sequence[tuple[Trie, bytes | None]]) -> tuple | None:
    """``compiled_below``'s start arrays below ``sources``: (flat node and depth pairs, the bytes of the edges
    to walk, where each node's bytes start); None for a trie that is not the vocabulary's or few tokens below
    (they depend on the nodes alone, not on the lexeme walked)."""
    held = _node_memo(vocabulary)
    points: list[int] = []
    for node, _ in sources:
        hit = held.get(id(node))
        at = hit[1] if hit is not None and hit[0] is node else _flat_node(vocabulary, trie, node)
        if at is None:
            return None
        points.extend(at)
    pairs = np.array(points, dtype=np.int32)
    flat = _flat_arrays(vocabulary, trie)
    nodes = pairs[0::2]
    if int((flat["tok_start"][flat["subtree_end"][nodes]] - flat["tok_start"][nodes]).sum()) < _BELOW_MIN_TOKENS:
        return None
    if sources[0][1] is None:  # every edge of each node (one node: a walk from the root)
        return pairs, b"", b""
    firsts = b"".join([taken for _, taken in sources])  # type: ignore[misc]
    first_starts = np.zeros(len(sources) + 1, dtype=np.int32)
    np.cumsum([len(taken) for _, taken in sources], out=first_starts[1:])  # type: ignore[arg-type]
    return pairs, firsts, first_starts


def compiled_below(
    vocabulary: Any, inner: CharacterParser, sources: Sequence[tuple[Trie, bytes | None]] | FlatSources
) -> tuple[np.ndarray, list] | None:
    """The walk of a lexeme that is one regex automaton (``lexeme_dfa``) below trie nodes of the vocabulary,
    in C: ``sources`` holds (node, the bytes of its edges to walk), or one (node, None) to walk every edge
    (or is a ``FlatSources``, which keeps the arrays the walk starts from for the next lexeme walked below
    the same nodes); the tokens at the nodes themselves are left out. It returns the packed mask of the
    tokens the lexeme reads, and the end points (dict trie node, inner state there) where it may end and
    some token below goes on with a character it does not read: the points whose continuations the full
    state must walk (``walk._end_groups`` merges only those characters). None where the Python walk answers:
    backend off, no such lexeme, a trie that is not the vocabulary's (the exits of a run table), few tokens
    below, or an automaton too big to export."""
    if not backend.active():
        return None
    found = inner.lexeme_dfa()
    if found is None:
        return None
    dfa, state, state_of = found
    trie = flat_trie(vocabulary)
    if isinstance(sources, FlatSources):
        start = sources._flat
        if start is False:
            start = sources._flat = _flat_sources(vocabulary, trie, sources.sources)
    else:
        start = _flat_sources(vocabulary, trie, sources)
    if start is None:
        return None
    automaton = native_automaton(dfa)
    if automaton is None:
        return None
    pairs, firsts, first_starts = start  # type: ignore[misc]
    mask = np.empty((vocabulary.size + 31) // 32, dtype=np.int32)
    raw = backend.native.walk_lexeme_below(  # type: ignore[union-attr]
        trie, automaton, state, _dfa_stops(dfa), mask, pairs, firsts, first_starts
    )
    ends: list[tuple[Trie, CharacterParser]] = []
    if raw:
        states: dict[int, CharacterParser] = {}
        held = _node_memo(vocabulary)
        _flat_arrays(vocabulary, trie)
        dict_nodes = _NODES[vocabulary][1]  # (made with the flat arrays)
        for point, at, depth in np.frombuffer(raw, dtype=np.int32).reshape(-1, 3).tolist():
            made = states.get(at)
            if made is None:
                made = states[at] = state_of(at)
            node = dict_nodes.get(point)
            if node is None:
                node = _dict_node(vocabulary, trie, point, depth)
            if id(node) not in held and len(held) < _NODES_KEPT:
                held[id(node)] = (node, (point, depth))  # where a walk below this end point starts
            ends.append((node, made))
    return mask, ends
