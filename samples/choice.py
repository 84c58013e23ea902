"""A list of choices as the format: classification with a batch and beam search.

Run: python samples/choice.py
"""

from formatenforcer import ChoiceParser
from formatenforcer.cli.model import load
from formatenforcer.integrations.transformers import build_prefix_allowed_tokens_fn

LABELS = ["positive", "negative", "neutral"]
REVIEWS = ["I love this phone, the battery lasts for days!", "The delivery was late and the box was broken."]

model, tokenizer, _ = load(None)
tokenizer.padding_side = "left"  # a batch of prompts is padded on the left for generation
if tokenizer.pad_token is None:
    tokenizer.pad_token = tokenizer.eos_token
prompts = [
    tokenizer.apply_chat_template(
        [{"role": "user", "content": f"Is this review positive, negative or neutral? {review}"}],
        tokenize=False,
        add_generation_prompt=True,
    )
    for review in REVIEWS
]
inputs = tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
fn = build_prefix_allowed_tokens_fn(tokenizer, ChoiceParser(LABELS))
output = model.generate(**inputs, prefix_allowed_tokens_fn=fn, num_beams=3, max_new_tokens=5, do_sample=False)
for review, row in zip(REVIEWS, output):
    label = tokenizer.decode(row[inputs["input_ids"].shape[1] :], skip_special_tokens=True)
    print(f"{label:>8}  {review}")
    assert label in LABELS
