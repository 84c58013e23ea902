"""What a value read beside a tracker costs per mask: the value of an extra key under ``not
additionalProperties`` (the member it may hold, jsonschema/object_exists.py), a string item of an array
under two ``contains``, and the keys of object items under ``contains`` (their trackers, array_walk.py).
Each document is teacher-forced on Llama 3 (compact JSON, every schema new, accept + mask per token); CPU
seconds per document. Run it on two checkouts to compare (CPU time: wall time on the shared machine
drifts); arguments keep the cases whose name holds one of them.

    PYTHONPATH=<checkout> python benchmarks/tracked_value_masks.py [WORD ...]
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import maskbench  # noqa: E402

from formatenforcer import JsonConfig, JsonSchemaParser, TokenEnforcer, Vocabulary  # noqa: E402

PATTERNED = {"type": "object", "properties": {}, "additionalProperties": {"const": 15},
             "patternProperties": {"^p_": {"type": "null"}}}  # fmt: skip
CASES = [
    ("not additionalProperties: an object value", {"not": {"additionalProperties": {"type": "string"}}},
     {"a": {"One": 1, "two": [1, 2]}}),
    ("not additionalProperties: an array value", {"not": {"additionalProperties": {"type": "string"}}},
     {"a": ["some words", "more"]}),
    ("two contains, unevaluatedItems: strings", {"allOf": [{"contains": {"multipleOf": 2}},
     {"contains": {"multipleOf": 3}}], "unevaluatedItems": {"multipleOf": 5}}, ["ab", "some words", 6, 10]),
    ("contains: keys of patterned objects", {"type": "array", "items": PATTERNED, "contains": PATTERNED,
     "minItems": 2}, [{"p_": None}, {"<<.notifyDataS": 15}]),
    ("contains: keys of open objects", {"type": "array", "items": {"type": "object"},
     "contains": {"type": "object", "required": ["x"]}}, [{"ab<<.notifyDataS": 1}, {"x": 2}]),
    ("contains: keys counted by minProperties", {"type": "array", "items": {"type": "object", "minProperties": 1},
     "contains": {"type": "object", "minProperties": 2}}, [{"ab<<.notifyDataS": 1, "ab<<.notifyDataT": 1}]),
    ("contains: patterned keys, open items", {"type": "array", "items": {"type": "object"},
     "contains": PATTERNED}, [{"p_": None}, {"<<.notifyDataS": 15}]),
    ("contains: minProperties keys, open items", {"type": "array", "items": {"type": "object"},
     "contains": {"type": "object", "minProperties": 1}}, [{"ab<<.notifyDataS": 1}, {"x": 2}]),
    ("maxContains: keys of patterned objects", {"type": "array", "items": PATTERNED, "contains": PATTERNED,
     "maxContains": 2}, [{"p_": None}, {"<<.notifyDataS": 15}]),
    ("maxContains: patterned keys, open items", {"type": "array", "items": {"type": "object"},
     "contains": PATTERNED, "maxContains": 1}, [{"<<.notifyDataS": 16}, {"p_": None}]),
    ("maxContains: minProperties keys, open items", {"type": "array", "items": {"type": "object"},
     "contains": {"type": "object", "minProperties": 1}, "maxContains": 1}, [{}, {"ab<<.notifyDataS": 1}]),
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
    print(f"{'case':<48} {'tokens':>6} {'CPU':>8}")
    for name, schema, document in CASES:
        if sys.argv[1:] and not any(word in name for word in sys.argv[1:]):
            continue
        text = json.dumps(document, separators=(",", ":"))
        tokens = len(tokenizer.encode(text, add_special_tokens=False))
        print(f"{name:<48} {tokens:>6} {_masks(vocabulary, tokenizer, schema, text):>7.2f}s", flush=True)


if __name__ == "__main__":
    main()
