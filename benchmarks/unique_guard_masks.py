"""Mask times of ``uniqueItems`` arrays whose items are checked by the guard (jsonschema/unique_guard.py):
closed objects and constrained arrays, on Llama 3, at points where the next item may still repeat a seen one.

    PYTHONPATH=. python benchmarks/unique_guard_masks.py
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from formatenforcer import JsonSchemaParser, TokenEnforcer, Vocabulary  # noqa: E402
from tests import tokenizers_fixtures as tf  # noqa: E402

CLOSED = {"type": "object", "properties": {"a": {"type": "boolean"}}, "required": ["a"], "additionalProperties": False}
PAIRS = {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 1}, "maxItems": 2}
RECORD = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 3}, "n": {"enum": [1, 2]}},
          "required": ["name"], "additionalProperties": False}  # fmt: skip
CASES = [
    ("closed {a: boolean}", CLOSED, ['[{"a":true},', '[{"a":true},{"a":', '[{"a":true},{"a":false}']),
    ("pairs of 0/1", PAIRS, ["[[0,1],", "[[0,1],[0,", "[[0,1],[0,0"]),
    ("closed record, string name", RECORD, ['[{"name":"ab"},{"name":"', '[{"name":"ab"},{"name":"ab",']),
]


def main() -> None:
    tokenizer = tf.llama3_tokenizer()
    vocabulary = Vocabulary.from_transformers(tokenizer, tf.LLAMA3_EOS)
    for title, items, prefixes in CASES:
        enforcer = TokenEnforcer(vocabulary, JsonSchemaParser({"type": "array", "items": items, "uniqueItems": True}))
        for prefix in prefixes:
            position = enforcer.start
            for token in tokenizer.encode(prefix, add_special_tokens=False):
                position = enforcer.step(position, token)
            started = time.perf_counter()
            mask = enforcer.mask(position)
            first = time.perf_counter() - started
            allowed = int(np.unpackbits(mask.view(np.uint8)).sum())
            print(f"{title:28} {prefix!r:44} {first * 1000:9.1f} ms  {allowed} tokens")


if __name__ == "__main__":
    main()
