"""Worked examples on small vocabularies: the exact masks, the parser contract, errors and dead ends."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from formatenforcer import (
    CharSet,
    ChoiceParser,
    RegexError,
    RegexParser,
    SequenceParser,
    TokenEnforcer,
    UnionParser,
    Vocabulary,
    allocate_bitmask,
    apply_bitmask,
)
from formatenforcer.core.bitmask import unpack


def mask_of(matcher, size):
    return [int(x) for x in unpack(matcher.mask()[None, :], size)[0]]


def test_classic_regex_example():
    vocabulary = Vocabulary.from_tokens(["A", ".", "42", ".2", "1"])
    matcher = TokenEnforcer(vocabulary, RegexParser(r"([0-9]*)?\.?[0-9]*")).matcher()
    assert mask_of(matcher, 5) == [0, 1, 1, 1, 1]
    assert matcher.accept_token(3)  # ".2"
    assert mask_of(matcher, 5) == [0, 0, 1, 0, 1]
    assert not matcher.accept_token(1)  # a second "." is refused
    assert not matcher.accept_token(0)


def test_choice_may_end_after_hot_or_continue_to_hotel():
    tokens = ["hot", "el", "cold", "h", "o", "t", "e", "l", "</s>"]
    vocabulary = Vocabulary.from_tokens(tokens, eos_token_ids=[8])
    matcher = TokenEnforcer(vocabulary, ChoiceParser(["hot", "cold", "hotel"])).matcher()
    assert set(matcher.allowed_token_ids()) == {0, 2, 3}
    assert matcher.accept_token(0)
    assert matcher.can_end()
    assert set(matcher.allowed_token_ids()) == {1, 6, 8}  # "el", "e", or end
    assert matcher.accept_token(1)
    assert matcher.allowed_token_ids() == [8]
    assert matcher.accept_token(8) and matcher.is_finished()


def test_rollback_and_validate_tokens():
    vocabulary = Vocabulary.from_tokens(["a", "b", "ab", "<eos>"], eos_token_ids=[3])
    matcher = TokenEnforcer(vocabulary, RegexParser("(ab)+")).matcher()
    assert matcher.validate_tokens([2, 0, 1, 0, 0]) == 4  # "ab" "a" "b" "a", then "a" breaks it
    assert matcher.num_accepted == 0
    assert matcher.accept_tokens([2, 0])
    assert not matcher.can_end()
    matcher.rollback(1)
    assert matcher.can_end() and matcher.num_accepted == 1
    with pytest.raises(ValueError):
        matcher.rollback(5)


@pytest.mark.parametrize(
    "parser",
    [
        RegexParser(r"[a-c]+x?"),
        ChoiceParser(["abc", "abx", "b"]),
        SequenceParser([RegexParser("a*"), ChoiceParser(["ab", "c"])]),
        UnionParser([RegexParser("ab+"), ChoiceParser(["ac", "a"])]),
    ],
)
def test_parsers_are_immutable_and_their_charset_is_exact(parser):
    key_before = parser.key()
    allowed = parser.allowed_characters()
    for ch in "abcx?":
        nxt = parser.add_character(ch)
        assert (nxt is not None) == (ch in allowed), ch
    assert parser.key() == key_before
    assert parser.allowed_characters() == allowed


def test_sequence_and_union_semantics():
    sequence = SequenceParser([RegexParser("a*"), ChoiceParser(["ab", "c"])])
    assert sequence.accepts("aaab") and sequence.accepts("c") and sequence.accepts("ac")
    assert not sequence.accepts("aa") and not sequence.accepts("abc")
    union = UnionParser([RegexParser("[0-9]+"), ChoiceParser(["null"])])
    assert union.accepts("123") and union.accepts("null") and not union.accepts("nul")


def test_charset_utf8_prefixes():
    emoji = CharSet.of("😀")
    encoded = "😀".encode()
    assert all(emoji.allows_utf8_prefix(encoded[:n]) for n in (1, 2, 3))
    assert not emoji.allows_utf8_prefix("é".encode()[:1])
    assert not CharSet.ranges(("a", "z")).allows_utf8_prefix(b"\xc3")
    everything = CharSet.ranges(("\x00", "\U0010ffff"))
    assert not everything.allows_utf8_prefix(b"\xed\xa0")  # would be a surrogate
    assert not everything.allows_utf8_prefix(b"\xc0")  # overlong lead byte
    assert CharSet.of("ab") | CharSet.of("c") == CharSet.ranges(("a", "c"))


def test_emoji_split_over_byte_tokens():
    data = "😀".encode()
    vocabulary = Vocabulary.from_tokens([data[:2], data[2:], b"x", b"\xc3", b"\xa9"], eos_token_ids=[])
    matcher = TokenEnforcer(vocabulary, RegexParser("😀x|é")).matcher()
    assert set(matcher.allowed_token_ids()) == {0, 3}
    assert matcher.accept_token(0)
    assert matcher.allowed_token_ids() == [1]
    assert matcher.accept_token(1)
    assert matcher.allowed_token_ids() == [2]


@pytest.mark.parametrize(
    "pattern, construct",
    [
        (r"a(?=b)", "lookaround"),
        (r"(a)\1", "back-reference"),
        (r"\bword", "word-boundary"),
        (r"\p{L}+", "unicode property"),
        (r"a(b", "invalid regular expression"),
    ],
)
def test_unsupported_regex_names_the_construct(pattern, construct):
    with pytest.raises(RegexError, match=construct):
        RegexParser(pattern)


def test_hostile_regex_fails_fast(monkeypatch):
    from formatenforcer.parsers import regex

    monkeypatch.setattr(regex, "COMPILE_SECONDS", 0.5)
    with pytest.raises(RegexError, match="too complex"):
        RegexParser(r"(a|b)*a(a|b){18}")


def test_dead_end_allows_eos_and_warns(caplog):
    # the vocabulary cannot spell "b": after "a" nothing can continue
    vocabulary = Vocabulary.from_tokens(["a", "c", "<eos>"], eos_token_ids=[2])
    matcher = TokenEnforcer(vocabulary, RegexParser("ab")).matcher()
    assert matcher.accept_token(0)
    with caplog.at_level(logging.WARNING, logger="formatenforcer"):
        assert matcher.allowed_token_ids() == [2]
    assert "no token can continue" in caplog.text


def test_special_tokens_never_allowed_and_eos_only_at_end():
    vocabulary = Vocabulary.from_tokens(["1", "2", None, "<eos>"], eos_token_ids=[3])
    matcher = TokenEnforcer(vocabulary, RegexParser("[0-9]{2}")).matcher()
    assert matcher.allowed_token_ids() == [0, 1]
    assert not matcher.accept_token(2)
    matcher.accept_tokens([0, 1])
    assert matcher.allowed_token_ids() == [3]


def test_bitmask_round_trip_numpy():
    vocabulary = Vocabulary.from_tokens([str(i) for i in range(10)] + ["x"] * 60)
    matcher = TokenEnforcer(vocabulary, RegexParser("[2-4]")).matcher()
    bitmask = allocate_bitmask(2, 70)
    assert bitmask.shape == (2, 3) and (bitmask == -1).all()
    matcher.fill_bitmask(bitmask, 1)
    logits = np.zeros((2, 72), dtype=np.float32)
    apply_bitmask(logits, bitmask)
    assert np.isfinite(logits[0]).all()  # row 0 was left unconstrained (all bits set)
    assert np.flatnonzero(np.isfinite(logits[1])).tolist() == [2, 3, 4]


def test_bitmask_round_trip_torch():
    torch = pytest.importorskip("torch")
    vocabulary = Vocabulary.from_tokens([str(i) for i in range(10)] + ["y"] * 30)
    matcher = TokenEnforcer(vocabulary, RegexParser("[05]")).matcher()
    bitmask = allocate_bitmask(1, 40, backend="torch")
    matcher.fill_bitmask(bitmask, 0)
    logits = torch.zeros(1, 40)
    apply_bitmask(logits, bitmask)
    assert torch.isfinite(logits[0]).nonzero().flatten().tolist() == [0, 5]
