"""Key automata combined with ``regex.compile_boolean``: several closed object schemas with
``patternProperties`` (``allOf``), ``propertyNames`` string rules on an object closed by
``patternProperties``, and extra keys whose matched patterns leave no possible value (with or without a
``propertyNames`` rule). Each is checked
against the ``jsonschema`` validator, token by token with the Llama 3 tokenizer, and by random walks that
must never dead-end (``{"x":`` with no value possible was one before)."""

from __future__ import annotations

import json
import random

import jsonschema
import pytest

from formatenforcer import JsonConfig, JsonSchemaParser, TokenEnforcer

from .checking import random_walk
from .json_checks import accepts_tokens, char_walk

CASES = [
    ({"type": "object", "patternProperties": {"^a": {"type": "string"}, "^ab": {"type": "integer"}},
      "additionalProperties": False},
     ['{"ac": "s"}', '{"a": ""}'], ['{"x": 1}', '{"ab": 1}', '{"ab": "s"}']),
    ({"type": "object", "allOf": [
        {"patternProperties": {"^a": {}}, "additionalProperties": False},
        {"patternProperties": {"b$": {"type": "integer"}, "^z": {}}, "additionalProperties": False}]},
     ['{"ab": 1}', '{"azb": 2, "ab": 3}', "{}"], ['{"ab": "x"}', '{"a": 1}', '{"z": 1}', '{"b": 1}']),
    ({"type": "object", "patternProperties": {"^a": {}}, "additionalProperties": False,
      "propertyNames": {"pattern": "b$", "maxLength": 3}},
     ['{"ab": 1}', '{"axb": null, "ab": 2}'], ['{"a": 1}', '{"abcb": 1}', '{"b": 1}']),
    ({"type": "object", "propertyNames": {"maxLength": 3},
      "allOf": [{"patternProperties": {"^a": {"type": "string"}}}, {"additionalProperties": {"type": "integer"}}]},
     ['{"b": 1}', '{"xyz": 2, "c": 3}'], ['{"ab": 1}', '{"ab": "x"}', '{"bcde": 1}']),
]  # fmt: skip


@pytest.mark.parametrize(("schema", "valid", "invalid"), CASES)
def test_combined_key_rules_accept_and_refuse(llama3_vocabulary, llama3_tokenizer, schema, valid, invalid):
    parser = JsonSchemaParser(schema)
    enforcer = TokenEnforcer(llama3_vocabulary, parser)
    validator = jsonschema.Draft202012Validator(schema)
    for text in valid:
        assert validator.is_valid(json.loads(text)), text
        ok, why = accepts_tokens(enforcer, llama3_tokenizer, text)
        assert ok, (text, why)
    for text in invalid:
        assert not validator.is_valid(json.loads(text)), text
        assert not parser.accepts(text), text


@pytest.mark.parametrize(("schema", "valid", "invalid"), CASES)
def test_combined_key_rules_never_dead_end(llama3_vocabulary, schema, valid, invalid):
    parser = JsonSchemaParser(schema, config=JsonConfig(whitespace="compact"))
    validator = jsonschema.Draft202012Validator(schema)
    finished = 0
    for seed in range(30):
        text, done = char_walk(parser, random.Random(seed), max_chars=60, end_bias=0.3)
        if done:
            finished += 1
            validator.validate(json.loads(text))
    assert finished >= 5
    enforcer = TokenEnforcer(llama3_vocabulary, parser)
    for seed in range(4):
        text, done = random_walk(enforcer, seed, max_tokens=40, end_bias=0.3)
        if done:
            validator.validate(json.loads(text))
