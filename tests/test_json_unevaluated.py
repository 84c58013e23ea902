"""``unevaluatedProperties``/``unevaluatedItems`` against the ``jsonschema`` reference validator.

Generated schemas put the keyword beside in-place applicators (allOf, anyOf, disjoint oneOf, if/then/else,
dependentSchemas, $ref). For every schema the parser builds:

- differential: small random values are accepted exactly when ``jsonschema`` says they are valid (so the
  set of evaluated keys/items is neither too small nor too large);
- random character walks never dead-end and every finished one validates.
"""

from __future__ import annotations

import json
import random

import jsonschema
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from formatenforcer import JsonSchemaParser, SchemaError

from .json_checks import assert_accepts_exactly, char_walk

SETTINGS = dict(deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
_KEYS = ["a", "b", "c", "p1", "p2"]
_SCALARS = [1, 2, "x", True, None]
_LEAVES = st.sampled_from([{"type": "integer"}, {"type": "string"}, {"const": 1}, {}, {"type": "boolean"}, False])


@st.composite
def _object_part(draw):  # noqa: ANN001, ANN202
    part: dict = {"properties": draw(st.dictionaries(st.sampled_from(["a", "b", "c"]), _LEAVES, max_size=2))}
    if draw(st.integers(0, 3)) == 0:
        part["patternProperties"] = {"^p": draw(_LEAVES)}
    if part["properties"] and draw(st.booleans()):
        part["required"] = [draw(st.sampled_from(sorted(part["properties"])))]
    if draw(st.integers(0, 5)) == 0:
        part["additionalProperties"] = draw(_LEAVES)
    if draw(st.integers(0, 5)) == 0:
        part["unevaluatedProperties"] = draw(_LEAVES)
    return part


@st.composite
def _array_part(draw):  # noqa: ANN001, ANN202
    part: dict = {}
    if draw(st.booleans()):
        part["prefixItems"] = draw(st.lists(_LEAVES, max_size=3))
    if draw(st.integers(0, 3)) == 0:
        part["items"] = draw(_LEAVES)
    if draw(st.integers(0, 3)) == 0:
        part["contains"] = draw(_LEAVES)
        if draw(st.booleans()):
            part["minContains"] = 0
    if draw(st.integers(0, 5)) == 0:
        part["unevaluatedItems"] = draw(_LEAVES)
    return part


@st.composite
def schemas(draw):  # noqa: ANN001, ANN202
    objects = draw(st.booleans())
    part = _object_part() if objects else _array_part()
    schema: dict = draw(part)
    schema["type"] = draw(st.sampled_from(["object", "array", None] if objects else ["array", None]))
    if schema["type"] is None:
        del schema["type"]
    how = draw(st.sampled_from(["allOf", "anyOf", "oneOf", "if", "ifthen", "ref", "dependentSchemas", "none"]))
    if how in ("allOf", "anyOf", "oneOf"):
        schema[how] = draw(st.lists(part, min_size=1, max_size=3))
    elif how == "if":
        schema["if"] = draw(part)
    elif how == "ifthen":
        schema.update({"if": {"required": ["a"]} if objects else {"maxItems": 1}, "then": draw(part)})
        if draw(st.booleans()):
            schema["else"] = draw(part)
    elif how == "ref":
        schema.update({"$ref": "#/$defs/d", "$defs": {"d": draw(part)}})
    elif how == "dependentSchemas" and objects:
        schema["dependentSchemas"] = {"b": draw(part)}
    key = "unevaluatedProperties" if objects else "unevaluatedItems"
    schema[key] = draw(st.one_of(st.booleans(), _LEAVES))
    return schema


_VALUES = st.one_of(
    st.dictionaries(st.sampled_from(_KEYS), st.sampled_from(_SCALARS), max_size=4),
    st.lists(st.sampled_from(_SCALARS), max_size=4),
    st.sampled_from(_SCALARS),
)


def _parser(schema: dict) -> JsonSchemaParser:
    try:
        return JsonSchemaParser(schema)
    except SchemaError:  # unsupported (overlapping oneOf, not of a constrained schema) or unsatisfiable
        assume(False)
        raise


@settings(max_examples=300, **SETTINGS)
@given(schema=schemas(), values=st.lists(_VALUES, min_size=8, max_size=8))
def test_accepts_exactly_the_valid_values(schema, values):
    parser = _parser(schema)
    validator = jsonschema.Draft202012Validator(schema)
    for value in values:
        for text in (json.dumps(value), json.dumps(value, indent=2)):
            assert parser.accepts(text) == validator.is_valid(value), (schema, text)


@settings(max_examples=150, **SETTINGS)
@given(schema=schemas(), seed=st.integers(0, 2**16))
def test_walks_never_dead_end_and_end_valid(schema, seed):
    parser = _parser(schema)
    validator = jsonschema.Draft202012Validator(schema)
    rng = random.Random(seed)
    for _ in range(6):
        text, finished = char_walk(parser, rng)
        if finished:
            assert validator.is_valid(json.loads(text)), (schema, text)


@pytest.mark.parametrize(
    ("schema", "valid", "invalid"),
    [
        ({"properties": {"a": {}}, "anyOf": [{"properties": {"b": {}}}, {"properties": {"c": {}}}],
          "unevaluatedProperties": False}, ['{"a":1,"b":2,"c":3}', '{"b":1}', '{}'], ['{"d":1}']),
        ({"allOf": [{"properties": {"a": {}}}], "anyOf": [{"unevaluatedProperties": False}]}, ['{}'], ['{"a":1}']),
        ({"prefixItems": [{"type": "string"}], "contains": {"type": "integer"}, "unevaluatedItems": False},
         ['["x", 1, 2]', '["x", 1]'], ['["x", 1, true]', '["x"]']),
        ({"if": {"properties": {"a": {"const": 1}}}, "unevaluatedProperties": False}, ['{"a":1}', '{}'], ['{"a":2}']),
    ],
)  # fmt: skip
def test_cases(schema, valid, invalid):
    assert_accepts_exactly(JsonSchemaParser(schema), valid, invalid)


def test_too_many_overlapping_branches_are_refused_with_pointer():
    branches = [{"properties": {f"k{i}": {}}} for i in range(9)]
    with pytest.raises(SchemaError) as raised:
        JsonSchemaParser({"anyOf": branches, "unevaluatedProperties": False})
    assert ("#/unevaluatedProperties", "unevaluatedProperties") in raised.value.problems
