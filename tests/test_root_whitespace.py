"""Whitespace before and after the root value in flexible mode (issue 18): RFC 8259 allows `` { "a": 1 } ``
and so does the parser, each run capped by ``max_whitespace`` like every run between tokens; compact mode and
``whitespace_pattern`` keep the value alone. On Llama 3 the fast masks around the root equal the plain walk,
and a generated document with whitespace around it parses."""

from __future__ import annotations

import json

import pytest

from formatenforcer import JsonConfig, JsonParser, JsonSchemaParser, TokenEnforcer
from formatenforcer.core.walk import allowed_mask

from .test_free_run_masks import WalkOnly

SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}


def test_issue_example_and_the_cap() -> None:
    parser = JsonSchemaParser(SCHEMA)
    for text in [' { "a": 1 } ', '\n\t{"a":1}\r\n', '{"a": 1}', " " * 20 + '{"a":1}' + "\n" * 20]:
        assert parser.accepts(text), repr(text)
    for text in [" " * 21 + '{"a":1}', '{"a":1}' + " " * 21, " ", '{"a":1} x', ' {"a":1} {}']:
        assert not parser.accepts(text), repr(text)
    small = JsonSchemaParser(SCHEMA, config=JsonConfig(max_whitespace=2))
    assert small.accepts('  {"a":1}  ') and not small.accepts('   {"a":1}')
    for value in ["1", '"x y"', "[1, 2]", "null", "-0.5e3"]:  # scalars and arrays at the root too
        assert JsonParser().accepts(f" {value}\n"), value


@pytest.mark.parametrize(
    "config", [JsonConfig(whitespace="compact"), JsonConfig(whitespace_pattern=r"[ ]?"), JsonConfig(max_whitespace=0)]
)
def test_other_layouts_keep_the_value_alone(config: JsonConfig) -> None:
    parser = JsonSchemaParser(SCHEMA, config=config)
    assert parser.accepts('{"a":1}') and not parser.accepts(' {"a":1}') and not parser.accepts('{"a":1} ')


@pytest.mark.parametrize(
    "schema",
    [SCHEMA, {"anyOf": [{"type": "string"}, {"type": "array"}]}, {"type": "number", "minimum": 0}, True],
    ids=["object", "union", "number", "any"],
)
def test_masks_around_the_root_equal_the_plain_walk(llama3_vocabulary, schema) -> None:
    parser = JsonSchemaParser(schema)
    instance = {"object": {"a": 12}, "union": ["x"], "number": 12.5, "any": {"k": [1]}}
    value = instance["any"] if schema is True else instance["union"] if "anyOf" in schema else (
        instance["number"] if schema.get("type") == "number" else instance["object"])  # fmt: skip
    text = "  " + json.dumps(value) + " \n"
    prefixes = ["", " ", "  ", text[: len(text) - 2], text[:-1], text]
    for prefix in prefixes:
        state = parser.add_text(prefix)
        assert state is not None, prefix
        fast = allowed_mask(llama3_vocabulary, state, b"", prefix == "", {})
        plain = allowed_mask(llama3_vocabulary, WalkOnly(state), b"", prefix == "")
        assert (fast == plain).all(), repr(prefix)
    assert parser.accepts(text)


def test_tokens_with_whitespace_around_the_root_are_accepted(llama3_tokenizer, llama3_vocabulary) -> None:
    enforcer = TokenEnforcer(llama3_vocabulary, JsonSchemaParser(SCHEMA))
    text = ' {"a": 7}\n'
    ids = llama3_tokenizer.encode(text, add_special_tokens=False)
    matcher = enforcer.matcher()
    for token in ids:
        assert token in matcher.allowed_token_ids(), llama3_tokenizer.decode([token])
        assert matcher.accept_token(token)
    assert matcher.can_end()
