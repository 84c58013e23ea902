"""Position: where one sequence stands in a format, as the enforcer steps it token by token.

The fields that say where (parser state, pending bytes, flags) never change. Two more are memos the
enforcer fills: the position's mask, and the position each token already taken from here led to. The
enforcer keeps one position object per distinct place (``TokenEnforcer`` canonicalizes them), so a token
taken again from a place it was taken from before costs a dictionary look-up, and its mask an attribute read.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from .protocol import CharacterParser


class Position:
    """Where a sequence stands: the parser state, bytes of an unfinished character, and flags."""

    __slots__ = ("state", "pending", "at_start", "finished", "_key", "mask", "next")

    def __init__(
        self,
        state: CharacterParser,
        pending: bytes = b"",
        at_start: bool = True,
        finished: bool = False,
        key: Hashable | None = None,
    ) -> None:
        """``key``: the ``cache_key`` when the caller has computed it already (None: on first ask)."""
        self.state = state
        self.pending = pending
        self.at_start = at_start
        self.finished = finished
        self._key = key
        self.mask: Any = None
        """The packed mask of this position once the enforcer has computed it (a read-only array)."""
        self.next: dict[int, Position | None] = {}
        """token id -> the position it leads to (None: refused), for tokens already taken from here."""

    def cache_key(self) -> Hashable:
        """Equal for positions that allow the same tokens (the finished flag aside: see ``place``)."""
        key = self._key
        if key is None:
            key = self._key = (self.state.key(), self.pending, self.at_start)
        return key

    def place(self) -> Hashable:
        """Equal for positions that are the same place in the format, finished or not."""
        return (self.cache_key(), self.finished)

    def __repr__(self) -> str:
        flags = "".join((" at start" if self.at_start else "", " finished" if self.finished else ""))
        return f"Position({self.state!r}, pending={self.pending!r}{flags})"
