"""Runs one offline vLLM batch with FormatEnforcerLogitsProcessor and prints the outputs as JSON (last line).

A script, run by tests/test_integration_vllm.py in its own process: vLLM's CPU backend pins threads, binds
memory and replaces ``torch.set_num_threads`` in the process that hosts the engine, which must not leak
into the rest of the test session. Usage: ``python -m tests.vllm_offline_batch MODEL_FOLDER < requests.json``
where the requests are ``{name: {"prompt": str, "extra_args": dict | null, "max_tokens": int}}`` (or
``"messages"``, a whole chat, in place of ``"prompt"``).
"""

from __future__ import annotations

import json
import os
import sys


def main(folder: str, requests: dict[str, dict]) -> dict[str, dict]:
    """Generates every request in one ``LLM.generate`` call (one batch) and returns text + finish reason."""
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")  # engine in this process: one start-up
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from vllm import LLM, SamplingParams

    from formatenforcer.integrations.vllm import FormatEnforcerLogitsProcessor

    torch.set_num_threads(1)
    llm = LLM(
        model=folder,
        logits_processors=[FormatEnforcerLogitsProcessor],
        enforce_eager=True,
        distributed_executor_backend="uni",
        max_model_len=1024,
        max_num_seqs=8,
        dtype="float32",
        seed=0,
    )
    tokenizer = llm.get_tokenizer()
    names = list(requests)
    prompts = [
        tokenizer.apply_chat_template(
            requests[n].get("messages") or [{"role": "user", "content": requests[n]["prompt"]}],
            tokenize=False,
            add_generation_prompt=True,
        )
        for n in names
    ]
    params = [
        SamplingParams(
            max_tokens=requests[n].get("max_tokens", 96), temperature=0.7, seed=i, extra_args=requests[n]["extra_args"]
        )
        for i, n in enumerate(names)
    ]
    outputs = llm.generate(prompts, params)
    return {n: {"text": o.outputs[0].text, "finish_reason": o.outputs[0].finish_reason} for n, o in zip(names, outputs)}


if __name__ == "__main__":
    result = main(sys.argv[1], json.load(sys.stdin))
    print(json.dumps(result, ensure_ascii=False))
