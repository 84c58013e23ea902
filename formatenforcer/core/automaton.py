"""Deterministic automata over characters exported to the compiled walker (``_native.Automaton``).

A regex DFA (``CompiledRegex``, regex.py) is a symbol per character (a dict for the characters a pattern
names, code-point ranges for the blocks of stand-ins, one symbol for every other character) and a dict of
transitions per state. The export flattens that into arrays C can run without calling Python:

- code point -> class: sorted, disjoint intervals ``class_lo``/``class_hi``/``class_id`` (no interval: no class),
  computed by asking the automaton's own ``symbol`` look-up at every point where its answer can change, so
  the classes are the Python step's by construction;
- ``transitions``: a ``states x classes`` table, -1 where a class is refused;
- ``accepting``: one byte per state;
- per state, the sorted intervals of the characters it accepts (``CompiledRegex.charset``: the class intervals
  it takes, merged, computed in C from the two above), which decide the tokens that end inside a UTF-8
  character exactly as the Python walk does (``CharSet.allows_utf8_prefix``).

Exported once per automaton and kept as long as it lives.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

import numpy as np

from . import backend
from .cache_release import register_memo

MAX_TABLE = 1 << 24
"""Automata whose ``states x classes`` table has more entries than this stay on the Python walk (64 MB)."""

_EXPORTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_BY_IDENT: dict[Any, Any] = {}
"""An automaton's language (``CompiledRegex.ident``) -> its export: equal idents are equal automata, state
numbers included (the lexeme walks shared across schemas rely on the same)."""
register_memo(_BY_IDENT.clear)  # emptied when a burst of enforcers ends (core/cache_release.py)
_LOCK = threading.Lock()
_END = 0x110000


def _symbol(dfa: Any, cp: int) -> int | None:
    """The DFA's symbol for the code point ``cp``, as ``CompiledRegex.step`` finds it."""
    symbol = dfa.symbol_of.get(chr(cp))
    if symbol is None:
        symbol = dfa._range_symbol(cp) if dfa.ranges else dfa.else_symbol
    return symbol


def class_points(dfa: Any) -> set[int]:
    """The code points where a ``CompiledRegex``'s symbol may change (each starts an interval of one symbol)."""
    points = {0, _END}
    for ch in dfa.symbol_of:
        if len(ch) == 1:
            points.update((ord(ch), ord(ch) + 1))
    for lo, hi, _ in dfa.ranges:
        points.update((lo, hi + 1))
    return points


def transition_table(dfa: Any) -> tuple[list[int], list[int], list[int], np.ndarray] | None:
    """A ``CompiledRegex`` as class intervals (``class_lo``, ``class_hi``, ``class_id``: sorted, disjoint, one
    class per symbol) and its ``states x classes`` table (-1: refused); None when the table would be too big."""
    edges = sorted(point for point in class_points(dfa) if point <= _END)
    index: dict[int, int] = {}
    lows: list[int] = []
    highs: list[int] = []
    ids: list[int] = []
    for lo, nxt in zip(edges, edges[1:]):
        symbol = _symbol(dfa, lo)
        if symbol is None:
            continue
        cls = index.setdefault(symbol, len(index))
        if ids and ids[-1] == cls and highs[-1] == lo - 1:
            highs[-1] = nxt - 1
        else:
            lows.append(lo)
            highs.append(nxt - 1)
            ids.append(cls)
    states = len(dfa.transitions)
    classes = max(len(index), 1)
    if states * classes > MAX_TABLE:
        return None
    flat = [-1] * (states * classes)  # (a list, then one array: numpy's item assignment is the slow part)
    get = index.get
    for row, moves in enumerate(dfa.transitions):
        base = row * classes
        for symbol, target in moves.items():
            cls = get(symbol)
            if cls is not None:
                flat[base + cls] = target
    return lows, highs, ids, np.array(flat, dtype=np.int32).reshape(states, classes)


def automaton_arrays(dfa: Any) -> dict[str, Any] | None:
    """The arrays of ``_native.Automaton`` for a ``CompiledRegex``; None when its table would be too big."""
    found = transition_table(dfa)
    if found is None:
        return None
    lows, highs, ids, table = found
    states, classes = table.shape
    accepting = np.zeros(states, dtype=np.uint8)
    accepting[sorted(dfa.finals)] = 1
    return {
        "class_lo": np.array(lows, dtype=np.int32),
        "class_hi": np.array(highs, dtype=np.int32),
        "class_id": np.array(ids, dtype=np.int32),
        "transitions": table.reshape(-1),
        "accepting": accepting,
        # (each state's allowed characters, ``CompiledRegex.charset``: the classes it takes, merged in C)
        "allow_start": None,
        "allow_lo": None,
        "allow_hi": None,
        "classes": classes,
    }


def native_automaton(dfa: Any) -> Any:
    """The ``_native.Automaton`` of a ``CompiledRegex`` (exported once, kept while it lives, and shared by
    the automata of the same language, ``dfa.ident``: every schema's ``date-time`` is one export); None when
    it stays on the Python walk (too big)."""
    hit = _EXPORTS.get(dfa)
    if hit is None:
        with _LOCK:
            hit = _EXPORTS.get(dfa)
            if hit is None:
                ident = getattr(dfa, "ident", None)
                hit = None if ident is None else _BY_IDENT.get(ident)
                if hit is None:
                    found = automaton_arrays(dfa)
                    hit = False if found is None else backend.native.Automaton(**found)  # type: ignore[union-attr]
                    if ident is not None:
                        if len(_BY_IDENT) >= 128:
                            _BY_IDENT.clear()
                        _BY_IDENT[ident] = hit
                _EXPORTS[dfa] = hit
    return hit or None
