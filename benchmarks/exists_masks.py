"""What a member an object must hold (``not`` of ``propertyNames``/``additionalProperties``/
``patternProperties``, jsonschema/object_exists.py) costs per mask: each schema beside the same schema
without its ``not``, and with ``minProperties: 1`` instead (an object whose extra keys' texts are kept, as
they are under a member), in one run, on the same documents (compact JSON, Llama 3, every schema new,
accept + mask per token, CPU seconds). Side by side because wall and CPU times on the shared machine drift.

    PYTHONPATH=<checkout> python benchmarks/exists_masks.py
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import maskbench  # noqa: E402

from formatenforcer import JsonSchemaParser, TokenEnforcer, Vocabulary  # noqa: E402

CASES = [
    ({"type": "object", "not": {"additionalProperties": {"type": "string"}}},
     {"title": "a book", "author": "someone", "pages": 312, "tags": ["x", "y"]}),
    ({"type": "object", "not": {"propertyNames": {"enum": ["a", "b"]}}},
     {"a": 1, "b": "two", "description": "a longer text value of several words", "count": 3}),
    ({"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"],
      "not": {"propertyNames": {"pattern": "^[a-z]+$"}}},
     {"id": 7, "name": "x", "Extra_Key": "value with words", "ok": True}),
    ({"type": "object", "not": {"patternProperties": {"^x-": {"type": "string"}}}},
     {"x-rate": 0.5, "name": "service", "x-note": "left alone"}),
]  # fmt: skip


def _masks(vocabulary: Vocabulary, tokenizer, schema: dict, text: str) -> float:  # noqa: ANN001
    start = time.process_time()
    matcher = TokenEnforcer(vocabulary, JsonSchemaParser(schema)).matcher()
    for token in tokenizer.encode(text, add_special_tokens=False):
        matcher.allowed_token_ids()
        assert matcher.accept_token(token), (schema, text)
    matcher.allowed_token_ids()
    return time.process_time() - start


def main() -> None:
    tokenizer = maskbench.llama3_tokenizer()
    vocabulary = Vocabulary.from_transformers(tokenizer)
    _masks(vocabulary, tokenizer, {"type": "object"}, '{"warm": "up"}')
    print(f"{'not':<52} {'tokens':>6} {'with not':>9} {'without':>8} {'minProperties':>14}")
    for schema, document in CASES:
        text = json.dumps(document, separators=(",", ":"))
        plain = {k: v for k, v in schema.items() if k != "not"}
        tokens = len(tokenizer.encode(text, add_special_tokens=False))
        with_not = _masks(vocabulary, tokenizer, schema, text)
        without = _masks(vocabulary, tokenizer, plain, text)
        kept = _masks(vocabulary, tokenizer, {**plain, "minProperties": 1}, text)
        print(f"{json.dumps(schema['not'])[:52]:<52} {tokens:>6} {with_not:>8.2f}s {without:>7.2f}s {kept:>13.2f}s")


if __name__ == "__main__":
    main()
