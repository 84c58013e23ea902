"""Right-recursive chains keep one Earley set (Leo's shortcut, earley.py ``chain_base``): a run of unary minus
signs, as Llama 3's tokens of up to 96 dashes read in an arithmetic grammar, reaches a state that reads the
next dash into itself, and the language is unchanged (the lark differential tests run ``right_chains`` of
tests/grammar_cases.py; here the texts around the chain)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from grammar_cases import ARITH_LARK, C_LARK  # noqa: E402

from formatenforcer import GrammarParser  # noqa: E402

lark = pytest.importorskip("lark")


CHAINS = [(ARITH_LARK, "x -", "y"), (C_LARK, "int f() { x = 1 -", "y; }")]


@pytest.mark.parametrize(("grammar", "prefix", "tail"), CHAINS)
def test_a_run_of_minus_signs_reaches_a_fixed_state(grammar, prefix, tail):
    parser = GrammarParser(grammar, "lark")
    state = parser
    for ch in prefix:
        state = state.add_character(ch)
    seen = []
    for _ in range(40):
        state = state.add_character("-")
        assert state is not None
        seen.append(state)
    assert seen[-1] is seen[-2] is seen[3]  # after a few dashes each one leads back to the same state
    oracle = lark.Lark(grammar, parser="earley", lexer="dynamic_complete")
    for dashes in (1, 2, 3, 40):
        for text in (prefix + "-" * dashes + tail, prefix + "-" * dashes, prefix + "-" * dashes + tail + ")"):
            try:
                oracle.parse(text)
                expected = True
            except lark.exceptions.LarkError:
                expected = False
            assert parser.accepts(text) == expected, text
