"""vLLM (offline LLM API): a format per request through formatenforcer's logits processor.

Run: python samples/vllm_offline.py   (needs vLLM: pip install 'formatenforcer[vllm]'; CPU works, slowly)
Server: vllm serve MODEL --logits-processors formatenforcer.integrations.vllm:FormatEnforcerLogitsProcessor
and send "vllm_xargs": {"regex": "..."} (or "json": "<schema as a JSON string>") in the request body.
"""

import json
import sys

from formatenforcer.cli.model import transformers_folder
from formatenforcer.integrations.vllm import INSTALL_HINT

try:
    from vllm import LLM, SamplingParams
except ImportError:
    sys.exit(INSTALL_HINT)  # a one-line hint on stderr, exit status 1

from formatenforcer.integrations.vllm import (
    FormatEnforcerLogitsProcessor,
)  # needs the engine: after it

SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 30}, "age": {"type": "integer", "minimum": 0}},
    "required": ["name", "age"],
    "additionalProperties": False,  # closed: no extra keys for the model to ramble on
}

if __name__ == "__main__":  # vLLM starts worker processes: keep the work under the main guard
    # vLLM cannot read the Q4_1 GGUF of the embedded model: use its converted transformers folder.
    llm = LLM(
        model=str(transformers_folder()),
        logits_processors=[FormatEnforcerLogitsProcessor],
        max_model_len=1024,
        gpu_memory_utilization=0.3,  # on the CPU backend: the share of RAM vLLM may reserve
        kv_cache_memory_bytes=256 << 20,  # a 135M model needs little KV cache
        enforce_eager=True,  # skip torch.compile: starts in seconds instead of minutes on a CPU
    )
    requests = {
        "json": SamplingParams(max_tokens=80, temperature=0, extra_args={"json": SCHEMA}),
        "regex": SamplingParams(max_tokens=12, temperature=0, extra_args={"regex": r"[0-9]{3}-[0-9]{4}"}),
        "choice": SamplingParams(max_tokens=5, temperature=0, extra_args={"choice": ["yes", "no"]}),
        "free": SamplingParams(max_tokens=20, temperature=0),  # no format: left untouched
    }
    prompts = {
        "json": "Describe a person as JSON.",
        "regex": "Give me a phone number.",
        "choice": "Is the sky blue?",
        "free": "Say hello.",
    }
    for kind, params in requests.items():
        out = llm.chat([{"role": "user", "content": prompts[kind]}], params, use_tqdm=False)
        text = out[0].outputs[0].text
        print(f"{kind:>6}: {text!r}")
        if kind == "json":
            json.loads(text)
