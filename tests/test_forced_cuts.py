"""The pre-token cut proof in the hold-back rule (core/pretokens.py, core/forced.py) on the real tokenizers:
it forces more where a cut proves no token spans the forced text's end, and what it forces is what the
tokenizer writes for random continuations the format allows."""

from __future__ import annotations

import json
import random
from contextlib import contextmanager

import pytest

from formatenforcer import JsonConfig, JsonSchemaParser, TokenEnforcer, Vocabulary

from .test_forced_tokens import _cases

COMPACT = JsonConfig(whitespace="compact")
PROBE_CHARS = "aZé0 -_\"\\:,.{}[]\n\t#@!?/)'+*"


@contextmanager
def without_cut_proof(vocabulary: Vocabulary):
    saved = vocabulary.pre_tokens
    vocabulary.pre_tokens = None
    try:
        yield
    finally:
        vocabulary.pre_tokens = saved


def random_continuation(state, rng: random.Random, length: int) -> str:
    """A random text the format allows after ``state`` (favouring characters that tokenizers treat
    differently: letters, digits, spaces, punctuation, non-ASCII)."""
    out = []
    for _ in range(length):
        allowed = state.allowed_characters()
        if not allowed:
            break
        choices = [ch for ch in PROBE_CHARS if ch in allowed]
        if not choices or rng.random() < 0.3:
            low, high = rng.choice(allowed.intervals)
            choices = [chr(rng.randint(low, min(high, low + 200)))]
        ch = rng.choice(choices)
        nxt = state.add_character(ch)
        if nxt is None:
            break
        out.append(ch)
        state = nxt
    return "".join(out)


def test_llama3_forces_the_key_quote_before_a_letter(llama3_vocabulary: Vocabulary):
    """Llama 3 has tokens such as '"w' (its split pattern lets one punctuation mark lead letters), but it
    cuts '{"' | 'weather' since '{"' is a punctuation run: the forced '{"' is no longer held back."""
    vocabulary = llama3_vocabulary
    schema = {"type": "object", "properties": {"weather": {"type": "string"}, "time": {"type": "number"}},
              "required": ["weather", "time"], "additionalProperties": False}  # fmt: skip
    enforcer = TokenEnforcer(vocabulary, JsonSchemaParser(schema, config=COMPACT))
    (spanning,) = vocabulary.tokenize('"w')  # the token that could span the end exists
    assert vocabulary.text_of(spanning) == b'"w'
    with without_cut_proof(vocabulary):
        before = enforcer.matcher().forced_tokens()
    after = enforcer.matcher().forced_tokens()
    assert enforcer.matcher().forced_text() == '{"'  # then 'w' or 't'
    assert before == [] and after == vocabulary.tokenize('{"')
    assert vocabulary.tokenize('{"weather":"x"}')[:1] == after


@pytest.mark.parametrize("name", ["llama3", "smollm2"])
def test_more_forced_and_still_canonical_for_random_continuations(vocabularies, name: str):
    """Over the benchmark instances (compact layout), wherever the cut proof forces tokens that the rule
    without it held back, the tokenizer's encoding of the text so far + the forced text + 30 random
    continuations the format allows starts with the tokens so far + the forced ones."""
    vocabulary = vocabularies[name]
    rng = random.Random(20)
    gained = checked = 0
    for case in _cases():
        parser = JsonSchemaParser(case["schema"], config=COMPACT)
        text = json.dumps(case["instance"], separators=(",", ":"))
        canonical = vocabulary.tokenize(text)
        enforcer = TokenEnforcer(vocabulary, parser)
        matcher = enforcer.matcher()
        for token in canonical:
            forced = matcher.forced_tokens()
            with without_cut_proof(vocabulary):
                held = matcher.forced_tokens()
            assert forced[: len(held)] == held  # the proof only ever forces more
            if len(forced) > len(held):
                gained += len(forced) - len(held)
                so_far = b"".join(vocabulary.text_of(t) for t in matcher.generated_tokens).decode()
                forced_text = b"".join(vocabulary.text_of(t) for t in forced).decode()
                state = matcher.position.state.add_text(forced_text)
                for _ in range(30):
                    tail = random_continuation(state, rng, rng.randint(1, 6))
                    ids = vocabulary.tokenize(so_far + forced_text + tail)
                    head = matcher.generated_tokens + forced
                    assert ids[: len(head)] == head, (case["name"], so_far[-20:], forced_text, tail)
                    checked += 1
            assert matcher.accept_token(token)
    if name == "llama3":
        assert gained > 50 and checked  # the proof matters on Llama 3's split pattern
    print(f"{name}: {gained} more forced tokens, {checked} continuations checked")


def test_sentencepiece_has_no_cuts_to_prove_with(vocabularies):
    """The SentencePiece fixture's pre-tokenizer (Metaspace, no split) cuts nothing: no proof, the rule
    holds back what it held back without one. The byte-level ones cut punctuation runs from letters."""
    pre = vocabularies["sentencepiece"].pre_tokens
    assert pre is None or pre.cuts('{"a":"b c"}') == []
    assert vocabularies["llama3"].pre_tokens.cuts('{"w":"x"}') == [2, 3, 6, 7]
    assert vocabularies["smollm2"].pre_tokens.cuts('{"w":"x"}') == [2, 3, 6, 7]
