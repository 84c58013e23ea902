"""What a value read beside a tracker costs per mask: the value of an extra key under ``not
additionalProperties`` (the member it may hold, jsonschema/object_exists.py) and a string item of an array
under two ``contains`` (their trackers, array_walk.py). Each document is teacher-forced on Llama 3 (compact
JSON, every schema new, accept + mask per token); CPU seconds per document. Run it on two checkouts to
compare (CPU time: wall time on the shared machine drifts).

    PYTHONPATH=<checkout> python benchmarks/tracked_value_masks.py
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import maskbench  # noqa: E402

from formatenforcer import JsonConfig, JsonSchemaParser, TokenEnforcer, Vocabulary  # noqa: E402

CASES = [
    ("not additionalProperties: an object value", {"not": {"additionalProperties": {"type": "string"}}},
     {"a": {"One": 1, "two": [1, 2]}}),
    ("not additionalProperties: an array value", {"not": {"additionalProperties": {"type": "string"}}},
     {"a": ["some words", "more"]}),
    ("two contains, unevaluatedItems: strings", {"allOf": [{"contains": {"multipleOf": 2}},
     {"contains": {"multipleOf": 3}}], "unevaluatedItems": {"multipleOf": 5}}, ["ab", "some words", 6, 10]),
]  # fmt: skip


def _masks(vocabulary: Vocabulary, tokenizer, schema: dict, text: str) -> float:  # noqa: ANN001
    start = time.process_time()
    parser = JsonSchemaParser(schema, config=JsonConfig(whitespace="compact"))
    matcher = TokenEnforcer(vocabulary, parser).matcher()
    for token in tokenizer.encode(text, add_special_tokens=False):
        matcher.allowed_token_ids()
        assert matcher.accept_token(token), (schema, text)
    matcher.allowed_token_ids()
    return time.process_time() - start


def main() -> None:
    tokenizer = maskbench.llama3_tokenizer()
    vocabulary = Vocabulary.from_transformers(tokenizer)
    _masks(vocabulary, tokenizer, {"type": "object"}, '{"warm":"up"}')
    print(f"{'case':<44} {'tokens':>6} {'CPU':>8}")
    for name, schema, document in CASES:
        text = json.dumps(document, separators=(",", ":"))
        tokens = len(tokenizer.encode(text, add_special_tokens=False))
        print(f"{name:<44} {tokens:>6} {_masks(vocabulary, tokenizer, schema, text):>7.2f}s", flush=True)


if __name__ == "__main__":
    main()
