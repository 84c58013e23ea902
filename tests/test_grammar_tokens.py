"""Grammars at the token level, on the real Llama 3 vocabulary: natural tokenizations are accepted token by
token, masks equal the brute-force answer of the character parser over every token, and random token walks
never dead-end and end in texts the reference parsers (lark, xgrammar) accept."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from formatenforcer import GrammarParser, TokenEnforcer, mask_token_ids
from formatenforcer.core.walk import advance

from .checking import accepts_text, random_walk
from .grammar_cases import EBNF_CASES, GBNF_CASES, LARK_CASES

lark = pytest.importorskip("lark")

CASES = [("lark", name, *case) for name, case in LARK_CASES.items()]
CASES += [("gbnf", name, *case) for name, case in GBNF_CASES.items()]
CASES += [("ebnf", name, *case) for name, case in EBNF_CASES.items()]
IDS = [f"{name}-{syntax}" for syntax, name, *_ in CASES]


def _oracle(syntax: str, text: str):
    """A function telling whether the reference parser accepts a string."""
    if syntax == "lark":
        parser = lark.Lark(text, parser="earley", lexer="dynamic_complete")

        def accepts(sample: str) -> bool:
            try:
                parser.parse(sample)
            except lark.exceptions.LarkError:
                return False
            return True

        return accepts
    xgrammar = pytest.importorskip("xgrammar")
    from xgrammar.testing import _is_grammar_accept_string

    compiled = xgrammar.Grammar.from_ebnf(text)
    return lambda sample: _is_grammar_accept_string(compiled, sample)


@pytest.mark.parametrize(("syntax", "name", "text", "accepted", "refused"), CASES, ids=IDS)
def test_natural_tokenizations_are_accepted(syntax, name, text, accepted, refused, llama3_vocabulary, llama3_tokenizer):
    parser = GrammarParser(text, syntax)
    for sample in accepted:
        ok, reason = accepts_text(llama3_vocabulary, llama3_tokenizer, parser, sample)
        assert ok, f"{name}: {sample!r}: {reason}"
    for sample in refused:
        assert not accepts_text(llama3_vocabulary, llama3_tokenizer, parser, sample)[0], f"{name}: {sample!r}"


def _brute_force(vocabulary, position) -> set[int]:
    """Every token whose bytes the character parser reads from ``position`` (EOS where it may end)."""
    allowed = set()
    for token in range(len(vocabulary.token_bytes)):
        data = vocabulary.text_of(token)
        if data and advance(position.state, position.pending, data) is not None:
            allowed.add(token)
    if not position.pending and position.state.can_end():
        allowed |= set(vocabulary.eos_token_ids)
    return allowed


@pytest.mark.parametrize(
    ("syntax", "name"), [("lark", "sql"), ("lark", "adjacent_names"), ("gbnf", "arith"), ("ebnf", "tool")]
)
def test_masks_equal_the_brute_force_answer(syntax, name, llama3_vocabulary, llama3_tokenizer):
    """The walk's shortcuts (lexeme walks cached per terminal state, union branches) change nothing: at
    each token of a natural tokenization, the mask is exactly the tokens the character parser accepts."""
    text, accepted, _ = {"lark": LARK_CASES, "gbnf": GBNF_CASES, "ebnf": EBNF_CASES}[syntax][name]
    enforcer = TokenEnforcer(llama3_vocabulary, GrammarParser(text, syntax))
    sample = max(accepted, key=len)
    matcher = enforcer.matcher()
    tokens = llama3_tokenizer.encode(sample, add_special_tokens=False)
    for index, token in enumerate(tokens[:30]):
        if index % 3 == 0 or index < 2:
            assert set(matcher.allowed_token_ids()) == _brute_force(llama3_vocabulary, matcher.position), (
                name,
                llama3_tokenizer.decode(tokens[:index]),
            )
        assert matcher.accept_token(token)


@pytest.mark.parametrize(
    ("syntax", "name"),
    [
        ("lark", "arith"),
        ("lark", "sql"),
        ("lark", "nullable"),
        ("lark", "right_recursive"),
        ("gbnf", "array"),
        ("gbnf", "chess"),
    ],
)
def test_masks_along_random_walks_equal_the_brute_force_answer(syntax, name, llama3_vocabulary):
    text = {"lark": LARK_CASES, "gbnf": GBNF_CASES}[syntax][name][0]
    enforcer = TokenEnforcer(llama3_vocabulary, GrammarParser(text, syntax))
    rng = np.random.default_rng(7)
    checked = set()  # cache keys of the positions compared (the walks share their start)
    for walk in range(2):
        matcher = enforcer.matcher()
        for step in range(9):
            allowed = matcher.allowed_token_ids()
            if step % 4 == 0 and matcher.position.cache_key() not in checked:
                checked.add(matcher.position.cache_key())
                assert set(allowed) == _brute_force(llama3_vocabulary, matcher.position), (name, walk, step)
            choices = [t for t in allowed if t not in llama3_vocabulary.eos_token_ids]
            if not choices:
                break
            assert matcher.accept_token(int(rng.choice(choices)))


@pytest.mark.parametrize(("syntax", "name", "text", "accepted", "refused"), CASES, ids=IDS)
def test_random_walks_never_dead_end_and_end_in_the_language(
    syntax, name, text, accepted, refused, llama3_vocabulary, caplog
):
    parser = GrammarParser(text, syntax)
    enforcer = TokenEnforcer(llama3_vocabulary, parser)
    oracle = _oracle(syntax, text)
    finished = 0
    with caplog.at_level(logging.WARNING, logger="formatenforcer"):
        for seed in range(6):
            walked, done = random_walk(enforcer, seed, max_tokens=120, end_bias=0.4)
            if done:
                finished += 1
                assert parser.accepts(walked) and oracle(walked), f"{name}: walk {seed} wrote {walked!r}"
            else:
                assert parser.add_text(walked) is not None, f"{name}: walk {seed} left the language: {walked!r}"
    assert not [r for r in caplog.records if "no token can continue" in r.getMessage()], f"{name}: a dead end"
    # (the tool call's names and strings are free text: a random walk rarely closes them in its budget)
    assert finished or name == "tool", f"{name}: no walk finished"


def test_every_allowed_token_keeps_a_completion(llama3_vocabulary):
    """Along a walk of the SQL grammar, every allowed token (a sample of up to 60 per step) leads to a state
    that can still end or go on: a character it allows, or the end."""
    parser = GrammarParser(LARK_CASES["sql"][0])
    enforcer = TokenEnforcer(llama3_vocabulary, parser)
    matcher = enforcer.matcher()
    rng = np.random.default_rng(3)
    for _ in range(25):
        allowed = np.array(matcher.allowed_token_ids())
        for token in rng.choice(allowed, size=min(60, allowed.size), replace=False):
            position = enforcer.step(matcher.position, int(token))
            assert position is not None
            if not position.finished:
                state = position.state
                assert state.can_end() or state.allowed_characters(), (token, state)
                assert mask_token_ids(enforcer.mask(position)), token
        choices = [t for t in allowed if t not in llama3_vocabulary.eos_token_ids]
        if not choices:
            break
        assert matcher.accept_token(int(rng.choice(choices)))


@pytest.mark.parametrize("tokenizer_name", ["smollm2", "sentencepiece"])
@pytest.mark.parametrize(("syntax", "name"), [("lark", "sql"), ("gbnf", "arith"), ("ebnf", "tool")])
def test_natural_tokenizations_on_other_vocabularies(tokenizer_name, syntax, name, tokenizers, vocabularies):
    """SmolLM2's byte-level BPE and a SentencePiece byte-fallback vocabulary (its first token's space dropped
    on decoding) accept the same texts token by token."""
    text, accepted, refused = {"lark": LARK_CASES, "gbnf": GBNF_CASES, "ebnf": EBNF_CASES}[syntax][name]
    tokenizer, vocabulary = tokenizers[tokenizer_name], vocabularies[tokenizer_name]
    parser = GrammarParser(text, syntax)
    for sample in accepted:
        ok, reason = accepts_text(vocabulary, tokenizer, parser, sample)
        assert ok, f"{name} on {tokenizer_name}: {sample!r}: {reason}"
    for sample in refused[:2]:
        assert not accepts_text(vocabulary, tokenizer, parser, sample)[0], f"{name}: {sample!r}"
