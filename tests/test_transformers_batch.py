"""The transformers LogitsProcessor fills a step's rows as one batch (``fill_position_bitmasks``): its masked
scores equal the per-row computation, on one thread and on the pool; and (slow) ``model.generate`` with a
batch and with beams writes schema-valid JSON through it."""

from __future__ import annotations

import json
import logging
import threading

import numpy as np
import pytest

from formatenforcer import (
    CharacterParser,
    CharSet,
    JsonConfig,
    JsonSchemaParser,
    TokenEnforcer,
    Vocabulary,
    allocate_bitmask,
    apply_bitmask,
    fill_position_bitmasks,
)

from .test_transformers_generate import chat_batch

torch = pytest.importorskip("torch")

SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "maxLength": 12},
        "year": {"type": "integer", "minimum": 1900, "maximum": 2100},
    },
    "required": ["city", "year"],
    "additionalProperties": False,
}
COMPACT = JsonConfig(whitespace="compact")

# generated texts of the rows of one call sequence: two complete (end-of-sequence, then padding), one still
# going when the others end, and one the format refuses at '1' (a number where a string must be)
TEXTS = ['{"city":"Rome","year":1950}', '{"city":"Oslo","year":2001}', '{"city":"Saint-Ma', '{"city":1']


def _parser() -> JsonSchemaParser:
    """A new parser object each time: its caches are its own, so every mask in a test starts unknown."""
    return JsonSchemaParser(SCHEMA, config=COMPACT)


def _call_sequence(tokenizer) -> list[list[list[int]]]:  # noqa: ANN001
    """The ``input_ids`` of successive processor calls as ``generate`` makes them with 2 prompts x 2 beams:
    left-padded prompts, rows ending with EOS then padded, rows reordered between steps (beams swap)."""
    eos, pad = tokenizer.eos_token_id, tokenizer.pad_token_id
    pad = eos if pad is None else pad
    prompts = [tokenizer.encode(q, add_special_tokens=False) for q in ("A city and a year:", "JSON please:")]
    width = max(map(len, prompts))
    padded = [[pad] * (width - len(p)) + p for p in prompts]
    generated = [tokenizer.encode(t, add_special_tokens=False) for t in TEXTS]
    generated = [ids + [eos] if t.endswith("}") else ids for ids, t in zip(generated, TEXTS)]
    steps = max(map(len, generated)) + 2
    calls = []
    for step in range(steps):
        rows = []
        for index, ids in enumerate(generated):
            fill = pad if ids[-1] == eos else ids[-1]  # finished rows are padded; the others repeat their last token
            prefix = ids[:step] + [fill] * max(0, step - len(ids))
            rows.append(padded[index % 2] + prefix)
        if step % 2:
            rows.reverse()  # beams reordered: nothing is keyed by row index
        calls.append(rows)
    return calls


def _per_row(enforcer: TokenEnforcer, rows: list[list[int]], prompt_length: int) -> np.ndarray:
    """The per-row computation: each row's mask after its generated ids, end-of-sequence alone if refused."""
    bitmask = allocate_bitmask(len(rows), enforcer.vocabulary.size)
    for row, ids in enumerate(rows):
        position = enforcer.position_after(ids[prompt_length:])
        bitmask[row] = enforcer.vocabulary.eos_mask if position is None else enforcer.mask(position)
    return bitmask


@pytest.mark.parametrize("threads", ["1", "2"])
def test_processor_scores_equal_the_per_row_computation(smollm2_tokenizer, monkeypatch, threads) -> None:
    from formatenforcer.integrations.transformers import FormatEnforcerLogitsProcessor

    monkeypatch.setenv("FORMATENFORCER_THREADS", threads)
    vocabulary = Vocabulary.from_transformers(smollm2_tokenizer)
    processor = FormatEnforcerLogitsProcessor(smollm2_tokenizer, _parser(), vocabulary=vocabulary)
    reference = TokenEnforcer(vocabulary, _parser())
    generator = torch.Generator().manual_seed(0)
    for generation in range(2):  # one processor over two generate calls: the second starts anew
        calls = _call_sequence(smollm2_tokenizer)
        if generation:
            calls = [rows[:2] for rows in calls]  # a smaller batch
        prompt_length = len(calls[0][0])
        refused_rows = 0
        for rows in calls:
            scores = torch.randn(len(rows), vocabulary.size, generator=generator)
            expected = apply_bitmask(scores.clone(), _per_row(reference, rows, prompt_length))
            masked = processor(torch.tensor(rows), scores.clone())
            assert torch.equal(masked, expected)
            refused_rows += sum(reference.position_after(ids[prompt_length:]) is None for ids in rows)
        assert refused_rows > 0 or generation  # the refused row was exercised in the full batch


class _Digits(CharacterParser):
    """Up to three digits; records the threads its states were asked their characters on."""

    def __init__(self, text: str, seen: set[str]) -> None:
        self.text, self.seen = text, seen

    def add_character(self, ch: str) -> CharacterParser | None:
        return _Digits(self.text + ch, self.seen) if ch.isdigit() and len(self.text) < 3 else None

    def allowed_characters(self) -> CharSet:
        self.seen.add(threading.current_thread().name)
        return CharSet.of("0123456789") if len(self.text) < 3 else CharSet.of("")

    def can_end(self) -> bool:
        return bool(self.text)

    def key(self) -> object:
        return self.text


@pytest.mark.parametrize("threads", ["1", "2"])
def test_new_positions_are_computed_on_the_pool_once_each(smollm2_tokenizer, monkeypatch, threads) -> None:
    """Several new masks go to the pool when it has threads (none on this thread); one when it has one; a
    position shared by several rows (beams in the same place) is computed once and written to each."""
    monkeypatch.setenv("FORMATENFORCER_THREADS", threads)
    vocabulary = Vocabulary.from_transformers(smollm2_tokenizer)
    seen: set[str] = set()
    enforcer = TokenEnforcer(vocabulary, _Digits("", seen))
    digit = smollm2_tokenizer.encode("7", add_special_tokens=False)
    positions = [enforcer.position_after(digit * n) for n in (1, 2, 1, 0)]
    assert all(p is not None and p.mask is None for p in positions)
    seen.clear()  # only what the masks ask from here
    bitmask = allocate_bitmask(len(positions), vocabulary.size)
    fill_position_bitmasks(enforcer, positions, bitmask)
    on_pool = {name for name in seen if name.startswith("formatenforcer-mask")}
    assert bool(on_pool) == (threads != "1")
    assert (threading.current_thread().name in seen) == (threads == "1")
    assert np.array_equal(bitmask[0], bitmask[2])
    alone = TokenEnforcer(vocabulary, _Digits("", set()))
    for row, n in enumerate((1, 2, 1, 0)):
        assert np.array_equal(bitmask[row], alone.mask(alone.position_after(digit * n)))


class _Broken(CharacterParser):
    """A user's parser with a bug: it raises when asked its characters after 'b'."""

    def __init__(self, text: str = "") -> None:
        self.text = text

    def add_character(self, ch: str) -> CharacterParser | None:
        return _Broken(self.text + ch) if ch in "ab" else None

    def allowed_characters(self) -> CharSet:
        if self.text.endswith("b"):
            raise KeyError("bug in a custom parser")
        return CharSet.of("ab")

    def can_end(self) -> bool:
        return bool(self.text)

    def key(self) -> object:
        return self.text


@pytest.mark.parametrize("threads", ["1", "2"])
def test_an_internal_error_gives_its_row_end_of_sequence(caplog, monkeypatch, threads) -> None:
    monkeypatch.setenv("FORMATENFORCER_THREADS", threads)
    vocabulary = Vocabulary.from_tokens(["<eos>", "a", "b", "ab"], eos_token_ids=[0])
    enforcer = TokenEnforcer(vocabulary, _Broken())
    broken, fine = enforcer.position_after([2]), enforcer.position_after([1])
    bitmask = allocate_bitmask(4, vocabulary.size)
    with caplog.at_level(logging.ERROR, logger="formatenforcer"):
        fill_position_bitmasks(enforcer, [broken, fine, broken, None], bitmask)
    assert [int(word) for word in bitmask[:, 0]] == [1, 0b1111, 1, 1]  # eos alone; all four; eos; eos
    assert len([r for r in caplog.records if "internal error" in r.getMessage()]) == 1  # once per position


def test_rows_that_do_not_fit_are_refused(smollm2_tokenizer) -> None:
    vocabulary = Vocabulary.from_tokens(["<eos>", "a", "b", "ab"], eos_token_ids=[0])
    enforcer = TokenEnforcer(vocabulary, _Broken())
    bitmask = allocate_bitmask(2, vocabulary.size)
    with pytest.raises(ValueError, match="fill_position_bitmasks: row 2 is outside"):
        fill_position_bitmasks(enforcer, [enforcer.start, enforcer.start], bitmask, [0, 2])
    with pytest.raises(ValueError, match="fill_position_bitmasks: 1 positions but 2 rows"):
        fill_position_bitmasks(enforcer, [enforcer.start], bitmask, [0, 1])


def _generate(model, tokenizer, processor, **kwargs) -> list[str]:  # noqa: ANN001
    from transformers import LogitsProcessorList

    questions = ["Name a city and a year as JSON.", "Give a European capital and the year you like best, as JSON."]
    inputs = chat_batch(tokenizer, questions)
    outputs = model.generate(
        **inputs,
        max_new_tokens=40,
        do_sample=False,
        pad_token_id=tokenizer.pad_token_id,
        logits_processor=LogitsProcessorList([processor]),
        **kwargs,
    )
    width = inputs["input_ids"].shape[1]
    return [tokenizer.decode(row[width:], skip_special_tokens=True) for row in outputs]


def _check(texts: list[str], count: int) -> None:
    import jsonschema

    assert len(texts) == count
    for text in texts:
        try:
            value = json.loads(text)
        except ValueError:
            pytest.fail(f"not complete JSON within the token budget: {text!r}")
        jsonschema.validate(value, SCHEMA)


@pytest.mark.slow
@pytest.mark.parametrize("threads", ["1", "2"])
def test_generate_batch_and_beams_write_valid_json(smollm2_model, monkeypatch, threads) -> None:
    """A batch of 2 greedy, then the same batch with 3 beams returning 2 each: every output validates."""
    from formatenforcer.integrations.transformers import FormatEnforcerLogitsProcessor

    monkeypatch.setenv("FORMATENFORCER_THREADS", threads)
    model, tokenizer = smollm2_model
    processor = FormatEnforcerLogitsProcessor(tokenizer, _parser())
    _check(_generate(model, tokenizer, processor), 2)
    _check(_generate(model, tokenizer, processor, num_beams=3, num_return_sequences=2), 4)
