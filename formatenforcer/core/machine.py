"""MachineState: a state of a compiled pushdown machine (``_native.Machine``, core/_machine.c) as a parser.

The machine holds a whole document's state as bytes (a header and a stack of frames) and steps it in C. As a
``CharacterParser`` its state works wherever a parser state does (the Python walk, rollback, forced text,
every integration); its ``machine_state`` hook lets the compiled core compute its mask in one call
(core/compiled_walk.py), and ``add_text`` steps a token's text in one call. The program is built by the
format (jsonschema/machine_program.py); this module knows nothing of JSON.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from .charset import ANY, EMPTY, CharSet
from .protocol import CharacterParser

STRING_BODY_CHARS = ANY - CharSet([(0x22, 0x22), (0x5C, 0x5C), (0, 0x1F)])
"""The characters a JSON string holds as themselves (not the quote, the backslash or a control character):
the machine's string bodies take the vocabulary's run row of this class (core/_machine.c, ``mask_body``)."""


class MachineState(CharacterParser):
    """One state of ``machine``: ``state`` is its bytes (immutable, so the bytes are the key)."""

    __slots__ = ("_machine", "_state", "_allowed", "_end")

    def __init__(self, machine: Any, state: bytes) -> None:
        self._machine = machine
        self._state = state
        self._allowed: CharSet | None = None
        self._end: bool | None = None

    def add_character(self, ch: str) -> MachineState | None:
        return self.add_text(ch)

    def add_text(self, text: str) -> MachineState | None:
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: no document holds one
            return None
        after = self._machine.step(self._state, data)
        return None if after is None else MachineState(self._machine, after)

    def add_bytes(self, data: bytes) -> MachineState | None | bool:
        """The state after the UTF-8 bytes ``data``, or None if refused; False when ``data`` is not whole
        characters (a character split across tokens: the caller reads it byte by byte)."""
        try:
            after = self._machine.step(self._state, data)
        except ValueError:
            return False
        return None if after is None else MachineState(self._machine, after)

    def allowed_characters(self) -> CharSet:
        allowed = self._allowed
        if allowed is None:
            intervals = self._machine.allowed(self._state)
            allowed = self._allowed = CharSet(intervals) if intervals else EMPTY
        return allowed

    def can_end(self) -> bool:
        end = self._end
        if end is None:
            end = self._end = self._machine.can_end(self._state)
        return end

    def key(self) -> Hashable:
        return self._state

    def machine_state(self) -> tuple[Any, bytes]:
        return self._machine, self._state

    def __repr__(self) -> str:
        return f"MachineState({self._state.hex()})"
