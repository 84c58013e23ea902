"""Hugging Face generate() with a LogitsProcessor: any JSON value, masked in one tensor operation per step.

Run: python samples/hf_logits_processor.py
The processor also works for batches, beam search and sampling; it can be reused across generate() calls.
"""

import json

from transformers import LogitsProcessorList

from formatenforcer import JsonConfig, JsonParser
from formatenforcer.cli.model import load
from formatenforcer.integrations.transformers import FormatEnforcerLogitsProcessor

model, tokenizer, _ = load(None)

# Compact JSON (no whitespace between tokens): shorter output, and the model cannot loop on spaces.
processor = FormatEnforcerLogitsProcessor(tokenizer, JsonParser(JsonConfig(whitespace="compact")))
questions = ["List three colours as a JSON array.", "Give a JSON object with your name."]
for question in questions:
    messages = [{"role": "user", "content": question}]
    prompt = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    inputs = tokenizer(prompt, return_tensors="pt", add_special_tokens=False)
    output = model.generate(
        **inputs, logits_processor=LogitsProcessorList([processor]), max_new_tokens=40, do_sample=False
    )
    text = tokenizer.decode(output[0, inputs["input_ids"].shape[1] :], skip_special_tokens=True)
    print(text)
    try:
        json.loads(text)
    except json.JSONDecodeError:
        # only possible when max_new_tokens cut the value short: every prefix the format allows can finish
        print("(cut short by max_new_tokens)")
