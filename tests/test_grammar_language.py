"""GrammarParser accepts exactly a grammar's language: fixed tables per syntax, and against lark (Lark) and
xgrammar (GBNF/EBNF) on random derivations and on mutations of them."""

from __future__ import annotations

import random

import pytest

from formatenforcer import GrammarParser
from formatenforcer.grammar import detect_syntax, read_grammar

from .grammar_cases import EBNF_CASES, GBNF_CASES, LARK_CASES, derive, mutate

lark = pytest.importorskip("lark")

CASES = [("lark", name, *case) for name, case in LARK_CASES.items()]
CASES += [("gbnf", name, *case) for name, case in GBNF_CASES.items()]
CASES += [("ebnf", name, *case) for name, case in EBNF_CASES.items()]
IDS = [f"{name}-{syntax}" for syntax, name, *_ in CASES]


@pytest.mark.parametrize(("syntax", "name", "text", "accepted", "refused"), CASES, ids=IDS)
def test_accepts_and_refuses_the_tables(syntax, name, text, accepted, refused):
    parser = GrammarParser(text, syntax)
    for sample in accepted:
        assert parser.accepts(sample), f"{name}: should accept {sample!r}"
    for sample in refused:
        assert not parser.accepts(sample), f"{name}: should refuse {sample!r}"


@pytest.mark.parametrize(("syntax", "name", "text", "accepted", "refused"), CASES, ids=IDS)
def test_detected_syntax_reads_the_same_language(syntax, name, text, accepted, refused):
    assert detect_syntax(text) == ("lark" if syntax == "lark" else "gbnf")
    parser = GrammarParser(text)
    assert all(parser.accepts(s) for s in accepted) and not any(parser.accepts(s) for s in refused)


def _lark_accepts(oracle, text: str) -> bool:
    try:
        oracle.parse(text)
    except lark.exceptions.LarkError:
        return False
    return True


@pytest.mark.parametrize("name", sorted(LARK_CASES))
def test_agrees_with_lark_on_derivations_and_mutations(name):
    text, accepted, refused = LARK_CASES[name]
    parser = GrammarParser(text, "lark")
    oracle = lark.Lark(text, parser="earley", lexer="dynamic_complete")
    grammar = read_grammar(text, "lark")
    rng = random.Random(name)
    alphabet = "".join(sorted(set("".join(accepted)) | set(" ()x1a,")))
    depth = 3 if name == "ambiguous" else 7  # lark builds every parse of an ambiguous text: keep them short
    derived = [derive(grammar, rng, depth) for _ in range(40)]
    for sample in derived:
        assert parser.accepts(sample), f"{name}: refuses its own derivation {sample!r}"
        assert _lark_accepts(oracle, sample), f"{name}: lark refuses the derivation {sample!r}"
    samples = [mutate(rng.choice(derived + accepted), rng, alphabet) for _ in range(120)] + refused
    for sample in samples:
        assert parser.accepts(sample) == _lark_accepts(oracle, sample), f"{name}: disagrees with lark on {sample!r}"


@pytest.mark.parametrize(
    ("syntax", "name"), [("gbnf", n) for n in sorted(GBNF_CASES)] + [("ebnf", n) for n in sorted(EBNF_CASES)]
)
def test_agrees_with_xgrammar_on_derivations_and_mutations(syntax, name):
    xgrammar = pytest.importorskip("xgrammar")
    from xgrammar.testing import _is_grammar_accept_string

    text, accepted, refused = (GBNF_CASES if syntax == "gbnf" else EBNF_CASES)[name]
    parser = GrammarParser(text, syntax)
    oracle = xgrammar.Grammar.from_ebnf(text)
    grammar = read_grammar(text, syntax)
    rng = random.Random(name)
    alphabet = "".join(sorted(set("".join(accepted)) | set(" ()x1a,\n")))
    derived = [derive(grammar, rng) for _ in range(40)]
    for sample in derived:
        assert parser.accepts(sample), f"{name}: refuses its own derivation {sample!r}"
        assert _is_grammar_accept_string(oracle, sample), f"{name}: xgrammar refuses the derivation {sample!r}"
    samples = [mutate(rng.choice(derived + accepted), rng, alphabet) for _ in range(120)] + refused + accepted
    for sample in samples:
        expected = _is_grammar_accept_string(oracle, sample)
        assert parser.accepts(sample) == expected, f"{name}: disagrees with xgrammar on {sample!r}"


def test_allowed_characters_are_exact_and_never_lead_to_a_dead_end():
    """Every character a state allows is accepted, every other one refused, and from every state reached a
    complete text is still reachable (checked by a breadth-first search over a small alphabet)."""
    parser = GrammarParser(LARK_CASES["arith"][0])
    alphabet = "0123456789+-*/(). abeE\n"
    frontier, seen = [parser], set()
    for _ in range(4):
        nxt = []
        for state in frontier:
            allowed = state.allowed_characters()
            for ch in alphabet:
                after = state.add_character(ch)
                assert (after is not None) == (ch in allowed), (state, ch)
                if after is not None and after.key() not in seen:
                    seen.add(after.key())
                    nxt.append(after)
        frontier = nxt[:60]
    for state in frontier:
        assert _completes(state, alphabet), state


def _completes(state, alphabet: str, depth: int = 12) -> bool:
    """Some text of at most ``depth`` characters from ``alphabet`` completes ``state`` (breadth first)."""
    layer, seen = [state], set()
    for _ in range(depth):
        if any(s.can_end() for s in layer):
            return True
        nxt = []
        for s in layer:
            for ch in alphabet:
                after = s.add_character(ch)
                if after is not None and after.key() not in seen:
                    seen.add(after.key())
                    nxt.append(after)
        layer = nxt
    return any(s.can_end() for s in layer)
