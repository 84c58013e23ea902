"""The dead ends listed in issue 18: each prefix the mask used to allow had no valid completion. Now the
schema is refused at construction where it has no finite instance, and otherwise the prefix is refused
(character by character and in the Llama 3 mask) while valid documents are still accepted."""

from __future__ import annotations

import random

import pytest

from formatenforcer import JsonSchemaParser, SchemaError, TokenEnforcer

from .json_checks import char_walk

DEPENDENT_UNDER_MAX = {"type": "object", "required": ["a"], "maxProperties": 2, "dependentRequired": {"a": ["b"]}}
NESTED_NEVER = {
    "type": "object",
    "properties": {
        "n": {
            "type": "object",
            "properties": {"k": {"allOf": [{"type": "integer"}, {"type": "null"}]}},
            "required": ["k"],
        }
    },
}
UNIQUE_BOOLEANS = {"type": "array", "items": {"type": "boolean"}, "uniqueItems": True, "minItems": 3}
REQUIRED_EMPTY_CONTAINS = {
    "type": "object",
    "properties": {"id": {"type": "array", "maxItems": 0, "contains": {"type": "string"}}},
    "required": ["id"],
}
FEW_NAMES = {"type": "object", "minProperties": 3, "propertyNames": {"enum": ["a", "b"]}}
EMPTY_PATTERN_STRING = {
    "type": "object",
    "properties": {"p_1": {"type": "string", "maxLength": 0}},
    "patternProperties": {"^p_": {"type": "string", "pattern": "^[a-z]+$"}},
}


@pytest.mark.parametrize(
    "schema",
    [
        {
            "type": "object",
            "properties": {"a": {}},
            "required": ["a"],
            "additionalProperties": False,
            "dependentRequired": {"a": ["b"]},
        },
        {"type": "object", "properties": {"a": {"$ref": "#"}}, "required": ["a"]},
        {"$defs": {"x": {"type": "array", "items": {"$ref": "#/$defs/x"}, "minItems": 1}}, "$ref": "#/$defs/x"},
        UNIQUE_BOOLEANS,
        {"type": "array", "items": {"enum": [1, 2]}, "uniqueItems": True, "minItems": 3},
        {
            "type": "array",
            "items": {"type": "array", "items": {"type": "boolean"}, "contains": {"type": "string"}},
            "minItems": 1,
        },
        # maxItems 0 leaves no place for the item `contains` needs
        REQUIRED_EMPTY_CONTAINS,
        # three keys needed, two names exist
        {"type": "object", "properties": {"x": FEW_NAMES}, "required": ["x"]},
        # "a" is required and requires "b", which propertyNames refuses
        {"type": "object", "required": ["a"], "dependentRequired": {"a": ["b"]}, "propertyNames": {"enum": ["a", "c"]}},
        # p_1's string must be empty and match ^[a-z]+$ (its property and patternProperties, merged)
        EMPTY_PATTERN_STRING | {"required": ["p_1"]},
        # the item must be "" and match contains, a date: no string is both
        {"type": "array", "items": {"maxLength": 0}, "maxItems": 1, "contains": {"type": "string", "format": "date"}},
    ],
    ids=[
        "dependent-closed",
        "required-self-ref",
        "required-item-self-ref",
        "unique-booleans",
        "unique-enum",
        "item-never",
        "required-empty-array-with-contains",
        "min-properties-beyond-names",
        "required-needs-refused-name",
        "required-merged-string-without-value",
        "contains-match-is-an-empty-string",
    ],
)
def test_schemas_without_a_finite_instance_are_refused_at_construction(schema) -> None:
    with pytest.raises(SchemaError, match="unsatisfiable"):
        JsonSchemaParser(schema)


@pytest.mark.parametrize(
    ("schema", "dead", "good"),
    [
        (DEPENDENT_UNDER_MAX, '{"z"', ['{"a":1,"b":2}', '{"b":1,"a":2}']),
        (NESTED_NEVER, '{"n"', ["{}", '{"m":1}']),
        (UNIQUE_BOOLEANS | {"minItems": 2}, "[true,true", ["[true,false]", "[false,true]"]),
        # the additional value must contain -26 among string items: it can start, never finish
        (
            {
                "type": "object",
                "additionalProperties": {"type": "array", "items": {"type": "string"}, "contains": {"const": -26}},
            },
            '{"k"',
            ["{}"],
        ),
        # "a" requires names propertyNames refuses: it can never be written
        (
            {
                "type": "object",
                "dependentRequired": {"a": ["naïve", "p_1"]},
                "propertyNames": {"enum": ["a", "b", "zz"]},
            },
            '{"a"',
            ['{"b":1,"zz":2}', "{}"],
        ),
        # an optional object needing more distinct keys than exist
        ({"type": "object", "properties": {"x": FEW_NAMES}}, '{"x"', ["{}", '{"y":{"a":1}}']),
        # two keys needed, but "a"'s value (no item, yet one must match contains) can never be written
        (
            {
                "type": "object",
                "properties": {
                    "x": FEW_NAMES
                    | {"minProperties": 2, "properties": {"a": REQUIRED_EMPTY_CONTAINS["properties"]["id"]}}
                },
            },
            '{"x"',
            ["{}", '{"y":1}'],
        ),
        # p_1's merged string schema has no value: the key is never offered (it raised while generating)
        (EMPTY_PATTERN_STRING, '{"p_1"', ["{}", '{"p_2":"x"}']),
    ],
    ids=[
        "dependent-under-max",
        "nested-never",
        "unique-booleans",
        "additional-value-never-finishes",
        "dependent-required-refused-names",
        "optional-min-properties-beyond-names",
        "optional-min-properties-name-without-value",
        "pattern-property-without-common-string",
    ],
)
def test_prefixes_without_a_completion_are_refused(llama3_tokenizer, llama3_vocabulary, schema, dead, good) -> None:
    parser = JsonSchemaParser(schema)
    assert parser.add_text(dead) is None
    for text in good:
        assert parser.accepts(text), text
    # the mask agrees: the tokens of the dead prefix are not all offered
    matcher = TokenEnforcer(llama3_vocabulary, parser).matcher()
    ids = llama3_tokenizer.encode(dead, add_special_tokens=False)
    offered = True
    for token in ids:
        if token not in matcher.allowed_token_ids():
            offered = False
            break
        assert matcher.accept_token(token)
    assert not offered, dead


def test_recursive_schemas_with_finite_instances_still_build() -> None:
    tree = {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#"}}}}
    linked = {"type": "object", "properties": {"next": {"$ref": "#"}, "v": {"type": "integer"}}, "required": ["v"]}
    nested = {
        "$defs": {"x": {"anyOf": [{"type": "null"}, {"type": "array", "items": {"$ref": "#/$defs/x"}, "minItems": 1}]}},
        "$ref": "#/$defs/x",
    }
    assert JsonSchemaParser(tree).accepts('{"children":[{"children":[]},{}]}')
    assert JsonSchemaParser(linked).accepts('{"v":1,"next":{"v":2}}')
    assert JsonSchemaParser(nested).accepts("[[null],null]")


def test_an_unsatisfiable_schema_names_the_value_without_one() -> None:
    match = r"the value at #/properties/id has none \(its 'contains' at #/properties/id/contains cannot be met\)"
    with pytest.raises(SchemaError, match=match + r" \(at #/properties/id\)"):
        JsonSchemaParser(REQUIRED_EMPTY_CONTAINS)
    nested = {"type": "object", "properties": {"n": REQUIRED_EMPTY_CONTAINS}, "required": ["n"]}
    with pytest.raises(SchemaError, match=r"\(at #/properties/n/properties/id\)"):
        JsonSchemaParser(nested)


def test_min_properties_is_checked_against_the_keys_a_pattern_allows() -> None:
    """propertyNames ^[ab]{1,2}$ allows six keys ("a", "b", "aa", "ab", "ba", "bb"; a named one counts once):
    seven are refused at construction, six build and every walk can finish."""
    rule = {"type": "object", "properties": {"a": {}}, "propertyNames": {"pattern": "^[ab]{1,2}$"}}
    with pytest.raises(SchemaError, match="unsatisfiable"):
        JsonSchemaParser(rule | {"minProperties": 7})
    parser = JsonSchemaParser(rule | {"minProperties": 6})
    assert parser.accepts('{"a":1,"b":2,"aa":3,"ab":4,"ba":5,"bb":6}')
    assert parser.add_text('{"a":1,"b":2,"aa":3,"ab":4,"ba":5,"bb":6,') is None
    for seed in range(100):
        char_walk(parser, random.Random(seed), max_chars=400)
