"""References that reach themselves before any value is read. A union that names itself through a ``$ref``
(``x = anyOf [x, S]``) is the smallest set solving it, ``S``, wherever it is intersected, negated or split
(``if``, ``allOf``, ``not``, ``oneOf``), never a ``RecursionError``. A ``contains`` that names a schema still
being built is refused at the keyword, never an internal exception, unless the types show that no item can
match it. ``jsonschema`` cannot be the oracle here
(it recurses on these schemas without end), so the expected sets are worked out by hand in each case."""

from __future__ import annotations

import pytest

from formatenforcer import JsonSchemaParser, SchemaError, UnsupportedSchemaError

NON_EMPTY = {"x": {"anyOf": [{"$ref": "#/$defs/x"}, {"minLength": 1}]}}  # every value but ""
STRINGS = {"x": {"anyOf": [{"$ref": "#/$defs/x"}, {"type": "string"}]}}
MUTUAL = {
    "x": {"anyOf": [{"$ref": "#/$defs/y"}, {"type": "string"}]},
    "y": {"anyOf": [{"$ref": "#/$defs/x"}, {"type": "null"}]},
}
TEXTS = ['"a"', '""', "1", "null", "[]", "{}"]

CASES = [
    # if x then string: values of x must be strings; "" is outside x
    ({"$defs": NON_EMPTY, "if": {"$ref": "#/$defs/x"}, "then": {"type": "string"}}, ['"a"', '""']),
    ({"$defs": NON_EMPTY, "allOf": [{"$ref": "#/$defs/x"}, {"type": "string"}]}, ['"a"']),
    ({"$defs": NON_EMPTY, "not": {"$ref": "#/$defs/x"}}, ['""']),
    ({"$defs": NON_EMPTY, "$ref": "#/$defs/x"}, ['"a"', "1", "null", "[]", "{}"]),
    ({"$defs": STRINGS, "oneOf": [{"$ref": "#/$defs/x"}, {"type": "integer"}]}, ['"a"', '""', "1"]),
    ({"$defs": MUTUAL, "oneOf": [{"$ref": "#/$defs/x"}, {"type": "integer"}]}, ['"a"', '""', "1", "null"]),
    ({"$defs": MUTUAL, "type": "array", "items": {"not": {"$ref": "#/$defs/y"}}}, ["[]"]),
]


@pytest.mark.parametrize(("schema", "accepted"), CASES)
def test_a_union_that_names_itself_is_its_other_options(schema: dict, accepted: list[str]) -> None:
    parser = JsonSchemaParser(schema)
    assert [text for text in TEXTS if parser.accepts(text)] == accepted


def test_a_union_of_nothing_but_itself_is_a_documented_refusal() -> None:
    with pytest.raises(UnsupportedSchemaError, match=r"\$ref cycle"):
        JsonSchemaParser({"$defs": {"x": {"anyOf": [{"$ref": "#/$defs/x"}]}}, "$ref": "#/$defs/x"})


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "array", "contains": {"$ref": "#"}},
        {"type": "array", "contains": {"$ref": "#"}, "maxItems": 3},
        {"type": "array", "contains": {"$ref": "#"}, "minContains": 0, "maxContains": 1},
        {"anyOf": [{"type": "array", "contains": {"$ref": "#"}}, {"type": "integer"}]},
    ],
)
def test_contains_naming_a_schema_still_being_built_is_a_documented_refusal(schema: dict) -> None:
    """Not an internal error escaping, and not enforced half-way: refused at the keyword, with the reason."""
    with pytest.raises(UnsupportedSchemaError, match=r"'\$ref' at #(/anyOf/0)?/contains \(a \$ref cycle"):
        JsonSchemaParser(schema)


INTEGER_ARRAY_CONTAINING_THE_ROOT = {"type": "array", "items": {"type": "integer"}, "contains": {"$ref": "#"}}


def test_contains_no_item_can_match_is_not_called_a_cycle() -> None:
    """``contains`` names the object being built while the items are integers: no item can match it, which
    the types decide without the cycle. Where the array is required the schema is unsatisfiable there;
    where it is optional it builds, and the array can only be left out (or match zero times)."""
    required = {"type": "object", "properties": {"a": INTEGER_ARRAY_CONTAINING_THE_ROOT}, "required": ["a"]}
    with pytest.raises(SchemaError, match=r"unsatisfiable.*#/properties/a") as raised:
        JsonSchemaParser(required)
    assert "cycle" not in str(raised.value)
    parser = JsonSchemaParser({"type": "object", "properties": {"a": INTEGER_ARRAY_CONTAINING_THE_ROOT}})
    assert [t for t in ["{}", '{"b": 1}', '{"a": []}', '{"a": [1]}', '{"a": [{}]}'] if parser.accepts(t)] == [
        "{}",
        '{"b": 1}',
    ]
    zero = {**INTEGER_ARRAY_CONTAINING_THE_ROOT, "minContains": 0, "maxContains": 1}
    parser = JsonSchemaParser({"type": "object", "properties": {"a": zero}})
    assert [t for t in ['{"a": []}', '{"a": [1, 2]}', '{"a": [{}]}'] if parser.accepts(t)] == [
        '{"a": []}',
        '{"a": [1, 2]}',
    ]
    named = {"$defs": {"n": {"type": "object", "properties": {"a": {**INTEGER_ARRAY_CONTAINING_THE_ROOT,
                                                                        "contains": {"$ref": "#/$defs/n"}}}}},
             "$ref": "#/$defs/n"}  # fmt: skip
    assert JsonSchemaParser(named).accepts("{}") and not JsonSchemaParser(named).accepts('{"a": [1]}')
    with pytest.raises(SchemaError, match="'contains' can never match"):
        JsonSchemaParser(INTEGER_ARRAY_CONTAINING_THE_ROOT)


def test_contains_an_item_could_match_stays_a_documented_refusal() -> None:
    """Items that may be objects could match the object being built: still refused at the keyword."""
    for items in ({"type": ["integer", "object"]}, {}):
        schema = {"type": "object", "properties": {"a": {"type": "array", "items": items, "contains": {"$ref": "#"}}}}
        with pytest.raises(UnsupportedSchemaError, match=r"'\$ref' at #/properties/a/contains \(a \$ref cycle"):
            JsonSchemaParser(schema)


def test_a_union_that_names_itself_under_all_of_builds() -> None:
    """``d1 = anyOf [boolean, d1]`` is the booleans; intersected with boolean it is still the booleans (it
    raised RecursionError at construction)."""
    schema = {
        "$defs": {"d1": {"anyOf": [{"type": "boolean"}, {"$ref": "#/$defs/d1"}]}},
        "allOf": [{"$ref": "#/$defs/d1"}, {"type": "boolean"}],
    }
    parser = JsonSchemaParser(schema)
    assert [text for text in [*TEXTS, "true", "false"] if parser.accepts(text)] == ["true", "false"]


def test_a_required_array_whose_contains_no_item_matches_names_its_contains() -> None:
    """The refusal of a schema left with no finite value names the ``contains`` that no item can match when
    the array alone would have values, and does not when the array itself has none."""
    blamed = {
        "type": "object",
        "properties": {"x": {"type": "array", "items": {"type": "integer"}, "contains": {"$ref": "#"}}},
        "required": ["x"],
    }
    with pytest.raises(SchemaError, match=r"its 'contains' at #/properties/x/contains cannot be met"):
        JsonSchemaParser(blamed)
    itself = {
        "type": "object",
        "properties": {"x": {"type": "array", "minItems": 1, "items": {"$ref": "#"}, "contains": {"type": "object"}}},
        "required": ["x"],
    }
    with pytest.raises(SchemaError) as refused:
        JsonSchemaParser(itself)
    assert "contains" not in str(refused.value)
