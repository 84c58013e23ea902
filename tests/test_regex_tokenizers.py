"""Regexes on every real tokenizer: natural tokenizations are accepted, random walks always fullmatch."""

from __future__ import annotations

import re

import pytest

from formatenforcer import RegexParser, TokenEnforcer

from .checking import accepts_text, random_walk
from .conftest import TOKENIZER_NAMES

# (pattern, strings that fully match it)
CASES = [
    (r"\d{4}-\d{2}-\d{2}", ["2024-05-17", "1999-12-31"]),
    (r"\(\d{3}\) \d{3}-\d{4}", ["(555) 123-4567"]),
    (r"[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}", ["alice.smith@example.com", "x_1@mail.co.uk"]),
    (r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?", ["0", "-12.5", "3.14159e-10", "42"]),
    (r"(red|green|blue|rouge|grün)", ["red", "green", "grün"]),
    (r"(ab){2,3}c{1,2}", ["ababc", "abababcc"]),
    (r"[A-Z][a-zà-ÿ]+( [A-Z][a-zà-ÿ]+)*", ["Café Crème", "Zoë", "Hello World"]),
    (r"[😀-🙏]+ ?[a-z]*", ["😀😃 smile", "🙏"]),
    (r"[一-龥]{1,4}", ["日本語", "中文"]),
    (r"(yes|no)\n.{0,12}", ["yes\nbecause é😀", "no\n"]),
    (r"[^\n]{3,20}", ["any thing: ü 😀 !", "abc"]),
]


@pytest.mark.parametrize("name", TOKENIZER_NAMES)
@pytest.mark.parametrize("pattern, texts", CASES, ids=[c[0] for c in CASES])
def test_natural_tokenization_is_accepted(tokenizers, vocabularies, name, pattern, texts):
    for text in texts:
        assert re.fullmatch(pattern, text)
        ok, reason = accepts_text(vocabularies[name], tokenizers[name], RegexParser(pattern), text)
        assert ok, f"{name}: {text!r}: {reason}"


@pytest.mark.parametrize("name", TOKENIZER_NAMES)
@pytest.mark.parametrize("pattern", [c[0] for c in CASES])
def test_random_walks_always_fullmatch(vocabularies, name, pattern):
    enforcer = TokenEnforcer(vocabularies[name], RegexParser(pattern))
    finished = 0
    for seed in range(6):
        text, done = random_walk(enforcer, seed, max_tokens=150)
        if done:
            finished += 1
            assert re.fullmatch(pattern, text), f"{name} seed {seed}: {text!r}"
        else:
            assert enforcer.parser.add_text(text) is not None, f"{name} seed {seed}: walked off: {text!r}"
    assert finished >= 1, f"{name}: no walk of {pattern!r} ever finished"
