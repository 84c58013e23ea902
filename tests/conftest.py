"""Shared fixtures: the real tokenizers (session-scoped, built offline) and their vocabularies."""

from __future__ import annotations

import gc
import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from formatenforcer import Vocabulary  # noqa: E402

from . import tokenizers_fixtures as tf  # noqa: E402

# The cycle collector's full passes, 10 times rarer than Python's default (700, 10, 10) in the test processes:
# the JSON tests build and drop graphs of parser states (up to ~460,000 objects alive at once) and every full
# pass rescans all of them, ~17% of a worker's CPU on the JSON modules. Young collections keep their default
# cadence, so garbage cycles are still found as often; tests that need a collection call gc.collect().
gc.set_threshold(700, 10, 100)

TOKENIZER_NAMES = ("llama3", "smollm2", "sentencepiece")


@pytest.fixture(scope="session")
def llama3_tokenizer():
    return tf.llama3_tokenizer()


@pytest.fixture(scope="session")
def smollm2_tokenizer():
    return tf.smollm2_tokenizer()


@pytest.fixture(scope="session")
def sp_tokenizer(tmp_path_factory):
    return tf.sentencepiece_tokenizer(tmp_path_factory.mktemp("sentencepiece"))


@pytest.fixture(scope="session")
def tokenizers(llama3_tokenizer, smollm2_tokenizer, sp_tokenizer):
    """name -> transformers tokenizer, for tests that run the same cases on every real tokenizer."""
    return {"llama3": llama3_tokenizer, "smollm2": smollm2_tokenizer, "sentencepiece": sp_tokenizer}


@pytest.fixture(scope="session")
def vocabularies(tokenizers, llama3_vocabulary):
    """name -> Vocabulary (Llama 3 with both of its end markers)."""
    out = {"llama3": llama3_vocabulary}
    for name, tokenizer in tokenizers.items():
        if name != "llama3":
            out[name] = Vocabulary.from_transformers(tokenizer)
    return out


@pytest.fixture(scope="session")
def llama3_vocabulary(llama3_tokenizer):
    """Built on its own, so a worker that needs only Llama 3 neither loads SmolLM2 nor trains SentencePiece."""
    return Vocabulary.from_transformers(llama3_tokenizer, tf.LLAMA3_EOS)


@pytest.fixture(scope="session")
def smollm2_model(smollm2_tokenizer):
    """The real SmolLM2-135M-Instruct (float32, CPU, one torch thread) with its tokenizer."""
    pytest.importorskip("torch")
    from .jump_forward_cases import load_smollm2

    return load_smollm2(smollm2_tokenizer)


@pytest.fixture(scope="session")
def vllm_offline():
    """One offline vLLM engine (SmolLM2 with the processor, in a child process) for every test that runs a
    batch through ``LLM.generate``: ``vllm_offline.run(requests, timeout)`` (tests/vllm_offline_batch.py).
    Started on first use; those tests are one xdist group ("vllm"), so one worker starts it once. Between
    batches the child waits on its input (no CPU; its memory stays held) and it ends with the session."""
    pytest.importorskip("vllm")
    from .engine_models import smollm2_hf_folder
    from .vllm_offline_batch import OfflineEngine

    engine = OfflineEngine(str(smollm2_hf_folder()))
    yield engine
    engine.close()


# --- running under pytest-xdist (README's `python -m pytest -n auto`) --------------------------------------------
# With `--dist loadgroup` (pyproject's addopts), tests of one xdist_group run on one worker, one after another:
# - "vllm": every test that starts a vLLM engine (a child process of several GB taking both cores for minutes;
#   two at once would only slow each other towards their time-outs);
# - the modules whose module-scoped fixture is expensive (an engine, a model, the JSON-Schema-Test-Suite run),
#   or whose tests share an expensive reference computed once per process, so that it is built on one worker.
# The shared state on disk is safe to share: ~/.cache/formatenforcer entries are written to a temporary file
# and renamed into place (core/disk_cache.py), the converted SmolLM2 folder is built under a file lock
# (tests/engine_models.py, the command line's cache folder), tests that write files use tmp_path, and the
# timed tests time a fresh interpreter.
XDIST_GROUPS = {
    "test_integration_vllm.py": "vllm",
    "test_vllm_reasoning.py": "vllm",
    "test_integration_vllm_v2.py": "vllm-v2",
    "test_integration_llamacpp.py": "llamacpp",
    "test_integration_exllamav2.py": "exllamav2",
    "test_integration_pipeline.py": "pipeline",
    "test_free_run_masks.py": "free-run-masks",  # two tests compare with one plain walk of Llama 3 per pair
}


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook, which reads the groups into the test ids
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        group = XDIST_GROUPS.get(item.path.name)
        if group is not None and not item.get_closest_marker("xdist_group"):
            item.add_marker(pytest.mark.xdist_group(group))
    # Long tests first: xdist hands out the groups (most tests first), then single tests in collection order,
    # so a slow test of a module late in the alphabet (a model's generate, a sample run) would start when the
    # other worker has nothing left and finish alone. Modules with a slow test go first, each kept whole (its
    # module-scoped fixtures are built once), in their collection order; the many short tests fill in at the end.
    slow_modules = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow_modules)
