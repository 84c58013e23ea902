"""Thread safety (issue 18): a shared Vocabulary and shared parsers used from eight threads at once, with
cold caches, give the same masks as one thread. 100 schemas (the benchmark cases, the issue's
``{"not":{"type":"string"}}`` and small number schemas, and open objects whose keys are counted), each
teacher-forced a few tokens into a valid instance on Llama 3."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import numpy as np
import pytest

from formatenforcer import JsonSchemaParser, TokenEnforcer, Vocabulary

from . import tokenizers_fixtures as tf

CASES = Path(__file__).resolve().parent.parent / "benchmarks" / "cases"
EXTRA = [
    ({"not": {"type": "string"}}, [1, "x"]),
    ({"type": "number", "minimum": 0}, 12.5),
    ({"type": "integer", "maximum": 100}, 42),
    ({"type": "number", "exclusiveMinimum": -1, "maximum": 1e3}, 0.25),
    ({"type": "object", "minProperties": 1}, {"abc.": 1}),
    ({"type": "object", "minProperties": 2, "properties": {"a": {"type": "string"}}}, {"a": "x", "zz": [1]}),
    ({"type": "array", "items": {"enum": [1, 2, 3]}, "uniqueItems": True, "minItems": 2}, [3, 1]),
    ({"type": "string", "pattern": "^[a-z]+[0-9]{2}$"}, "abc12"),
    ({"anyOf": [{"type": "string", "format": "date"}, {"type": "null"}]}, "2024-02-29"),
    ({"type": "object", "dependentRequired": {"a": ["b"]}, "maxProperties": 2}, {"a": 1, "b": 2}),
]
POSITIONS = 6  # masks per schema: the start and after each of the first five tokens


def _cases() -> list[tuple[object, object]]:
    cases = []
    for path in sorted(CASES.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        cases.extend((c["schema"], c["instance"]) for c in (data if isinstance(data, list) else [data]))
    cases.extend(EXTRA)
    for i in range(100 - len(cases)):  # distinct small schemas up to 100
        cases.append(({"type": "object", "properties": {f"k{i}": {"type": "integer", "minimum": i}}}, {f"k{i}": i}))
    return cases[:100]


def _masks(vocabulary: Vocabulary, parser: JsonSchemaParser, ids: list[int]) -> list[bytes]:
    enforcer = TokenEnforcer(vocabulary, parser)
    position, out = enforcer.start, []
    for token in [*ids[: POSITIONS - 1], None]:
        out.append(np.asarray(enforcer.mask(position)).tobytes())
        if token is None:
            break
        position = enforcer.step(position, token)
        assert position is not None
    return out


def _cold_copy(vocabulary: Vocabulary) -> Vocabulary:
    """A separate vocabulary of the same tokens: its own trie, empty caches (``from_tokens`` never memoises)."""
    return Vocabulary.from_tokens(
        vocabulary.token_bytes,
        vocabulary.eos_token_ids,
        size=vocabulary.size,
        strip_leading_space=vocabulary.strip_leading_space,
    )


@pytest.mark.slow
def test_eight_threads_on_cold_caches_give_the_masks_of_one(llama3_tokenizer) -> None:
    cases = _cases()
    assert len(cases) == 100
    ids = [llama3_tokenizer.encode(json.dumps(instance), add_special_tokens=False) for _, instance in cases]
    # from_transformers memoises per tokenizer (and other tests may have warmed that vocabulary): each side
    # gets its own vocabulary, built from the same token bytes with a fresh trie and empty caches
    memoised = Vocabulary.from_transformers(llama3_tokenizer, tf.LLAMA3_EOS)
    alone, shared = _cold_copy(memoised), _cold_copy(memoised)
    assert alone is not shared and alone.trie is not shared.trie and alone.trie is not memoised.trie
    # one thread, its own vocabulary and parsers
    expected = [_masks(alone, JsonSchemaParser(schema), i) for (schema, _), i in zip(cases, ids)]
    assert alone.cache_budget.used > 0  # the baseline filled its own caches ...
    assert shared.cache_budget.used == 0 and len(shared.format_caches) == 0  # ... and left the threads' cold
    # eight threads sharing a cold vocabulary and cold parsers, each in its own order, started together
    parsers = [JsonSchemaParser(schema) for schema, _ in cases]
    results: list[dict[int, list[bytes]]] = [{} for _ in range(8)]
    errors: list[BaseException] = []
    barrier = threading.Barrier(8)

    def run(k: int) -> None:
        try:
            order = list(range(len(cases)))
            order = order[k * 13 % len(order) :] + order[: k * 13 % len(order)]
            if k % 2:
                order.reverse()
            barrier.wait()
            for i in order:
                results[k][i] = _masks(shared, parsers[i], ids[i])
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    differences = [(k, i) for k in range(8) for i in range(len(cases)) if results[k][i] != expected[i]]
    assert differences == []
