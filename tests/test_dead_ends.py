"""The dead ends listed in issue 18: each prefix the mask used to allow had no valid completion. Now the
schema is refused at construction where it has no finite instance, and otherwise the prefix is refused
(character by character and in the Llama 3 mask) while valid documents are still accepted."""

from __future__ import annotations

import pytest

from formatenforcer import JsonSchemaParser, SchemaError, TokenEnforcer

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
    ],
    ids=[
        "dependent-closed",
        "required-self-ref",
        "required-item-self-ref",
        "unique-booleans",
        "unique-enum",
        "item-never",
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
    ],
    ids=["dependent-under-max", "nested-never", "unique-booleans"],
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
