"""A regular expression as the format: an ISO date, whatever the model would rather say.

Run: python samples/regex_date.py
Supported: the syntax of Python's re minus lookaround and backreferences (a finite automaton's syntax).
"""

import re

from transformers import LogitsProcessorList

from formatenforcer import RegexParser
from formatenforcer.cli.model import load
from formatenforcer.integrations.transformers import FormatEnforcerLogitsProcessor

DATE = r"(19|20)[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])"

model, tokenizer, _ = load(None)
messages = [{"role": "user", "content": "On which date did Apollo 11 land on the moon? Answer as YYYY-MM-DD."}]
prompt = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
inputs = tokenizer(prompt, return_tensors="pt", add_special_tokens=False)
processor = FormatEnforcerLogitsProcessor(tokenizer, RegexParser(DATE))
output = model.generate(**inputs, logits_processor=LogitsProcessorList([processor]), max_new_tokens=12)
text = tokenizer.decode(output[0, inputs["input_ids"].shape[1] :], skip_special_tokens=True)
print(text)
assert re.fullmatch(DATE, text)
