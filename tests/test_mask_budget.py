"""The time and memory budgets of one mask (``EnforcerConfig.mask_seconds``, ``mask_megabytes``): a mask that
runs past either stops with ``MaskTimeoutError`` or ``MaskMemoryError``, which never reaches the engine's loop
(the matcher's error state, end-of-sequence only), and the caches the interrupted walk had filled give exact
masks afterwards."""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from formatenforcer import (
    EnforcerConfig,
    FormatEnforcerError,
    JsonSchemaParser,
    MaskMemoryError,
    MaskTimeoutError,
    TokenEnforcer,
    Vocabulary,
    allocate_bitmask,
    fill_bitmasks,
)
from formatenforcer.core.bitmask import ids_of

_NAMES = itertools.count()

INSTANCE = {"title": "Ode to a nightingale", "year": 1819, "lines": ["My heart aches", "and a drowsy numbness"],
            "meta": {"author": "Keats", "rating": 4.5, "tags": ["ode", "romantic"]}}  # fmt: skip


def _schema(name: str) -> dict:
    """A schema with a property name no other test uses, so its first walks are not in a shared cache. Its
    ``contains`` keeps it on the Python parsers, whose walks these budgets bound (the compiled JSON machine's
    walk is bounded by the vocabulary and takes no budget: ``test_the_schema_runs_on_the_python_walk``)."""
    return {
        "type": "object",
        "properties": {
            "title": {"type": "string", "maxLength": 60},
            "year": {"type": "integer", "minimum": 1000, "maximum": 2100},
            "lines": {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1},
            "meta": {
                "type": "object",
                "properties": {
                    "author": {"type": "string"},
                    "rating": {"type": "number"},
                    "tags": {"type": "array", "items": {"type": "string"}, "contains": {"const": "ode"}},
                },
            },  # fmt: skip
            name: {"type": "boolean"},
        },
        "required": ["title", "year"],
        "additionalProperties": False,
    }


def _fresh_name() -> str:
    return f"budget_probe_{next(_NAMES)}_{id(object())}"


def test_the_schema_runs_on_the_python_walk() -> None:
    assert JsonSchemaParser(_schema(_fresh_name())).compiled_twin() is None


def test_a_mask_past_its_budget_leaves_end_of_sequence_alone(llama3_tokenizer, llama3_vocabulary, caplog) -> None:
    enforcer = TokenEnforcer(llama3_vocabulary, JsonSchemaParser(_schema(_fresh_name())),
                             EnforcerConfig(mask_seconds=1e-9))  # fmt: skip
    matcher = enforcer.matcher()
    bitmask = allocate_bitmask(1, llama3_vocabulary.size)
    with caplog.at_level(logging.ERROR, logger="formatenforcer"):
        matcher.fill_bitmask(bitmask, 0)
        matcher.fill_bitmask(bitmask, 0)
    assert isinstance(matcher.error, MaskTimeoutError)
    assert isinstance(matcher.error, FormatEnforcerError)
    assert "time budget" in str(matcher.error)
    assert ids_of(bitmask[0]) == list(llama3_vocabulary.eos_token_ids)
    assert len([r for r in caplog.records if "end-of-sequence" in r.getMessage()]) == 1  # logged once, one line
    assert not any(r.exc_info for r in caplog.records)  # a budget, not a bug: no traceback
    assert not matcher.accept_token(llama3_tokenizer.encode("{", add_special_tokens=False)[0])
    assert matcher.accept_token(llama3_vocabulary.eos_token_ids[0])
    # the prefix-keyed entry point answers end-of-sequence for that call, and raises nothing
    other = TokenEnforcer(llama3_vocabulary, JsonSchemaParser(_schema(_fresh_name())),
                          EnforcerConfig(mask_seconds=1e-9))  # fmt: skip
    assert other.allowed_tokens([]) == list(llama3_vocabulary.eos_token_ids)


def test_a_batch_row_past_its_budget_leaves_the_other_rows_alone(llama3_vocabulary) -> None:
    name = _fresh_name()
    slow = TokenEnforcer(llama3_vocabulary, JsonSchemaParser(_schema(name)), EnforcerConfig(mask_seconds=1e-9))
    plain = TokenEnforcer(llama3_vocabulary, JsonSchemaParser(_schema(name)))
    bitmask = allocate_bitmask(2, llama3_vocabulary.size)
    matchers = [slow.matcher(), plain.matcher()]
    fill_bitmasks(matchers, bitmask)
    assert isinstance(matchers[0].error, MaskTimeoutError) and matchers[1].error is None
    assert ids_of(bitmask[0]) == list(llama3_vocabulary.eos_token_ids)
    assert np.array_equal(bitmask[1], plain.mask(plain.start))


def test_masks_after_interrupted_walks_are_exact(llama3_tokenizer, llama3_vocabulary) -> None:
    """Walks stopped at many points (budgets from nothing to a few milliseconds, each on a new schema object
    teacher-forced until its budget runs out) leave caches whose masks equal those of a vocabulary that never
    saw a timeout, at every position of the instance."""
    name = _fresh_name()
    instance = {**INSTANCE, name: True}
    tokens = llama3_tokenizer.encode(json.dumps(instance), add_special_tokens=False)
    stopped = 0
    for seconds in (1e-9, 1e-5, 3e-5, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2):
        matcher = TokenEnforcer(llama3_vocabulary, JsonSchemaParser(_schema(name)),
                                EnforcerConfig(mask_seconds=seconds)).matcher()  # fmt: skip
        for token in tokens:
            matcher.mask()
            if matcher.error is not None:
                break
            assert matcher.accept_token(token)
        stopped += isinstance(matcher.error, MaskTimeoutError)
    assert stopped >= 1
    after = TokenEnforcer(llama3_vocabulary, JsonSchemaParser(_schema(name)))
    reference_vocabulary = Vocabulary.from_transformers(llama3_tokenizer, cache_dir=False)
    assert reference_vocabulary is not llama3_vocabulary
    reference = TokenEnforcer(reference_vocabulary, JsonSchemaParser(_schema(name)))
    for i in range(len(tokens) + 1):
        got = after.mask(after.position_after(tokens[:i]))
        expected = reference.mask(reference.position_after(tokens[:i]))
        assert np.array_equal(got, expected), f"mask {i} differs after interrupted walks"


_MEMORY_SCRIPT = r"""
import hashlib, json, logging, sys
sys.path.insert(0, "tests")
import tokenizers_fixtures as tf
from formatenforcer import EnforcerConfig, JsonSchemaParser, TokenEnforcer, Vocabulary, allocate_bitmask
from formatenforcer.core.bitmask import ids_of

logging.disable(logging.CRITICAL)
vocabulary = Vocabulary.from_transformers(tf.llama3_tokenizer(), tf.LLAMA3_EOS, cache_dir=False)
schema = json.loads(sys.argv[1])
matcher = TokenEnforcer(vocabulary, JsonSchemaParser(schema),
                        EnforcerConfig(mask_seconds=None, mask_megabytes=0.001)).matcher()
for token in tf.llama3_tokenizer().encode('{"title":"', add_special_tokens=False):
    matcher.accept_token(token)  # (no mask yet: the first is inside the string, where the first walks build
                                 # the vocabulary's tables for its characters and grow the process)
bitmask = allocate_bitmask(1, vocabulary.size)
matcher.fill_bitmask(bitmask, 0)
after = TokenEnforcer(vocabulary, JsonSchemaParser(schema), EnforcerConfig(mask_megabytes=None))
eos_alone = ids_of(bitmask[0]) == list(vocabulary.eos_token_ids)
ids = tf.llama3_tokenizer().encode('{"title":"', add_special_tokens=False)
digest = hashlib.sha256(after.mask(after.position_after(ids)).tobytes()).hexdigest()
print(json.dumps([type(matcher.error).__name__, str(matcher.error), eos_alone, digest]))
"""


def test_a_mask_past_its_memory_budget_leaves_end_of_sequence_alone(llama3_tokenizer, llama3_vocabulary) -> None:  # noqa: ANN001
    # a fresh interpreter and vocabulary: the first walks fill the vocabulary's tables and caches, so the
    # process grows while the mask is computed (a worker that freed memory earlier could grow into it unseen)
    schema = _schema(_fresh_name())
    run = subprocess.run([sys.executable, "-c", _MEMORY_SCRIPT, json.dumps(schema)], capture_output=True, text=True,
                         cwd=Path(__file__).resolve().parent.parent, timeout=600)  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    kind, message, eos_alone, digest = json.loads(run.stdout.strip().splitlines()[-1])
    assert kind == "MaskMemoryError" and issubclass(MaskMemoryError, FormatEnforcerError)
    assert "EnforcerConfig.mask_megabytes" in message and "0.001 MiB" in message
    assert eos_alone
    # what the interrupted walk cached gives the mask a vocabulary that never stopped gives
    plain = TokenEnforcer(llama3_vocabulary, JsonSchemaParser(schema))
    ids = llama3_tokenizer.encode('{"title":"', add_special_tokens=False)
    assert digest == hashlib.sha256(plain.mask(plain.position_after(ids)).tobytes()).hexdigest()


def test_the_default_memory_budget_leaves_real_masks_alone(llama3_vocabulary) -> None:
    config = EnforcerConfig()
    assert config.mask_megabytes == 1024.0 and EnforcerConfig(mask_megabytes=None).mask_megabytes is None
    matcher = TokenEnforcer(llama3_vocabulary, JsonSchemaParser(_schema(_fresh_name())), config).matcher()
    matcher.mask()
    assert matcher.error is None


@pytest.mark.parametrize(
    ("value", "error"),
    [(0, ValueError), (-1.0, ValueError), (float("inf"), ValueError), ("64", TypeError), (True, TypeError)],
)
def test_a_bad_memory_budget_is_refused_at_construction(value, error) -> None:
    with pytest.raises(error, match="EnforcerConfig.mask_megabytes"):
        EnforcerConfig(mask_megabytes=value)


@pytest.mark.parametrize(
    ("value", "error"),
    [
        (0, ValueError),
        (-1.0, ValueError),
        (float("inf"), ValueError),
        (float("nan"), ValueError),
        ("10", TypeError),
        (True, TypeError),
    ],  # fmt: skip
)
def test_a_bad_budget_is_refused_at_construction(value, error) -> None:
    with pytest.raises(error, match="mask_seconds"):
        EnforcerConfig(mask_seconds=value)


def test_bad_cache_sizes_are_refused_and_no_budget_is_allowed() -> None:
    with pytest.raises(ValueError, match="cache_size"):
        EnforcerConfig(cache_size=0)
    with pytest.raises(TypeError, match="cache_size"):
        EnforcerConfig(cache_size=2.5)
    assert EnforcerConfig(mask_seconds=None).mask_seconds is None
    assert EnforcerConfig().mask_seconds == 60.0
