"""A JSON string of any characters between two lengths, with the tables the compiled lexeme walk runs.

``LengthContent`` (formats/content.py) counts characters; this subclass also builds its string's tables
(jsonschema/string_tables.py: one body state per count up to the cap, every character but the string's own
alike), so a plain string's lexeme is walked in C, starting from the vocabulary's precomputed row of the tokens
made only of string characters (core/compiled_walk.py, ``native_run``) and walking only where a token leaves
that run for a character the string accepts (the closing quote, a backslash).
"""

from __future__ import annotations

from collections.abc import Hashable

import numpy as np

from ..core.charset import CharSet
from ..core.hooks import LexemeTables
from .formats.content import LengthContent
from .string_tables import ContentDfa, class_edges, string_tables

TABLE_COUNTS = 256
"""Contents counting further than this (a ``maxLength`` or ``minLength`` above it) build no tables and stay
on the Python walk: a count's runs are chains as long as the count, which the compiled automaton follows
from every state."""

_MISSING = object()


class TabledLengthContent(LengthContent):
    """``LengthContent`` with its string tables for the compiled walk (built when a walk first needs them:
    the walks of equal lengths are shared by every schema, so few are)."""

    __slots__ = ("_tables",)

    def __init__(self, low: int = 0, high: int | None = None) -> None:
        super().__init__(low, high)
        self._tables: dict[CharSet, tuple[LexemeTables, dict[Hashable, int]] | None] = {}

    def string_tables(self, escapable: CharSet) -> tuple[LexemeTables, dict[Hashable, int]] | None:
        hit = self._tables.get(escapable, _MISSING)
        if hit is _MISSING:
            hit = self._tables[escapable] = self._build(escapable)
        return hit  # type: ignore[return-value]

    def _build(self, escapable: CharSet) -> tuple[LexemeTables, dict[Hashable, int]] | None:
        cap, high = self._cap, self.high
        if cap >= TABLE_COUNTS:
            return None
        edges = class_edges(frozenset())
        counts = range(cap + 1)
        table = np.empty((cap + 1, len(edges) - 1), dtype=np.int32)
        for count in counts:
            table[count] = -1 if high is not None and count >= high else min(count + 1, cap)
        accepting = [self.accepting(count) for count in counts]
        dfa = ContentDfa(edges, table, accepting, [self.allowed(count) for count in counts], list(counts))
        return string_tables(self, dfa, escapable)


__all__ = ["TabledLengthContent", "TABLE_COUNTS"]
