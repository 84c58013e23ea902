"""Position: where one sequence stands in a format, as the enforcer steps it token by token."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

from .protocol import CharacterParser


@dataclass(frozen=True)
class Position:
    """Where a sequence stands: the parser state, bytes of an unfinished character, and flags."""

    state: CharacterParser
    pending: bytes = b""
    at_start: bool = True
    finished: bool = False

    def cache_key(self) -> Hashable:
        return (self.state.key(), self.pending, self.at_start)
