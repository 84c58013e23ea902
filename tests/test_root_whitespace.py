"""Whitespace before and after the root value in flexible mode (issue 18): RFC 8259 allows `` { "a": 1 } ``
and so does the parser, the run before capped by ``max_whitespace`` like every run between tokens and the run
after by ``max_trailing_whitespace`` (default 1); compact mode and ``whitespace_pattern`` keep the value
alone. On Llama 3 the fast masks around the root equal the plain walk, a generated document with whitespace
around it parses, and past the trailing cap only end of sequence is offered."""

from __future__ import annotations

import json

import pytest

from formatenforcer import JsonConfig, JsonParser, JsonSchemaParser, TokenEnforcer
from formatenforcer.core.walk import allowed_mask

from .test_free_run_masks import WalkOnly

SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}


def test_issue_example_and_the_cap() -> None:
    parser = JsonSchemaParser(SCHEMA)
    for text in [' { "a": 1 } ', '\n\t{"a":1}\n', '{"a": 1}', " " * 20 + '{"a":1}\n']:
        assert parser.accepts(text), repr(text)
    for text in [" " * 21 + '{"a":1}', '{"a":1}\r\n', '{"a":1}' + "\n" * 20, " ", '{"a":1} x', ' {"a":1} {}']:
        assert not parser.accepts(text), repr(text)
    small = JsonSchemaParser(SCHEMA, config=JsonConfig(max_whitespace=2, max_trailing_whitespace=5))
    assert small.accepts('  {"a":1}  ') and not small.accepts('   {"a":1}') and not small.accepts('{"a":1}   ')
    wide = JsonSchemaParser(SCHEMA, config=JsonConfig(max_trailing_whitespace=3))
    assert wide.accepts('{"a":1}\r\n\n') and not wide.accepts('{"a":1}' + "\n" * 4)
    none = JsonSchemaParser(SCHEMA, config=JsonConfig(max_trailing_whitespace=0))
    assert none.accepts(' {"a":1}') and not none.accepts('{"a":1}\n')
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
    text = "  " + json.dumps(value) + "\n"
    prefixes = ["", " ", "  ", text[: len(text) - 2], text[:-1], text]  # (the last: no more whitespace)
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


@pytest.mark.parametrize("trail", [0, 1, 2])
def test_a_greedy_model_is_offered_end_of_sequence_after_the_trailing_cap(
    llama3_tokenizer, llama3_vocabulary, trail
) -> None:
    """After the value, every token in the mask is whitespace within the cap or end of sequence; once the
    cap is used up, only end of sequence (a model that prefers newlines cannot write twenty of them)."""
    enforcer = TokenEnforcer(
        llama3_vocabulary, JsonSchemaParser(SCHEMA, config=JsonConfig(max_trailing_whitespace=trail))
    )
    matcher = enforcer.matcher()
    assert matcher.accept_tokens(llama3_tokenizer.encode('{"a": 7}', add_special_tokens=False))
    eos = set(llama3_vocabulary.eos_token_ids)
    for used in range(trail + 1):
        allowed = set(matcher.allowed_token_ids())
        texts = [llama3_tokenizer.decode([t]) for t in allowed - eos]
        assert eos <= allowed and all(t.strip() == "" and 0 < len(t) <= trail - used for t in texts), texts
        if used < trail:
            newline = llama3_tokenizer.encode("\n", add_special_tokens=False)[0]
            assert newline in allowed and matcher.accept_token(newline)
    assert set(matcher.allowed_token_ids()) == eos
