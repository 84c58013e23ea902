"""End to end with the real SmolLM2-135M-Instruct on CPU through ``model.generate``."""

from __future__ import annotations

import re

import pytest

from formatenforcer import ChoiceParser, RegexParser

pytestmark = pytest.mark.slow

PROMPTS = ["What is the date of the first moon landing?", "When did the Berlin wall fall?"]
DATE = r"(19|20)\d{2}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])"
CHOICES = ["positive", "negative", "neutral"]


def chat_batch(tokenizer, questions):
    texts = [
        tokenizer.apply_chat_template([{"role": "user", "content": q}], tokenize=False, add_generation_prompt=True)
        for q in questions
    ]
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False)


def generated_texts(tokenizer, inputs, outputs):
    return [tokenizer.decode(row[inputs["input_ids"].shape[1] :], skip_special_tokens=True) for row in outputs]


def run(model, tokenizer, questions, parser, mode, **kwargs):
    from formatenforcer.integrations.transformers import (
        FormatEnforcerLogitsProcessor,
        build_prefix_allowed_tokens_fn,
    )

    inputs = chat_batch(tokenizer, questions)
    if mode == "prefix":
        kwargs["prefix_allowed_tokens_fn"] = build_prefix_allowed_tokens_fn(tokenizer, parser)
    else:
        from transformers import LogitsProcessorList

        kwargs["logits_processor"] = LogitsProcessorList([FormatEnforcerLogitsProcessor(tokenizer, parser)])
    outputs = model.generate(**inputs, max_new_tokens=24, pad_token_id=tokenizer.pad_token_id, **kwargs)
    return generated_texts(tokenizer, inputs, outputs)


@pytest.mark.parametrize("mode", ["prefix", "processor"])
def test_regex_batch_of_two_greedy(smollm2_model, mode):
    model, tokenizer = smollm2_model
    texts = run(model, tokenizer, PROMPTS, RegexParser(DATE), mode, do_sample=False)
    assert len(texts) == 2
    for text in texts:
        assert re.fullmatch(DATE, text), text


@pytest.mark.parametrize("mode", ["prefix", "processor"])
def test_choice_with_beam_search(smollm2_model, mode):
    model, tokenizer = smollm2_model
    questions = ["Classify the sentiment: 'I love this phone!'", "Classify the sentiment: 'Terrible service.'"]
    texts = run(model, tokenizer, questions, ChoiceParser(CHOICES), mode, num_beams=3, do_sample=False)
    assert len(texts) == 2 and all(t in CHOICES for t in texts), texts


def test_sampling_batch_and_reuse_across_generate_calls(smollm2_model):
    """One processor object serves two generate calls; sampled output still matches."""
    import torch
    from transformers import LogitsProcessorList

    from formatenforcer.integrations.transformers import FormatEnforcerLogitsProcessor

    model, tokenizer = smollm2_model
    processor = FormatEnforcerLogitsProcessor(tokenizer, RegexParser(r"[A-Z][a-z]{2,8}( [A-Z][a-z]{2,8})?"))
    torch.manual_seed(0)
    for questions in (PROMPTS, ["Name a city in France."]):
        inputs = chat_batch(tokenizer, questions)
        outputs = model.generate(
            **inputs,
            max_new_tokens=12,
            do_sample=True,
            temperature=1.0,
            logits_processor=LogitsProcessorList([processor]),
            pad_token_id=tokenizer.pad_token_id,
        )
        for text in generated_texts(tokenizer, inputs, outputs):
            assert re.fullmatch(r"[A-Z][a-z]{2,8}( [A-Z][a-z]{2,8})?", text), text
