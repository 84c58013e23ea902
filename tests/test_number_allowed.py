"""A number's allowed characters (read off its candidates when unconstrained) are exactly the characters it
accepts, checked on seeded random walks through unconstrained, integer and bounded numbers."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from formatenforcer.jsonschema.numbers import NumberParser
from formatenforcer.jsonschema.schema.ir import Number
from formatenforcer.jsonschema.schema.number_bounds import NumberContext

_PROBES = "0123456789+-.eEx "


@pytest.mark.parametrize(
    "node",
    [Number(), Number(integer=True), Number(low=Fraction(-5), high=Fraction(250)), Number(multiple_of=Fraction(1, 4))],
)
def test_allowed_is_what_is_accepted(node: Number) -> None:
    rng = random.Random(11)
    for _ in range(200):
        state: NumberParser | None = NumberParser(NumberContext(node))
        for _ in range(rng.randint(0, 12)):
            assert state is not None
            allowed = state.allowed_characters()
            accepted = {c for c in _PROBES if state.add_character(c) is not None}
            assert {c for c in _PROBES if c in allowed} == accepted
            if not accepted:
                break
            state = state.add_character(rng.choice(sorted(accepted)))
