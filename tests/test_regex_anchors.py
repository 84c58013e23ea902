"""Anchors anywhere in a pattern (issue 18): ``^$|^https://x\\.com/``, ``^a$|^b$`` and ``(a|$)`` are
accepted as Python's ``re`` accepts them. The whole output must match, so a ``^`` holds exactly at the start
of the text and a ``$`` at its end; the parser accepts the same texts as ``re.fullmatch`` (``$`` before a
final newline aside: the texts here hold none), and a pattern whose anchors can never hold, or that mixes
them with syntax read by the fallback builder, is refused with a RegexError naming the anchor's position."""

from __future__ import annotations

import itertools
import re

import pytest

from formatenforcer import RegexError, RegexParser, TokenEnforcer

PATTERNS = [
    r"^$|^https://x\.com/",
    r"^a$|^b$",
    r"(a|$)",
    r"(^a)",
    r"^^a$$",
    r"a^b|c",
    r"(^a|b)*c",
    r"(^|x)y($|z)",
    r"(a$|b)c?",
    r"(a|^b)+",
    r"x(^a)?y",
    r"[$^]a|\$",
    r"(?:^ab|b$)*",
    r"^(a|b)$|c",
]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_same_texts_as_re_fullmatch(pattern: str) -> None:
    parser = RegexParser(pattern)
    alphabet = "abcxyz$^"
    texts = ["".join(t) for n in range(5) for t in itertools.product(alphabet, repeat=n)]
    texts += ["https://x.com/", "https://x.com", "https://x.com/a"]
    differ = [t for t in texts if parser.accepts(t) != (re.fullmatch(pattern, t) is not None)]
    assert differ == []
    assert any(parser.accepts(t) for t in texts)


@pytest.mark.parametrize(
    ("pattern", "position"),
    [("a^b", 1), ("ab$c", 2), (r"(?i)^a$|^b$", 4), ("x(?i:^a)", 5)],
)
def test_undecidable_or_unsatisfiable_anchors_are_refused_with_the_position(pattern: str, position: int) -> None:
    with pytest.raises(RegexError, match=f"position {position}"):
        RegexParser(pattern)


def test_issue_pattern_on_llama3(llama3_tokenizer, llama3_vocabulary) -> None:
    enforcer = TokenEnforcer(llama3_vocabulary, RegexParser(r"^$|^https://x\.com/"))
    empty = enforcer.matcher()
    assert empty.can_end()  # the empty text matches: end of sequence is allowed at once
    assert set(llama3_vocabulary.eos_token_ids) <= set(empty.allowed_token_ids())
    matcher = enforcer.matcher()
    for token in llama3_tokenizer.encode("https://x.com/", add_special_tokens=False):
        assert token in matcher.allowed_token_ids()
        assert matcher.accept_token(token)
    assert matcher.can_end()
