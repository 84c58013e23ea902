"""Draft 2019-09's ``$recursiveRef``/``$recursiveAnchor``, checked against the ``jsonschema`` package's
Draft201909Validator (with the ``referencing`` registry for the documents passed in ``resources=``).

``$recursiveRef: "#"`` is a ``$ref`` to the root of the current resource, unless that root has
``"$recursiveAnchor": true``: then it goes to the outermost resource of the unbroken run of such resources at
the inner end of the dynamic scope. The classic use: a tree schema whose children are ``$recursiveRef``, and a
strict tree that extends it, so that the nested nodes are strict too. Every case compares character-level
acceptance with the validator on valid and invalid instances (and on random character walks), and the tree
extension is also walked token by token on the Llama 3 vocabulary.
"""

from __future__ import annotations

import json
import random
from typing import Any

import jsonschema
import pytest
from referencing import Registry
from referencing.jsonschema import DRAFT201909

from formatenforcer import JsonSchemaParser, SchemaError, TokenEnforcer

from .checking import random_walk
from .json_checks import accepts_tokens, char_walk

DRAFT = "https://json-schema.org/draft/2019-09/schema"

TREE = {"$schema": DRAFT, "$id": "https://example.com/tree", "$recursiveAnchor": True, "type": "object",
        "properties": {"data": {"type": "integer"},
                       "children": {"type": "array", "maxItems": 2, "items": {"$recursiveRef": "#"}}}}  # fmt: skip
STRICT = {"$schema": DRAFT, "$id": "https://example.com/strict-tree", "$recursiveAnchor": True,
          "$ref": "tree", "unevaluatedProperties": False}  # fmt: skip
"""The specification's example: the strict tree closes every node, the nested ones (reached by
``$recursiveRef`` from inside "tree") included."""


def _without(schema: dict, key: str) -> dict:
    return {k: v for k, v in schema.items() if k != key}


def _with(schema: dict, **changes: Any) -> dict:
    return {**schema, **{k.replace("_", "$", 1) if k.startswith("_") else k: v for k, v in changes.items()}}


ONE_DOCUMENT = {
    "$schema": DRAFT,
    "$id": "https://example.com/forest",
    "$recursiveAnchor": True,
    "type": "object",
    "properties": {"n": {"type": "integer"}, "node": {"$ref": "node"}},
    "additionalProperties": False,
    "$defs": {
        "node": {"$id": "node", "$recursiveAnchor": True, "type": "array", "maxItems": 2,
                 "items": {"anyOf": [{"type": "string", "maxLength": 2}, {"$recursiveRef": "#"}]}},
    },
}  # fmt: skip
"""Nested ``$id`` resources in one document, both anchored: the ``$recursiveRef`` inside "node" goes to the
outermost resource (the whole forest object), so a node's items are short strings or forest objects."""

MIDDLE = {
    "$schema": DRAFT,
    "$id": "https://example.com/outer",
    "$recursiveAnchor": True,
    "type": "object",
    "properties": {"m": {"$ref": "middle"}},
    "$defs": {
        "middle": {"$id": "middle", "$ref": "inner"},
        "inner": {"$id": "inner", "$recursiveAnchor": True, "type": "array", "items": {"$recursiveRef": "#"}},
    },
}  # fmt: skip
"""outer (anchored) -> middle (no anchor) -> inner (anchored): the resource without the anchor stops the
search, so the ``$recursiveRef`` in "inner" stays in "inner" (arrays of arrays), never reaching "outer"."""

PATHS = {
    "$schema": DRAFT,
    "$id": "https://example.com/paths",
    "type": "object",
    "properties": {"strings": {"$ref": "strings"}, "numbers": {"$ref": "numbers"}},
    "$defs": {
        "list": {"$id": "list", "$recursiveAnchor": True, "type": "array", "maxItems": 3,
                 "items": {"anyOf": [{"type": "boolean"}, {"$recursiveRef": "#"}]}},
        "strings": {"$id": "strings", "$recursiveAnchor": True,
                    "anyOf": [{"type": "string"}, {"$ref": "list"}]},
        "numbers": {"$id": "numbers", "$recursiveAnchor": True,
                    "anyOf": [{"type": "number"}, {"$ref": "list"}]},
    },
}  # fmt: skip
"""The same generic list reached on two paths: its ``$recursiveRef`` means "strings" on one path and
"numbers" on the other, so each path reads its own copy."""

CASES: dict[str, tuple[dict, dict[str, dict], list[Any], list[Any]]] = {
    # name: (schema, resources, valid instances, invalid instances)
    "strict tree extends the tree": (
        STRICT, {TREE["$id"]: TREE},
        [{}, {"data": 1}, {"children": [{"data": 2}, {"children": [{}]}]}],
        [{"daat": 1}, {"children": [{"daat": 1}]}, {"children": [{"children": [{"x": 0}]}]},
         {"children": [{"data": "x"}]}, {"children": [{}, {}, {}]}],
    ),
    "the tree alone": (
        TREE, {},
        [{"extra": 1, "children": [{"daat": 1, "children": [{"x": [1]}]}]}],
        [{"children": [{"data": "x"}]}, {"children": [1]}],
    ),
    "no anchor in the outer resource": (
        _without(STRICT, "$recursiveAnchor"), {TREE["$id"]: TREE},
        [{"children": [{"daat": 1}]}, {"data": 1, "children": [{"children": [{"x": 0}]}]}],
        [{"daat": 1}, {"children": [{"data": "x"}]}],
    ),
    "no anchor in the inner resource": (
        STRICT, {TREE["$id"]: _without(TREE, "$recursiveAnchor")},
        [{"children": [{"daat": 1}]}, {"data": 1}],
        [{"daat": 1}, {"children": [{"data": "x"}]}],
    ),
    "recursiveAnchor false": (
        STRICT, {TREE["$id"]: _with(TREE, _recursiveAnchor=False)},
        [{"children": [{"daat": 1}]}],
        [{"daat": 1}],
    ),
    "no anchor anywhere works like $ref": (
        {"$schema": DRAFT, "properties": {"foo": {"$recursiveRef": "#"}}, "additionalProperties": False}, {},
        [{"foo": False}, {"foo": {"foo": True}}, {}, {"foo": 1}],
        [{"bar": False}, {"foo": {"bar": False}}, {"foo": {"foo": {"x": None}}}],
    ),
    "anchored root without $id": (
        {"$schema": DRAFT, "$recursiveAnchor": True, "type": "object", "additionalProperties": {"$recursiveRef": "#"},
         "properties": {"leaf": {"type": "integer"}}},
        {},
        [{"a": {"b": {"leaf": 1}}}, {}],
        [{"a": 1}, {"a": {"leaf": "x"}}],
    ),
    "nested $id resources in one document": (
        ONE_DOCUMENT, {},
        [{"node": ["ab", {"n": 1, "node": []}]}, {"n": 2}, {"node": [{"node": [{"node": ["x"]}]}]}],
        [{"node": ["abc"]}, {"node": [[]]}, {"node": [{"n": "x"}]}, {"node": [{"m": 1}]}],
    ),
    "an intermediate resource without the anchor": (
        MIDDLE, {},
        [{"m": [[], [[]]]}, {"m": []}],
        [{"m": [{}]}, {"m": [{"m": []}]}, {"m": [1]}],
    ),
    "each path its own target": (
        PATHS, {},
        [{"strings": [True, "a", ["b", [False]]], "numbers": [1, [2.5, True]]}],
        [{"strings": [1]}, {"numbers": ["a"]}, {"numbers": [[1, ["x"]]]}, {"strings": [["a", [2]]]}],
    ),
}  # fmt: skip


def _validator(schema: dict, resources: dict[str, dict]) -> jsonschema.Draft201909Validator:
    registry = Registry().with_resources((uri, DRAFT201909.create_resource(doc)) for uri, doc in resources.items())
    return jsonschema.Draft201909Validator(schema, registry=registry)


@pytest.mark.parametrize("name", list(CASES))
def test_acceptance_agrees_with_the_validator(name: str) -> None:
    schema, resources, valid, invalid = CASES[name]
    validator = _validator(schema, resources)
    parser = JsonSchemaParser(schema, resources=resources)
    for instance in valid + invalid:
        expected = validator.is_valid(instance)
        assert expected == (instance in valid), (instance, "the case lists it on the wrong side")
        for indent in (None, 2):
            text = json.dumps(instance, indent=indent)
            assert parser.accepts(text) == expected, (text, expected)


@pytest.mark.parametrize("name", list(CASES))
def test_random_character_walks_finish_valid(name: str) -> None:
    schema, resources, _, _ = CASES[name]
    validator = _validator(schema, resources)
    parser = JsonSchemaParser(schema, resources=resources)
    finished = 0
    for seed in range(25):
        text, done = char_walk(parser, random.Random(seed), max_chars=250, end_bias=0.5)
        if done:
            finished += 1
            assert validator.is_valid(json.loads(text)), text
    assert finished >= 5


def test_the_strict_tree_token_by_token(llama3_vocabulary, llama3_tokenizer) -> None:
    validator = _validator(STRICT, {TREE["$id"]: TREE})
    enforcer = TokenEnforcer(llama3_vocabulary, JsonSchemaParser(STRICT, resources={TREE["$id"]: TREE}))
    for text in ('{"data": 1, "children": [{"data": 2, "children": [{}]}]}', '{"children": []}'):
        ok, why = accepts_tokens(enforcer, llama3_tokenizer, text)
        assert ok, (text, why)
    ok, _ = accepts_tokens(enforcer, llama3_tokenizer, '{"children": [{"daat": 1}]}')
    assert not ok  # the misspelled nested key: refused by the strict extension
    finished = 0
    for seed in range(8):
        text, done = random_walk(enforcer, seed, max_tokens=150, end_bias=0.5)
        if done:
            finished += 1
            assert validator.is_valid(json.loads(text)), text
    assert finished >= 3


def test_a_lexically_nested_resource_is_in_the_dynamic_scope() -> None:
    # the dynamic scope is every resource evaluation passes through, a nested $id entered without a $ref
    # included (as for $dynamicRef here): "inner" is inside the anchored "outer", so its $recursiveRef goes
    # to "outer". (The referencing library behind jsonschema only records resources left by a $ref, so it
    # resolves to "inner" here; the JSON-Schema-Test-Suite has no case that tells the two apart.)
    schema = {"$schema": DRAFT, "$id": "https://example.com/outer", "$recursiveAnchor": True, "type": "object",
              "properties": {"n": {"type": "integer"},
                             "inner": {"$id": "inner", "$recursiveAnchor": True, "type": "array",
                                       "items": {"$recursiveRef": "#"}}}}  # fmt: skip
    parser = JsonSchemaParser(schema)
    assert parser.accepts('{"inner": [{"n": 1}, {"inner": [{}]}]}')
    assert not parser.accepts('{"inner": [[]]}') and not parser.accepts('{"inner": [{"n": "x"}]}')


@pytest.mark.parametrize(
    ("schema", "pointer", "words"),
    [
        ({"$schema": DRAFT, "properties": {"a": {"$recursiveRef": "#/properties"}}},
         "#/properties/a/$recursiveRef", '"#"'),
        ({"$schema": DRAFT, "items": {"$recursiveRef": "other.json"}}, "#/items/$recursiveRef", '"#"'),
        ({"$schema": DRAFT, "$recursiveRef": 1}, "#/$recursiveRef", '"#"'),
        ({"$schema": DRAFT, "$id": "https://example.com/r", "items": {"$id": "item", "$recursiveAnchor": "yes"}},
         "#/items/$recursiveAnchor", "boolean"),
        ({"$schema": DRAFT, "$recursiveAnchor": 1, "type": "object"}, "#/$recursiveAnchor", "boolean"),
    ],
)  # fmt: skip
def test_bad_values_raise_schema_error_at_their_pointer(schema: dict, pointer: str, words: str) -> None:
    with pytest.raises(SchemaError) as raised:
        JsonSchemaParser(schema)
    assert raised.value.pointer == pointer
    assert words in str(raised.value)


def test_draft_07_reads_the_keywords_as_annotations() -> None:
    schema = {"$schema": "http://json-schema.org/draft-07/schema#", "properties": {"a": {"$recursiveRef": "#/x"}},
              "$recursiveAnchor": "not a boolean", "required": ["a"]}  # fmt: skip
    parser = JsonSchemaParser(schema)
    for instance in ({"a": 1}, {"a": "anything"}, {}):
        assert parser.accepts(json.dumps(instance)) == jsonschema.Draft7Validator(schema).is_valid(instance)


META_2019 = "https://json-schema.org/draft/2019-09/schema"


def test_the_2019_09_metaschema(llama3_vocabulary, llama3_tokenizer) -> None:
    # json-schema.org's 2019-09 metaschema recurses through "$recursiveRef": "#" across its vocabulary
    # documents (read from jsonschema-specifications), all anchored: a nested subschema must be a schema too
    pytest.importorskip("jsonschema_specifications")
    validator = jsonschema.Draft201909Validator(jsonschema.Draft201909Validator.META_SCHEMA)
    parser = JsonSchemaParser({"$schema": META_2019, "$ref": META_2019})
    enforcer = TokenEnforcer(llama3_vocabulary, parser)
    valid = ['{"type": "integer", "minimum": 0}', "true", '{"properties": {"a": {"items": {"enum": [1, "x"]}}}}',
             '{"$recursiveAnchor": true, "additionalProperties": {"$recursiveRef": "#"}}']  # fmt: skip
    invalid = ['{"$defs": {"foo": {"type": 1}}}', '{"properties": {"a": {"anyOf": []}}}', "3",
               '{"items": {"required": "a"}}', '{"properties": {"a": {"$recursiveAnchor": 1}}}']  # fmt: skip
    for text in valid + invalid:
        assert parser.accepts(text) == validator.is_valid(json.loads(text)) == (text in valid), text
    for text in valid:
        ok, why = accepts_tokens(enforcer, llama3_tokenizer, text)
        assert ok, (text, why)
    finished = 0
    for seed in range(6):
        text, done = random_walk(enforcer, seed, max_tokens=120, end_bias=0.5)
        if done:
            finished += 1
            assert validator.is_valid(json.loads(text)), text
    assert finished >= 2
