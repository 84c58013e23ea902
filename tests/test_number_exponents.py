"""Bounded numbers take exponent notation (issue 18): ``{"type": "number", "minimum": 0}`` accepts ``1e-06``,
which is how ``json.dumps`` writes 0.000001. Checked exactly: every text the parser completes lies inside the
bounds (read with ``Decimal``), every allowed prefix still has a completion, numbers written by Python inside
the bounds are accepted, and on Llama 3 a token is in the mask exactly when ``accept_token`` takes it."""

from __future__ import annotations

import json
import random
from decimal import Decimal

import pytest

from formatenforcer import JsonSchemaParser, TokenEnforcer

_PROBES = "0123456789+-.eE"

BOUNDS = [
    {"minimum": 0},
    {"minimum": 0, "maximum": 1},
    {"exclusiveMinimum": 0, "exclusiveMaximum": 1},
    {"minimum": -2.5, "maximum": 1000},
    {"minimum": 1e-7, "maximum": 3e-7},
    {"minimum": 5000},
    {"maximum": -0.001},
    {"exclusiveMinimum": 10, "maximum": 12.5},
    {"minimum": 1e20, "maximum": 1e21},
    {"minimum": 0.25, "maximum": 0.25},
]


def _inside(value: Decimal, bounds: dict) -> bool:
    checks = {
        "minimum": lambda b: value >= b,
        "maximum": lambda b: value <= b,
        "exclusiveMinimum": lambda b: value > b,
        "exclusiveMaximum": lambda b: value < b,
    }
    return all(checks[k](Decimal(repr(v))) for k, v in bounds.items())


def _complete(parser, depth: int) -> str | None:
    """A completion of at most ``depth`` characters the parser itself accepts, or None."""
    if parser.can_end():
        return ""
    if depth == 0:
        return None
    allowed = parser.allowed_characters()
    for c in "0123456789-.e+":
        if c in allowed:
            rest = _complete(parser.add_character(c), depth - 1)
            if rest is not None:
                return c + rest
    return None


_SUFFIXES = ["", *"0123456789"] + [f"{m}e{x}" for m in ("", "0", "1", "2", "9", ".5") for x in range(-40, 41)]


def _shortest_completion(parser) -> str | None:
    """A suffix the parser accepts: a few likely ones first, then every suffix of up to 8 characters."""
    for suffix in _SUFFIXES:
        if parser.accepts(suffix):
            return suffix
    for depth in range(9):  # every bound set above has a completion this short from any feasible prefix
        tail = _complete(parser, depth)
        if tail is not None:
            return tail
    return None


@pytest.mark.parametrize("bounds", BOUNDS, ids=lambda b: json.dumps(b))
def test_random_walks_are_sound_and_never_stuck(bounds: dict) -> None:
    schema = {"type": "number", **bounds}
    root = JsonSchemaParser(schema)
    rng = random.Random(7)
    seen_exponent = False
    for _ in range(80):
        state, text = root, ""
        for _ in range(rng.randint(1, 12)):
            allowed = state.allowed_characters()
            accepted = [c for c in _PROBES if state.add_character(c) is not None]
            assert [c for c in _PROBES if c in allowed] == accepted, text
            tail = _shortest_completion(state)
            assert tail is not None, f"dead end after {text!r}"
            assert _inside(Decimal(text + tail), bounds), text + tail
            if state.can_end():
                assert _inside(Decimal(text), bounds), text
            if not accepted:
                break
            c = rng.choice(accepted)
            state, text = state.add_character(c), text + c
            seen_exponent |= c in "eE"
    assert seen_exponent


def _python_spellings(value: float) -> list[str]:
    return [json.dumps(value), f"{value:e}", f"{value:.3E}", f"{value:.12g}", repr(value)]


@pytest.mark.parametrize("bounds", BOUNDS, ids=lambda b: json.dumps(b))
def test_numbers_python_writes_are_accepted_exactly_inside(bounds: dict) -> None:
    parser = JsonSchemaParser({"type": "number", **bounds})
    rng = random.Random(3)
    low = bounds.get("minimum", bounds.get("exclusiveMinimum", -1e6))
    high = bounds.get("maximum", bounds.get("exclusiveMaximum", 1e6))
    values = [low, high, (low + high) / 2, 1e-06, 0.000001, 1e22, -1e-9, 0.0]
    values += [rng.uniform(low, high) for _ in range(30)]
    values += [low * (1 + rng.uniform(-1e-3, 1e-3)) for _ in range(10)]
    checked = 0
    for value in values:
        for text in _python_spellings(value):
            if "inf" in text or "nan" in text:
                continue
            assert parser.accepts(text) == _inside(Decimal(text), bounds), text
            checked += 1
    assert checked > 100


def test_issue_examples() -> None:
    non_negative = JsonSchemaParser({"type": "number", "minimum": 0})
    assert non_negative.accepts(json.dumps(0.000001)) and json.dumps(0.000001) == "1e-06"
    assert non_negative.accepts("2.5E+10") and non_negative.accepts("0e-5")
    assert not non_negative.accepts("-1e-06")
    unit = JsonSchemaParser({"type": "number", "minimum": 0, "maximum": 1})
    assert unit.accepts("1e-06") and unit.accepts("10e-1") and unit.accepts("0.1E1")
    assert not unit.accepts("11e-1") and not unit.accepts("1e1") and not unit.accepts("1e999999999999")
    # multipleOf keeps plain notation; integers never take an exponent
    assert not JsonSchemaParser({"type": "number", "minimum": 0, "multipleOf": 0.5}).accepts("1e1")
    assert not JsonSchemaParser({"type": "integer", "minimum": 0}).accepts("1e1")


@pytest.mark.parametrize(
    ("bounds", "prefixes"),
    [
        ({"minimum": 0, "maximum": 1000}, ["", "1", "12", "12.", "12.5", "1e", "12e-", "4.2e", "999", "0.0"]),
        ({"minimum": 0}, ["", "7", "7.", "7.5e", "7e+", "0"]),
        ({"minimum": 1e-7, "maximum": 3e-7}, ["", "2", "0.000000", "2e", "2e-"]),
    ],
)
def test_mask_is_step_on_llama3(llama3_vocabulary, bounds: dict, prefixes: list[str]) -> None:
    vocabulary = llama3_vocabulary
    numeric = [
        t for t in range(vocabulary.size)
        if (text := vocabulary.text_of(t)) and all(chr(b) in _PROBES for b in text)
    ]  # fmt: skip
    parser = JsonSchemaParser({"type": "number", **bounds})
    enforcer = TokenEnforcer(vocabulary, parser)
    for prefix in prefixes:
        matcher = enforcer.matcher()
        ids = [t for t in numeric if vocabulary.text_of(t) in {c.encode() for c in prefix}]
        for c in prefix:  # one token per character keeps the prefix exact
            token = next(t for t in ids if vocabulary.text_of(t) == c.encode())
            assert matcher.accept_token(token), prefix
        allowed = set(matcher.allowed_token_ids())
        for t in numeric:
            assert (t in allowed) == (matcher.validate_tokens([t]) == 1), (prefix, vocabulary.text_of(t))
        if prefix[-1:].isdigit() and "e" not in prefix and prefix.strip("0."):  # a mantissa not 0: exponents
            assert any(b"e" in vocabulary.text_of(t).lower() for t in allowed), prefix
