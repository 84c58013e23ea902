"""``%json {...}`` in a Lark grammar: a rule enforced by JsonSchemaParser with all its keywords, inside free
grammar text — a Hermes-style tool call written as a grammar."""

from __future__ import annotations

import json
import logging

import jsonschema
import numpy as np
import pytest

from formatenforcer import GrammarError, GrammarParser, TokenEnforcer
from formatenforcer.core.walk import advance

from .checking import accepts_text, random_walk

WEATHER = {
    "type": "object",
    "properties": {
        "name": {"const": "get_weather"},
        "arguments": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "maxLength": 20},
                "days": {"type": "integer", "minimum": 1, "maximum": 7},
                "unit": {"enum": ["C", "F"]},
            },
            "required": ["city"],
            "additionalProperties": False,
        },
    },
    "required": ["name", "arguments"],
    "additionalProperties": False,
}
TOOL_CALLS = rf"""
start: THINK? call+
call: "<tool_call>" NL %json {json.dumps(WEATHER)} NL "</tool_call>" NL?
THINK: /<think>[a-z .]*<\/think>\n/
NL: "\n"
"""
ACCEPTED = [
    '<tool_call>\n{{"name": "get_weather", "arguments": {{"city": "Paris"}}}}\n</tool_call>',
    '<think>it is cold.</think>\n<tool_call>\n{{"name":"get_weather",'
    '"arguments":{{"city":"Oslo","days":3,"unit":"C"}}}}\n</tool_call>\n'
    '<tool_call>\n{{"name": "get_weather", "arguments": {{"city": "Rome", "unit": "F"}}}}\n</tool_call>\n',
]
REFUSED = [
    '<tool_call>\n{{"name": "get_weather", "arguments": {{"city": "Paris", "days": 9}}}}\n</tool_call>',
    '<tool_call>\n{{"name": "get_weather", "arguments": {{}}}}\n</tool_call>',
    '<tool_call>\n{{"name": "get_time", "arguments": {{"city": "Paris"}}}}\n</tool_call>',
    '<tool_call>\n{{"name": "get_weather", "arguments": {{"city": "Paris"}}}}</tool_call>',
    "",
]


def _texts(items: list[str]) -> list[str]:
    return [item.replace("{{", "{").replace("}}", "}") for item in items]


def _valid_tool_calls(text: str) -> bool:
    """Checks a text independently of the grammar: each call's JSON validates against the schema."""
    body = text.split("</think>\n", 1)[1] if text.startswith("<think>") else text
    calls = [c for c in body.split("<tool_call>\n")[1:]]
    if not calls or not body.startswith("<tool_call>\n"):
        return False
    for call in calls:
        document, _, rest = call.partition("\n</tool_call>")
        if rest not in ("", "\n"):
            return False
        try:
            jsonschema.validate(json.loads(document), WEATHER)
        except (ValueError, jsonschema.ValidationError):
            return False
    return True


def test_accepts_exactly_the_valid_tool_calls():
    parser = GrammarParser(TOOL_CALLS)
    for text in _texts(ACCEPTED):
        assert parser.accepts(text) and _valid_tool_calls(text), text
    for text in _texts(REFUSED):
        assert not parser.accepts(text), text


def test_natural_tokenizations_and_exact_masks(llama3_vocabulary, llama3_tokenizer):
    parser = GrammarParser(TOOL_CALLS)
    for text in _texts(ACCEPTED):
        ok, reason = accepts_text(llama3_vocabulary, llama3_tokenizer, parser, text)
        assert ok, reason
    enforcer = TokenEnforcer(llama3_vocabulary, parser)
    matcher = enforcer.matcher()
    tokens = llama3_tokenizer.encode(_texts(ACCEPTED)[1], add_special_tokens=False)
    for index, token in enumerate(tokens):
        if index % 5 == 0:
            position = matcher.position
            brute = {
                t
                for t in range(len(llama3_vocabulary.token_bytes))
                if llama3_vocabulary.text_of(t)
                and advance(position.state, position.pending, llama3_vocabulary.text_of(t)) is not None
            }
            allowed = set(matcher.allowed_token_ids()) - set(llama3_vocabulary.eos_token_ids)
            assert allowed == brute, (index, llama3_tokenizer.decode(tokens[:index]))
        assert matcher.accept_token(token)


def test_random_walks_write_valid_tool_calls(llama3_vocabulary, caplog):
    enforcer = TokenEnforcer(llama3_vocabulary, GrammarParser(TOOL_CALLS))
    finished = 0
    with caplog.at_level(logging.WARNING, logger="formatenforcer"):
        for seed in range(5):
            text, done = random_walk(enforcer, seed, max_tokens=120, end_bias=0.6)
            if done:
                finished += 1
                assert _valid_tool_calls(text), text
            else:
                assert GrammarParser(TOOL_CALLS).add_text(text) is not None, text
    assert finished
    assert not [r for r in caplog.records if "no token can continue" in r.getMessage()]


def test_rng_choice_of_allowed_tokens_never_dead_ends(llama3_vocabulary):
    enforcer = TokenEnforcer(llama3_vocabulary, GrammarParser(TOOL_CALLS))
    matcher = enforcer.matcher()
    rng = np.random.default_rng(11)
    for _ in range(40):
        allowed = [t for t in matcher.allowed_token_ids() if t not in llama3_vocabulary.eos_token_ids]
        if not allowed:
            assert matcher.can_end()
            break
        assert matcher.accept_token(int(rng.choice(allowed)))
        state = matcher.position.state
        assert state.can_end() or state.allowed_characters()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('start: %json {"type": "strin"}', r"rule 'start' \(line 1\): %json schema: 'type' must be"),
        ('start: "a"\n  | %json {"type": ', r"line 2\): the %json schema's '\{' is never closed"),
        ('start: "a" | %json [1]', r"%json must be followed by a JSON Schema object"),
        ('start: "a" | %json {"a": }', r"the %json schema is not JSON"),
    ],
)
def test_bad_schemas_are_refused(text, message):
    with pytest.raises(GrammarError, match=message):
        GrammarParser(text)
