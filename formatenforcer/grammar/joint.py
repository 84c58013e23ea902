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

_END = 0x110000
_JOINTS: dict[Hashable, JointLexer | None] = {}
register_memo(_JOINTS.clear)
_STEPS: dict[int, tuple[CompiledRegex, list[tuple[int, int | None]]]] = {}
register_memo(_STEPS.clear)
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
    # character classes: the intervals where no component's symbol changes, swept over every component's
    # own change points at once
    events: list[tuple[int, int, int | None]] = []
    for index, dfa in enumerate(components):
        for point, symbol in _symbol_steps(dfa):
            events.append((point, index, symbol))
    events.sort(key=_point)
    current: list[int | None] = [None] * len(components)
    classes: dict[tuple, int] = {}
    ranges: list[tuple[int, int, int]] = []
    at, count = 0, len(events)
    while at < count:
        lo = events[at][0]
        while at < count and events[at][0] == lo:
            current[events[at][1]] = events[at][2]
            at += 1
        hi = (events[at][0] if at < count else _END) - 1
        symbols = tuple(current)
        cls = classes.get(symbols)
        if cls is None:
            if symbols.count(None) == len(symbols):
                continue
            cls = classes[symbols] = len(classes)
        if ranges and ranges[-1][2] == cls and ranges[-1][1] == lo - 1:
            ranges[-1] = (ranges[-1][0], hi, cls)
        else:
            ranges.append((lo, hi, cls))
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


def _symbol_steps(dfa: CompiledRegex) -> list[tuple[int, int | None]]:
    """``dfa``'s symbol from each code point where it may change on (memoised per automaton)."""
    found = _STEPS.get(id(dfa))
    if found is None or found[0] is not dfa:
        if len(_STEPS) >= 1 << 12:
            _STEPS.clear()
        steps = []
        for point in sorted(class_points(dfa)):
            if point < _END:
                symbol = dfa.symbol_of.get(chr(point))
                if symbol is None:
                    symbol = dfa._range_symbol(point) if dfa.ranges else dfa.else_symbol
                steps.append((point, symbol))
        found = _STEPS[id(dfa)] = (dfa, steps)  # (holds ``dfa``: its id stays unique)
    return found[1]


def _point(event: tuple) -> int:
    return event[0]
