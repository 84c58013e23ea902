"""Dead ends, mid-generation refusals and over-budget masks the fuzz suite's jobs found (tests/test_fuzz.py,
``FORMATENFORCER_FUZZ_SCALE=1 python -m pytest tests/test_fuzz.py -k construction_many``, and the token job
``FORMATENFORCER_FUZZ_STEPS=1 ... -k 100k``), reduced by hand where a smaller schema shows the same fault.
Each schema must be refused at construction, or every character walk must finish without a dead end and
without an exception.

They are open faults of the JSON Schema parsers, so each is a strict ``xfail``: it fails the suite once the
fault is fixed, and the mark is then removed, leaving the case as a regression test.
"""

from __future__ import annotations

import json
import random

import jsonschema
import pytest

from formatenforcer import FormatEnforcerError, JsonSchemaParser, TokenEnforcer

from .json_checks import char_walk, mask_and_step

FIXED = {
    # uniqueItems counted an enum's duplicate values as distinct: two items were offered, one exists
    "unique-duplicate-enum": {"type": "array", "items": {"enum": [None, None]}, "uniqueItems": True, "minItems": 2},
    # uniqueItems over integers of which only 0 exists (0 <= x < 2.25, multiple of 5)
    "unique-one-integer": {
        "type": "array",
        "items": {"type": "integer", "minimum": 0, "exclusiveMaximum": 2.25, "multipleOf": 5},
        "uniqueItems": True,
        "minItems": 2,
    },
    # a required property whose array can hold no item yet must contain one: no instance, still built
    "required-empty-array-with-contains": {
        "type": "object",
        "properties": {
            "id": {"type": "array", "items": {"type": "string"}, "maxItems": 0, "contains": {"type": "string"}}
        },
        "required": ["id"],
        "additionalProperties": False,
    },
    # three keys needed, propertyNames allows three, but "a" requires "id", which propertyNames refuses
    "min-properties-beyond-usable-names": {
        "type": "object",
        "minProperties": 3,
        "dependentSchemas": {"a": {"required": ["id"]}},
        "propertyNames": {"enum": ["a", "b", "zz"]},
    },
    # the one item must match contains, but an empty string is no date: no instance (after the empty
    # merged string became "no value" rather than a refusal, this started and dead-ended after "[")
    "contains-empty-string-date": {
        "type": "array",
        "items": {"type": "string", "minLength": 0, "maxLength": 0},
        "maxItems": 1,
        "contains": {"type": "string", "format": "date"},
    },
    # found by the 100,000-step token job: the outer contains ({}) needs an item, and the only item schema is
    # an array that cannot exist (maxItems 0 with a contains of its own); the finiteness check saw only
    # matches that merge to nothing, so the schema built and dead-ended after "["
    "contains-item-that-cannot-exist": {
        "type": "array",
        "items": {
            "type": "array",
            "items": {"type": "boolean"},
            "minItems": 0,
            "maxItems": 0,
            "contains": {"const": -22},
        },
        "contains": {},
    },  # fmt: skip
    # its neighbour that no_array already refused (the only position's match merges to nothing): still refused
    "contains-tuple-without-a-match": {
        "type": "array",
        "prefixItems": [{"type": "integer"}],
        "items": False,
        "contains": {"type": "string"},
    },
}

FIXED_WALKS = {
    # an item array that needs a match of its own, which it can hold: built, and walks finish
    "contains-item-with-its-own-contains": {
        "type": "array",
        "items": {"type": "array", "contains": {"const": 1}, "maxItems": 2},
        "contains": {},
    },
    # the tuple's first position can match contains (""), the later items (dates) cannot: after a first
    # item that did not match, the second was forced to match and had no value
    "contains-only-in-the-tuple": {
        "type": "array",
        "items": {"type": "string", "format": "date"},
        "prefixItems": [{}],
        "maxItems": 2,
        "contains": {"type": "string", "maxLength": 0},
    },
    # an additional property whose value can start but never finish (string items that must contain -26)
    "additional-value-never-finishes": {
        "type": "object",
        "additionalProperties": {"type": "array", "items": {"type": "string"}, "contains": {"const": -26}},
    },
    # "a" requires keys that propertyNames refuses, after other keys were written
    "dependent-required-refused-names": {
        "type": "object",
        "minProperties": 0,
        "dependentRequired": {"a": ["naïve", "p_1"]},
        "propertyNames": {"enum": ["a", "b", "zz"]},
        "patternProperties": {"[0-9]": {"type": "null"}},
        "additionalProperties": {},
    },
    # UnsupportedSchemaError from allowed_characters() on the first character: p_1's two schemas have no
    # common string, found only when the key's value was first compiled
    "pattern-property-without-common-string": {
        "type": "object",
        "properties": {"p_1": {"type": "string", "maxLength": 0}},
        "patternProperties": {"^p_": {"type": "string", "pattern": "^[a-z]+$"}},
    },
}

# Found by the 100,000-step token job (``test_token_walks_100k_steps``), reduced: (schema, prefix) where a mask
# ran past its time budget (MaskTimeoutError). The value of an extra key was tracked for the member
# ``not additionalProperties`` needs (a value that is not a string) with a parser beside it, which turned
# the walk's free runs off: inside a key of an object in that value each token was stepped character by
# character (17 s for this mask under load, 299 s four levels down in the found schema).
FIXED_MASKS = {
    "not-additional-properties-key-in-the-value": (
        {"not": {"additionalProperties": {"type": "string"}}},
        '{"a":{"One',
    ),
}


# Open faults go here, each with a comment saying what it shows (none are open now).
FOUND: dict[str, dict] = {}

RAISES_WHILE_GENERATING: dict[str, dict] = {}


def _walks(schema: dict, seeds: int) -> None:
    try:
        parser = JsonSchemaParser(schema)
    except FormatEnforcerError:
        return  # refused at construction: the fix may well be this
    for seed in range(seeds):
        char_walk(parser, random.Random(seed), max_chars=120)


@pytest.mark.parametrize("name", sorted(FIXED))
def test_fixed_dead_ends(name: str) -> None:
    """Found by the fuzz suite and fixed: refused at construction (no instance), with the reason."""
    with pytest.raises(FormatEnforcerError, match="unsatisfiable"):
        JsonSchemaParser(FIXED[name])
    _walks(FIXED[name], seeds=300)


@pytest.mark.parametrize("name", sorted(FIXED_WALKS))
def test_fixed_walks(name: str) -> None:
    """Found by the fuzz suite and fixed: the schema has instances, and walks never stop short or raise."""
    JsonSchemaParser(FIXED_WALKS[name])
    _walks(FIXED_WALKS[name], seeds=3000 if name == "dependent-required-refused-names" else 300)


@pytest.mark.xfail(strict=True, raises=AssertionError, reason="open dead end of the JSON Schema parsers")
@pytest.mark.parametrize("name", sorted(FOUND))
def test_found_dead_ends(name: str) -> None:
    _walks(FOUND[name], seeds=3000 if name == "dependent-required-refused-names" else 300)


@pytest.mark.xfail(strict=True, raises=FormatEnforcerError, reason="a refusal raised while generating")
@pytest.mark.parametrize("name", sorted(RAISES_WHILE_GENERATING))
def test_found_refusals_while_generating(name: str) -> None:
    _walks(RAISES_WHILE_GENERATING[name], seeds=5)


@pytest.mark.parametrize("name", sorted(FIXED_MASKS))
def test_fixed_slow_masks(llama3_tokenizer, llama3_vocabulary, name: str) -> None:
    """Found by the token job and fixed: the walk keeps its free run inside the key (the speed itself is
    benchmarks' business), the mask equals the step there, and the value still decides the member."""
    schema, prefix = FIXED_MASKS[name]
    parser = JsonSchemaParser(schema)
    state = parser
    for ch in prefix:
        state = state.add_character(ch)
    assert state.free_run() is not None
    mask, step = mask_and_step(TokenEnforcer(llama3_vocabulary, parser), llama3_tokenizer, prefix)
    assert len(step) > 1000 and mask == step, (sorted(mask - step)[:10], sorted(step - mask)[:10])
    validator = jsonschema.Draft202012Validator(schema)
    for text in ['{"a":{"One":1}}', '{"a":{}}', '{"a":"x"}', '{"a":"x","b":[]}', '{"a":"x","b":"y"}', "{}", "1"]:
        assert parser.accepts(text) == validator.is_valid(json.loads(text)), text
