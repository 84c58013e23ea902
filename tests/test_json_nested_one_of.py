"""Nested ``oneOf``s of overlapping branches under ``unevaluatedProperties``: the complements each branch needs
multiply out (schema/products.py prunes the empty and subsumed combinations), and the sets of branches that can pass
together are grown only from overlapping ones (schema/unevaluated.py). Checked against the ``jsonschema`` validator on
every small key set, token by token with the real Llama 3 tokenizer, and by seeded random walks."""

from __future__ import annotations

import itertools
import json
import random

import jsonschema
import pytest

from formatenforcer import JsonSchemaParser, TokenEnforcer
from formatenforcer.core.errors import UnsupportedSchemaError

from .checking import random_walk
from .json_checks import accepts_tokens, char_walk


def _keyed(name: str) -> dict:
    return {"required": [name], "properties": {name: True}}


NESTED = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$defs": {
        "outer": {"oneOf": [{"$ref": "#/$defs/inner"}, _keyed("p"),
                            {"required": ["yy"], "patternProperties": {"y": True}},
                            {"required": ["open"], "unevaluatedProperties": True}]},
        "inner": {"oneOf": [_keyed("q"), _keyed("r")]},
    },
    "oneOf": [{"$ref": "#/$defs/outer"}, _keyed("s")],
    "unevaluatedProperties": False,
}  # fmt: skip
"""Exactly one of: s; or exactly one of (exactly one of q, r), p, yy (with any key containing y), open (with
any keys). Before pruning, the complement of "outer" multiplied into hundreds of thousands of alternatives."""

KEYS = ["p", "q", "r", "s", "yy", "ayb", "z", "open"]


def _key_sets(keys: list[str], most: int) -> list[dict]:
    return [{k: 1 for k in combo} for n in range(most + 1) for combo in itertools.combinations(keys, n)]


def test_nested_one_of_matches_the_validator_on_every_small_key_set():
    parser = JsonSchemaParser(NESTED)
    validator = jsonschema.Draft202012Validator(NESTED)
    valid = 0
    for value in _key_sets(KEYS, 4):
        expected = validator.is_valid(value)
        valid += expected
        assert parser.accepts(json.dumps(value)) == expected, value
    assert valid > 10  # the schema is far from empty


def test_nested_one_of_valid_objects_pass_token_by_token(llama3_vocabulary, llama3_tokenizer):
    parser = JsonSchemaParser(NESTED)
    enforcer = TokenEnforcer(llama3_vocabulary, parser)
    for text in ('{"s": 1}', '{"q": [true]}', '{"r": null}', '{"p": "x"}', '{"yy": 1, "ayb": {}}',
                 '{"open": 1, "z": 2}', '{"open": 1, "q": 2, "r": 3}'):  # fmt: skip
        assert jsonschema.Draft202012Validator(NESTED).is_valid(json.loads(text)), text
        ok, why = accepts_tokens(enforcer, llama3_tokenizer, text)
        assert ok, (text, why)
    # q and r together fail the inner oneOf, so p alone passes and q, r are left unevaluated
    for text in ('{}', '{"s": 1, "p": 2}', '{"q": 1, "r": 2}', '{"yy": 1, "z": 2}', '{"open": 1, "s": 2}',
                 '{"p": 1, "q": 2, "r": 3}'):  # fmt: skip
        assert not jsonschema.Draft202012Validator(NESTED).is_valid(json.loads(text)), text
        assert not parser.accepts(text), text


def test_nested_one_of_token_walks_never_dead_end_and_finish_valid(llama3_vocabulary):
    enforcer = TokenEnforcer(llama3_vocabulary, JsonSchemaParser(NESTED))
    validator = jsonschema.Draft202012Validator(NESTED)
    finished = 0
    for seed in range(10):
        text, done = random_walk(enforcer, seed, max_tokens=80, end_bias=0.6)
        if done:
            finished += 1
            assert validator.is_valid(json.loads(text)), text
    assert finished >= 3


def test_nested_one_of_character_walks_finish_valid():
    parser = JsonSchemaParser(NESTED)
    validator = jsonschema.Draft202012Validator(NESTED)
    finished = 0
    for seed in range(60):
        text, done = char_walk(parser, random.Random(seed), max_chars=200, end_bias=0.5)
        if done:
            finished += 1
            assert validator.is_valid(json.loads(text)), text
    assert finished >= 20


def test_many_disjoint_branches_under_unevaluated_properties():
    # twelve one-key branches: each pair overlaps, so oneOf excludes the other eleven; once excluded they
    # are disjoint, so the sets passing together are the twelve singletons (once refused: more than 8)
    schema = {"oneOf": [_keyed(f"k{i}") for i in range(12)], "unevaluatedProperties": False}
    parser = JsonSchemaParser(schema)
    validator = jsonschema.Draft202012Validator(schema)
    for value in _key_sets([f"k{i}" for i in range(12)] + ["x"], 2):
        assert parser.accepts(json.dumps(value)) == validator.is_valid(value), value


@pytest.mark.parametrize(
    ("schema", "pointer", "keyword"),
    [
        # "not (a_i and b_i) for all 12 i": 2^12 minimal combinations, none redundant
        ({"not": {"anyOf": [{"required": [f"a{i}", f"b{i}"]} for i in range(12)]}}, "#/not", "not"),
        # nine overlapping branches each evaluating their own key: 511 sets may pass together
        ({"anyOf": [{"properties": {f"k{i}": {}}} for i in range(9)], "unevaluatedProperties": False},
         "#/unevaluatedProperties", "unevaluatedProperties"),
    ],
)  # fmt: skip
def test_truly_huge_expansions_stay_refused_with_pointer(schema, pointer, keyword):
    with pytest.raises(UnsupportedSchemaError) as raised:
        JsonSchemaParser(schema)
    assert (pointer, keyword) in raised.value.problems


def test_pruned_complement_keeps_only_the_consistent_combinations():
    # not(a and not b) and not(b and not a): "both or neither"; the products holding "a absent" and "a
    # present" are dropped as empty
    schema = {"type": "object", "not": {"anyOf": [{"required": ["a"], "properties": {"b": False}},
                                                  {"required": ["b"], "properties": {"a": False}}]}}  # fmt: skip
    parser = JsonSchemaParser(schema)
    validator = jsonschema.Draft202012Validator(schema)
    for value in _key_sets(["a", "b", "c"], 3):
        assert parser.accepts(json.dumps(value)) == validator.is_valid(value), value
