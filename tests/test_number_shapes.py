"""Number states that share a walk key accept the same continuations.

The token walk of a bounded number is cached by ``lexeme_key``: two prefixes such as ``455000`` and
``123456`` under ``0 <= x <= 10000000`` (exponents allowed) get one walk. That is only sound when the two
states accept exactly the same continuations, including where the number may end. Checked here by brute
force: every continuation of up to three characters over the number alphabet, for every pair of prefixes
with the same key.
"""

from __future__ import annotations

import random
from collections import defaultdict

import pytest

from formatenforcer import JsonSchemaParser
from formatenforcer.core.hooks import walk_lexeme

_ALPHABET = "0123456789.eE+-"

BOUNDS = [
    {"minimum": 0, "maximum": 10000000},
    {"minimum": -40, "maximum": 85},
    {"minimum": 0, "maximum": 5},
    {"exclusiveMinimum": 0, "exclusiveMaximum": 1000},
    {"minimum": -1, "maximum": 10},
    {"maximum": 0.25},
    {"minimum": 5000},
    {"exclusiveMinimum": 0.003},
    {"minimum": 0, "maximum": 99.99},
    {"minimum": -1e-3, "maximum": 1e21},
]


def _state(parser, text: str):
    for ch in text:
        parser = parser.add_character(ch)
        assert parser is not None, text
    return parser


def _signature(state, depth: int) -> frozenset:
    """Every continuation of at most ``depth`` characters the state accepts, with whether it may end there."""
    found = set()

    def visit(current, text: str) -> None:
        found.add((text, current.can_end()))
        if len(text) == depth:
            return
        for ch in _ALPHABET:
            if ch in current.allowed_characters():
                nxt = current.add_character(ch)
                if nxt is not None:
                    visit(nxt, text + ch)

    visit(state, "")
    return frozenset(found)


def _prefixes(rng: random.Random, count: int) -> list[str]:
    out = set()
    while len(out) < count:
        sign = "-" if rng.random() < 0.3 else ""
        whole = str(rng.choice([rng.randrange(1, 10), rng.randrange(10, 1000), rng.randrange(1, 10**9)]))
        if rng.random() < 0.2:
            whole = "0"
        text = sign + whole
        if rng.random() < 0.5:
            text += "." + "".join(rng.choice("0123456789") for _ in range(rng.randrange(0, 4)))
        out.add(text)
    return sorted(out)


FAST_BOUNDS = 2
"""The first two bounds (a wide range, a range across zero) run in the fast suite, all ten in the full suite: a
bound's brute force steps about a million characters (3 to 5 CPU-seconds)."""


@pytest.mark.parametrize(
    "bounds",
    [pytest.param(b, marks=() if i < FAST_BOUNDS else pytest.mark.slow) for i, b in enumerate(BOUNDS)],
    ids=[str(b) for b in BOUNDS],
)
def test_states_with_one_walk_key_accept_the_same_continuations(bounds: dict) -> None:
    root = JsonSchemaParser({"type": "number", **bounds})
    groups: dict = defaultdict(list)
    for text in _prefixes(random.Random(str(bounds)), 160):
        state = root
        for ch in text:
            state = state.add_character(ch)
            if state is None:
                break
        if state is None:
            continue  # a prefix the bounds refuse
        lexeme = walk_lexeme(state)
        assert lexeme is not None
        groups[lexeme.inner.lexeme_key(64)].append((text, state))
    shared = [group for group in groups.values() if len(group) > 1]
    assert shared, "no two prefixes share a walk: the check would prove nothing"
    for group in shared:
        first_text, first = group[0]
        expected = _signature(first, 3)
        for text, state in group[1:]:
            assert _signature(state, 3) == expected, (bounds, first_text, text)


def test_exponent_numbers_share_walks_across_values() -> None:
    """Under ``0 <= x <= 10^7`` with exponents, the digits of two different amounts share one walk key."""
    root = JsonSchemaParser({"type": "number", "minimum": 0, "maximum": 10000000})
    keys = {walk_lexeme(_state(root, text)).inner.lexeme_key(64) for text in ("455000", "123456", "610000")}
    assert len(keys) == 1
    keys = {walk_lexeme(_state(root, text)).inner.lexeme_key(64) for text in ("455000.7", "610000.2")}
    assert len(keys) == 1
