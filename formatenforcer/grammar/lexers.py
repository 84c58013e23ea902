"""The lexemes a grammar state may read next, side by side, for the walk below a point where a lexeme ended.

A grammar state (parser.py) whose next characters may go to several lexemes (one that may end or go on, the
ones the Earley sets after it expect, the %ignore ones) has no single terminal to hand the token walk. Walking
it whole steps its Earley sets at every trie node, anew at every position. ``LexersState`` runs those lexemes'
automata side by side and nothing else: its key is their values (which automata, in which states), so its
walk below a trie node is cached once and shared by every position, grammar and schema whose next lexemes are
alike. Where one of them may end, the grammar state is resumed with only the lexemes that may *start* there
(``Lexeme.fresh_ends``): those walk the continuations below that point (from their own cached walks, in
turn), while ``LexersState`` walks on past it with the lexemes still going on. The union of the two is the
grammar state's language, however its lexemes may be split.
"""

from __future__ import annotations

from collections.abc import Hashable

from ..core.charset import EMPTY, CharSet
from ..core.hooks import FreeRun
from ..core.protocol import CharacterParser
from ..parsers.regex import CompiledRegex

_INTERNED = 1 << 16
"""States kept for reuse (a plain dict, cleared when full)."""


class LexersState(CharacterParser):
    """Automata ``dfas`` side by side, in states ``states`` (-1: that one has refused a character), having
    read at least one character when ``started`` (no lexeme is empty, and a lexeme that may end where the
    walk starts has been resumed there already: none may end before reading one)."""

    __slots__ = ("_dfas", "_states", "_started", "_key", "_next", "_charset", "_ends", "_run")

    _MEMO: dict[Hashable, LexersState] = {}

    def __init__(self, dfas: tuple[CompiledRegex, ...], states: tuple[int, ...], started: bool) -> None:
        self._dfas, self._states, self._started = dfas, states, started
        self._key = ("lexers", tuple(dfa.ident for dfa in dfas), states, started)
        self._next: dict[str, LexersState | None] = {}
        self._charset: CharSet | None = None
        self._ends = started and any(q >= 0 and q in dfa.finals for dfa, q in zip(dfas, states))
        self._run: FreeRun | None | bool = False

    @classmethod
    def of(cls, dfas: tuple[CompiledRegex, ...], states: tuple[int, ...], started: bool) -> LexersState:
        key = (tuple(dfa.ident for dfa in dfas), states, started)
        found = cls._MEMO.get(key)
        if found is None or any(a is not b for a, b in zip(found._dfas, dfas)):
            if len(cls._MEMO) >= _INTERNED:
                cls._MEMO.clear()
            found = cls._MEMO[key] = cls(dfas, states, started)
        return found

    @property
    def states(self) -> tuple[int, ...]:
        """Each automaton's state (-1: refused)."""
        return self._states

    def add_character(self, ch: str) -> LexersState | None:
        found = self._next.get(ch, False)
        if found is False:
            targets = []
            live = False
            for dfa, q in zip(self._dfas, self._states):
                target = None if q < 0 else dfa.step(q, ch)
                if target is None:
                    targets.append(-1)
                else:
                    targets.append(target)
                    live = True
            found = LexersState.of(self._dfas, tuple(targets), True) if live else None
            if len(self._next) < 256:
                self._next[ch] = found
        return found  # type: ignore[return-value]

    def allowed_characters(self) -> CharSet:
        found = self._charset
        if found is None:
            intervals = [iv for dfa, q in zip(self._dfas, self._states) if q >= 0 for iv in dfa.charset(q).intervals]
            found = self._charset = CharSet(intervals) if intervals else EMPTY
        return found

    def can_end(self) -> bool:
        return self._ends

    def free_run(self) -> FreeRun | None:
        """With one automaton left, its run (as ``TerminalState.free_run``): an identifier's letters."""
        found = self._run
        if found is False:
            found = self._run = self._find_run()
        return found  # type: ignore[return-value]

    def _find_run(self) -> FreeRun | None:
        live = [i for i, q in enumerate(self._states) if q >= 0]
        if len(live) != 1:
            return None
        (index,) = live
        dfa, states = self._dfas[index], self._states
        run = dfa.run(states[index])
        if run is None:
            return None
        chain, finals = run.chain, dfa.finals
        ends_inside = any(state in finals for state in chain[1:]) or (run.loops and chain[-1] in finals)
        if ends_inside and not run.loops:
            return None  # (see TerminalState.free_run)
        dfas = self._dfas

        def after(n: int) -> LexersState:
            if n == 0:
                return self
            moved = list(states)
            moved[index] = run.state_after(n)
            return LexersState.of(dfas, tuple(moved), True)

        return FreeRun(run.chars, run.max_length, after, ends_inside)

    def key(self) -> Hashable:
        return self._key

    def shared_lexeme_key(self, horizon: int) -> Hashable | None:
        return self._key

    def __repr__(self) -> str:
        return f"LexersState(states={self._states}, started={self._started})"


def _rank(dfa: CompiledRegex, q: int) -> tuple[str, int]:
    return (repr(dfa.ident), q)


def lexers_start(components: list[tuple[CompiledRegex, int, object]]) -> tuple[LexersState, tuple[tuple, ...]]:
    """The ``LexersState`` of automata ``(dfa, state, origin)`` in a canonical order, equal components
    merged (they stay equal), and per automaton the origins it stands for."""
    merged: dict[tuple[str, int], tuple[CompiledRegex, int, list]] = {}
    for dfa, q, origin in components:
        # (automata of one value are one automaton, as for TerminalState: the walks are keyed by value)
        merged.setdefault(_rank(dfa, q), (dfa, q, []))[2].append(origin)
    order = sorted(merged)
    dfas = tuple(merged[rank][0] for rank in order)
    states = tuple(merged[rank][1] for rank in order)
    return LexersState.of(dfas, states, False), tuple(tuple(merged[rank][2]) for rank in order)
