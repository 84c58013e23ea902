"""The one checker every format test goes through: natural tokenizations and seeded random walks."""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from formatenforcer import CharacterParser, TokenEnforcer, Vocabulary


def encode(tokenizer: Any, text: str) -> list[int]:
    """The tokenizer's own ("natural") tokenization of ``text``, without special tokens."""
    return list(tokenizer.encode(text, add_special_tokens=False))


def accepts_text(vocabulary: Vocabulary, tokenizer: Any, parser: CharacterParser, text: str) -> tuple[bool, str]:
    """Feeds the natural tokenization of ``text`` token by token, checking each token is in the allowed set
    and that end-of-sequence is allowed at the end. Returns (ok, reason)."""
    enforcer = TokenEnforcer(vocabulary, parser)
    matcher = enforcer.matcher()
    ids = encode(tokenizer, text)
    for i, token in enumerate(ids):
        allowed = matcher.mask()
        if not (int(allowed[token >> 5]) >> (token & 31)) & 1:
            return False, f"token #{i} {tokenizer.convert_ids_to_tokens([token])} not in the allowed set"
        if not matcher.accept_token(token):
            return False, f"token #{i} {tokenizer.convert_ids_to_tokens([token])} refused by accept_token"
    eos = vocabulary.eos_token_ids[0]
    if not matcher.accept_token(eos):
        return False, "end-of-sequence refused at the end"
    return True, ""


_FIRST_BYTES: dict[int, np.ndarray] = {}


def _first_bytes(vocabulary: Vocabulary) -> np.ndarray:
    """First byte of each token's text (-1 for EOS and tokens without text), cached per vocabulary."""
    cached = _FIRST_BYTES.get(id(vocabulary))
    if cached is None:
        cached = np.array(
            [t[0] if t else -1 for t in vocabulary.token_bytes] + [-1] * (vocabulary.size - len(vocabulary.token_bytes))
        )
        _FIRST_BYTES[id(vocabulary)] = cached
    return cached


def random_walk(enforcer: TokenEnforcer, seed: int, max_tokens: int = 200, end_bias: float = 0.25) -> tuple[str, bool]:
    """Walks the format by picking, at each step, a random *first byte* among the allowed tokens' first bytes
    (end-of-sequence counts as one), then a random token with it. Grouping by first byte keeps rare
    structural characters (a closing quote, an "@") as likely as the thousands of word tokens, so walks
    explore the format and reach its end instead of wandering in free text. When end-of-sequence is allowed
    it is taken with probability ``end_bias``.

    Returns (text, finished). Asserts the allowed set is never empty and every pick is accepted."""
    rng = random.Random(seed)
    vocabulary = enforcer.vocabulary
    firsts = _first_bytes(vocabulary)
    matcher = enforcer.matcher()
    pieces: list[bytes] = []
    for _ in range(max_tokens):
        # the ids of the mask's set bits (``allowed_token_ids``' answer) kept as an array: listing ~100k ids
        # and turning them back into an array took ~8 ms a step, a tenth of a walk through free keys
        allowed = np.flatnonzero(np.unpackbits(np.ascontiguousarray(matcher.mask()).view(np.uint8), bitorder="little"))
        assert allowed.size, "the enforcer returned an empty allowed set"
        groups = np.unique(firsts[allowed])
        if groups[0] == -1 and rng.random() < end_bias:
            group = -1  # end-of-sequence is allowed: take it now and then, so walks finish
        else:
            group = groups[rng.randrange(len(groups))]
        members = allowed[firsts[allowed] == group]
        token = int(members[rng.randrange(len(members))])
        assert matcher.accept_token(token), f"allowed token {token} was refused by accept_token"
        if matcher.is_finished():
            return b"".join(pieces).decode("utf-8"), True
        piece = vocabulary.text_of(token)
        if not pieces and vocabulary.strip_leading_space and piece[:1] == b" ":
            piece = piece[1:]  # SentencePiece drops the first token's space when decoding
        pieces.append(piece)
    return b"".join(pieces).decode("utf-8", errors="replace"), False
