"""Runs offline vLLM batches with FormatEnforcerLogitsProcessor in a child process, one engine for them all.

vLLM's CPU backend pins threads, binds memory and replaces ``torch.set_num_threads`` in the process that hosts
the engine, which must not leak into the rest of the test session: the engine lives in a child process
(``python -m tests.vllm_offline_batch MODEL_FOLDER``). The child starts the engine once, then reads one batch
per line on stdin, ``{name: {"prompt": str, "extra_args": dict | null, "max_tokens": int}}`` (or
``"messages"``, a whole chat, in place of ``"prompt"``), generates it in one ``LLM.generate`` call (one batch)
and writes ``RESULT`` followed by ``{name: {"text": str, "finish_reason": str}}`` as one line on stdout. An
engine start takes most of a test's minute, so the tests share one child (``OfflineEngine``, through the
``vllm_offline`` fixture of tests/conftest.py); each batch is still its own ``generate`` call with the
sampling seeds it would get alone.
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RESULT = "@@formatenforcer-batch "
"""Marks the result line among whatever vLLM prints on stdout."""

ROOT = Path(__file__).resolve().parent.parent


def start(folder: str):  # noqa: ANN201 (vllm.LLM: vLLM is imported here only)
    """The engine: SmolLM2 from ``folder`` with the processor, on one thread, in this process."""
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")  # engine in this process: one start-up
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from vllm import LLM

    from formatenforcer.integrations.vllm import FormatEnforcerLogitsProcessor

    torch.set_num_threads(1)
    return LLM(
        model=folder,
        logits_processors=[FormatEnforcerLogitsProcessor],
        enforce_eager=True,
        distributed_executor_backend="uni",
        max_model_len=1024,
        max_num_seqs=8,
        dtype="float32",
        seed=0,
    )


def generate(llm, requests: dict[str, dict]) -> dict[str, dict]:  # noqa: ANN001
    """Generates every request in one ``LLM.generate`` call (one batch) and returns text + finish reason."""
    from vllm import SamplingParams

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


class OfflineEngine:
    """The test side: a child process hosting one engine, fed one batch at a time (``run``)."""

    def __init__(self, folder: str) -> None:
        env = dict(os.environ, VLLM_CPU_KVCACHE_SPACE="1", HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1")
        self.log = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")  # the child's stderr
        self.child = subprocess.Popen(
            [sys.executable, "-m", "tests.vllm_offline_batch", folder],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            env=env,
            cwd=str(ROOT),
        )
        self.pending = b""

    def run(self, requests: dict[str, dict], timeout: float) -> dict[str, dict]:
        """The batch's results; ``timeout`` seconds for it (the first batch also starts the engine)."""
        assert self.child.poll() is None, f"the vLLM child has exited:\n{self.stderr_tail()}"
        self.child.stdin.write(json.dumps(requests).encode() + b"\n")
        self.child.stdin.flush()
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as selector:
            selector.register(self.child.stdout, selectors.EVENT_READ)
            while True:
                line, newline, rest = self.pending.partition(b"\n")
                if newline:
                    self.pending = rest
                    if line.startswith(RESULT.encode()):
                        return json.loads(line[len(RESULT) :])
                    continue
                left = deadline - time.monotonic()
                assert left > 0, f"no result within {timeout} s:\n{self.stderr_tail()}"
                if selector.select(left):
                    chunk = os.read(self.child.stdout.fileno(), 1 << 16)
                    assert chunk, f"the vLLM child has exited:\n{self.stderr_tail()}"
                    self.pending += chunk

    def stderr_tail(self) -> str:
        self.log.flush()
        self.log.seek(0)
        return self.log.read()[-4000:]

    def close(self) -> None:
        """Ends the child (end of input), killing it if it does not exit within 60 s."""
        try:
            self.child.communicate(timeout=60)  # closes stdin; drains what the engine prints as it shuts down
        except (OSError, ValueError, subprocess.TimeoutExpired):
            self.child.kill()
            self.child.wait()
        finally:
            self.log.close()


def main(folder: str) -> None:
    llm = start(folder)
    for line in sys.stdin:
        if line.strip():
            result = generate(llm, json.loads(line))
            print(RESULT + json.dumps(result, ensure_ascii=False), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
