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

from formatenforcer import GrammarParser, TokenEnforcer  # noqa: E402
from formatenforcer.core.walk import advance  # noqa: E402

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


def _brute_force(vocabulary, position) -> set[int]:
    """Every token whose bytes the character parser reads from ``position`` (EOS where it may end)."""
    allowed = {
        token
        for token in range(len(vocabulary.token_bytes))
        if (data := vocabulary.text_of(token)) and advance(position.state, position.pending, data) is not None
    }
    if not position.pending and position.state.can_end():
        allowed |= set(vocabulary.eos_token_ids)
    return allowed


@pytest.mark.parametrize(("grammar", "prefix", "tail"), CHAINS)
def test_the_fixed_state_of_a_minus_chain_is_a_free_run_and_masks_stay_exact(
    grammar, prefix, tail, llama3_vocabulary, llama3_tokenizer
):
    """The state each dash leads back to offers the dashes as a free run (answered from the vocabulary's run
    tables), standing for itself after any number of them; the masks where walks enter that state (below
    the dash tokens after a name, and after a few dashes) are exactly the tokens the parser reads."""
    parser = GrammarParser(grammar, "lark")
    state = parser
    for ch in prefix + "---":
        state = state.add_character(ch)
    run = state.free_run()
    assert run is not None and run.chars.chars() == ["-"] and run.max_length is None
    assert run.after(5) is state and state.add_character("-") is state
    enforcer = TokenEnforcer(llama3_vocabulary, parser)
    for text in (prefix[:-2], prefix + " ---"):
        matcher = enforcer.matcher()
        for token in llama3_tokenizer.encode(text, add_special_tokens=False):
            assert matcher.accept_token(token)
        assert set(matcher.allowed_token_ids()) == _brute_force(llama3_vocabulary, matcher.position), text
