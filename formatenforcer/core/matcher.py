"""Matcher: the per-sequence, stateful view of a TokenEnforcer that engines drive token by token.

It keeps the history of positions as a stack, so ``rollback(n)`` (speculative decoding, jump-forward) is a
pop. The masks come from the enforcer's shared cache, so many matchers of one format share their work.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

import numpy as np

from .bitmask import ids_of, write_row
from .forced import LOOKBACK, forced_text_of, forced_tokens_of
from .position import Position


class Stepper(Protocol):
    """What a matcher asks of its enforcer (``TokenEnforcer``): the start, one step, one mask."""

    @property
    def start(self) -> Position: ...

    def step(self, position: Position, token_id: int) -> Position | None: ...

    def mask(self, position: Position) -> np.ndarray: ...


class Matcher:
    """Tracks one sequence through a format. Create with ``TokenEnforcer.matcher()``."""

    def __init__(self, enforcer: Stepper) -> None:
        self.enforcer = enforcer
        self._history: list[Position] = [enforcer.start]
        self._tokens: list[int] = []

    @property
    def position(self) -> Position:
        return self._history[-1]

    def accept_token(self, token_id: int) -> bool:
        """Advances by ``token_id`` if the format allows it there; returns whether it did."""
        nxt = self.enforcer.step(self._history[-1], int(token_id))
        if nxt is None:
            return False
        self._history.append(nxt)
        self._tokens.append(int(token_id))
        return True

    def accept_tokens(self, token_ids: Iterable[int]) -> bool:
        """Accepts tokens in order; stops at (and reports) the first refused one."""
        return all(self.accept_token(t) for t in token_ids)

    def validate_tokens(self, token_ids: Iterable[int]) -> int:
        """How many of ``token_ids``, from the first, the format accepts now (no state change)."""
        position = self._history[-1]
        count = 0
        for token in token_ids:
            position = self.enforcer.step(position, int(token))
            if position is None:
                break
            count += 1
        return count

    def rollback(self, n: int) -> None:
        """Undoes the last ``n`` accepted tokens."""
        if n < 0 or n > len(self._history) - 1:
            raise ValueError(f"cannot roll back {n} tokens: only {len(self._history) - 1} were accepted")
        if n:
            del self._history[-n:]
            del self._tokens[-n:]

    def reset(self) -> None:
        """Back to the start of the format."""
        del self._history[1:]
        self._tokens.clear()

    @property
    def generated_tokens(self) -> list[int]:
        """The token ids accepted so far, in order (a copy)."""
        return list(self._tokens)

    def forced_text(self) -> str:
        """The longest text every valid continuation from here starts with: empty where the format may end
        here or allows more than one character (forced.py; cached per parser state)."""
        position = self._history[-1]
        if position.finished or position.pending:
            return ""
        return forced_text_of(position.state, self.enforcer._forced)

    def forced_tokens(self, lookback: int | None = None) -> list[int]:
        """The token ids to append now without sampling (jump-forward): the forced text as the model's
        tokenizer writes it in context, holding back a last token a longer one could replace and anything
        the previous token would merge with (forced.py). ``accept_tokens`` of them always succeeds."""
        return forced_tokens_of(self, LOOKBACK if lookback is None else lookback)

    @property
    def num_accepted(self) -> int:
        return len(self._history) - 1

    def can_end(self) -> bool:
        """Whether the text so far is complete (end-of-sequence would be accepted)."""
        position = self._history[-1]
        return position.finished or (not position.pending and position.state.can_end())

    def is_finished(self) -> bool:
        """Whether end-of-sequence has been accepted."""
        return self._history[-1].finished

    def mask(self) -> np.ndarray:
        """The packed (read-only) mask of allowed next tokens."""
        return self.enforcer.mask(self._history[-1])

    def allowed_token_ids(self) -> list[int]:
        """The allowed next token ids (never empty: a dead end allows end-of-sequence)."""
        return ids_of(self.mask())

    def fill_bitmask(self, bitmask: Any, row: int = 0) -> None:
        """Writes the allowed-token mask into ``bitmask[row]`` (numpy array or torch tensor, int32)."""
        write_row(bitmask, row, self.mask())
