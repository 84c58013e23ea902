"""Table-driven JSON Schema cases through one checker, on every test tokenizer, plus build-time errors.

``check`` is the one place a case goes through: an expected-valid text must be accepted character by
character and, on each real tokenizer, token by token (natural tokenization, EOS at the end); an
expected-invalid text must be refused character by character (no token sequence can then spell it).
"""

from __future__ import annotations

import json
import warnings

import pytest

from formatenforcer import (
    JsonConfig,
    JsonParser,
    JsonSchemaParser,
    SchemaError,
    TokenEnforcer,
    UnsupportedSchemaError,
)
from formatenforcer.jsonschema import JSON_STRING_CHARS

from .json_checks import accepts_tokens

OBJ = {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
       "required": ["name"], "additionalProperties": False}  # fmt: skip

CASES = [
    # strings: escapes, unicode, control characters, lengths in code points
    ({"type": "string"}, r'"a\"b\\c\/d\b\f\n\r\t"', True),
    ({"type": "string"}, r'"\u00e9\ud83d\ude00"', True),
    ({"type": "string"}, '"héllo 😀 中文"', True),
    ({"type": "string"}, '"tab\there"', False),
    ({"type": "string"}, r'"\ud83d"', False),
    ({"type": "string"}, r'"\x41"', False),
    ({"type": "string", "maxLength": 2}, r'"\u00e9😀"', True),
    ({"type": "string", "maxLength": 2}, '"abc"', False),
    ({"type": "string", "minLength": 2}, '"😀"', False),
    ({"type": "string", "pattern": "^[a-c]+x$", "maxLength": 3}, '"abx"', True),
    ({"type": "string", "pattern": "^[a-c]+x$", "maxLength": 3}, '"abcx"', False),
    ({"type": "string", "pattern": "[0-9]"}, '"abc1def"', True),
    ({"type": "string", "pattern": "[0-9]"}, '"abcdef"', False),
    ({"type": "string", "format": "date"}, '"2024-02-29"', True),
    ({"type": "string", "format": "date"}, '"2024-13-01"', False),
    ({"type": "string", "format": "uuid"}, '"123e4567-e89b-12d3-a456-426614174000"', True),
    ({"type": "string", "format": "ipv4"}, '"256.1.1.1"', False),
    ({"enum": ["red", "green", "ünï"]}, r'"\u00fcn\u00ef"', True),
    ({"enum": ["red", "green"]}, '"gree"', False),
    # numbers: exact grammar and bounds
    ({"type": "number"}, "-0.5e+10", True),
    ({"type": "number"}, "01", False),
    ({"type": "number"}, "+1", False),
    ({"type": "number"}, "1.", False),
    ({"type": "integer"}, "1.0", False),
    ({"type": "integer"}, "1e3", False),
    ({"type": "integer", "minimum": 10, "maximum": 250}, "250", True),
    ({"type": "integer", "minimum": 10, "maximum": 250}, "251", False),
    ({"type": "integer", "minimum": 10, "maximum": 250}, "9", False),
    ({"type": "number", "exclusiveMinimum": 0, "maximum": 1}, "0.000001", True),
    ({"type": "number", "exclusiveMinimum": 0, "maximum": 1}, "0", False),
    ({"type": "integer", "multipleOf": 7, "minimum": -20}, "-14", True),
    ({"type": "integer", "multipleOf": 7}, "15", False),
    ({"const": 3}, "3.0", True),
    ({"type": "integer", "maximum": 99999999999999999999}, "99999999999999999999", True),
    # objects
    (OBJ, '{"name":"a","age":3}', True),
    (OBJ, '{\n  "age": 3,\n  "name": "a"\n}', True),
    (OBJ, '{"age":3}', False),
    (OBJ, '{"name":"a","name":"b"}', False),
    (OBJ, '{"name":"a","other":1}', False),
    ({"type": "object", "additionalProperties": {"type": "integer"}}, '{"x":1,"y":2}', True),
    # extra keys are counted, not remembered: a repeat parses (last wins) to an object that still validates
    ({"type": "object", "additionalProperties": {"type": "integer"}}, '{"x":1,"x":2}', True),
    # ... unless minProperties counts distinct keys: then their text is kept and a repeat is refused
    ({"type": "object", "minProperties": 2, "additionalProperties": {"type": "integer"}}, '{"x":1,"x":2}', False),
    ({"type": "object", "minProperties": 2, "additionalProperties": {"type": "integer"}}, '{"x":1,"y":2}', True),
    (
        {"type": "object", "patternProperties": {"^s_": {"type": "string"}}, "additionalProperties": False},
        '{"s_a":"x"}',
        True,
    ),  # fmt: skip
    (
        {"type": "object", "patternProperties": {"^s_": {"type": "string"}}, "additionalProperties": False},
        '{"t":"x"}',
        False,
    ),  # fmt: skip
    ({"type": "object", "propertyNames": {"maxLength": 2}}, '{"ab":1}', True),
    ({"type": "object", "propertyNames": {"maxLength": 2}}, '{"abc":1}', False),
    ({"type": "object", "maxProperties": 1, "required": ["a"]}, '{"b":1}', False),
    ({"type": "object", "minProperties": 2}, '{"b":1}', False),
    ({"type": "object", "dependentRequired": {"a": ["b"]}}, '{"a":1}', False),
    ({"type": "object", "dependentRequired": {"a": ["b"]}}, '{"a":1,"b":2}', True),
    # arrays
    ({"type": "array", "prefixItems": [{"type": "integer"}], "items": {"type": "string"}}, '[1,"a","b"]', True),
    ({"type": "array", "prefixItems": [{"type": "integer"}], "items": {"type": "string"}}, "[1,2]", False),
    ({"type": "array", "minItems": 2, "maxItems": 2}, "[1]", False),
    ({"type": "array", "uniqueItems": True, "items": {"type": "integer"}}, "[1,2,1]", False),
    ({"type": "array", "uniqueItems": True, "items": {"type": "integer"}}, "[1,2,3]", True),
    ({"type": "array", "contains": {"const": 5}, "maxContains": 1}, "[1,5,2]", True),
    ({"type": "array", "contains": {"const": 5}, "maxContains": 1}, "[5,5]", False),
    ({"type": "array", "contains": {"const": 5}}, "[1,2]", False),
    # combinators, references, not, if/then/else
    ({"anyOf": [{"type": "string"}, {"type": "integer"}]}, "12", True),
    ({"oneOf": [{"type": "string"}, {"type": "null"}]}, "null", True),
    ({"not": {"type": "string"}}, '"a"', False),
    ({"not": {"enum": ["a", "b"]}}, '"c"', True),
    ({"not": {"enum": ["a", "b"]}}, '"a"', False),
    ({"if": {"type": "integer"}, "then": {"minimum": 5}, "else": {"type": "string"}}, "3", False),
    ({"if": {"type": "integer"}, "then": {"minimum": 5}, "else": {"type": "string"}}, '"x"', True),
    (
        {
            "$defs": {
                "node": {
                    "type": "object",
                    "properties": {"next": {"$ref": "#/$defs/node"}},
                    "additionalProperties": False,
                }
            },
            "$ref": "#/$defs/node",
        },
        '{"next":{"next":{}}}',
        True,
    ),  # fmt: skip
    ({"$defs": {"a": {"$anchor": "pos", "type": "integer", "minimum": 0}}, "$ref": "#pos"}, "-1", False),
    ({"type": ["integer", "null"], "nullable": True}, "null", True),
    (True, '[{"a":[1,null,"x"]}]', True),
]


def check(vocabularies, tokenizers, schema, text: str, expected: bool) -> None:
    parser = JsonSchemaParser(schema)
    assert parser.accepts(text) is expected, (schema, text)
    if expected:
        for name, vocabulary in vocabularies.items():
            ok, why = accepts_tokens(TokenEnforcer(vocabulary, parser), tokenizers[name], text)
            assert ok, (name, schema, text, why)


@pytest.mark.parametrize("schema, text, expected", CASES, ids=[f"{i}-{c[1][:20]}" for i, c in enumerate(CASES)])
def test_case(vocabularies, tokenizers, schema, text, expected):
    check(vocabularies, tokenizers, schema, text, expected)


BAD = [
    ("{not json", "#"),
    ({"type": "strin"}, "#/type"),
    ({"properties": {"a": {"minLength": -1}}}, "#/properties/a/minLength"),
    ({"properties": {"a": {"$ref": "#/$defs/missing"}}}, "#/properties/a/$ref"),
    ({"minimum": 5, "maximum": 3}, "#"),
    ({"type": "string", "pattern": "("}, "#/pattern"),
    ({"allOf": [{"type": "string"}, {"type": "integer"}]}, "#"),
]


@pytest.mark.parametrize("schema, pointer", BAD)
def test_bad_schema_raises_schema_error_with_pointer(schema, pointer):
    with pytest.raises(SchemaError) as raised:
        JsonSchemaParser(schema)
    assert raised.value.pointer == pointer


def test_unsupported_keywords_are_listed_together_and_lenient_warns():
    schema = {"type": "object", "properties": {"a": {"pattern": "(?<=x)y"}, "b": {"not": {"uniqueItems": True}}}}
    with pytest.raises(UnsupportedSchemaError) as raised:
        JsonSchemaParser(schema)
    assert set(raised.value.problems) == {("#/properties/b/not", "not"),
                                          ("#/properties/a/pattern", "pattern")}  # fmt: skip
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parser = JsonSchemaParser(schema, lenient=True)
    assert any("uniqueItems" in str(w.message) for w in caught)
    assert parser.accepts('{"a":"anything","b":1}')


def test_annotations_are_ignored():
    schema = {"title": "t", "description": "d", "default": 1, "examples": [1], "$comment": "c", "deprecated": True,
              "readOnly": True, "writeOnly": False, "contentMediaType": "text/plain", "type": "integer"}  # fmt: skip
    assert JsonSchemaParser(schema).accepts("1")


def test_pydantic_class_and_json_text_inputs():
    from pydantic import BaseModel

    class Point(BaseModel):
        x: int
        y: int

    assert JsonSchemaParser(Point).accepts('{"y":2,"x":1}')
    assert JsonSchemaParser(json.dumps(Point.model_json_schema())).accepts('{"x":1,"y":2}')
    assert not JsonSchemaParser(Point).accepts('{"x":1}')


def test_states_are_immutable_and_strings_offer_the_shared_free_run():
    parser = JsonSchemaParser(OBJ)
    state = parser.add_text('{"name":"ab')
    key, allowed = state.key(), state.allowed_characters()
    assert state.add_character("c") is not None
    assert state.key() == key and state.allowed_characters() == allowed
    run = state.free_run()
    assert run is not None and run.chars is JSON_STRING_CHARS
    assert run.after(3).key() == state.add_text("xyz").key()
    bounded = JsonSchemaParser({"type": "string", "maxLength": 5}).add_text('"ab')
    assert bounded.free_run().max_length == 3


def test_whitespace_policies():
    value = {"a": [1, {"b": None}]}
    pretty, compact = json.dumps(value, indent=2), json.dumps(value, separators=(",", ":"))
    assert JsonParser().accepts(pretty) and JsonParser().accepts(compact)
    assert JsonParser(JsonConfig(whitespace="compact")).accepts(compact)
    assert not JsonParser(JsonConfig(whitespace="compact")).accepts(pretty)
    assert not JsonParser(JsonConfig(max_whitespace=3)).accepts("[1,    2]")
    assert JsonParser(JsonConfig(max_whitespace=3)).accepts("[1,   2]")
    spaced = JsonParser(JsonConfig(whitespace_pattern=r"[ ]?"))
    assert spaced.accepts('{"a": 1, "b": 2}') and not spaced.accepts('{"a":  1}')


def test_schema_property_order():
    schema = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}
    ordered = JsonSchemaParser(schema, config=JsonConfig(property_order="schema"))
    assert ordered.accepts('{"a":1,"b":2}') and ordered.accepts('{"b":2}')
    assert not ordered.accepts('{"b":2,"a":1}')
    assert JsonSchemaParser(schema).accepts('{"b":2,"a":1}')


def test_max_properties_leaves_room_for_required_keys():
    schema = {"type": "object", "required": ["z"], "maxProperties": 2}
    state = JsonSchemaParser(schema).add_text('{"a":1,')
    # one slot left and "z" still missing: the key can only be "z"
    assert state.add_text('"').allowed_characters().chars() == ["z"]
    # ... also spelled \u007a when ASCII escapes are enabled, and then only that escape
    config = JsonConfig(ascii_escapes=True)
    key_state = JsonSchemaParser(schema, config=config).add_text('{"a":1,"')
    assert key_state.allowed_characters().chars() == ["\\", "z"]
    assert key_state.add_text("\\").allowed_characters().chars() == ["u"]
    assert key_state.add_text("\\u00").allowed_characters().chars() == ["7"]


def test_unicode_escapes_spell_only_non_ascii_by_default():
    parser = JsonSchemaParser({"type": "string"})
    assert parser.accepts(r'"\u00e9\u0000\n\/"') and not parser.accepts(r'"\u0061"')
    assert JsonSchemaParser({"type": "string"}, config=JsonConfig(ascii_escapes=True)).accepts(r'"\u0061"')


def test_design_doc_snippets_run():
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs/json-schema.md").read_text()
    snippets = re.findall(r"```python\n(.*?)```", text, re.S)
    assert snippets
    for snippet in snippets:
        exec(snippet, {})


def test_json_names_are_exported():
    import formatenforcer

    for name in ("JsonSchemaParser", "JsonParser", "JsonConfig"):
        assert name in formatenforcer.__all__ and hasattr(formatenforcer, name)
