"""Matcher: the per-sequence, stateful view of a TokenEnforcer that engines drive token by token.

It keeps the history of positions as a stack, so ``rollback(n)`` (speculative decoding, jump-forward) is a
pop. The masks come from the enforcer's shared cache, so many matchers of one format share their work.
"""

from __future__ import annotations

import logging
import operator
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

import numpy as np

from .bitmask import ids_of, write_row
from .errors import MaskMemoryError, MaskTimeoutError
from .forced import LOOKBACK, forced_text_of, forced_tokens_of
from .position import Position


class Stepper(Protocol):
    """What a matcher asks of its enforcer (``TokenEnforcer``): the start, one step, one mask."""

    @property
    def start(self) -> Position: ...

    def step(self, position: Position, token_id: int) -> Position | None: ...

    def mask(self, position: Position) -> np.ndarray: ...

    @property
    def vocabulary(self) -> Any: ...  # its size, eos_token_ids and eos_mask (the error state's mask)


logger = logging.getLogger("formatenforcer")


def log_fallback(error: Exception, scope: str = "") -> None:
    """Logs the error behind an answer of end-of-sequence alone: a mask past its time or memory budget in one
    line (the format is too costly there, not broken), any other error as the internal error it is, with its traceback.
    ``scope``: how long the fallback lasts (" from here" for a matcher's error state)."""
    if isinstance(error, (MaskTimeoutError, MaskMemoryError)):
        logger.error("formatenforcer: %s; allowing only end-of-sequence%s", error, scope)
    else:
        logger.error(
            "formatenforcer: internal error, allowing only end-of-sequence%s: %r", scope, error, exc_info=error
        )


class Matcher:
    """Tracks one sequence through a format. Create with ``TokenEnforcer.matcher()``.

    Error state: if computing a mask or a step meets an internal error (a bug in a parser, a custom
    ``CharacterParser`` that raises, memory running out), the matcher logs it once on the ``formatenforcer``
    logger (with the traceback) and from then on allows only end-of-sequence: ``fill_bitmask`` writes the EOS
    ids alone, ``accept_token`` accepts only them, and ``error`` holds the exception. No exception reaches the
    engine's loop; ``reset()`` and ``rollback()`` leave the error state. Wrong arguments (a token id that is
    not an integer, a row the bitmask lacks) still raise TypeError/ValueError: they are the caller's bug, not
    the format's. An integer id outside the vocabulary is refused (``False``), like any token the format
    does not allow."""

    def __init__(self, enforcer: Stepper) -> None:
        self.enforcer = enforcer
        self._history: list[Position] = [enforcer.start]
        self._tokens: list[int] = []
        self.error: BaseException | None = None
        """The internal error that put the matcher in its error state (None: none)."""
        self._eos_finished = False

    @property
    def position(self) -> Position:
        return self._history[-1]

    def _fail(self, error: Exception) -> None:
        if self.error is None:
            log_fallback(error, " from here")
        self.error = error

    def _token(self, token_id: Any) -> int:
        try:
            token = operator.index(token_id)
        except TypeError:
            raise TypeError(f"a token id must be an integer, not {type(token_id).__name__}: {token_id!r}") from None
        return token  # (an id outside the vocabulary, such as a padded logit, is refused like any other)

    def accept_token(self, token_id: int) -> bool:
        """Advances by ``token_id`` if the format allows it there; returns whether it did."""
        token = token_id if type(token_id) is int else self._token(token_id)
        if self.error is not None:
            if token in self.enforcer.vocabulary.eos_token_ids and not self._eos_finished:
                self._eos_finished = True
                return True
            return False
        history = self._history
        try:
            nxt = self.enforcer.step(history[-1], token)
        except Exception as error:  # noqa: BLE001 - the documented error state, never into the engine
            self._fail(error)
            return self.accept_token(token)
        if nxt is None:
            return False
        history.append(nxt)
        self._tokens.append(token)
        return True

    def accept_tokens(self, token_ids: Iterable[int]) -> bool:
        """Accepts tokens in order; stops at (and reports) the first refused one."""
        return all(self.accept_token(t) for t in token_ids)

    def validate_tokens(self, token_ids: Iterable[int]) -> int:
        """How many of ``token_ids``, from the first, the format accepts now (no state change)."""
        position = self._history[-1]
        count = 0
        for token in token_ids:
            token = self._token(token)
            if self.error is not None:
                return int(token in self.enforcer.vocabulary.eos_token_ids and not self._eos_finished and count == 0)
            try:
                position = self.enforcer.step(position, token)
            except Exception as error:  # noqa: BLE001 - see the class docstring
                self._fail(error)
                return count
            if position is None:
                break
            count += 1
        return count

    def rollback(self, n: int) -> None:
        """Undoes the last ``n`` accepted tokens."""
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
            raise TypeError(f"rollback takes an int, not {type(n).__name__}")
        if n < 0:
            raise ValueError(f"cannot roll back a negative number of tokens ({n})")
        if n > len(self._history) - 1:
            raise ValueError(f"cannot roll back {n} tokens: only {len(self._history) - 1} were accepted")
        if n:
            del self._history[-n:]
            del self._tokens[-n:]
        self.error, self._eos_finished = None, False

    def reset(self) -> None:
        """Back to the start of the format."""
        del self._history[1:]
        self._tokens.clear()
        self.error, self._eos_finished = None, False

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
        if self.error is not None:
            return True
        position = self._history[-1]
        try:
            return position.finished or (not position.pending and position.state.can_end())
        except Exception as error:  # noqa: BLE001 - see the class docstring
            self._fail(error)
            return True

    def is_finished(self) -> bool:
        """Whether end-of-sequence has been accepted."""
        return self._eos_finished or self._history[-1].finished

    def mask(self) -> np.ndarray:
        """The packed (read-only) mask of allowed next tokens."""
        if self.error is None:
            try:
                return self.enforcer.mask(self._history[-1])
            except Exception as error:  # noqa: BLE001 - see the class docstring
                self._fail(error)
        return self.enforcer.vocabulary.eos_mask

    def has_mask(self) -> bool:
        """Whether ``mask()`` is known without computing it (already computed here, or the error state)."""
        position = self._history[-1]
        return self.error is not None or position.mask is not None or position.finished

    def allowed_token_ids(self) -> list[int]:
        """The allowed next token ids (never empty: a dead end allows end-of-sequence)."""
        return ids_of(self.mask())

    def fill_bitmask(self, bitmask: Any, row: int = 0) -> None:
        """Writes the allowed-token mask into ``bitmask[row]`` (numpy array or torch tensor, int32)."""
        write_row(bitmask, row, self.mask())

    def fill_bitmasks_for_draft(self, draft_ids: Sequence[int], bitmask: Any, row: int = 0) -> int:
        """Masks for verifying a speculative draft: ``bitmask[row + i]`` gets the mask after accepting
        ``draft_ids[:i]``, for i = 0 .. len(draft_ids) (the last row is for the bonus token sampled after a
        fully accepted draft), without moving the matcher.

        Filling stops at the first draft token the format refuses, ``draft_ids[k]``: rows ``row`` ..
        ``row + k`` are written (row ``row + k`` is the mask that refuses ``draft_ids[k]``, so the verifier
        rejects the draft there) and the rows after it are left as they were (a verifier never reads them:
        they follow a rejected token). Returns k, the number of draft tokens the format accepts
        (``len(draft_ids)`` when all are). Raises ValueError, before writing anything, when the bitmask has
        fewer than ``row + len(draft_ids) + 1`` rows."""
        draft = [self._token(token) for token in draft_ids]
        if isinstance(row, bool) or not isinstance(row, (int, np.integer)) or row < 0:
            raise ValueError(f"fill_bitmasks_for_draft: row must be a non-negative int, not {row!r}")
        needed = row + len(draft) + 1
        if bitmask.shape[0] < needed:
            raise ValueError(
                f"fill_bitmasks_for_draft: a draft of {len(draft)} token(s) from row {row} needs {needed} rows,"
                f" the bitmask has {bitmask.shape[0]}"
            )
        saved = len(self._history), self.error, self._eos_finished
        accepted = 0
        try:
            for index, token in enumerate(draft):
                write_row(bitmask, row + index, self.mask())
                if not self.accept_token(token):
                    return accepted
                accepted += 1
            write_row(bitmask, row + len(draft), self.mask())
            return accepted
        finally:  # back to where the matcher was, error state included
            depth, self.error, self._eos_finished = saved
            del self._history[depth:]
            del self._tokens[depth - 1 :]
