"""Forced tokens after a model that writes its text in other tokens than its tokenizer would (the lookback
rule, core/forced.py): over the benchmark instances written one character per token, every forced run is
what the tokenizer writes after the text so far, and jump-forward still has work to do."""

from __future__ import annotations

import json

import pytest

from formatenforcer import JsonConfig, JsonSchemaParser, TokenEnforcer, Vocabulary
from formatenforcer.core.forced import greedy_tokenize

from .conftest import TOKENIZER_NAMES
from .test_forced_tokens import _cases


def one_character_per_token(vocabulary: Vocabulary, text: str) -> list[int]:
    """As non-canonical as a model can be: each character as its own token (or its own shortest tokens)."""
    return [token for ch in text for token in greedy_tokenize(vocabulary, ch)]


def written_after(vocabulary: Vocabulary, text: str, run_text: str, run: list[int]) -> bool:
    """Whether the tokenizer's encoding of ``text + run_text`` is its encoding of ``text``, then ``run``."""
    if not text:
        return vocabulary.tokenize(run_text)[: len(run)] == run
    before = vocabulary.tokenize(text)
    together = vocabulary.tokenize(text + run_text)
    return together[: len(before)] == before and together[len(before) : len(before) + len(run)] == run


@pytest.mark.parametrize("name", TOKENIZER_NAMES)
def test_forced_runs_after_split_text_are_the_tokenizers(vocabularies, name: str):
    vocabulary = vocabularies[name]
    runs = wrong = 0
    for case in _cases():
        parser = JsonSchemaParser(case["schema"], config=JsonConfig(whitespace="compact"))
        text = json.dumps(case["instance"], separators=(",", ":"))
        matcher = TokenEnforcer(vocabulary, parser).matcher()
        split = one_character_per_token(vocabulary, text)
        done = 0
        while done < len(split):
            run = matcher.forced_tokens()
            if run:
                so_far = b"".join(vocabulary.text_of(t) for t in matcher.generated_tokens).decode()
                run_text = b"".join(vocabulary.text_of(t) for t in run).decode()
                runs += 1
                wrong += not written_after(vocabulary, so_far, run_text, run)
                assert matcher.accept_tokens(run)
                consumed = so_far + run_text
                if vocabulary.strip_leading_space and consumed[:1] == " " and text[:1] != " ":
                    consumed = consumed[1:]  # SentencePiece: the first token's space is not in the text
                split = matcher.generated_tokens + one_character_per_token(vocabulary, text[len(consumed) :])
                done = len(matcher.generated_tokens)
                continue
            assert matcher.accept_token(split[done]), (case["name"], done)
            done += 1
    assert wrong == 0
    assert runs >= 500  # as many forced runs as for a model writing canonical tokens (534, 728, 1271)
