"""Combinators: a sequence of formats one after another, and a union of alternative formats.

Both keep a small set of live alternatives (a union's branches; a sequence's "which part am I in" choices
that arise when a part may end or go on), so neither needs to guess: a character is fed to every live
alternative and the dead ones are dropped. A union that narrows to one branch *becomes* that branch.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable

from ..core.charset import EMPTY, CharSet
from ..core.errors import FormatError
from ..core.hooks import FreeRun
from ..core.protocol import CharacterParser


def _checked(parsers: Iterable[CharacterParser], name: str) -> tuple[CharacterParser, ...]:
    listed = tuple(parsers)
    if not listed:
        raise FormatError(f"{name} needs at least one parser")
    for i, parser in enumerate(listed):
        if not isinstance(parser, CharacterParser):
            raise FormatError(f"{name} part #{i} is {type(parser).__name__}, not a CharacterParser")
    return listed


def _union_charset(states: Iterable[CharacterParser]) -> CharSet:
    intervals: list[tuple[int, int]] = []
    for state in states:
        intervals.extend(state.allowed_characters().intervals)
    return CharSet(intervals) if intervals else EMPTY


class UnionParser(CharacterParser):
    """Accepts what any of ``parsers`` accepts."""

    __slots__ = ("_alternatives", "_charset")

    def __init__(self, parsers: Iterable[CharacterParser]) -> None:
        alternatives = _checked(parsers, "UnionParser")
        unique: dict[Hashable, CharacterParser] = {}
        for state in alternatives:
            unique.setdefault(state.key(), state)
        self._alternatives = tuple(unique.values())
        self._charset: CharSet | None = None

    def add_character(self, ch: str) -> CharacterParser | None:
        unique: dict[Hashable, CharacterParser] = {}
        for state in self._alternatives:
            nxt = state.add_character(ch)
            if nxt is not None:
                unique.setdefault(nxt.key(), nxt)
        if not unique:
            return None
        if len(unique) == 1:
            return next(iter(unique.values()))
        result = UnionParser.__new__(UnionParser)
        result._alternatives = tuple(unique.values())
        result._charset = None
        return result

    def allowed_characters(self) -> CharSet:
        if self._charset is None:
            self._charset = _union_charset(self._alternatives)
        return self._charset

    def can_end(self) -> bool:
        return any(state.can_end() for state in self._alternatives)

    def key(self) -> Hashable:
        return ("union", frozenset(state.key() for state in self._alternatives))

    def alternatives(self) -> tuple[CharacterParser, ...] | None:
        return self._alternatives if len(self._alternatives) > 1 else None

    def free_run(self) -> FreeRun | None:
        """A run every live branch shares (same characters; a JSON union of objects inside a key or a string
        value): the longest branch's length, and after n characters the union of the branches still in it."""
        if len(self._alternatives) == 1:
            return self._alternatives[0].free_run()
        runs = [state.free_run() for state in self._alternatives]
        if any(run is None for run in runs) or len({run.chars for run in runs}) != 1:  # type: ignore[union-attr]
            return None
        lengths = [run.max_length for run in runs]  # type: ignore[union-attr]
        longest = None if None in lengths else max(lengths)  # type: ignore[type-var]

        def after(n: int) -> CharacterParser:
            live = [run.after(n) for run in runs if run.max_length is None or n <= run.max_length]  # type: ignore
            return live[0] if len(live) == 1 else UnionParser(live)

        return FreeRun(runs[0].chars, longest, after)  # type: ignore[union-attr]


class SequenceParser(CharacterParser):
    """Accepts a string made of one instance of each of ``parsers``, in order."""

    __slots__ = ("_parts", "_alternatives", "_charset")

    def __init__(self, parsers: Iterable[CharacterParser]) -> None:
        self._parts = _checked(parsers, "SequenceParser")
        self._alternatives = self._closure([(0, self._parts[0])])
        self._charset: CharSet | None = None

    def _closure(self, alternatives: list[tuple[int, CharacterParser]]) -> tuple[tuple[int, CharacterParser], ...]:
        """Adds "move on to the next part" wherever a part may end; dedupes by (part, state key)."""
        unique: dict[Hashable, tuple[int, CharacterParser]] = {}
        todo = list(alternatives)
        while todo:
            index, state = todo.pop()
            k = (index, state.key())
            if k in unique:
                continue
            unique[k] = (index, state)
            if index + 1 < len(self._parts) and state.can_end():
                todo.append((index + 1, self._parts[index + 1]))
        return tuple(unique.values())

    def _with(self, alternatives: tuple[tuple[int, CharacterParser], ...]) -> SequenceParser:
        result = SequenceParser.__new__(SequenceParser)
        result._parts = self._parts
        result._alternatives = alternatives
        result._charset = None
        return result

    def add_character(self, ch: str) -> SequenceParser | None:
        advanced = []
        for index, state in self._alternatives:
            nxt = state.add_character(ch)
            if nxt is not None:
                advanced.append((index, nxt))
        if not advanced:
            return None
        return self._with(self._closure(advanced))

    def allowed_characters(self) -> CharSet:
        if self._charset is None:
            self._charset = _union_charset(state for _, state in self._alternatives)
        return self._charset

    def can_end(self) -> bool:
        last = len(self._parts) - 1
        return any(index == last and state.can_end() for index, state in self._alternatives)

    def key(self) -> Hashable:
        return ("seq", id(self._parts), frozenset((index, state.key()) for index, state in self._alternatives))

    def free_run(self) -> FreeRun | None:
        # Only the last part can promise a run: earlier parts could hand over to the next one mid-run.
        if len(self._alternatives) != 1 or self._alternatives[0][0] != len(self._parts) - 1:
            return None
        inner = self._alternatives[0][1].free_run()
        if inner is None:
            return None
        index = self._alternatives[0][0]

        def after(n: int) -> SequenceParser:
            return self._with(((index, inner.after(n)),))

        return FreeRun(inner.chars, inner.max_length, after)
