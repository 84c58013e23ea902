"""Hugging Face transformers: ``generate(prefix_allowed_tokens_fn=...)`` and a ``LogitsProcessor``.

Both take the rows ``generate`` passes (prompt + generated ids, for every batch row and beam) and key the
format state by the *generated* ids only, through the enforcer's prefix memo, so batch rows, beams that are
reordered or dropped, and finished rows padded with pad tokens all find their own state: nothing is keyed by
row index. The prompt length is learned from the first call; a call that cannot belong to the same
generation (shorter rows, a jump in length, an unseen prompt) starts a new one, so one object can serve
successive ``generate`` calls.

The ``LogitsProcessor`` fills a step's rows as one batch (``fill_position_bitmasks``): each row's position is
found through the prefix memo on the calling thread, then the masks not yet known, one per distinct position,
are computed together on the library's thread pool (``FORMATENFORCER_THREADS``), where the compiled walks
overlap. ``prefix_allowed_tokens_fn`` cannot batch: ``generate`` calls it once per row.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from formatenforcer import (
    CharacterParser,
    TokenEnforcer,
    Vocabulary,
    allocate_bitmask,
    apply_bitmask,
    fill_position_bitmasks,
)

try:
    from transformers import LogitsProcessor
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "formatenforcer.integrations.transformers needs transformers: pip install 'formatenforcer[transformers]'"
    ) from error

logger = logging.getLogger("formatenforcer")


class _GenerationTracker:
    """Splits rows into prompt and generated ids, and notices when a new generation starts."""

    def __init__(self, enforcer: TokenEnforcer) -> None:
        self.enforcer = enforcer
        self.prompt_length: int | None = None
        self.last_length: int | None = None
        self.prompts: set[tuple[int, ...]] = set()

    def generated(self, ids: list[int]) -> list[int]:
        length = len(ids)
        new = (
            self.prompt_length is None
            or self.last_length is None
            or length < self.prompt_length
            or length < self.last_length
            or length > self.last_length + 1
        )
        if not new and length == self.prompt_length:
            self.prompts.add(tuple(ids))
        elif not new and tuple(ids[: self.prompt_length]) not in self.prompts:
            new = True
        if new:
            self.enforcer.reset()
            self.prompt_length = length
            self.prompts = {tuple(ids)}
        self.last_length = length
        return ids[self.prompt_length :]


def _vocabulary(tokenizer: Any, eos_token_ids: Iterable[int] | None, vocabulary: Vocabulary | None) -> Vocabulary:
    return vocabulary if vocabulary is not None else Vocabulary.from_transformers(tokenizer, eos_token_ids)


def build_prefix_allowed_tokens_fn(
    tokenizer: Any,
    parser: CharacterParser,
    *,
    eos_token_ids: Iterable[int] | None = None,
    vocabulary: Vocabulary | None = None,
):
    """A ``prefix_allowed_tokens_fn(batch_id, input_ids) -> list[int]`` for ``model.generate``.

    ``eos_token_ids`` defaults to the tokenizer's EOS plus end-of-turn markers it knows (``<|im_end|>``...);
    pass the model's ``generation_config.eos_token_id`` when it differs."""
    enforcer = TokenEnforcer(_vocabulary(tokenizer, eos_token_ids, vocabulary), parser)
    tracker = _GenerationTracker(enforcer)

    def prefix_allowed_tokens_fn(batch_id: int, input_ids: Any) -> list[int]:
        ids = input_ids.tolist() if hasattr(input_ids, "tolist") else list(input_ids)
        return enforcer.allowed_tokens(tracker.generated(ids))

    prefix_allowed_tokens_fn.enforcer = enforcer  # type: ignore[attr-defined]
    return prefix_allowed_tokens_fn


class FormatEnforcerLogitsProcessor(LogitsProcessor):
    """A ``LogitsProcessor`` that masks, in one tensor operation per step, every token the format refuses.

    A step's rows are filled as one batch: the masks not yet known are computed together on the library's
    thread pool (see the module docstring)."""

    def __init__(
        self,
        tokenizer: Any,
        parser: CharacterParser,
        *,
        eos_token_ids: Iterable[int] | None = None,
        vocabulary: Vocabulary | None = None,
    ) -> None:
        self.enforcer = TokenEnforcer(_vocabulary(tokenizer, eos_token_ids, vocabulary), parser)
        self._tracker = _GenerationTracker(self.enforcer)

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        enforcer = self.enforcer
        rows = input_ids.tolist()
        positions = []
        for row, ids in enumerate(rows):  # in row order: the tracker notices a new generation on the first row
            generated = self._tracker.generated(ids)
            try:
                position = enforcer.position_after(generated)
            except Exception as error:  # noqa: BLE001 - a parser's internal error never reaches generate
                logger.error("formatenforcer: internal error in row %d, allowing only end-of-sequence: %r", row,
                             error, exc_info=error)  # fmt: skip
                position = None
            else:
                if position is None:
                    logger.warning("formatenforcer: row %d left the format; allowing only end-of-sequence", row)
            positions.append(position)
        bitmask = allocate_bitmask(len(rows), enforcer.vocabulary.size)
        fill_position_bitmasks(enforcer, positions, bitmask)
        return apply_bitmask(scores, bitmask)


from .transformers_generate import GenerationOutput, generate, prompt_inputs  # noqa: E402 - the loop, re-exported

__all__ = [
    "FormatEnforcerLogitsProcessor",
    "GenerationOutput",
    "build_prefix_allowed_tokens_fn",
    "generate",
    "prompt_inputs",
]
