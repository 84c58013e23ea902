"""A grammar state one lexeme on, as one automaton: what a state reads until a second lexeme ends.

A grammar state whose one lexeme (of terminal ``T``, started after Earley set ``s``) is in progress reads
characters that either go on with that lexeme or, wherever it may end, start a lexeme of a terminal that
``A = s.scan(T)`` expects (or an %ignore one, which leaves ``A`` as it is). Until one of those *next* lexemes
ends, which set the parse is in depends on nothing but ``T``'s automaton state and the terminals ``A``
expects, so that stretch of the state's language is regular, and the same at every position with the same
terminal, automaton state and expected terminals. ``JointLexer`` is it as a ``CompiledRegex``: its states are
sets of configurations ``(component, automaton state)`` (component 0 is ``T`` from ``s``, component ``i``
the ``i``-th lexer ``A`` may start) and whether ``A`` is fresh (a new lexeme may start); a state where a
next lexeme (not %ignore) has just ended is *final* and reads nothing more: there the grammar state itself
takes over (``GrammarState.lexeme`` resumes it from the configurations, with the Earley sets it needs), as
it does for a terminal's end. States past ``_MAX_STATES`` are final too (the same hand-over, earlier), so
the automaton stays small. Every walk of it is the grammar state's own walk until those points, so masks
are exact; its vocabulary walks are cached by the automaton's value, shared by every position and every
grammar object whose terminals are the same.
"""

from __future__ import annotations

from collections.abc import Hashable

from ..core.automaton import class_points
from ..core.cache_release import register_memo
from ..parsers.regex import CompiledRegex

_MAX_STATES = 256
"""States a joint automaton explores before the rest are handed to the grammar state (made final)."""

_JOINTS: dict[Hashable, JointLexer | None] = {}
register_memo(_JOINTS.clear)
_SERIAL = [0]


class JointLexer(CompiledRegex):
    """A ``CompiledRegex`` over the configurations of a grammar state one lexeme on (see the module notes).
    ``configurations[i]`` lists state ``i``'s ``(component, automaton state)`` pairs, ``fresh[i]`` whether a
    new lexeme may start there."""

    configurations: list[tuple[tuple[int, int], ...]]
    fresh: list[bool]


def joint_lexer(components: tuple[CompiledRegex, ...], ignored: tuple[bool, ...], q: int, fresh: bool) -> JointLexer | None:
    """The joint automaton of a state whose lexeme of ``components[0]`` is in automaton state ``q`` (with the
    set after it fresh when ``fresh``) and whose next lexemes are ``components[1:]`` (``ignored[i]``: the
    %ignore ones); memoised by value. None when no character can be read at the start."""
    key = (tuple(dfa.ident for dfa in components), ignored, q, fresh)
    found = _JOINTS.get(key, False)
    if found is False:
        if len(_JOINTS) >= 1 << 12:
            _JOINTS.clear()
        found = _JOINTS[key] = _build(components, ignored, q, fresh)
    return found  # type: ignore[return-value]


def _build(components: tuple[CompiledRegex, ...], ignored: tuple[bool, ...], q: int, fresh: bool) -> JointLexer | None:
    # character classes: the intervals where no component's symbol changes
    points: set[int] = set()
    for dfa in {id(dfa): dfa for dfa in components}.values():
        points |= class_points(dfa)
    edges = sorted(point for point in points if point <= 0x110000)
    classes: dict[tuple, int] = {}
    ranges: list[tuple[int, int, int]] = []
    for lo, nxt in zip(edges, edges[1:]):
        ch = chr(lo)
        symbols = tuple(_symbol(dfa, ch, lo) for dfa in components)
        if all(symbol is None for symbol in symbols):
            continue
        cls = classes.setdefault(symbols, len(classes))
        if ranges and ranges[-1][2] == cls and ranges[-1][1] == lo - 1:
            ranges[-1] = (ranges[-1][0], nxt - 1, cls)
        else:
            ranges.append((lo, nxt - 1, cls))
    # per component, per symbol: the classes it covers
    inverse: list[dict[int, list[int]]] = [{} for _ in components]
    for symbols, cls in classes.items():
        for index, symbol in enumerate(symbols):
            if symbol is not None:
                inverse[index].setdefault(symbol, []).append(cls)
    finals = [dfa.finals for dfa in components]
    start = (frozenset(((0, q),)), fresh)
    number: dict[tuple, int] = {start: 0}
    order = [start]
    transitions: list[dict[int, int]] = []
    stops: set[int] = set()
    starting = range(1, len(components))
    index = 0
    while index < len(order):
        configurations, is_fresh = order[index]
        if index in stops:
            transitions.append({})
            index += 1
            continue
        moved: dict[int, set[tuple[int, int]]] = {}
        for component, state in configurations:
            covered = inverse[component]
            for symbol, target in components[component].transitions[state].items():
                for cls in covered.get(symbol, ()):
                    moved.setdefault(cls, set()).add((component, target))
        if is_fresh:
            for component in starting:
                covered = inverse[component]
                for symbol, target in components[component].transitions[0].items():
                    for cls in covered.get(symbol, ()):
                        moved.setdefault(cls, set()).add((component, target))
        row: dict[int, int] = {}
        for cls, reached in moved.items():
            after, stop = False, False
            for component, state in reached:
                if state in finals[component]:
                    if component == 0 or ignored[component]:
                        after = True
                    else:
                        stop = True
            target_key = (frozenset(reached), after)
            target = number.get(target_key)
            if target is None:
                target = number[target_key] = len(order)
                order.append(target_key)
                if stop or len(order) > _MAX_STATES:
                    stops.add(target)
            row[cls] = target
        transitions.append(row)
        index += 1
    if not transitions[0]:
        return None
    _SERIAL[0] += 1
    joint = JointLexer(f"<joint {_SERIAL[0]}>", parts=({}, None, transitions, sorted(stops), ranges))
    joint.ident = ("joint", _SERIAL[0])
    joint.configurations = [tuple(sorted(configurations)) for configurations, _ in order]
    joint.fresh = [is_fresh for _, is_fresh in order]
    return joint


def _symbol(dfa: CompiledRegex, ch: str, cp: int) -> int | None:
    """``dfa``'s symbol for the character ``ch`` (code point ``cp``), as its ``step`` finds it."""
    symbol = dfa.symbol_of.get(ch)
    if symbol is None:
        symbol = dfa._range_symbol(cp) if dfa.ranges else dfa.else_symbol
    return symbol
