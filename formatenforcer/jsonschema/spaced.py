"""The start of a JSON value inside a container: optional whitespace, then the value's first characters.

A container about to read a value (an object after ``"key":``, an array after ``,``) hands the vocabulary
walk this state alone as a lexeme (see ``CharacterParser.lexeme``): its walk depends on the whitespace policy
and the value's start state only, so it is cached and reused at every position where the same kind of value
starts — every ``"price":`` of every object, and with a value identity, every schema's. Without it each
such position walks the whole vocabulary with the full nested state (the costliest masks of a document).
"""

from __future__ import annotations

from collections.abc import Hashable

from ..core.charset import CharSet, shared_union
from ..core.hooks import FreeRun
from ..core.protocol import CharacterParser
from .whitespace import JSON_WHITESPACE, Whitespace


class _Spaced(CharacterParser):
    """A whitespace run (``run`` characters read so far, per the policy ``ws``) that leads to ``start``, a
    value's first state, through what the subclass reads after the run. Keys carry the subclass's ``_TAG``."""

    __slots__ = ("_ws", "_run", "_start", "_allowed")
    _TAG = ""

    def __init__(self, ws: Whitespace, run: int, start: CharacterParser) -> None:
        self._ws = ws
        self._run = run
        self._start = start
        self._allowed: CharSet | None = None

    @property
    def run(self) -> int:
        """Whitespace characters read so far."""
        return self._run

    def can_end(self) -> bool:
        return False  # a value must follow

    def free_run(self) -> FreeRun | None:
        room = self._ws.room(self._run)
        if not room:
            return None
        kind, ws, run, start = type(self), self._ws, self._run, self._start
        return FreeRun(JSON_WHITESPACE, room, lambda n: kind(ws, run + n, start))

    def key(self) -> Hashable:
        return (self._TAG, id(self._ws), self._run, self._start.key())

    def lexeme_key(self, horizon: int) -> Hashable:
        return (self._TAG, id(self._ws), self._run, self._start.lexeme_key(horizon))

    def shared_lexeme_key(self, horizon: int) -> Hashable | None:
        inner = self._start.shared_lexeme_key(horizon)
        return None if inner is None else (self._TAG, self._ws.value_ident(), self._run, inner)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(run={self._run}, start={self._start!r})"


class SpacedValue(_Spaced):
    """Whitespace before ``start``, a value's first state. The first character ``start`` takes leaves this
    class: the result is the value's own state."""

    __slots__ = ()
    _TAG = "sp"

    def add_character(self, ch: str) -> CharacterParser | None:
        run = self._ws.step(self._run, ch)
        if run is not None:
            return SpacedValue(self._ws, run, self._start)
        if not self._ws.can_stop(self._run):
            return None
        return self._start.add_character(ch)

    def allowed_characters(self) -> CharSet:
        if self._allowed is None:
            allowed = self._ws.allowed(self._run)
            if self._ws.can_stop(self._run):
                allowed = shared_union((allowed, self._start.allowed_characters()))
            self._allowed = allowed
        return self._allowed


_COLON = CharSet.of(":")


class SpacedMember(_Spaced):
    """An object member after its key: whitespace, the colon, then a ``SpacedValue`` of ``start``. The
    object hands this state alone to the vocabulary walk once a key has closed: a token that closes a key
    goes on with ``":"``, ``":{"``, ``": [`` and the like, and that continuation depends on the key's value
    only, not on which keys the object has seen or what surrounds it, so its walk is cached once per key
    name (and across schemas when the value has a value identity)."""

    __slots__ = ()
    _TAG = "sm"

    def add_character(self, ch: str) -> CharacterParser | None:
        run = self._ws.step(self._run, ch)
        if run is not None:
            return SpacedMember(self._ws, run, self._start)
        if ch == ":" and self._ws.can_stop(self._run):
            return SpacedValue(self._ws, 0, self._start)
        return None

    def allowed_characters(self) -> CharSet:
        if self._allowed is None:
            allowed = self._ws.allowed(self._run)
            self._allowed = shared_union((allowed, _COLON)) if self._ws.can_stop(self._run) else allowed
        return self._allowed
