"""Masks for a speculative draft (``Matcher.fill_bitmasks_for_draft``) on Llama 3, and on a real SmolLM2 draft."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from formatenforcer import JsonConfig, JsonSchemaParser, TokenEnforcer, allocate_bitmask, apply_bitmask

from .jump_forward_cases import BOOK
from .tokenizers_fixtures import LLAMA3_EOS

INSTANCE = {"title": "The Name of the Rose", "author": "Umberto Eco", "year": 1980, "genre": "novel"}
SENTINEL = 0x5A5A5A5A


def stepwise_rows(enforcer: TokenEnforcer, prefix: list[int], draft: list[int]) -> list[np.ndarray]:
    """The reference: a fresh matcher fed token by token, its mask read before each draft token (and after
    the last accepted one), stopping at the first refused token."""
    matcher = enforcer.matcher()
    assert matcher.accept_tokens(prefix)
    rows = []
    for token in draft:
        rows.append(matcher.mask().copy())
        if not matcher.accept_token(token):
            return rows
    rows.append(matcher.mask().copy())
    return rows


def check_draft(enforcer: TokenEnforcer, prefix: list[int], draft: list[int], backend: str = "numpy") -> int:
    matcher = enforcer.matcher()
    assert matcher.accept_tokens(prefix)
    before_tokens, before_mask = matcher.generated_tokens, matcher.mask().copy()
    bitmask = allocate_bitmask(len(draft) + 3, enforcer.vocabulary.size, backend=backend)
    bitmask[:] = SENTINEL
    accepted = matcher.fill_bitmasks_for_draft(draft, bitmask, row=1)
    expected = stepwise_rows(enforcer, prefix, draft)
    assert len(expected) == accepted + 1
    written = np.asarray(bitmask)
    width = expected[0].shape[0]
    assert (written[0] == SENTINEL).all()  # rows before ``row`` untouched
    for index, row in enumerate(expected):
        assert np.array_equal(written[1 + index, :width], row), f"row {index} of draft {draft}"
    assert (written[1 + len(expected) :] == SENTINEL).all()  # rows past the refused token: left as they were
    # the matcher is where it was
    assert matcher.generated_tokens == before_tokens and np.array_equal(matcher.mask(), before_mask)
    assert matcher.accept_tokens(draft[:accepted]) and matcher.num_accepted == len(prefix) + accepted
    return accepted


@pytest.mark.parametrize("layout", ["flexible", "compact"])
def test_every_row_equals_the_stepwise_mask_on_llama3(llama3_vocabulary, llama3_tokenizer, layout):
    parser = JsonSchemaParser(BOOK, config=JsonConfig(whitespace=layout))
    enforcer = TokenEnforcer(llama3_vocabulary, parser)
    text = json.dumps(INSTANCE, separators=(",", ":") if layout == "compact" else None)
    ids = llama3_tokenizer.encode(text, add_special_tokens=False) + [LLAMA3_EOS[0]]
    rng = random.Random(7)
    full_accepts = partial = 0
    for start in range(0, len(ids), 2):
        size = rng.randint(1, 6)
        draft = ids[start : start + size]
        if rng.random() < 0.4 and len(draft) > 1:  # a draft that goes wrong: a token the format refuses
            wrong = llama3_tokenizer.encode("}}}", add_special_tokens=False)[0]
            draft = draft[:-1] + [wrong]
        accepted = check_draft(enforcer, ids[:start], draft, backend="torch" if start % 4 else "numpy")
        full_accepts += accepted == len(draft)
        partial += accepted < len(draft)
    assert full_accepts and partial  # both cases were exercised
    assert check_draft(enforcer, [], []) == 0  # an empty draft: one row, the current mask


def test_draft_past_the_end_and_bad_arguments(llama3_vocabulary, llama3_tokenizer):
    parser = JsonSchemaParser({"type": "integer"})
    enforcer = TokenEnforcer(llama3_vocabulary, parser)
    digits = llama3_tokenizer.encode("42", add_special_tokens=False)
    eos = LLAMA3_EOS[0]
    # the draft ends the output and goes on: the rows after end-of-sequence are the finished mask (EOS only)
    assert check_draft(enforcer, [], [*digits, eos, digits[0]]) == len(digits) + 1
    matcher = enforcer.matcher()
    with pytest.raises(ValueError, match="needs 4 rows"):
        matcher.fill_bitmasks_for_draft([1, 2, 3], allocate_bitmask(3, llama3_vocabulary.size))
    with pytest.raises(ValueError, match="row must be"):
        matcher.fill_bitmasks_for_draft([1], allocate_bitmask(3, llama3_vocabulary.size), row=-1)
    with pytest.raises(TypeError, match="must be an integer"):
        matcher.fill_bitmasks_for_draft(["x"], allocate_bitmask(3, llama3_vocabulary.size))
    assert matcher.num_accepted == 0


@pytest.mark.slow
def test_verifying_a_smollm2_draft_in_one_forward_pass(smollm2_model):
    """A real draft: SmolLM2's own unconstrained greedy continuation, from a point inside the JSON reached
    by constrained greedy decoding. The masks for it come from one call, are checked against the
    step-by-step ones, and verify the draft in one forward pass: the accepted prefix plus the bonus token
    are what constrained greedy decoding writes one token at a time."""
    import torch

    from formatenforcer import Vocabulary
    from formatenforcer.integrations.transformers import prompt_inputs

    model, tokenizer = smollm2_model
    vocabulary = Vocabulary.from_transformers(tokenizer, size=max(int(model.config.vocab_size), len(tokenizer)))
    enforcer = TokenEnforcer(vocabulary, JsonSchemaParser(BOOK, config=JsonConfig(whitespace="compact")))
    prompt = prompt_inputs(tokenizer, [{"role": "user", "content": "Recommend a classic book as JSON with "
                                        "title, author, year and genre."}])  # fmt: skip

    def last_logits(ids: list[int]) -> torch.Tensor:
        with torch.no_grad():
            return model(torch.tensor([ids])).logits[0, -1, : vocabulary.size].float().clone()

    reference = enforcer.matcher()  # constrained greedy decoding, one forward pass per token
    written: list[int] = []
    one = allocate_bitmask(1, vocabulary.size, backend="torch")
    while len(written) < 40 and not reference.is_finished():
        row = last_logits(prompt + written)
        reference.fill_bitmask(one, 0)
        token = int(apply_bitmask(row[None], one).argmax())
        assert reference.accept_token(token)
        written.append(token)
    split = next(i for i in range(len(written)) if '"title":"' in tokenizer.decode(written[:i]))
    prefix = written[:split]

    k = 8
    with torch.no_grad():  # the draft: what the model writes from there without the format
        out = model.generate(torch.tensor([prompt + prefix]), max_new_tokens=k, do_sample=False)
    draft = out[0, len(prompt) + len(prefix) :].tolist()
    assert len(draft) == k

    accepted = check_draft(enforcer, prefix, draft)
    matcher = enforcer.matcher()
    assert matcher.accept_tokens(prefix)
    bitmask = allocate_bitmask(k + 1, vocabulary.size, backend="torch")
    assert matcher.fill_bitmasks_for_draft(draft, bitmask) == accepted
    assert 0 < accepted  # the model's own draft of the title is (at least partly) valid

    with torch.no_grad():  # verification: the logits at every draft position, in one pass
        logits = model(torch.tensor([prompt + prefix + draft])).logits[0, len(prompt) + len(prefix) - 1 :]
    logits = logits[: accepted + 1, : vocabulary.size].float().clone()
    choices = apply_bitmask(logits, bitmask[: accepted + 1]).argmax(-1).tolist()
    verified = []
    for token, choice in zip(draft, choices):
        if token != choice:
            break
        verified.append(token)
    verified.append(choices[len(verified)])  # the correction, or the bonus token after a whole draft
    assert verified == written[split : split + len(verified)]
    print(f"\ndraft {tokenizer.decode(draft)!r}: the format accepts {accepted}/{k};"
          f" verified {tokenizer.decode(verified)!r} in one pass")  # fmt: skip
