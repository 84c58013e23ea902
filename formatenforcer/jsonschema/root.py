"""Whitespace around the root value in flexible mode: RFC 8259 allows it before and after the value
(`` { "a": 1 } ``). ``JsonConfig.max_whitespace`` caps the run before the value, as it caps every run between
tokens; the run after it has its own small cap, ``JsonConfig.max_trailing_whitespace`` (default 1), so a
model that prefers whitespace to end of sequence stops at once instead of writing a whole run of newlines.
Compact mode and ``whitespace_pattern`` keep the value alone (see ``root_start``).

``Leading`` reads the run before the value; ``RootValue`` wraps every state of the value and, once the value
may end, turns a whitespace character it refuses into ``Trailing``. JSON values delimit themselves (a value
that may end never takes whitespace itself), so the wrapper is exact. The walk's shortcuts pass through: the
value's lexemes, union branches and first-character splits are the value's own, put back in the wrapper.
"""

from __future__ import annotations

from collections.abc import Hashable

from ..core.charset import EMPTY, CharSet, shared_union
from ..core.hooks import FreeRun, Lexeme, nested_alternatives, nested_first_char_split, nested_lexeme
from ..core.protocol import CharacterParser
from .config import JsonConfig
from .spaced import SpacedValue
from .whitespace import JSON_WHITESPACE, Whitespace


def root_start(config: JsonConfig, ws: Whitespace, start: CharacterParser) -> CharacterParser:
    """The document's first state: ``start`` itself, or with whitespace around it in flexible mode."""
    if config.whitespace_pattern is not None or config.whitespace != "flexible" or config.max_whitespace == 0:
        return start
    return Leading(ws, 0, start, min(config.max_trailing_whitespace, config.max_whitespace))


class Leading(CharacterParser):
    """``run`` whitespace characters read before the root value whose first state is ``start``; ``trail`` is
    the cap on the run after the value."""

    __slots__ = ("_ws", "_run", "_start", "_trail")

    def __init__(self, ws: Whitespace, run: int, start: CharacterParser, trail: int) -> None:
        self._ws, self._run, self._start, self._trail = ws, run, start, trail

    def add_character(self, ch: str) -> CharacterParser | None:
        run = self._ws.step(self._run, ch)
        if run is not None:
            return Leading(self._ws, run, self._start, self._trail)
        value = self._start.add_character(ch)
        return None if value is None else RootValue(self._trail, value)

    def allowed_characters(self) -> CharSet:
        return shared_union((self._ws.allowed(self._run), self._start.allowed_characters()))

    def can_end(self) -> bool:
        return False

    def key(self) -> Hashable:
        return ("lead", self._run, self._trail, self._start.key())

    def free_run(self) -> FreeRun | None:
        room = self._ws.room(self._run)
        if not room:
            return None
        ws, run, start, trail = self._ws, self._run, self._start, self._trail
        return FreeRun(JSON_WHITESPACE, room, lambda n: Leading(ws, run + n, start, trail))

    def lexeme(self) -> Lexeme | None:
        # the run and the value's first characters alone, as after an array's comma (spaced.py): its walk
        # is shared with every such position
        ws, start, trail = self._ws, self._start, self._trail

        def resume(inner: CharacterParser) -> CharacterParser:
            if isinstance(inner, SpacedValue):
                return Leading(ws, inner.run, start, trail)
            return RootValue(trail, inner)

        return Lexeme(SpacedValue(ws, self._run, start), resume)

    def alternatives(self) -> tuple[CharacterParser, ...] | None:
        branches = self._start.alternatives()
        return None if branches is None else tuple(Leading(self._ws, self._run, b, self._trail) for b in branches)

    def __repr__(self) -> str:
        return f"Leading(run={self._run}, start={self._start!r})"


class RootValue(CharacterParser):
    """A state of the root value; once it may end, up to ``trail`` whitespace characters go on as
    ``Trailing``."""

    __slots__ = ("_trail", "_value")

    def __init__(self, trail: int, value: CharacterParser) -> None:
        self._trail, self._value = trail, value

    def _wrap(self, value: CharacterParser) -> CharacterParser:
        return RootValue(self._trail, value)

    def add_character(self, ch: str) -> CharacterParser | None:
        value = self._value.add_character(ch)
        if value is not None:
            return RootValue(self._trail, value)
        if self._trail and ch in JSON_WHITESPACE and self._value.can_end():
            return Trailing(self._trail, 1)
        return None

    def add_text(self, text: str) -> CharacterParser | None:
        # the value's own fold (its shortcuts), put back once; where the value refuses a character, the
        # whitespace after it may go on, so the fold is redone character by character
        value = self._value.add_text(text)
        return RootValue(self._trail, value) if value is not None else super().add_text(text)

    def allowed_characters(self) -> CharSet:
        allowed = self._value.allowed_characters()
        return allowed | JSON_WHITESPACE if self._trail and self._value.can_end() else allowed

    def can_end(self) -> bool:
        return self._value.can_end()

    def key(self) -> Hashable:
        return ("root", self._trail, self._value.key())

    def free_run(self) -> FreeRun | None:
        run = self._value.free_run()
        if run is None or (run.ends_inside and run.chars & JSON_WHITESPACE):
            return None  # (a value that may end inside a run of whitespace: trailing whitespace would interleave)
        after, trail = run.after, self._trail
        return FreeRun(run.chars, run.max_length, lambda n: RootValue(trail, after(n)), run.ends_inside)

    def lexeme(self) -> Lexeme | None:
        return nested_lexeme(self._value, self._wrap)

    def alternatives(self) -> tuple[CharacterParser, ...] | None:
        return nested_alternatives(self._value, self._wrap)

    def first_char_split(self) -> tuple[CharacterParser, bytes] | None:
        return nested_first_char_split(self._value, self._wrap)

    def __repr__(self) -> str:
        return f"RootValue({self._value!r})"


class Trailing(CharacterParser):
    """``run`` of at most ``cap`` whitespace characters read after the complete root value."""

    __slots__ = ("_cap", "_run")

    def __init__(self, cap: int, run: int) -> None:
        self._cap, self._run = cap, run

    def add_character(self, ch: str) -> CharacterParser | None:
        return Trailing(self._cap, self._run + 1) if self._run < self._cap and ch in JSON_WHITESPACE else None

    def allowed_characters(self) -> CharSet:
        return JSON_WHITESPACE if self._run < self._cap else EMPTY

    def can_end(self) -> bool:
        return True

    def key(self) -> Hashable:
        return ("trail", self._cap - self._run)

    def free_run(self) -> FreeRun | None:
        room = self._cap - self._run
        if not room:
            return None
        cap, run = self._cap, self._run
        return FreeRun(JSON_WHITESPACE, room, lambda n: Trailing(cap, run + n), True)

    def __repr__(self) -> str:
        return f"Trailing(run={self._run}, cap={self._cap})"
