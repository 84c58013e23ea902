"""Automata built without interegular: from an explicit transition table, and boolean products of automata.

Some languages have a small description but a large automaton (a format that must remember a value for a
while, such as a leap second's hour and minute until its offset). interegular builds those too slowly (its
state look-up is a list search), so they are written as tables here and turned into the same
``CompiledRegex`` every content automaton reads. ``combine`` then intersects them with patterns (and the
complements of patterns) by a breadth-first product over dictionaries; with string patterns only it is
``regex.compile_boolean`` unchanged.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Hashable, Iterable, Mapping

from ..core.cache_release import register_memo
from ..core.errors import RegexError
from .regex import COMPILE_SECONDS, CompiledRegex, compile_boolean, compile_regex, live_states, time_limit_error

Item = "str | CompiledRegex"
ELSE = "\x00else"
"""Key of ``from_table`` rows: every character that no row lists (a pattern's ``[\\s\\S]``)."""


def from_table(label: str, table: Mapping[Hashable, Mapping[str, Hashable]], initial: Hashable,
               finals: Iterable[Hashable]) -> CompiledRegex:  # fmt: skip
    """A ``CompiledRegex`` named ``label`` from ``table[state][char] = next state`` (the key ``ELSE``: every
    character that no state lists): characters with the same
    transitions everywhere share a symbol, states that cannot reach a final one are pruned, the initial state
    becomes state 0. ``label`` must identify the language (lexeme caches are keyed by it)."""
    finals = set(finals)
    states = list(table)
    for edges in table.values():
        states.extend(t for t in edges.values() if t not in table)
    order = list(dict.fromkeys([initial, *states]))
    live = live_states(table, finals)
    if initial not in live:
        raise RegexError(f"{label} matches no string at all")
    order = [s for s in order if s in live]
    number = {s: i for i, s in enumerate(order)}
    chars = sorted({ch for edges in table.values() for ch in edges} - {ELSE})
    signature: dict[tuple, int] = {}
    symbol_of: dict[str, int] = {}
    for ch in chars:
        sig = tuple(number.get(table.get(s, {}).get(ch)) for s in order)
        symbol_of[ch] = signature.setdefault(sig, len(signature))
    # the characters no state lists get a symbol of their own (CompiledRegex derives its class from the rest)
    else_symbol = len(signature) if any(ELSE in edges for edges in table.values()) else None
    transitions: list[dict[int, int]] = []
    for s in order:
        row: dict[int, int] = {}
        for ch, target in table.get(s, {}).items():
            if target in number:
                row[else_symbol if ch == ELSE else symbol_of[ch]] = number[target]  # type: ignore[index]
        transitions.append(row)
    finals_out = sorted(number[s] for s in finals if s in number)
    return CompiledRegex(label, parts=(symbol_of, else_symbol, transitions, finals_out, []))


_CACHE: dict[tuple, CompiledRegex] = {}
register_memo(_CACHE.clear)  # emptied when a burst of enforcers ends (core/cache_release.py)
_CACHE_SIZE = 256
"""Combined automata kept (each as big as a product of its clauses' automata)."""
_LOCK = threading.Lock()


def combine(clauses: tuple[tuple[tuple[Item, ...], tuple[Item, ...]], ...]) -> CompiledRegex:
    """Like ``regex.compile_boolean`` (strings accepted by some clause: every ``must`` automaton and none of
    its ``must_not``), where an item may also be a ``CompiledRegex`` (a table-built format). Memoised."""
    if all(isinstance(item, str) for must, never in clauses for item in (*must, *never)):
        return compile_boolean(clauses)  # type: ignore[arg-type]

    def name(item: str | CompiledRegex) -> str:
        return item if isinstance(item, str) else item.pattern

    key = tuple((tuple(map(name, must)), tuple(map(name, never))) for must, never in clauses)
    with _LOCK:
        hit = _CACHE.get(key)
    if hit is not None:
        return hit
    label = "|".join("&".join([*(f"({m})" for m in must), *(f"!({n})" for n in never)]) or "*" for must, never in key)
    parts: list[tuple[list[CompiledRegex], list[CompiledRegex]]] = []
    anything = compile_regex(r"[\s\S]*")  # a clause with no ``must`` still reads every character
    for must, never in clauses:
        must = (anything, *must)
        as_dfa = [item if isinstance(item, CompiledRegex) else compile_regex(item) for item in (*must, *never)]
        parts.append((as_dfa[: len(must)], as_dfa[len(must) :]))
    compiled = _product(label, parts)
    with _LOCK:
        if len(_CACHE) >= _CACHE_SIZE:
            _CACHE.clear()  # rare; rebuilt on demand (a module-level memo stays bounded)
        _CACHE[key] = compiled
    return compiled


def _product(label: str, clauses: list[tuple[list[CompiledRegex], list[CompiledRegex]]]) -> CompiledRegex:
    """Breadth-first product over the joint alphabet; a product state is one state (or None: dead) per
    automaton. Built under ``regex.COMPILE_SECONDS``."""
    dfas = [d for must, never in clauses for d in (*must, *never)]
    listed = sorted({ch for d in dfas for ch in d.symbol_of})
    groups: dict[tuple, list[str]] = {}
    for ch in listed:
        groups.setdefault(tuple(d.symbol_of.get(ch, d.else_symbol) for d in dfas), []).append(ch)
    else_sig = tuple(d.else_symbol for d in dfas)
    sigs: list[tuple | None] = list(groups)
    if any(s is not None for s in else_sig):
        sigs.append(None)  # the characters no automaton lists
    spans, at = [], 0
    for must, never in clauses:
        spans.append((at, at + len(must), at + len(must) + len(never)))
        at += len(must) + len(never)

    musts = [(a, b) for a, b, _ in spans]

    def alive(state: tuple) -> bool:
        for a, b in musts:
            if None not in state[a:b]:
                return True
        return False

    def final(state: tuple) -> bool:
        def in_final(i: int) -> bool:
            return state[i] is not None and state[i] in dfas[i].finals

        return any(all(in_final(i) for i in range(a, b)) and not any(in_final(i) for i in range(b, c))
                   for a, b, c in spans)  # fmt: skip

    tables = [d.transitions for d in dfas]
    deadline = time.monotonic() + COMPILE_SECONDS
    start = tuple(0 for _ in dfas)
    table: dict[tuple, dict[str, tuple]] = {}
    todo = [start]
    seen = {start}
    while todo:
        if time.monotonic() > deadline:
            raise time_limit_error(f"the combination {label!r} did not finish building within {COMPILE_SECONDS:g} s")
        state = todo.pop()
        edges: dict[str, tuple] = {}
        for sig in sigs:
            symbols = else_sig if sig is None else sig
            nxt = tuple([None if s is None or sym is None else rows[s].get(sym)
                         for s, sym, rows in zip(state, symbols, tables)])  # fmt: skip
            if not alive(nxt):
                continue
            for ch in groups[sig] if sig is not None else (ELSE,):
                edges[ch] = nxt
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
        table[state] = edges
    return from_table(label, table, start, [s for s in table if final(s)])
