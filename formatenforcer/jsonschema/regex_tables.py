"""A string over a large pattern or format automaton as tables for the compiled lexeme walk.

A string whose content automaton is small is explored state by state into the compiled walk's automaton
(``RegexContent.class_points``, core/lexeme_automaton.py). A large one (``date-time``: 11,055 states, exact
to the day of the month) would cost a parser step per state and class to explore, so its strings were
walked in Python at every position, about a millisecond each. Without length limits the content's states
are the automaton's own, so its tables are read off the automaton's arrays (core/automaton.py) instead:
one column per interval between the automaton's symbol boundaries and the string's own points, a state's
decoded characters the union of the columns it takes. Built once per automaton and escape set, shared by
every schema that uses it (string_tables.py adds the quote, the escapes and the ended states).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Hashable

import numpy as np

from ..core.automaton import class_points, transition_table
from ..core.cache_release import register_memo
from ..core.charset import CharSet
from ..core.hooks import LexemeTables
from .formats.content import RegexContent
from .string_tables import ContentDfa, class_edges, string_tables

_TABLES: dict[Hashable, tuple[LexemeTables, dict[Hashable, int]] | None] = {}
"""(automaton ident, escape set) -> its string tables (None: none), shared by every schema."""
register_memo(_TABLES.clear)  # emptied when a burst of enforcers ends (core/cache_release.py)


class TabledRegexContent(RegexContent):
    """A ``RegexContent`` whose strings, when the automaton is too large to explore and no length limit
    multiplies its states, get tables read off the automaton (see the module docstring)."""

    __slots__ = ()

    def string_tables(self, escapable: CharSet) -> tuple[LexemeTables, dict[Hashable, int]] | None:
        if self._cap or self.class_points() is not None:
            return None  # explored (small), or states counted by length
        key = (self.dfa.ident, escapable)
        hit = _TABLES.get(key, False)
        if hit is False:
            dfa = content_dfa(self)
            hit = None if dfa is None else string_tables(self, dfa, escapable)
            if len(_TABLES) >= 64:
                _TABLES.clear()
            _TABLES[key] = hit
        return hit  # type: ignore[return-value]


def content_dfa(content: RegexContent) -> ContentDfa | None:
    """The content automaton of ``content`` (no length limits) as arrays; None when its table is too big."""
    found = transition_table(content.dfa)
    if found is None:
        return None
    lo, hi, ids, table = found
    edges = class_edges(class_points(content.dfa))
    columns = []  # per interval between edges, the automaton's class (-1: no symbol)
    for start in edges[:-1]:
        at = bisect_right(lo, start) - 1
        columns.append(ids[at] if at >= 0 and start <= hi[at] else -1)
    picked = np.asarray(columns, dtype=np.int64)
    out = np.where(picked >= 0, table[:, np.maximum(picked, 0)], -1).astype(np.int32)
    # a state's decoded characters depend only on the symbols it takes (with no length limit every state
    # reaches a final one): the content's own ``allowed``, asked once per set of columns taken
    rows = np.packbits(out >= 0, axis=1)
    width = rows.shape[1]
    blob = rows.tobytes()
    first: dict[bytes, CharSet] = {}
    decodable = []
    for state in range(len(out)):
        pattern = blob[state * width : (state + 1) * width]
        found_set = first.get(pattern)
        if found_set is None:
            found_set = first[pattern] = content.allowed((state, 0))
        decodable.append(found_set)
    states = len(out)
    finals = content.dfa.finals
    values = [(state, 0) for state in range(states)]
    accepting = [state in finals for state in range(states)]
    return ContentDfa(edges, out, accepting, decodable, values)
