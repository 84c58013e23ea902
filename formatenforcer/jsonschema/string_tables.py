"""A JSON string over a content automaton, as the tables the compiled lexeme walk runs (core/hooks.py,
``LexemeTables``), built directly from a content that knows its automaton over decoded characters
(``ContentDfa``: a key over the trie of its object's names) rather than explored parser state by parser state.

The tables follow StringParser's rules exactly, with the same character sets (``body_characters``):
- a body state per content state: a character of the body charset goes where the content takes it, the
  quote closes the string where the content may end, the backslash starts an escape;
- an ended state per content state that may end (the closing quote read): the walk stops there;
- an escape state per content state that allows the backslash: a simple escape letter goes where the
  content takes the character it spells, ``u`` to a hex state;
- a hex state per content state: a frontier, which the compiled walk hands back to the Python walk (the
  ``\\uXXXX`` digits would multiply the states).
A class of characters that a body charset holds only in part cannot be walked as one column: then there are
no tables and the Python walk answers, as for any other string.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Hashable, Sequence

import numpy as np

from ..core.charset import EMPTY, CharSet
from ..core.hooks import LexemeTables
from .formats.content import Content
from .strings import BODY, DONE, ESCAPE, HEX, SIMPLE_ESCAPES, StringParser, body_characters, escape_characters

_END = 0x110000
STRING_POINTS = frozenset({0, 0x20, 0xD800, 0xE000, *(p for c in '"\\/bfnrtu' for p in (ord(c), ord(c) + 1))})
"""Where a JSON string treats characters apart: the controls, the quote, the backslash, the escape letters
and the surrogates (no character of their own)."""


class ContentDfa:
    """A content automaton over decoded characters, as arrays. Classes are the intervals between the
    sorted ``edges`` (from 0 to 0x110000), and every state treats the characters of a class alike:
    ``table[s, c]`` is the state ``step`` reaches on any of them (-1: refused), where the character is one
    ``decodable[s]`` allows (elsewhere the entry is never read). ``values[s]`` is the content's own state."""

    __slots__ = ("edges", "table", "accepting", "decodable", "values")

    def __init__(
        self,
        edges: Sequence[int],
        table: np.ndarray,
        accepting: Sequence[bool],
        decodable: Sequence[CharSet],
        values: Sequence[Hashable],
    ) -> None:
        self.edges, self.table, self.accepting, self.decodable, self.values = edges, table, accepting, decodable, values


def class_edges(points: set[int] | frozenset[int]) -> list[int]:
    """Sorted class edges from the points where a content's treatment may change, with the string's own."""
    return sorted({0, _END, *(p for p in points if 0 <= p <= _END), *STRING_POINTS})


def string_tables(
    content: Content, dfa: ContentDfa, escapable: CharSet
) -> tuple[LexemeTables, dict[Hashable, int]] | None:
    """The tables of a JSON string whose decoded characters obey ``content`` (as ``dfa``), and the number
    of each content state's body state; None when a class is split by some body charset."""
    edges = dfa.edges
    lo = np.array(edges[:-1], dtype=np.int32)
    hi = np.array(edges[1:], dtype=np.int32) - 1
    classes = len(lo)
    states = len(dfa.values)
    quote, backslash = bisect_right(edges, ord('"')) - 1, bisect_right(edges, ord("\\")) - 1
    # per distinct (decodable, may end): the body charset, and which classes it holds
    columns: dict[tuple[CharSet, bool], tuple[CharSet, np.ndarray] | None] = {}
    body_sets: list[CharSet] = []
    held = np.zeros((states, classes), dtype=bool)
    for s in range(states):
        ident = (dfa.decodable[s], bool(dfa.accepting[s]))
        found = columns.get(ident, False)
        if found is False:
            body = body_characters(ident[0], ident[1], escapable)
            ok = np.zeros(classes, dtype=bool)
            for a, b in body.intervals:
                first, last = bisect_right(edges, a) - 1, bisect_right(edges, b) - 1
                ok[first : last + 1] = True
            for c in np.flatnonzero(ok).tolist():
                if not body.contains_interval(int(lo[c]), int(hi[c])):
                    return None  # a class the body holds only in part
            found = columns[ident] = (body, ok)
        body, ok = found  # type: ignore[misc]
        body_sets.append(body)
        held[s] = ok

    letters = [(letter, bisect_right(edges, ord(letter)) - 1, bisect_right(edges, ord(decoded)) - 1)
               for letter, decoded in SIMPLE_ESCAPES.items()]  # fmt: skip
    u_column = bisect_right(edges, ord("u")) - 1
    ended = [s for s in range(states) if dfa.accepting[s]]
    escaping = [s for s in range(states) if held[s, backslash]]
    by_decodable: dict[CharSet, CharSet] = {}
    escape_sets = {}
    for s in escaping:
        decodable = dfa.decodable[s]
        found = by_decodable.get(decodable)
        if found is None:
            found = by_decodable[decodable] = escape_characters(decodable, escapable)
        escape_sets[s] = found
    hexing = [s for s in escaping if "u" in escape_sets[s]]
    done_of = {s: states + i for i, s in enumerate(ended)}
    escape_of = {s: states + len(ended) + i for i, s in enumerate(escaping)}
    hex_of = {s: states + len(ended) + len(escaping) + i for i, s in enumerate(hexing)}
    total = states + len(ended) + len(escaping) + len(hexing)
    transitions = np.full((total, classes), -1, dtype=np.int32)
    transitions[:states] = np.where(held, dfa.table, -1)
    transitions[:states, quote] = -1
    transitions[:states, backslash] = -1
    for s, number in done_of.items():
        transitions[s, quote] = number
    groups: dict[CharSet, list[int]] = {}
    for s, number in escape_of.items():
        transitions[s, backslash] = number
        groups.setdefault(escape_sets[s], []).append(s)
        if s in hex_of:
            transitions[number, u_column] = hex_of[s]
    for allowed, group in groups.items():  # the content takes the character an escape spells
        rows = np.array([escape_of[s] for s in group])
        for letter, letter_column, decoded_column in letters:
            if letter in allowed:
                transitions[rows, letter_column] = dfa.table[group, decoded_column]
    ends = bytearray(total)
    frontier = bytearray(total)
    allow_start = [0]
    allow_lo: list[int] = []
    allow_hi: list[int] = []
    for charset in [*body_sets, *([EMPTY] * len(ended)), *(escape_sets[s] for s in escaping), *([EMPTY] * len(hexing))]:
        for a, b in charset.intervals:
            allow_lo.append(a)
            allow_hi.append(b)
        allow_start.append(len(allow_lo))
    for number in done_of.values():
        ends[number] = 1
    for number in hex_of.values():
        frontier[number] = 1
    kinds = [(BODY, s) for s in range(states)] + [(DONE, s) for s in ended]
    kinds += [(ESCAPE, s) for s in escaping] + [(HEX, s) for s in hexing]
    values = dfa.values

    def state_of(number: int) -> StringParser:
        phase, s = kinds[number]
        return StringParser(content, phase, values[s], (0, 0) if phase == HEX else None, escapable)

    tables = LexemeTables(lo, hi, transitions, bytes(ends), bytes(frontier), allow_start, allow_lo, allow_hi, state_of)
    return tables, {value: s for s, value in enumerate(values)}


__all__ = ["ContentDfa", "class_edges", "string_tables", "STRING_POINTS"]
