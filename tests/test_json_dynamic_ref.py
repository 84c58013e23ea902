"""``$dynamicRef`` whose target depends on the path of references taken: each dynamic scope reads its own copy.

The same generic schema (a list, a tree) is reached through two resources that bind its ``$dynamicAnchor``
differently; the parser must apply each binding on its own path, and recursion through ``$ref`` and
``$dynamicRef`` must stay finite and never dead-end (seeded token random walks over the real Llama 3
vocabulary, outputs checked with the ``jsonschema`` validator).
"""

from __future__ import annotations

import json
import random

import jsonschema

from formatenforcer import JsonSchemaParser, TokenEnforcer

from .checking import random_walk
from .json_checks import accepts_tokens, char_walk

LISTS = {
    "$id": "https://example.com/main",
    "type": "object",
    "properties": {"numbers": {"$ref": "numbers"}, "strings": {"$ref": "strings"}},
    "additionalProperties": False,
    "$defs": {
        "list": {"$id": "list", "type": "array", "items": {"$dynamicRef": "#item"},
                 "$defs": {"default": {"$dynamicAnchor": "item"}}},
        "numbers": {"$id": "numbers", "$ref": "list", "$defs": {"n": {"$dynamicAnchor": "item", "type": "number"}}},
        "strings": {"$id": "strings", "$ref": "list",
                    "$defs": {"s": {"$dynamicAnchor": "item", "type": "string", "maxLength": 3}}},
    },
}  # fmt: skip

TREES = {
    "$id": "https://example.com/forest",
    "type": "object",
    "properties": {"loose": {"$ref": "tree"}, "strict": {"$ref": "strict"}},
    "additionalProperties": False,
    "$defs": {
        "tree": {"$id": "tree", "$dynamicAnchor": "node", "type": "object",
                 "properties": {"data": {"type": "integer"},
                                "children": {"type": "array", "maxItems": 2, "items": {"$dynamicRef": "#node"}}}},
        "strict": {"$id": "strict", "$dynamicAnchor": "node", "$ref": "tree", "unevaluatedProperties": False,
                   "required": ["data"]},
    },
}  # fmt: skip
"""A recursive tree extended on one path only: under "strict" every node (the nested ones too, reached by
``$dynamicRef``) is closed and needs "data"; under "loose" the plain tree applies all the way down."""


def test_each_path_applies_its_own_binding(llama3_vocabulary, llama3_tokenizer):
    parser = JsonSchemaParser(LISTS)
    enforcer = TokenEnforcer(llama3_vocabulary, parser)
    for text in ('{"numbers": [1, 2.5], "strings": ["ab", "c"]}', '{"numbers": []}', '{"strings": ["xyz"]}'):
        ok, why = accepts_tokens(enforcer, llama3_tokenizer, text)
        assert ok, (text, why)
    for text in ('{"numbers": ["a"]}', '{"strings": [1]}', '{"strings": ["abcd"]}'):
        assert not parser.accepts(text), text


def test_recursive_extension_reaches_nested_nodes_on_its_path_only(llama3_vocabulary, llama3_tokenizer):
    parser = JsonSchemaParser(TREES)
    enforcer = TokenEnforcer(llama3_vocabulary, parser)
    valid = ['{"strict": {"data": 1, "children": [{"data": 2, "children": [{"data": 3}]}]}}',
             '{"loose": {"children": [{"extra": true, "children": [{}]}]}}',
             '{"loose": {"data": 1}, "strict": {"data": 2, "children": []}}']  # fmt: skip
    for text in valid:
        ok, why = accepts_tokens(enforcer, llama3_tokenizer, text)
        assert ok, (text, why)
        jsonschema.Draft202012Validator(TREES).validate(json.loads(text))
    for text in ('{"strict": {"data": 1, "children": [{"data": 2, "extra": 0}]}}',
                 '{"strict": {"data": 1, "children": [{"children": []}]}}',
                 '{"strict": {"data": 1, "children": [{"data": 2, "children": [{"data": "x"}]}]}}'):  # fmt: skip
        assert not parser.accepts(text), text
        assert not jsonschema.Draft202012Validator(TREES).is_valid(json.loads(text))


def test_recursive_dynamic_scope_walks_never_dead_end(llama3_vocabulary):
    enforcer = TokenEnforcer(llama3_vocabulary, JsonSchemaParser(TREES))
    finished = 0
    for seed in range(8):
        text, done = random_walk(enforcer, seed, max_tokens=150, end_bias=0.5)
        if done:
            finished += 1
            jsonschema.Draft202012Validator(TREES).validate(json.loads(text))
    assert finished >= 3


def test_recursive_dynamic_scope_character_walks_finish_valid():
    parser = JsonSchemaParser(TREES)
    finished = 0
    for seed in range(40):
        text, done = char_walk(parser, random.Random(seed), max_chars=300, end_bias=0.5)
        if done:
            finished += 1
            jsonschema.Draft202012Validator(TREES).validate(json.loads(text))
    assert finished >= 10


def test_leaving_a_resource_leaves_its_bindings():
    # "first" binds the anchor only inside `if`; `then` reaches the generic schema without it
    schema = {
        "$id": "https://example.com/leave",
        "if": {"$id": "first", "$defs": {"t": {"$dynamicAnchor": "t", "type": "number"}}},
        "then": {"$id": "second", "$ref": "start", "$defs": {"t": {"$dynamicAnchor": "t", "type": "null"}}},
        "$defs": {"start": {"$id": "start", "$dynamicRef": "inner#t"},
                  "inner": {"$id": "inner", "$dynamicAnchor": "t", "type": "string"}},
    }  # fmt: skip
    parser = JsonSchemaParser(schema)
    assert parser.accepts("null")
    assert not parser.accepts("42") and not parser.accepts('"a"')
