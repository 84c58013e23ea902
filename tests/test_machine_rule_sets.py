"""Objects of several rule sets (``allOf`` of object schemas) on the compiled JSON machine, exactly as the
Python parsers read them.

The machine reads such an object as one: each name's value meets every rule set's schema for it, and an
extra key's value meets every rule set's ``additionalProperties``. These tests compare allowed characters,
refusals, ends and token masks with the Python parsers on documents that use shared names, extra keys and
keys one rule set closes.
"""

from __future__ import annotations

import json
import random

import pytest

from formatenforcer import JsonSchemaParser
from formatenforcer.core import backend

from .test_machine import _force, _twin, _walk_characters, force_cases_with

pytestmark = pytest.mark.skipif(backend.native is None, reason="the compiled core is not built or is switched off")

RULE_SETS = [
    {
        "allOf": [
            {"type": "object", "properties": {"a": {"type": "integer", "minimum": 0}}, "required": ["a"]},
            {"type": "object", "properties": {"a": {"maximum": 10}, "b": {"type": "string"}}},
        ]
    },
    {
        "allOf": [
            {"type": "object", "properties": {"a": {"type": "boolean"}, "b": {}}, "additionalProperties": False},
            {"type": "object", "properties": {"b": {"type": "null"}}, "required": ["b"]},
        ]
    },
    {
        "allOf": [
            {"type": "object", "additionalProperties": {"type": "string"}},
            {"type": "object", "properties": {"n": {"type": "string"}}, "additionalProperties": {"maxLength": 2}},
        ]
    },
    {
        "allOf": [
            {"type": "object", "properties": {"x": {"enum": ["p", "q"]}}},
            {"type": "object", "properties": {"y": {"type": "array", "items": {"type": "integer"}}}},
            {"type": "object", "properties": {"x": {"const": "q"}}, "required": ["x", "y"]},
        ]
    },
]
DOCUMENTS = [
    {"a": 3, "b": "x"},
    {"a": 10},
    {"b": None, "a": True},
    {"b": None},
    {"n": "long text", "k": "ab", "z": ""},
    {"x": "q", "y": [1, -2], "other": {"deep": [None]}},
]


@pytest.mark.parametrize("schema", RULE_SETS)
def test_random_walks_character_by_character(schema):
    parser = JsonSchemaParser(schema)
    rng = random.Random(3)
    for _ in range(6):
        _walk_characters(parser, _twin(parser), rng, 60)


def test_documents_token_by_token(llama3_vocabulary, llama3_tokenizer):
    checked = 0
    for schema in RULE_SETS:
        parser = JsonSchemaParser(schema)
        for document in DOCUMENTS:
            text = json.dumps(document, separators=(",", ":"))
            if parser.add_text(text) is None or not parser.add_text(text).can_end():
                assert _twin(parser).add_text(text) is None or not _twin(parser).add_text(text).can_end()
                continue
            _force(llama3_vocabulary, llama3_tokenizer, parser, text)
            checked += 1
    assert checked >= 5


def test_the_benchmark_cases_of_several_rule_sets(llama3_vocabulary, llama3_tokenizer):
    assert force_cases_with(llama3_vocabulary, llama3_tokenizer, "allOf") >= 1
