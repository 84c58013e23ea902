"""``$ref`` across documents: ``$id`` base URIs, anchors, and other documents supplied with ``resources=``."""

from __future__ import annotations

import warnings

import pytest

from formatenforcer import JsonSchemaParser, UnsupportedSchemaError

PERSON = {
    "$id": "https://example.com/schemas/person.json",
    "type": "object",
    "properties": {"name": {"$ref": "#/$defs/name"}, "age": {"$ref": "types.json#count"}},
    "required": ["name"],
    "$defs": {"name": {"type": "string", "maxLength": 5}},
}
TYPES = {"$defs": {"count": {"$anchor": "count", "type": "integer", "minimum": 0}}}


def test_documents_supplied_by_uri_resolve_relative_refs_and_anchors():
    parser = JsonSchemaParser(
        {"type": "array", "items": {"$ref": "https://example.com/schemas/person.json"}},
        resources={"https://example.com/schemas/person.json": PERSON, "https://example.com/schemas/types.json": TYPES},
    )
    assert parser.accepts('[{"name":"Ann","age":3}]')
    assert not parser.accepts('[{"name":"Ann","age":-3}]')
    assert not parser.accepts('[{"name":"Annabel"}]')


def test_resources_accept_json_text_and_an_empty_fragment_in_the_uri():
    parser = JsonSchemaParser({"$ref": "urn:example:count"}, resources={"urn:example:count#": '{"type": "integer"}'})
    assert parser.accepts("7") and not parser.accepts('"7"')


def test_nested_id_is_the_base_of_a_sibling_ref():
    schema = {
        "$id": "https://example.com/root.json",
        "$ref": "nested/foo.json",
        "$defs": {
            "foo": {"$id": "nested/foo.json", "$ref": "./bar.json"},
            "bar": {"$id": "nested/bar.json", "type": "number"},
        },
    }
    parser = JsonSchemaParser(schema)
    assert parser.accepts("5") and not parser.accepts('"a"')


def test_fragment_id_is_an_anchor_not_a_new_document():
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$id": "http://example.com/detached.json",
        "$ref": "#/definitions/foo",
        "definitions": {"foo": {"$ref": "#detached"}, "detached": {"$id": "#detached", "type": "integer"}},
    }
    parser = JsonSchemaParser({"$ref": "http://example.com/detached.json#/definitions/foo"},
                              resources={"http://example.com/detached.json": schema})  # fmt: skip
    assert parser.accepts("1") and not parser.accepts('"a"')


def test_unknown_document_names_pointer_and_uri_and_is_never_fetched():
    schema = {"properties": {"a": {"$ref": "https://example.com/missing.json#/$defs/x"}}}
    with pytest.raises(UnsupportedSchemaError) as raised:
        JsonSchemaParser(schema)
    assert raised.value.problems == [("#/properties/a/$ref", "$ref")]
    assert "https://example.com/missing.json" in str(raised.value) and "#/properties/a/$ref" in str(raised.value)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parser = JsonSchemaParser(schema, lenient=True)
    assert any("https://example.com/missing.json" in str(w.message) for w in caught)
    assert parser.accepts('{"a":[1]}')


def test_problems_inside_a_supplied_document_carry_its_uri():
    with pytest.raises(UnsupportedSchemaError) as raised:
        JsonSchemaParser({"$ref": "https://example.com/d.json"},
                         resources={"https://example.com/d.json": {"pattern": "(?=a)b"}})  # fmt: skip
    assert raised.value.problems == [("https://example.com/d.json#/pattern", "pattern")]


TREE = {"$id": "https://example.com/tree", "$dynamicAnchor": "node", "type": "object",
        "properties": {"data": True, "children": {"type": "array", "items": {"$dynamicRef": "#node"}}}}  # fmt: skip


def test_dynamic_ref_resolves_to_the_root_resource_anchor():
    strict = {"$id": "https://example.com/strict", "$dynamicAnchor": "node", "$ref": "tree",
              "unevaluatedProperties": False}  # fmt: skip
    parser = JsonSchemaParser(strict, resources={"https://example.com/tree": TREE})
    assert parser.accepts('{"data": 1, "children": [{"data": 2, "children": []}]}')
    assert not parser.accepts('{"children": [{"daat": 2}]}')  # the extension reaches the nested nodes too
    loose = JsonSchemaParser({"$ref": "https://example.com/tree"}, resources={"https://example.com/tree": TREE})
    assert loose.accepts('{"children": [{"daat": 2}]}')  # only the tree's own anchor: a plain $ref


def test_defs_named_like_keywords_are_scanned():
    schema = {
        "$ref": "#/$defs/default",
        "$defs": {
            "default": {
                "$id": "https://example.com/d",
                "$ref": "#a",
                "$defs": {"x": {"$anchor": "a", "type": "integer"}},
            }
        },
    }
    parser = JsonSchemaParser(schema)  # fmt: skip
    assert parser.accepts("3") and not parser.accepts('"3"')
