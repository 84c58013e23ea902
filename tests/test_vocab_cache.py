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


def test_large_regex_automata_are_kept_on_disk_and_reload_identically(tmp_path, monkeypatch):
    """Formats such as email take ~1 s to build; a second process loads the automaton instead. A damaged
    file is ignored (rebuilt), never trusted."""
    from formatenforcer import regex
    from formatenforcer.jsonschema.formats import FORMAT_PATTERNS

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    pattern = FORMAT_PATTERNS["email"]
    monkeypatch.setattr(regex, "_CACHE", type(regex._CACHE)())  # an empty in-process memo
    built = regex.compile_regex(pattern)
    files = list((tmp_path / "formatenforcer" / "regex").glob("*.dfa"))
    assert len(files) == 1 and len(built.transitions) >= regex._DISK_MIN_STATES
    loaded = regex._from_disk(pattern)
    assert loaded is not None and loaded is not built
    assert loaded.transitions == built.transitions and loaded.finals == built.finals
    for text in ["ann@example.com", "a.b@c.d", "no-at-sign", "x@[127.0.0.1]"]:
        assert regex.RegexParser(loaded).accepts(text) == regex.RegexParser(built).accepts(text)
    files[0].write_bytes(b"\x00garbage")
    assert regex._from_disk(pattern) is None
