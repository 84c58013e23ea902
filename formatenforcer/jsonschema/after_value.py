"""What follows a finished value inside a container: optional whitespace, then ``,`` or the closing bracket.

A container whose value has ended (a string closed, a nested container closed, or the whitespace after
either) hands the vocabulary walk this state alone as a lexeme (see ``CharacterParser.lexeme``). What it
reads depends only on the whitespace policy and run, whether a comma may come, and which bracket may close:
not on the keys seen, the items counted or what surrounds the container. So the walk of the tokens that go
on after a value (``",``, ``"}``, ``"},{"``, ``]}``...) is cached once per kind and shared by every position
and every schema; the container's full state is resumed only after the comma or the bracket, where the
next item's or key's start (``SpacedValue``...) or the enclosing container's own ``AfterValue`` takes over.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

from ..core.charset import EMPTY, CharSet, shared_union
from ..core.hooks import FreeRun, Lexeme
from ..core.protocol import CharacterParser
from .whitespace import JSON_WHITESPACE, Whitespace

_MARKS: dict[tuple[bool, str | None], CharSet] = {}


def _marks(comma: bool, closer: str | None) -> CharSet:
    hit = _MARKS.get((comma, closer))
    if hit is None:
        hit = _MARKS[(comma, closer)] = CharSet.of(("," if comma else "") + (closer or ""))
    return hit


class AfterValue(CharacterParser):
    """A whitespace run (``run`` characters read, per the policy ``ws``) after a value, then ``,`` when
    ``comma`` and ``closer`` (``]`` or ``}``) when it is not None. ``mark`` is the one of them read: the state
    has then ended and reads nothing more."""

    __slots__ = ("_ws", "_run", "_comma", "_closer", "_mark", "_allowed")

    def __init__(self, ws: Whitespace, run: int, comma: bool, closer: str | None, mark: str = "") -> None:
        self._ws, self._run, self._comma, self._closer, self._mark = ws, run, comma, closer, mark
        self._allowed: CharSet | None = None

    @property
    def run(self) -> int:
        """Whitespace characters read before the mark."""
        return self._run

    @property
    def mark(self) -> str:
        """``,`` or the closing bracket once read, else ``""``."""
        return self._mark

    def add_character(self, ch: str) -> CharacterParser | None:
        if self._mark:
            return None
        ws = self._ws
        run = ws.step(self._run, ch)
        if run is not None:
            return AfterValue(ws, run, self._comma, self._closer)
        if not ws.can_stop(self._run):
            return None
        if (ch == "," and self._comma) or (ch == self._closer and ch):
            return AfterValue(ws, self._run, self._comma, self._closer, ch)
        return None

    def allowed_characters(self) -> CharSet:
        if self._allowed is None:
            if self._mark:
                self._allowed = EMPTY
            else:
                allowed = self._ws.allowed(self._run)
                if self._ws.can_stop(self._run):
                    allowed = shared_union((allowed, _marks(self._comma, self._closer)))
                self._allowed = allowed
        return self._allowed

    def can_end(self) -> bool:
        return bool(self._mark)

    def free_run(self) -> FreeRun | None:
        if self._mark:
            return None
        room = self._ws.room(self._run)
        if not room:
            return None
        ws, run, comma, closer = self._ws, self._run, self._comma, self._closer
        return FreeRun(JSON_WHITESPACE, room, lambda n: AfterValue(ws, run + n, comma, closer))

    def key(self) -> Hashable:
        return ("av", id(self._ws), self._run, self._comma, self._closer, self._mark)

    def lexeme_key(self, horizon: int) -> Hashable:
        return self.key()

    def shared_lexeme_key(self, horizon: int) -> Hashable | None:
        return ("av", self._ws.value_ident(), self._run, self._comma, self._closer, self._mark)

    def __repr__(self) -> str:
        return f"AfterValue(run={self._run}, comma={self._comma}, closer={self._closer!r}, mark={self._mark!r})"


def after_value_lexeme(
    ws: Whitespace,
    run: int,
    comma: bool,
    closer: str | None,
    at_run: Callable[[int], CharacterParser],
) -> Lexeme:
    """The lexeme of a container after a value: ``at_run(n)`` is the container's state after the value with
    ``n`` whitespace characters read; a mark read is resumed by reading it there, as the container would."""

    def resume(inner: CharacterParser) -> CharacterParser | None:
        full = at_run(inner.run)  # type: ignore[attr-defined]
        return full.add_character(inner.mark) if inner.mark else full  # type: ignore[attr-defined]

    return Lexeme(AfterValue(ws, run, comma, closer), resume)
