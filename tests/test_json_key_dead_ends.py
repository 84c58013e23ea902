"""A key whose every continuation is an unavailable name or an extra key already seen is never started.

The extra-key automaton (``propertyNames``, a closed object's ``patternProperties``) may allow texts that are
also property names (never extra keys) or keys already written; following such a prefix would strand the
key (``{"type": 1, "t`` when only "type" and "items" are allowed and "type" is used). Found by random walks
over the 2020-12 metaschema narrowed by ``propertyNames``.
"""

from __future__ import annotations

import json
import random

import jsonschema
import pytest

from formatenforcer import JsonConfig, JsonSchemaParser, TokenEnforcer

from .checking import random_walk
from .json_checks import accepts_tokens, char_walk

CASES = [
    ({"properties": {"type": {}}, "propertyNames": {"enum": ["type", "items"]}}, '{"type":1,"t',
     '{"type":1,"items":2}'),
    ({"propertyNames": {"enum": ["ab", "b"]}, "minProperties": 1}, '{"ab":1,"a', '{"ab":1,"b":2}'),
    ({"patternProperties": {"^ab$": {}}, "minProperties": 1, "additionalProperties": False}, '{"ab":1,', '{"ab":1}'),
    ({"properties": {"ab": {}}, "patternProperties": {"^ab$": {}}, "additionalProperties": False}, '{"ab":1,',
     '{"ab":1}'),
    ({"properties": {"a": {}}, "propertyNames": {"maxLength": 1}, "minProperties": 1}, '{"a":1,"a', '{"a":1,"b":2}'),
]  # fmt: skip


@pytest.mark.parametrize(("schema", "stranded", "valid"), CASES)
def test_prefix_with_no_way_to_close_the_key_is_refused(schema, stranded, valid):
    parser = JsonSchemaParser(schema, config=JsonConfig(whitespace="compact"))
    state = parser
    for ch in stranded[:-1]:
        state = state.add_character(ch)
        assert state is not None
    assert state.add_character(stranded[-1]) is None, stranded
    assert parser.accepts(valid)


@pytest.mark.parametrize(("schema", "stranded", "valid"), CASES)
def test_walks_over_such_objects_never_dead_end(llama3_vocabulary, schema, stranded, valid):
    parser = JsonSchemaParser(schema, config=JsonConfig(whitespace="compact"))
    for seed in range(30):
        text, done = char_walk(parser, random.Random(seed), max_chars=60, end_bias=0.2)
        if done:
            jsonschema.Draft202012Validator(schema).validate(json.loads(text))
    enforcer = TokenEnforcer(llama3_vocabulary, parser)
    for seed in range(4):
        text, done = random_walk(enforcer, seed, max_tokens=40, end_bias=0.2)
        if done:
            jsonschema.Draft202012Validator(schema).validate(json.loads(text))


DEPENDENT = {"properties": {"old": {
    "type": "object", "dependencies": {"pair": ["id"], "id": {"properties": {"id": {"type": "integer"}}}},
    "properties": {"pair": {"type": "array", "items": [{"type": "string", "maxLength": 3}, {"type": "integer"}],
                            "additionalItems": False}}}}}  # fmt: skip


def test_key_refusal_inside_a_nested_object_passes_through_the_outer_one(llama3_vocabulary, llama3_tokenizer):
    # the inner object's key lexeme refuses some key endings; wrapped by the outer object's value lexeme,
    # that refusal once became an outer state with no value in it (a crash computing the mask after "pair":)
    enforcer = TokenEnforcer(llama3_vocabulary, JsonSchemaParser(DEPENDENT))
    for text in ('{"old": {"pair": ["abc", 1], "id": 2}}', '{"old": {"id": 3, "pair": ["a", 0]}}'):
        ok, why = accepts_tokens(enforcer, llama3_tokenizer, text)
        assert ok, (text, why)
    validator = jsonschema.Draft7Validator(DEPENDENT)
    finished = 0
    for seed in range(6):
        text, done = random_walk(enforcer, seed, max_tokens=60, end_bias=0.6)
        if done:
            finished += 1
            assert validator.is_valid(json.loads(text)), text
    assert finished >= 2
