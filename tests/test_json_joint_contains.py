"""Several ``contains`` on one array (``allOf``, or the branches ``if``/``unevaluatedItems`` expand into):
one count per ``contains``, the first possibly capped by ``maxContains``; the array closes once every count
is met. Checked token by token with the Llama 3 tokenizer, and by random walks whose finished outputs the
``jsonschema`` validator accepts (no dead end: every needed match can still come as one more item)."""

from __future__ import annotations

import json
import random

import jsonschema
import pytest

from formatenforcer import JsonConfig, JsonSchemaParser, TokenEnforcer, UnsupportedSchemaError

from .checking import random_walk
from .json_checks import accepts_tokens, char_walk

TWO = {"type": "array", "allOf": [{"contains": {"multipleOf": 2}}, {"contains": {"multipleOf": 3}, "minContains": 2}],
       "items": {"type": "integer", "minimum": 0, "maximum": 20}}  # fmt: skip
CAPPED = {
    "type": "array",
    "items": {"enum": ["a", "b", "c"]},
    "allOf": [{"contains": {"const": "a"}}, {"contains": {"const": "b"}, "minContains": 0, "maxContains": 1}],
}
UNEVALUATED = {"allOf": [{"contains": {"multipleOf": 2}}, {"contains": {"multipleOf": 3}}],
               "unevaluatedItems": {"multipleOf": 5}}  # fmt: skip
CASES = [
    (TWO, ["[2, 3, 3]", "[6, 3]", "[6, 6]", "[1, 6, 4, 9]"], ["[2, 3]", "[3, 3]", "[6]", "[]"]),
    (CAPPED, ['["a"]', '["b", "a", "c"]', '["a", "a"]'], ['["b"]', '["a", "b", "b"]', "[]", '["c"]']),
    (UNEVALUATED, ["[2, 3, 4, 5, 6]", "[6]"], ["[2, 3, 4, 7, 8]", "[2]", "[]"]),
]


@pytest.mark.parametrize(("schema", "valid", "invalid"), CASES)
def test_joint_counts_accept_and_refuse(llama3_vocabulary, llama3_tokenizer, schema, valid, invalid):
    parser = JsonSchemaParser(schema)
    enforcer = TokenEnforcer(llama3_vocabulary, parser)
    for text in valid:
        ok, why = accepts_tokens(enforcer, llama3_tokenizer, text)
        assert ok, (text, why)
        jsonschema.Draft202012Validator(schema).validate(json.loads(text))
    for text in invalid:
        assert not parser.accepts(text), text
        assert not jsonschema.Draft202012Validator(schema).is_valid(json.loads(text))


@pytest.mark.parametrize(("schema", "valid", "invalid"), CASES)
def test_joint_count_walks_never_dead_end(llama3_vocabulary, schema, valid, invalid):
    parser = JsonSchemaParser(schema, config=JsonConfig(whitespace="compact"))
    finished = 0
    for seed in range(30):
        text, done = char_walk(parser, random.Random(seed), max_chars=80, end_bias=0.3)
        if done:
            finished += 1
            jsonschema.Draft202012Validator(schema).validate(json.loads(text))
    assert finished >= 5
    enforcer = TokenEnforcer(llama3_vocabulary, parser)
    for seed in range(4):
        text, done = random_walk(enforcer, seed, max_tokens=60, end_bias=0.3)
        if done:
            jsonschema.Draft202012Validator(schema).validate(json.loads(text))


@pytest.mark.parametrize(
    "limit",
    [{"maxItems": 3}, {"uniqueItems": True}, {"prefixItems": [{}, {}], "items": False}],
    ids=["max-items", "unique-items", "closed-tuple"],
)
def test_joint_count_under_a_room_limit_is_refused(limit):
    """Where the room for more items is limited, whether every count can still be met is not decided left to
    right: refused at construction with the reason, never while generating."""
    with pytest.raises(UnsupportedSchemaError, match="several 'contains' under maxItems") as raised:
        JsonSchemaParser({**TWO, **limit})
    assert [k for _, k in raised.value.problems] == ["contains"]
