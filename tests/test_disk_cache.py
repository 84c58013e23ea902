"""The on-disk cache stays bounded and can be inspected and cleared: size caps with least-recently-used
eviction, one converted copy per model, and ``formatenforcer cache info|clear``."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from formatenforcer import RegexParser, Vocabulary
from formatenforcer.cli.main import main
from formatenforcer.cli.model import _drop_older_copies
from formatenforcer.core import disk_cache

from . import tokenizers_fixtures as tf


def test_saving_past_the_cap_evicts_the_least_recently_used(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setitem(disk_cache.SIZE_CAPS, ".dfa", 25_000)
    payload = (b"x" * 10_000,)
    old = time.time() - 1000
    for i, key in enumerate(["a", "b"]):
        disk_cache.save(tmp_path, key, payload, suffix=".dfa")
        os.utime(tmp_path / f"{key}.dfa", (old + i, old + i))
    disk_cache.save(tmp_path, "c", payload, suffix=".dfa")  # three entries do not fit: the oldest goes
    assert sorted(p.name for p in tmp_path.glob("*.dfa")) == ["b.dfa", "c.dfa"]
    disk_cache.save(tmp_path, "v", payload, suffix=".vocab")  # another kind has its own cap
    assert len(list(tmp_path.glob("*.dfa"))) == 2


def test_a_load_marks_an_entry_used(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setitem(disk_cache.SIZE_CAPS, ".dfa", 25_000)
    payload = (b"x" * 10_000,)
    old = time.time() - 1000
    for i, key in enumerate(["a", "b"]):
        disk_cache.save(tmp_path, key, payload, suffix=".dfa")
        os.utime(tmp_path / f"{key}.dfa", (old + i, old + i))
    assert disk_cache.load(tmp_path, "a", suffix=".dfa") == payload  # "a" is now the most recent
    disk_cache.save(tmp_path, "c", payload, suffix=".dfa")
    assert sorted(p.name for p in tmp_path.glob("*.dfa")) == ["a.dfa", "c.dfa"]


def test_one_converted_copy_per_model(tmp_path: Path) -> None:
    models = tmp_path / "models"
    old = models / "SmolLM2-135M-Instruct.Q4_1-09d3c8a66a070395"
    other_model = models / "Qwen2-0.5B.Q8_0-1111111111111111"
    new = models / "SmolLM2-135M-Instruct.Q4_1-aaaaaaaaaaaaaaaa"
    for folder in (old, other_model, new):
        folder.mkdir(parents=True)
        (folder / "config.json").write_text("{}")
    _drop_older_copies(new)
    assert sorted(p.name for p in models.iterdir()) == sorted([new.name, other_model.name])


def test_the_engine_tests_load_the_copy_the_command_line_keeps(tmp_path: Path, monkeypatch) -> None:
    """The engine tests' SmolLM2 folder is the command line's converted copy (no second 517 MB one), and a
    second copy an older test run left is removed."""
    from formatenforcer.cli.model import cache_folder, default_source

    from . import engine_models

    kept = cache_folder(default_source(), tmp_path)
    kept.mkdir(parents=True)
    (kept / "config.json").write_text("{}")  # already converted: nothing is loaded
    left = tmp_path / "smollm2-hf"
    left.mkdir()
    (left / ".complete").write_text(engine_models.GGUF_FILE + "\n")
    monkeypatch.setattr(engine_models, "CACHE_DIR", str(tmp_path))
    assert engine_models.smollm2_hf_folder() == kept
    assert not left.exists() and [p.name for p in (tmp_path / "models").iterdir()] == [kept.name]


def test_cache_info_and_clear(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    Vocabulary.from_transformers(tf.llama3_tokenizer(), tf.LLAMA3_EOS)
    # long and large enough to be kept on disk (short patterns build faster than they load)
    RegexParser("(" + "|".join(f"cache{i:03d}" for i in range(20)) + ")-[0-9]{120}")
    root = tmp_path / "formatenforcer"
    assert list(root.glob("*.vocab")) and list((root / "regex").glob("*.dfa"))
    assert main(["cache", "info"]) == 0
    out = capsys.readouterr().out
    assert f"cache: {root}" in out and "vocabulary indexes: 1 (" in out and "regex automata: 1 (" in out
    assert main(["cache", "clear", "--kind", "regex"]) == 0
    assert not list((root / "regex").glob("*.dfa")) and list(root.glob("*.vocab"))
    assert main(["cache", "clear"]) == 0
    assert "vocabulary indexes: removed 1" in capsys.readouterr().out
    assert not list(root.glob("*.vocab"))


@pytest.mark.parametrize("action", ["info", "clear"])
def test_cache_of_a_missing_folder(tmp_path: Path, capsys, action: str) -> None:
    assert main(["cache", action, "--cache-dir", str(tmp_path / "none")]) == 0
    assert "total: 0.0 MB" in capsys.readouterr().out
