"""``time`` and ``date-time`` (RFC 3339 section 5.6) as automata written out state by state.

RFC 3339 allows a leap second (``:60``) only at a time that is 23:59 in UTC, so ``15:59:60-08:00`` and
``01:29:60+01:30`` are valid and ``23:59:60+01:00`` is not. Once the seconds are ``60`` the automaton must
remember the local hour and minute until the offset: after ``hh:mm:60`` exactly two offsets are left (for
23:59: ``Z``, ``+00:00``, ``-00:00``), because local time minus offset must be 23:59 modulo a day and an offset
lies within +-23:59. As a regular expression that is 1,440 alternatives, which interegular does not build
within its time limit; written as a table (``dfa_ops.from_table``) it takes a few hundred milliseconds and
about 10,000 states, all of which can still reach a final state (every local time has a matching offset).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from functools import cache

from ...core.charset import CharSet
from ...parsers.dfa_ops import from_table
from ...parsers.regex import CompiledRegex, compile_regex

DIGITS = "0123456789"
_MINUTES_PER_DAY = 24 * 60
_UTC_LEAP = 23 * 60 + 59

Table = dict[Hashable, dict[str, Hashable]]


def _edge(table: Table, source: Hashable, chars: Iterable[str], target: Hashable) -> None:
    row = table.setdefault(source, {})
    for ch in chars:
        row[ch] = target


def _hh_mm(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def leap_offsets(local: int) -> list[str]:
    """The offsets (``+hh:mm``/``-hh:mm``, ``Z``) after which ``local`` (minutes since midnight) with seconds
    60 is 23:59:60 UTC: UTC = local - offset, so offset = local - 23:59 modulo a day, written either way."""
    ahead = (local - _UTC_LEAP) % _MINUTES_PER_DAY
    if ahead == 0:
        return ["Z", "z", "+00:00", "-00:00"]
    return ["+" + _hh_mm(ahead), "-" + _hh_mm(_MINUTES_PER_DAY - ahead)]


def _add_time(table: Table, start: Hashable, end: Hashable) -> None:
    """States reading ``full-time`` from ``start`` to ``end``; states are tuples tagged ``"t"``."""
    _edge(table, ("t", "sec"), DIGITS, ("t", "s"))  # second digit of seconds 00-59
    for state in (("t", "s"), ("t", "frac")):
        _edge(table, state, "Zz", end)
        _edge(table, state, "+-", ("t", "oh"))
    _edge(table, ("t", "s"), ".", ("t", "dot"))
    _edge(table, ("t", "dot"), DIGITS, ("t", "frac"))
    _edge(table, ("t", "frac"), DIGITS, ("t", "frac"))
    _edge(table, ("t", "oh"), "01", ("t", "oh1"))
    _edge(table, ("t", "oh"), "2", ("t", "oh2"))
    _edge(table, ("t", "oh1"), DIGITS, ("t", "oc"))
    _edge(table, ("t", "oh2"), "0123", ("t", "oc"))
    _edge(table, ("t", "oc"), ":", ("t", "om"))
    _edge(table, ("t", "om"), "012345", ("t", "om1"))
    _edge(table, ("t", "om1"), DIGITS, end)
    for first in "012":
        _edge(table, start, first, ("t", "h", first))
        for second in DIGITS if first != "2" else "0123":
            hour = int(first + second)
            _edge(table, ("t", "h", first), second, ("t", "h:", hour))
            _edge(table, ("t", "h:", hour), ":", ("t", "m", hour))
            for tens in "012345":
                _edge(table, ("t", "m", hour), tens, ("t", "m1", hour, tens))
                for unit in DIGITS:
                    local = hour * 60 + int(tens + unit)
                    _edge(table, ("t", "m1", hour, tens), unit, ("t", "m:", local))
                    _edge(table, ("t", "m:", local), ":", ("t", "sec?", local))
                    _edge(table, ("t", "sec?", local), "012345", ("t", "sec"))
                    _edge(table, ("t", "sec?", local), "6", ("t", "6", local))
                    _add_leap(table, local, end)


def _add_leap(table: Table, local: int, end: Hashable) -> None:
    """``60``, an optional fraction, then only the offsets that make ``local`` 23:59 UTC."""
    _edge(table, ("t", "6", local), "0", ("t", "60", local))
    _edge(table, ("t", "60", local), ".", ("t", "60.", local))
    _edge(table, ("t", "60.", local), DIGITS, ("t", "60f", local))
    _edge(table, ("t", "60f", local), DIGITS, ("t", "60f", local))
    for state in (("t", "60", local), ("t", "60f", local)):
        for offset in leap_offsets(local):
            _edge(table, state, offset[0], end if len(offset) == 1 else ("t", "rest", offset[1:]))
    for offset in leap_offsets(local):
        rest = offset[1:]
        while rest:  # the rest of a fixed offset: one state per suffix, shared by every local time
            _edge(table, ("t", "rest", rest), rest[0], ("t", "rest", rest[1:]) if len(rest) > 1 else end)
            rest = rest[1:]


@cache
def time_dfa() -> CompiledRegex:
    """The automaton of RFC 3339 ``full-time`` (``partial-time time-offset``)."""
    table: Table = {}
    _add_time(table, "start", "end")
    return from_table("\x00format:time", table, "start", ["end"])


@cache
def date_time_dfa(date_pattern: str) -> CompiledRegex:
    """``full-date`` (the pattern's automaton, written out) ``T`` ``full-time``; ``T`` in either case."""
    date = compile_regex(date_pattern)
    table: Table = {}
    for source, edges in enumerate(date.transitions):
        for symbol, target in edges.items():
            chars = date.chars_of_symbol[symbol]
            if chars.size() > 64:
                raise ValueError("the date automaton has an unexpectedly large character class")
            _edge(table, ("d", source), _chars(chars), ("d", target))
    for final in date.finals:
        if date.transitions[final]:
            raise ValueError("a full-date goes on after its last digit: cannot append the time")
        _edge(table, ("d", final), "Tt", "time")
    _add_time(table, "time", "end")
    return from_table("\x00format:date-time", table, ("d", 0), ["end"])


def _chars(chars: CharSet) -> list[str]:
    return [chr(c) for lo, hi in chars.intervals for c in range(lo, hi + 1)]


def dfa_fullmatch(dfa: CompiledRegex, text: str) -> bool:
    """Whether the automaton accepts the whole of ``text`` (the ``re.fullmatch`` of table-built formats)."""
    state: int | None = 0
    for ch in text:
        state = dfa.step(state, ch)
        if state is None:
            return False
    return state in dfa.finals
