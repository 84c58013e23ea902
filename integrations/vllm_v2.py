"""vLLM Model Runner V2: a logits processor that enforces a per-request format (speculative decoding included).

Model Runner V2 (vLLM's GPU model runner, ``vllm/v1/worker/gpu/``) has its own logits-processor interface,
``vllm.v1.worker.gpu.sample.logits_processor.LogitsProcessor``; V1-interface processors (integrations/vllm.py)
are refused there. Usage is the same as for V1, with this class::

    from formatenforcer.integrations.vllm_v2 import FormatEnforcerLogitsProcessorV2

    llm = LLM(model=..., logits_processors=[FormatEnforcerLogitsProcessorV2])
    params = SamplingParams(max_tokens=100, extra_args={"json": {"type": "object", ...}})
    # server: --logits-processors formatenforcer.integrations.vllm_v2:FormatEnforcerLogitsProcessorV2

The request fields are the V1 adapter's (``json``, ``regex``, ``choice``, ``json_object``,
``whitespace_pattern``, ``reasoning``; integrations/vllm.py), parsed and validated by the same functions.

How it fits the V2 interface:

- ``validate_params`` (frontend, at admission) builds the format once and raises ValueError for a bad one,
  which vLLM turns into a validation error (HTTP 400).
- ``add_request(slot, params)`` gives the request's persistent slot a fresh Matcher (slots are recycled; there
  is no removal call, so a slot's previous state is overwritten here) and returns whether the request is
  constrained.
- ``apply(logits, ctx)`` runs once per step for the whole batch. The tokens a request has committed are read
  from the runner's buffers (``req_states.all_token_ids[slot, prompt_len:total_len]``); the matcher catches up
  on the ones it has not seen (one gather and one device-to-host copy for the batch). This also covers a
  request resumed after preemption (its slot is added again and the matcher replays its output).
- Rows are logits rows, not requests: under speculative decoding a request owns ``1 + k`` consecutive rows,
  row ``j`` predicting the token after the committed ones and the first ``j`` draft tokens, which are in
  ``ctx.input_ids`` (row ``j + 1`` of the request holds draft token ``j``). The rows are filled with
  ``Matcher.fill_bitmasks_for_draft``; rows after a draft token the format refuses stay "everything allowed":
  the rejection sampler never reads them, since that draft token has probability 0 under the mask.
- The masks are written into one packed host bitmask and applied with ``apply_bitmask`` (on the logits'
  device) to the constrained rows only. A step without constrained requests returns the logits untouched.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import numpy as np

from formatenforcer import FormatError, Vocabulary, allocate_bitmask, apply_bitmask, fill_bitmasks, write_mask_row
from formatenforcer.integrations._lazy import lazy_classes
from formatenforcer.integrations.vllm import EnforcerCache, check_format, eos_ids_of, format_spec_from_args

if TYPE_CHECKING:
    from formatenforcer import Matcher

INSTALL_HINT = "vLLM (with Model Runner V2) is not installed: pip install 'formatenforcer[vllm]'"


class SlotState:
    """One constrained request in its slot: its matcher and how many of its output tokens it has seen."""

    __slots__ = ("matcher", "consumed", "broken")

    def __init__(self, matcher: Matcher | None) -> None:
        self.matcher = matcher
        self.consumed = 0
        self.broken = matcher is None  # a format that could not be built: end the request at once

    def catch_up(self, tokens: list[int]) -> None:
        """Accepts output tokens committed since the last step (a token that leaves the format, which only
        something outside this processor can pick, ends the request: end-of-sequence only from then on)."""
        self.consumed += len(tokens)
        if self.broken or self.matcher is None:
            return
        for token in tokens:
            if not self.matcher.accept_token(token):
                self.broken = True
                return

    def restart(self) -> None:
        """The slot's output shrank (a request re-added with less output than the matcher saw): replay."""
        self.consumed = 0
        if self.matcher is not None:
            self.matcher.reset()
            self.broken = False


def rows_of_requests(expanded_idx_mapping: np.ndarray, expanded_local_pos: np.ndarray) -> dict[int, tuple[int, int]]:
    """slot -> (first logits row, number of rows) from the step's row layout (rows of a request are
    consecutive, local position 0 first)."""
    out: dict[int, tuple[int, int]] = {}
    for row, (slot, local) in enumerate(zip(expanded_idx_mapping.tolist(), expanded_local_pos.tolist())):
        if local == 0:
            out[slot] = (row, 1)
        else:
            first, count = out[slot]
            out[slot] = (first, count + 1)
    return out


def _make_processor_class() -> type:
    try:
        import torch
        from vllm.v1.worker.gpu.sample.logits_processor.interface import LogitsProcessor
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(INSTALL_HINT) from exc

    class FormatEnforcerLogitsProcessorV2(LogitsProcessor):
        """Enforces the format each request names in ``extra_args`` under Model Runner V2 (module doc)."""

        @classmethod
        def validate_params(cls, sampling_params: Any) -> None:
            """Raises ValueError (FormatError) for a malformed format, before the request is scheduled."""
            spec = format_spec_from_args(getattr(sampling_params, "extra_args", None))
            if spec is not None:
                check_format(spec)

        def __init__(self, vllm_config: Any, req_states: Any) -> None:
            self._model_config = vllm_config.model_config
            self._vocab_size = int(self._model_config.get_vocab_size())
            self._req_states = req_states
            self._slots: dict[int, SlotState] = {}
            self._cache: EnforcerCache | None = None
            self._cache_lock = threading.Lock()
            self._bitmask = allocate_bitmask(max(1, int(req_states.max_num_reqs)), self._vocab_size)

        @property
        def enforcers(self) -> EnforcerCache:
            """The per-format enforcer cache over this model's vocabulary (built on the first constrained
            request, so an engine that never sees one pays nothing)."""
            if self._cache is None:
                with self._cache_lock:
                    if self._cache is None:
                        self._cache = EnforcerCache(self._build_vocabulary())
            return self._cache

        def _build_vocabulary(self) -> Vocabulary:
            from vllm.tokenizers import cached_tokenizer_from_config

            tokenizer = cached_tokenizer_from_config(self._model_config)
            if tokenizer is None:
                raise FormatError("formatenforcer needs the model's tokenizer (skip_tokenizer_init is set)")
            eos = eos_ids_of(tokenizer, self._model_config.try_get_generation_config())
            return Vocabulary.from_transformers(tokenizer, eos or None, size=self._vocab_size)

        def add_request(self, req_idx: int, sampling_params: Any) -> bool:
            """A fresh matcher for the request entering slot ``req_idx``; False when it names no format."""
            try:
                spec = format_spec_from_args(getattr(sampling_params, "extra_args", None))
            except FormatError:
                spec = None  # refused by validate_params already; never reached through the engine
            if spec is None:
                self._slots.pop(req_idx, None)
                return False
            try:
                matcher = self.enforcers.get(spec).matcher()
            except FormatError:
                matcher = None
            self._slots[req_idx] = SlotState(matcher)
            return True

        def apply(self, logits: torch.Tensor, ctx: Any) -> torch.Tensor:
            """Masks the rows of constrained requests (all draft positions included) in one operation."""
            slots = self._slots
            batch = [int(s) for s in np.asarray(ctx.idx_mapping_np).tolist() if int(s) in slots]
            if not batch:
                return logits
            self._catch_up(batch)
            num_rows = logits.shape[0]
            if num_rows == len(ctx.idx_mapping_np):  # no speculative rows: row i is batch position i
                layout = {int(s): (row, 1) for row, s in enumerate(np.asarray(ctx.idx_mapping_np).tolist())}
                input_ids = None
            else:
                layout = rows_of_requests(ctx.expanded_idx_mapping.cpu().numpy(), ctx.expanded_local_pos.cpu().numpy())
                input_ids = ctx.input_ids.cpu().tolist()
            if self._bitmask.shape[0] < num_rows:
                self._bitmask = allocate_bitmask(num_rows, self._vocab_size)
            bitmask = self._bitmask[:num_rows]
            bitmask.fill(-1)
            eos_mask = self.enforcers.vocabulary.eos_mask
            plain: list[Matcher] = []
            plain_rows: list[int] = []
            masked_rows: list[int] = []
            for slot in batch:
                first, count = layout[slot]
                masked_rows.extend(range(first, first + count))
                state = slots[slot]
                if state.broken or state.matcher is None:
                    for row in range(first, first + count):
                        write_mask_row(bitmask, row, eos_mask)
                elif count == 1:
                    plain.append(state.matcher)
                    plain_rows.append(first)
                else:
                    draft = input_ids[first + 1 : first + count]  # type: ignore[index]
                    state.matcher.fill_bitmasks_for_draft(draft, bitmask, row=first)
            fill_bitmasks(plain, bitmask, plain_rows)
            if len(masked_rows) == num_rows:
                apply_bitmask(logits, torch.from_numpy(bitmask))
                return logits
            index = torch.tensor(masked_rows, device=logits.device)
            selected = logits.index_select(0, index)
            apply_bitmask(selected, torch.from_numpy(bitmask[masked_rows]))
            logits.index_copy_(0, index, selected)
            return logits

        def _catch_up(self, batch: list[int]) -> None:
            """Feeds each matcher the output tokens its request committed since the last step, read from the
            runner's buffers with one gather and one device-to-host copy."""
            req_states = self._req_states
            slot_index = torch.tensor(batch, dtype=torch.long)
            device = req_states.total_len.gpu.device
            total = req_states.total_len.gpu[slot_index.to(device)].cpu().numpy()
            prompt = np.asarray(req_states.prompt_len.np)[batch]
            rows: list[int] = []
            cols: list[int] = []
            spans: list[tuple[SlotState, int]] = []
            for slot, total_len, prompt_len in zip(batch, total.tolist(), prompt.tolist()):
                state = self._slots[slot]
                output_len = int(total_len) - int(prompt_len)
                if output_len < state.consumed:
                    state.restart()
                new = output_len - state.consumed
                if new > 0:
                    start = int(prompt_len) + state.consumed
                    rows.extend([slot] * new)
                    cols.extend(range(start, start + new))
                    spans.append((state, new))
            if not spans:
                return
            all_ids = req_states.all_token_ids.gpu
            picked = all_ids[torch.tensor(rows, device=all_ids.device), torch.tensor(cols, device=all_ids.device)]
            tokens = picked.cpu().tolist()
            offset = 0
            for state, new in spans:
                state.catch_up(tokens[offset : offset + new])
                offset += new

    FormatEnforcerLogitsProcessorV2.__module__ = __name__
    FormatEnforcerLogitsProcessorV2.__qualname__ = "FormatEnforcerLogitsProcessorV2"  # picklable by reference
    return FormatEnforcerLogitsProcessorV2


__getattr__ = lazy_classes(globals(), {"FormatEnforcerLogitsProcessorV2": _make_processor_class})
"""Defines the engine-derived class on first access (see _lazy.py): importing this module imports no engine."""

__all__ = [
    "FormatEnforcerLogitsProcessorV2",  # noqa: F822 - defined on first access by __getattr__
    "SlotState",
    "rows_of_requests",
]
