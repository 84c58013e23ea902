"""fill_bitmasks: one call fills the rows of many matchers, exactly as each matcher's own fill_bitmask."""

from __future__ import annotations

import numpy as np
import pytest

from formatenforcer import (
    ChoiceParser,
    JsonSchemaParser,
    RegexParser,
    TokenEnforcer,
    allocate_bitmask,
    fill_bitmasks,
)


def _matchers(vocabulary, tokenizer):
    formats = [
        (JsonSchemaParser({"type": "object", "properties": {"a": {"type": "integer"}}}), '{"a": 1'),
        (RegexParser(r"[0-9]{3}-[0-9]{4}"), "555-"),
        (ChoiceParser(["yes", "no", "maybe"]), "ma"),
        (JsonSchemaParser({"type": "array", "items": {"type": "string"}}), '["x", "'),
    ]
    matchers = []
    for parser, prefix in formats:
        matcher = TokenEnforcer(vocabulary, parser).matcher()
        assert matcher.accept_tokens(tokenizer.encode(prefix, add_special_tokens=False))
        matchers.append(matcher)
    return matchers


def test_rows_equal_each_matchers_own_fill(llama3_vocabulary, llama3_tokenizer) -> None:
    matchers = _matchers(llama3_vocabulary, llama3_tokenizer)
    rows = [5, 0, 3, 1]
    batch = allocate_bitmask(6, llama3_vocabulary.size)
    batch[:] = 0
    fill_bitmasks(matchers, batch, rows)
    for matcher, row in zip(matchers, rows):
        alone = allocate_bitmask(1, llama3_vocabulary.size)
        matcher.fill_bitmask(alone, 0)
        assert np.array_equal(batch[row], alone[0])
    assert not batch[2].any() and not batch[4].any()  # rows not named stay as they were
    assert len({batch[row].tobytes() for row in rows}) == len(rows)


def test_default_rows_are_in_order(llama3_vocabulary, llama3_tokenizer) -> None:
    matchers = _matchers(llama3_vocabulary, llama3_tokenizer)
    batch = allocate_bitmask(len(matchers), llama3_vocabulary.size)
    fill_bitmasks(matchers, batch)
    for row, matcher in enumerate(matchers):
        assert np.array_equal(batch[row], matcher.mask())


def test_bad_rows_are_refused(llama3_vocabulary, llama3_tokenizer) -> None:
    matchers = _matchers(llama3_vocabulary, llama3_tokenizer)[:2]
    batch = allocate_bitmask(2, llama3_vocabulary.size)
    with pytest.raises(ValueError, match="outside"):
        fill_bitmasks(matchers, batch, [0, 2])
    with pytest.raises(ValueError, match="rows"):
        fill_bitmasks(matchers, batch, [0])


_FRESH_FORMATS = [
    ({"type": "object", "properties": {"name": {"type": "string", "maxLength": 12}}, "required": ["name"]}, '{"na'),
    ({"type": "array", "items": {"type": "integer", "minimum": 3}}, "[4, "),
    ({"type": "object", "additionalProperties": {"type": "boolean"}}, '{"x": tr'),
    ({"type": "string", "pattern": "^[a-z]+-[0-9]{2}$"}, '"abc-'),
    ({"enum": ["alpha", "beta", {"k": [1, 2]}]}, '{"k": ['),
    ({"type": "number", "exclusiveMaximum": 10}, "9."),
]


@pytest.mark.parametrize("threads", ["1", "4"])
def test_new_masks_computed_together_equal_each_alone(llama3_vocabulary, llama3_tokenizer, monkeypatch, threads):
    """Rows whose masks are all new (computed on the pool when it has several threads) hold exactly what a
    matcher of a separate enforcer computes alone, on this thread."""
    monkeypatch.setenv("FORMATENFORCER_THREADS", threads)
    matchers, alone = [], []
    for schema, prefix in _FRESH_FORMATS:
        ids = llama3_tokenizer.encode(prefix, add_special_tokens=False)
        batch_matcher = TokenEnforcer(llama3_vocabulary, JsonSchemaParser(schema)).matcher()
        own_matcher = TokenEnforcer(llama3_vocabulary, JsonSchemaParser(schema)).matcher()
        assert batch_matcher.accept_tokens(ids) and own_matcher.accept_tokens(ids)
        assert not batch_matcher.has_mask()
        matchers.append(batch_matcher)
        alone.append(own_matcher)
    batch = allocate_bitmask(len(matchers), llama3_vocabulary.size)
    fill_bitmasks(matchers, batch)
    for row, (matcher, own) in enumerate(zip(matchers, alone)):
        assert matcher.has_mask()
        assert np.array_equal(batch[row], own.mask()), _FRESH_FORMATS[row]


def test_a_forked_child_fills_on_a_pool_of_its_own(llama3_vocabulary, llama3_tokenizer, monkeypatch) -> None:
    """A process forked after the pool was made (vLLM's workers, multiprocessing) gets a new pool: the
    parent's threads do not exist in the child, and work handed to them would never run."""
    import multiprocessing

    monkeypatch.setenv("FORMATENFORCER_THREADS", "2")
    matchers = _matchers(llama3_vocabulary, llama3_tokenizer)
    fill_bitmasks(matchers, allocate_bitmask(len(matchers), llama3_vocabulary.size))  # the parent's pool exists

    def child(queue) -> None:  # noqa: ANN001
        fresh = _matchers(llama3_vocabulary, llama3_tokenizer)
        batch = allocate_bitmask(len(fresh), llama3_vocabulary.size)
        fill_bitmasks(fresh, batch)
        queue.put([batch[row].tobytes() == matcher.mask().tobytes() for row, matcher in enumerate(fresh)])

    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    process = context.Process(target=child, args=(queue,))
    process.start()
    process.join(120)
    assert process.exitcode == 0
    assert queue.get(timeout=5) == [True] * len(matchers)
