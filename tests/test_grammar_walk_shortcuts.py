"""The walk's shortcuts change no grammar mask: on MaskBench's grammars (benchmarks/grammar_cases.py), at every
position of a natural tokenization and of random token walks, the enforcer's mask (cached terminal walks,
lexemes split where they may end, continuations walked branch by branch) equals the plain walk of the trie
with the full parser state (``allowed_mask`` without a lexeme cache), on the real Llama 3 vocabulary."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from grammar_cases import GRAMMARS  # noqa: E402

from formatenforcer import GrammarParser, TokenEnforcer  # noqa: E402
from formatenforcer.core.walk import allowed_mask  # noqa: E402

from .checking import _first_bytes  # noqa: E402


def _plain(vocabulary, position) -> np.ndarray:
    """The mask from the plain walk: no lexeme cache, so no lexeme, alternatives or split shortcut."""
    return allowed_mask(vocabulary, position.state, position.pending, position.at_start, None)


def _check(vocabulary, matcher, where: str) -> None:
    shortcut = np.zeros((1, (vocabulary.size + 31) // 32), dtype=np.int32)
    matcher.fill_bitmask(shortcut, 0)
    plain = _plain(vocabulary, matcher.position)
    differ = np.nonzero(np.unpackbits(np.bitwise_xor(shortcut[0], plain).view(np.uint8), bitorder="little"))[0]
    assert differ.size == 0, f"{where}: the masks differ on tokens {differ[:10].tolist()}"


@pytest.mark.slow
@pytest.mark.parametrize("grammar", ["sql", "arithmetic", "c_like", "json_grammar", "tool_call"])
def test_masks_equal_the_plain_walk(grammar, llama3_vocabulary, llama3_tokenizer):
    lark, _, texts = GRAMMARS[grammar]
    text = lark() if callable(lark) else lark
    enforcer = TokenEnforcer(llama3_vocabulary, GrammarParser(text, "lark"))
    # a natural tokenization of the benchmark's longest text, every position
    sample = max(texts, key=len)
    matcher = enforcer.matcher()
    tokens = llama3_tokenizer.encode(sample, add_special_tokens=False)
    for index, token in enumerate(tokens[:40]):
        _check(llama3_vocabulary, matcher, f"{grammar}: after {llama3_tokenizer.decode(tokens[:index])!r}")
        assert matcher.accept_token(token)
    # random walks (a random first byte, then a random token with it), every position
    firsts = _first_bytes(llama3_vocabulary)
    eos = set(llama3_vocabulary.eos_token_ids)
    for seed in range(2):
        rng = random.Random(seed)
        matcher = enforcer.matcher()
        for step in range(15):
            _check(llama3_vocabulary, matcher, f"{grammar}: walk {seed} step {step}")
            allowed = np.array([t for t in matcher.allowed_token_ids() if t not in eos])
            if not allowed.size:
                break
            group = rng.choice(sorted(set(firsts[allowed].tolist())))
            members = allowed[firsts[allowed] == group]
            assert matcher.accept_token(int(members[rng.randrange(len(members))]))
