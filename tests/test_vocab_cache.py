"""The on-disk vocabulary cache: a reload equals a fresh build; a corrupt entry is rebuilt, never trusted."""

from __future__ import annotations

from formatenforcer import RegexParser, TokenEnforcer
from formatenforcer.hf_tokens import vocabulary_from_transformers

from . import tokenizers_fixtures as tf


def test_reload_equals_fresh_build(tmp_path):
    fresh = vocabulary_from_transformers(tf.llama3_tokenizer(), tf.LLAMA3_EOS, cache_dir=tmp_path)
    files = list(tmp_path.glob("*.vocab"))
    assert len(files) == 1
    reloaded = vocabulary_from_transformers(tf.llama3_tokenizer(), tf.LLAMA3_EOS, cache_dir=tmp_path)
    assert reloaded is not fresh
    assert reloaded.token_bytes == fresh.token_bytes and reloaded.trie == fresh.trie
    parser = RegexParser(r"\d{4}-\d{2}")
    assert TokenEnforcer(reloaded, parser).matcher().allowed_token_ids() == (
        TokenEnforcer(fresh, parser).matcher().allowed_token_ids()
    )


def test_corrupt_entry_is_rebuilt(tmp_path):
    tokenizer = tf.llama3_tokenizer()
    vocabulary_from_transformers(tokenizer, tf.LLAMA3_EOS, cache_dir=tmp_path)
    (entry,) = tmp_path.glob("*.vocab")
    entry.write_bytes(b"not marshal data")
    rebuilt = vocabulary_from_transformers(tf.llama3_tokenizer(), tf.LLAMA3_EOS, cache_dir=tmp_path)
    assert len(rebuilt.trie) > 200 and rebuilt.token_bytes[0] == b"!"


def test_no_disk_cache_when_disabled(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    vocabulary_from_transformers(tf.llama3_tokenizer(), tf.LLAMA3_EOS, cache_dir=False)
    assert not list(tmp_path.rglob("*.vocab"))
