"""``add_text`` is the fold of ``add_character``: the JSON states that read several characters at once (a string
value's or a key's plain body text, stepped through the content alone) give the state the character steps
give, key for key, refusals included. Accepting a token reads its text this way (``walk.advance``)."""

from __future__ import annotations

import json
import random

import pytest

from formatenforcer import JsonConfig, JsonParser, JsonSchemaParser
from formatenforcer.core.protocol import CharacterParser

SCHEMAS = [
    {"type": "object", "properties": {"name": {"type": "string", "maxLength": 12},
                                      "code": {"type": "string", "pattern": "^[A-Z]{2}-[0-9]{3}$"},
                                      "mail": {"type": "string", "format": "email"},
                                      "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
                                      "kind": {"enum": ["alpha", "beta", "gamma delta"]}},
     "required": ["name"], "additionalProperties": False},
    {"type": "object", "additionalProperties": {"type": "string", "minLength": 2}},
    {"type": "array", "items": {"type": "object", "properties": {"k [x]": {"type": "string"}}}},
    {"$defs": {"n": {"type": "object", "properties": {"v": {"type": "string"}, "c": {"$ref": "#/$defs/n"}}}},
     "$ref": "#/$defs/n"},
]  # fmt: skip

TEXTS = [
    '{"name": "Zoë \u00e9 日本", "code": "AB-123", "mail": "a.b@example.com", "tags": ["x y", "z"], '
    '"kind": "gamma delta"}',
    '{"name":"toolongtoolongtoolong"}',
    '{"alpha": "ok", "beta key": "two words", "c": "x"}',
    '[{"k [x]": "a{b}[c]", "other": "q"}, {}]',
    '{"v": "outer", "c": {"v": "inner", "c": {"v": "deepest text here"}}}',
    '{"bad\\u00e9": "esc\\"aped\\n", "ctl": "a\\tb"}',
]


def _fold(state: CharacterParser, text: str) -> CharacterParser | None:
    for ch in text:
        state = state.add_character(ch)  # type: ignore[assignment]
        if state is None:
            return None
    return state


def _same(a: CharacterParser | None, b: CharacterParser | None) -> bool:
    if a is None or b is None:
        return a is b
    return a.key() == b.key() and a.can_end() == b.can_end() and a.allowed_characters() == b.allowed_characters()


@pytest.mark.parametrize("parser", [JsonSchemaParser(s) for s in SCHEMAS] + [JsonParser(),
                                    JsonParser(JsonConfig(max_depth=3))], ids=lambda p: type(p).__name__)  # fmt: skip
def test_add_text_is_the_fold_of_add_character(parser) -> None:
    rng = random.Random(11)
    checked = 0
    for text in TEXTS + [json.dumps(json.loads(t), indent=2, ensure_ascii=False) for t in TEXTS]:
        state: CharacterParser | None = parser
        for i, ch in enumerate(text):
            if state is None:
                break
            for n in (1, 2, 3, 5, 8, 13):
                chunk = text[i : i + n]
                assert _same(state.add_text(chunk), _fold(state, chunk)), (text[:i], chunk)
                mutated = chunk[: rng.randrange(len(chunk) + 1)] + rng.choice('"\\\x01ab]}, é') + chunk
                assert _same(state.add_text(mutated), _fold(state, mutated)), (text[:i], mutated)
                checked += 2
            state = state.add_character(ch)
    assert checked > 1000
