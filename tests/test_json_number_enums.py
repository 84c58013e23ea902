"""Number enums and unions of number literals past 64 values are one number node holding the set (not one
branch each), so they build past the 256-branch limit and are enforced exactly: a text is accepted when its
value is in the set (after ``type``, bounds, ``multipleOf``, ``allOf`` and ``not``), written in plain decimal
notation (``100``, ``100.0``, never ``1e2``), judged against ``jsonschema`` character by character and on the
Llama 3 vocabulary."""

from __future__ import annotations

import json
import random
from fractions import Fraction

import jsonschema
import pytest

from formatenforcer import JsonSchemaParser, TokenEnforcer

from .checking import random_walk
from .json_checks import accepts_tokens, char_walk, mask_and_step_at

INTEGERS = sorted({(i * i * 37) % 100_003 - 50_000 for i in range(2000)})  # ~2,000 scattered, negatives too
DECIMALS = sorted({round(-50 + i * 0.37, 2) for i in range(400)} | {round(k * 0.001, 3) for k in range(1, 40)})
OBJECT = {
    "type": "object",
    "properties": {"code": {"enum": INTEGERS}, "price": {"anyOf": [{"const": v} for v in DECIMALS]}},
    "required": ["code", "price"],
    "additionalProperties": False,
}
SCHEMAS = {
    "integers": {"enum": INTEGERS},
    "decimals": {"anyOf": [{"const": v} for v in DECIMALS]},
    "mixed": {"enum": [*INTEGERS[:300], *DECIMALS[:300], "a", "10", "1.5", None, True, {"k": 1}, [1]]},
    "integer type": {"type": "integer", "enum": [k / 4 for k in range(1200)]},
    "allOf": {"allOf": [{"enum": INTEGERS}, {"minimum": -10_000, "exclusiveMaximum": 20_000, "multipleOf": 3}]},
    "not": {"type": "integer", "minimum": -20, "maximum": 400, "not": {"enum": list(range(0, 1000, 3))}},
    "oneOf": {"oneOf": [*({"const": v} for v in range(0, 600, 2)), {"type": "string"}]},
    "object": OBJECT,
    "unique": {"type": "array", "items": {"enum": list(range(300))}, "uniqueItems": True, "maxItems": 4},
}


def _numbers_near(values: list) -> list:
    """Values of the set and numbers just beside them (not in it, mostly)."""
    out: list = [0, -1, 1, 0.5, 10**6]
    for v in values[:: max(1, len(values) // 60)] + values[-2:]:
        out += [v, -v, v + 1, v - 1, v * 10, round(v + 0.5, 3), round(v + 0.01, 3), round(v / 10, 4)]
    return out


def _plain_texts(value: object) -> list[str]:
    """JSON texts of ``value`` in plain notation, with other spellings of the same number."""
    text = json.dumps(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or "e" in text:
        return [text]
    more = [text + ".0", text + ".00"] if isinstance(value, int) else [text + "0"]
    return [text, *more, *(["-0", "-0.0"] if value == 0 else [])]


def _candidates(name: str) -> list[str]:
    if name == "object":
        codes = [t for v in _numbers_near(INTEGERS) for t in _plain_texts(v)]
        prices = [t for v in _numbers_near(DECIMALS) for t in _plain_texts(v)]
        return [f'{{"code": {c}, "price": {p}}}' for c, p in zip(codes, prices * 3)]
    if name == "unique":
        arrays = ["[]", "[0]", "[1, 2, 3]", "[1, 1]", "[299, 300]", "[0.0, 0]", "[5, 4, 3, 2]", "[5, 4, 3, 2, 1]"]
        return [*arrays, "[-1]", "[1.0, 2]", "[2.5]", "[7, 7.0]"]
    strings = ['"a"', '"10"', '"1.5"', '"b"', "null", "true", "false", '{"k": 1}', "[1]", "[]", "{}"]
    texts = [t for v in _numbers_near(INTEGERS) + _numbers_near(DECIMALS) for t in _plain_texts(v)] + strings
    if name == "not":  # (``type: integer`` is written without a fraction: "3.0" is refused, docs/json-schema.md)
        texts = [t for t in texts if "." not in t]
    if "anyOf" in SCHEMAS[name] or "oneOf" in SCHEMAS[name]:
        texts = texts[::4] + strings  # (jsonschema tries every branch: 10 ms a text)
    return texts


def _judged_key(text: str) -> tuple[type, object]:
    """One key per distinct value (``5.0`` and ``5.00`` are one float; ``5`` and ``5.0`` stay apart)."""
    value = json.loads(text)
    return (type(value), value if isinstance(value, (int, float)) else text)


SHORT = {"not", "unique"}
"""Schemas with few candidates, judged whole in the fast suite; the others' distinct values alternate between
two halves, the fast suite judging one and the full suite both (jsonschema's ``enum`` compares a value with
each of ~2,000, several ms a value: most of this test's time)."""


@pytest.mark.parametrize("name, half", [
    *((name, None) for name in sorted(SHORT)),
    *((name, 0) for name in sorted(SCHEMAS.keys() - SHORT)),
    *(pytest.param(name, 1, marks=pytest.mark.slow) for name in sorted(SCHEMAS.keys() - SHORT)),
])  # fmt: skip
def test_accepts_what_the_validator_accepts(name: str, half: int | None) -> None:
    """Every plain-notation text (of one half of the distinct values, or all of them) is judged as
    ``jsonschema`` judges it."""
    schema = SCHEMAS[name]
    parser = JsonSchemaParser(schema)
    validator = jsonschema.Draft202012Validator(schema)
    order: dict[tuple[type, object], int] = {}
    for text in _candidates(name):
        order.setdefault(_judged_key(text), len(order))
    texts = [text for text in _candidates(name) if half is None or order[_judged_key(text)] % 2 == half]
    judged: dict[tuple[type, object], bool] = {}  # (jsonschema once per distinct value)
    verdicts = []
    for text in texts:
        key = _judged_key(text)
        if key not in judged:
            judged[key] = validator.is_valid(json.loads(text))
        verdicts.append(judged[key])
    assert sum(verdicts) >= 5  # (the candidates do hit the set)
    for text, valid in zip(texts, verdicts, strict=True):
        assert parser.accepts(text) == valid, text


def test_exponent_spellings_are_refused_and_the_values_stay_reachable() -> None:
    """A set is written in plain notation: ``1e2`` is refused where ``100`` is accepted."""
    parser = JsonSchemaParser({"enum": [*range(100, 400), 0.001]})
    assert parser.accepts("100") and parser.accepts("100.000") and parser.accepts("0.001")
    assert not any(parser.accepts(t) for t in ("1e2", "1E2", "100e0", "1e-3", "1.0e2"))


def test_exact_values_one_and_one_point_zero_are_one() -> None:
    """1 and 1.0 are one value; 0.1 is exactly one tenth, not the float next to it."""
    schema = {"enum": [1.0, 0.1, *range(10, 300)]}
    parser = JsonSchemaParser(schema)
    assert parser.accepts("1") and parser.accepts("1.0") and parser.accepts("0.1") and parser.accepts("0.10")
    assert not parser.accepts("0.1000000000000000055511151231257827")
    assert Fraction("0.1000000000000000055511151231257827") != Fraction(1, 10)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_character_walks_never_dead_end_and_finish_valid(name: str) -> None:
    schema = SCHEMAS[name]
    parser = JsonSchemaParser(schema)
    validator = jsonschema.Draft202012Validator(schema)
    rng = random.Random(name)
    finished = 0
    for _ in range(60):
        text, done = char_walk(parser, rng, max_chars=200)
        if done:
            finished += 1
            assert validator.is_valid(json.loads(text)), text
    assert finished >= 30


def test_natural_tokens_write_every_value(llama3_tokenizer, llama3_vocabulary) -> None:
    enforcer = TokenEnforcer(llama3_vocabulary, JsonSchemaParser(OBJECT))
    for code, price in zip(INTEGERS[::41] + INTEGERS[-2:], DECIMALS[::9] * 3):
        ok, reason = accepts_tokens(enforcer, llama3_tokenizer, json.dumps({"code": code, "price": price}))
        assert ok, (code, price, reason)


@pytest.mark.parametrize("text", ['{"code": -1565, "price": -42.6}', "[299, 7, 0]"])
def test_the_mask_is_the_step_at_every_token(llama3_tokenizer, llama3_vocabulary, text: str) -> None:
    schema = OBJECT if text.startswith("{") else SCHEMAS["unique"]
    assert jsonschema.Draft202012Validator(schema).is_valid(json.loads(text))
    enforcer = TokenEnforcer(llama3_vocabulary, JsonSchemaParser(schema))
    position = enforcer.start
    for token in [*llama3_tokenizer.encode(text, add_special_tokens=False), None]:
        mask, step = mask_and_step_at(enforcer, position)
        assert mask == step and mask, (text, token)
        if token is None:
            break
        position = enforcer.step(position, token)
        assert position is not None, (text, token)


@pytest.mark.parametrize("name", ["mixed", "object", "allOf"])
def test_random_token_walks_end_in_valid_documents(llama3_vocabulary, name: str) -> None:
    schema = SCHEMAS[name]
    validator = jsonschema.Draft202012Validator(schema)
    enforcer = TokenEnforcer(llama3_vocabulary, JsonSchemaParser(schema))
    finished = 0
    for seed in range(30):
        text, done = random_walk(enforcer, seed, max_tokens=60)
        if done:
            finished += 1
            assert validator.is_valid(json.loads(text)), text
    assert finished >= 10
