"""exllamav2: a filter that keeps the dynamic generator inside a JSON Schema.

Run: python samples/exllamav2_filter.py   (needs exllamav2 and a CUDA GPU: pip install 'formatenforcer[exllamav2]')
"""

import json
import sys

from formatenforcer import JsonSchemaParser
from formatenforcer.cli.model import transformers_folder
from formatenforcer.integrations.exllamav2 import INSTALL_HINT

try:
    from exllamav2 import ExLlamaV2, ExLlamaV2Cache, ExLlamaV2Config, ExLlamaV2Tokenizer
    from exllamav2.generator import ExLlamaV2DynamicGenerator
except ImportError:
    sys.exit(INSTALL_HINT)  # a one-line hint on stderr, exit status 1

from formatenforcer.integrations.exllamav2 import FormatEnforcerFilter  # needs the engine: after it

SCHEMA = {
    "type": "object",
    "properties": {"title": {"type": "string", "maxLength": 40}, "year": {"type": "integer"}},
    "required": ["title", "year"],
}

# exllamav2 reads a transformers folder (config.json, safetensors, tokenizer.json): here the converted SmolLM2.
config = ExLlamaV2Config(str(transformers_folder()))
model = ExLlamaV2(config)
cache = ExLlamaV2Cache(model, lazy=True, max_seq_len=1024)
model.load_autosplit(cache)
tokenizer = ExLlamaV2Tokenizer(config)
generator = ExLlamaV2DynamicGenerator(model=model, cache=cache, tokenizer=tokenizer)

prompt = "<|im_start|>user\nName a famous film as JSON.<|im_end|>\n<|im_start|>assistant\n"
text = generator.generate(
    prompt=prompt,
    max_new_tokens=80,
    filters=[FormatEnforcerFilter(model, tokenizer, JsonSchemaParser(SCHEMA))],
    stop_conditions=[tokenizer.eos_token_id],
    completion_only=True,
    encode_special_tokens=True,
)
print(text)
print(json.loads(text))
