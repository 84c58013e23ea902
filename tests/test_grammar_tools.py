"""ToolCallParser: Hermes/Qwen and Llama 3 tool calls, with and without reasoning, arguments valid under each
tool's schema; checked by an independent reader (split on the tags, json.loads, jsonschema)."""

from __future__ import annotations

import json
import logging
import random
import re

import jsonschema
import pytest

from formatenforcer import GrammarError, TokenEnforcer, ToolCallParser
from formatenforcer.grammar.tools import avoiding

from .checking import accepts_text, random_walk

TOOLS = [
    {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "maxLength": 12}, "days": {"type": "integer", "minimum": 1}},
            "required": ["city"],
            "additionalProperties": False,
        },
    },
    {
        "type": "function",
        "function": {
            "name": "get_time",
            "parameters": {
                "type": "object",
                "properties": {"tz": {"enum": ["UTC", "CET"]}},
                "required": ["tz"],
                "additionalProperties": False,
            },
        },
    },
]
SCHEMAS = {"get_weather": TOOLS[0]["parameters"], "get_time": TOOLS[1]["function"]["parameters"]}


def _valid_call(document: str, key: str) -> bool:
    try:
        call = json.loads(document)
    except ValueError:
        return False
    if not isinstance(call, dict) or set(call) != {"name", key} or call["name"] not in SCHEMAS:
        return False
    try:
        jsonschema.validate(call[key], SCHEMAS[call["name"]])
    except jsonschema.ValidationError:
        return False
    return True


def read_calls(text: str, style: str, reasoning: bool) -> bool:
    """An independent reader: whether ``text`` is a well-formed output of ``style``."""
    if reasoning and text.startswith("<think>"):
        thought, found, text = text[len("<think>") :].partition("</think>")
        if not found:
            return False
        text = text.lstrip("\n")
    if style == "llama3":
        return _valid_call(text, "parameters")
    pieces = text.split("<tool_call>\n")
    if len(pieces) < 2 or "<tool_call>" in pieces[0] or "<think>" in pieces[0]:
        return False  # free text before the calls never holds the tag (nor, here, a second reasoning block)
    for piece in pieces[1:]:
        document, found, rest = piece.partition("\n</tool_call>")
        if not found or rest not in ("", "\n") or not _valid_call(document, "arguments"):
            return False
    return True


HERMES = [
    'Let me look.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 2}}\n</tool_call>',
    '<tool_call>\n{"name": "get_time", "arguments": {"tz": "CET"}}\n</tool_call>\n'
    '<tool_call>\n{"name":"get_weather","arguments":{"city":"Oslo"}}\n</tool_call>\n',
]
HERMES_REFUSED = [
    "Just text.",
    '<tool_call>\n{"name": "get_time", "arguments": {"tz": "PST"}}\n</tool_call>',
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "tz": "UTC"}}\n</tool_call>',
    '<tool_call>\n{"name": "get_weather", "parameters": {"city": "Paris"}}\n</tool_call>',
    'a <tool_call> b\n<tool_call>\n{"name": "get_time", "arguments": {"tz": "CET"}}\n</tool_call>',
]
LLAMA3 = ['{"name": "get_weather", "parameters": {"city": "Rome"}}', '{"name":"get_time","parameters":{"tz":"UTC"}}']
LLAMA3_REFUSED = ['{"name": "get_weather", "arguments": {"city": "Rome"}}', '{"name": "get_time", "parameters": {}}']


@pytest.mark.parametrize("reasoning", [False, True])
def test_hermes_and_llama3_tables(reasoning):
    think = "<think>The user wants < 3 days </thin k>.</think>\n" if reasoning else ""
    for style, good, bad in [("hermes", HERMES, HERMES_REFUSED), ("llama3", LLAMA3, LLAMA3_REFUSED)]:
        parser = ToolCallParser(TOOLS, style, reasoning=reasoning)
        for text in good:
            assert parser.accepts(think + text) and read_calls(think + text, style, reasoning), text
            assert parser.accepts(text), text  # the reasoning block is optional
        for text in bad:
            assert not parser.accepts(think + text) and not read_calls(think + text, style, reasoning), text
    assert not ToolCallParser(TOOLS, "llama3").accepts("<think>x</think>\n" + LLAMA3[0])
    assert not ToolCallParser(TOOLS, "llama3", reasoning=True).accepts("<think>a</think>b</think>\n" + LLAMA3[0])


@pytest.mark.parametrize("reasoning", [False, True])
def test_hermes_without_preamble_starts_with_the_call(reasoning):
    parser = ToolCallParser(TOOLS, "hermes", reasoning=reasoning, preamble=False)
    think = "<think>hm</think>\n" if reasoning else ""
    assert not parser.accepts(think + HERMES[0])  # "Let me look." before the call
    assert parser.accepts(think + HERMES[1]) and parser.accepts(HERMES[1])
    assert parser.accepts(think + HERMES[0].removeprefix("Let me look.\n"))
    assert parser.allowed_characters().chars() == ["<"]  # the first character already belongs to a tag
    for text in HERMES_REFUSED:
        assert not parser.accepts(think + text), text


def test_hermes_single_call():
    one, two = HERMES[1].split("</tool_call>\n", 1)
    single = ToolCallParser(TOOLS, "hermes", parallel=False)
    assert single.accepts(one + "</tool_call>\n") and single.accepts("Hi\n" + one + "</tool_call>")
    assert not single.accepts(HERMES[1]) and ToolCallParser(TOOLS, "hermes").accepts(HERMES[1])


def test_avoiding_matches_exactly_the_strings_without_the_word():
    rng = random.Random(5)
    for word in ("</think>", "<tool_call>", "<ab"):
        pattern = re.compile(avoiding(word))
        alphabet = sorted(set(word)) + ["x", "\n"]
        for _ in range(2000):
            text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(16)))
            if rng.random() < 0.2:
                cut = rng.randrange(len(text) + 1)
                text = text[:cut] + word + text[cut:]
            assert (pattern.fullmatch(text) is not None) == (word not in text), (word, text)
    with pytest.raises(ValueError):
        avoiding("abca")


@pytest.mark.parametrize(
    ("tools", "style", "message"),
    [
        ([], "hermes", r"non-empty list"),
        ("get_weather", "hermes", r"non-empty list"),
        ([{"parameters": {}}], "hermes", r"tool #0 has no 'name'"),
        ([{"name": "f", "parameters": []}], "hermes", r"'parameters' must be a JSON Schema"),
        ([{"name": "f"}, {"name": "f"}], "hermes", r"tool names must be unique"),
        ([{"name": "f"}], "xml", r"unknown tool-call style 'xml'"),
        ([{"name": "f", "parameters": {"type": "nope"}}], "hermes", r"%json schema: 'type' must be"),
    ],
)
def test_bad_tools_are_refused(tools, style, message):
    with pytest.raises(GrammarError, match=message):
        ToolCallParser(tools, style)


@pytest.mark.parametrize(("style", "reasoning"), [("hermes", True), ("llama3", False), ("llama3", True)])
def test_tokens_and_random_walks(style, reasoning, llama3_vocabulary, llama3_tokenizer, caplog):
    parser = ToolCallParser(TOOLS, style, reasoning=reasoning)
    think = "<think>Weather first.</think>\n\n" if reasoning else ""
    for text in HERMES if style == "hermes" else LLAMA3:
        ok, reason = accepts_text(llama3_vocabulary, llama3_tokenizer, parser, think + text)
        assert ok, reason
    enforcer = TokenEnforcer(llama3_vocabulary, parser)
    finished = 0
    with caplog.at_level(logging.WARNING, logger="formatenforcer"):
        for seed in range(5):
            text, done = random_walk(enforcer, seed, max_tokens=100, end_bias=0.7)
            if done:
                finished += 1
                assert read_calls(text, style, reasoning), text
            else:
                assert parser.add_text(text) is not None, text
    assert not [r for r in caplog.records if "no token can continue" in r.getMessage()]
    assert finished or style == "hermes"  # (hermes' free text rarely closes within the budget)
