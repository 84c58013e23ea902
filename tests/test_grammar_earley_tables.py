"""The Earley recognizer's shared tables change no set: on MaskBench's grammars and the samples, every set met
while reading texts and random character walks is closed exactly as a textbook closure closes it (predictions
added one by one, not from the per-nonterminal table), and what sets with the same expected terminals share
(the characters and automaton states a lexeme may start with) is what each set computes from its own
terminals. Brute force over every set reached, so a wrong shortcut shows as a differing set."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from grammar_cases import GRAMMARS  # noqa: E402

from formatenforcer import GrammarParser  # noqa: E402
from formatenforcer.core.charset import CharSet  # noqa: E402

SAMPLES = Path(__file__).resolve().parent.parent / "samples" / "grammars"


def _reference_base(earley, origin, nonterminal: int):
    """Leo's right-recursion shortcut from the set's items themselves: an item of ``nonterminal`` started at
    ``origin`` names instead the origin of the one item of ``origin`` waiting for ``nonterminal``, when that
    item is ``nonterminal -> ... . nonterminal`` (at its last symbol) from an earlier set."""
    waiting = [(p, d, o) for p, d, o in origin.items if d < len(earley.rhs[p]) and earley.rhs[p][d] == nonterminal]
    if len(waiting) == 1:
        p, d, o = waiting[0]
        if o is not None and earley.lhs[p] == nonterminal and d == len(earley.rhs[p]) - 1:
            return o
    return origin


def _reference_closure(earley, seeds) -> frozenset:
    """Closure under completion and prediction, one predicted production at a time, with the origins of the
    items made by completion taken through Leo's shortcut (``_reference_base``)."""
    items: set = set()
    todo = list(seeds)
    while todo:
        item = todo.pop()
        if item in items:
            continue
        items.add(item)
        production, dot, origin = item
        rhs = earley.rhs[production]
        if dot == len(rhs):
            if origin is not None:
                for waiting, wdot, worigin in origin.waiting(earley.lhs[production]):
                    base = origin if worigin is None else worigin
                    todo.append((waiting, wdot + 1, _reference_base(earley, base, earley.lhs[waiting])))
            continue
        symbol = rhs[dot]
        if symbol >= 0:
            todo.extend((predicted, 0, None) for predicted in earley.by_lhs[symbol])
            if earley.nullable[symbol]:
                todo.append((production, dot + 1, origin))
    return frozenset(items)


def _sets_met(parser: GrammarParser, texts: list[str], seed: int) -> list:
    """Every Earley set of every state met reading ``texts`` and random character walks from the start."""
    met: dict[int, object] = {}

    def note(state) -> None:
        for s, _, _ in state._active:
            met[id(s)] = s
        for s in state._fresh:
            met[id(s)] = s

    for text in texts:
        state = parser
        for ch in text:
            state = state.add_character(ch)
            assert state is not None
            note(state)
    rng = random.Random(seed)
    for _ in range(30):
        state = parser
        for _ in range(60):
            chars = state.allowed_characters().chars(limit=200)
            if not chars:
                break
            nxt = state.add_character(rng.choice(chars))
            if nxt is None:
                break
            state = nxt
            note(state)
    return list(met.values())


def _cases():
    for name, (lark, _, texts) in GRAMMARS.items():
        yield pytest.param(lark() if callable(lark) else lark, "lark", texts, id=name)
    yield pytest.param((SAMPLES / "arithmetic.gbnf").read_text(), "gbnf", [], id="arithmetic.gbnf")
    yield pytest.param((SAMPLES / "chess.gbnf").read_text(), "gbnf", [], id="chess.gbnf")
    yield pytest.param((SAMPLES / "sql.lark").read_text(), "lark", [], id="sql.lark")


@pytest.mark.parametrize(("grammar", "syntax", "texts"), list(_cases()))
def test_sets_are_the_textbook_closure(grammar, syntax, texts):
    parser = GrammarParser(grammar, syntax)
    earley = parser._compiled.earley
    sets = _sets_met(parser, texts, seed=len(grammar))
    assert len(sets) >= 5
    for s in sets:
        assert s.grammar is earley
        for lexer in s.expected:
            seeds = [
                (p, d + 1, _reference_base(earley, s if origin is None else origin, earley.lhs[p]))
                for p, d, origin in s.items
                if d < len(earley.rhs[p]) and earley.rhs[p][d] == -1 - lexer
            ]
            assert seeds, f"{s!r} expects terminal {lexer} but no item advances over it"
            assert s.scan(lexer).items == _reference_closure(earley, seeds)
        rhs = earley.rhs
        expected = {-1 - rhs[p][d] for p, d, _ in s.items if d < len(rhs[p]) and rhs[p][d] < 0}
        assert s.expected == tuple(sorted(expected))


@pytest.mark.parametrize(("grammar", "syntax", "texts"), list(_cases()))
def test_sets_with_the_same_terminals_start_alike(grammar, syntax, texts):
    parser = GrammarParser(grammar, syntax)
    earley = parser._compiled.earley
    sets = _sets_met(parser, texts, seed=len(grammar) + 1)
    probes = [chr(c) for c in range(32, 127)] + ["\n", "\t", "é", "😀"]
    for s in sets:
        lexers = s.lexers()
        own = CharSet([iv for lexer in lexers for iv in earley.dfas[lexer].charset(0).intervals])
        assert s.start_chars() == own
        for ch in probes:
            direct = tuple((lexer, q) for lexer in lexers if (q := earley.dfas[lexer].step(0, ch)) is not None)
            assert s.starts(ch) == direct, (s, ch)


@pytest.mark.parametrize(("grammar", "syntax", "texts"), list(_cases()))
def test_accepting_is_the_completed_start(grammar, syntax, texts):
    parser = GrammarParser(grammar, syntax)
    earley = parser._compiled.earley
    sets = _sets_met(parser, texts, seed=len(grammar) + 2)
    start = earley.start_production
    assert any(s.accepting for s in sets)
    for s in sets:
        assert s.accepting == any(p == start and d == 1 for p, d, _ in s.items)
