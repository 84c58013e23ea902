"""The vocabulary index on real tokenizers: recovered token texts, special tokens, EOS, split characters."""

from __future__ import annotations

import bisect
import sys

import numpy as np
import pytest

from formatenforcer import ChoiceParser, RegexParser, TokenEnforcer, Vocabulary

from .checking import accepts_text, encode
from .conftest import TOKENIZER_NAMES

TEXTS = ["Hello, world!", ' {"key": [1, 2.5e-3, true]}', "naïve café — 東京 😀🎉", "\n\t  indented\n"]


@pytest.mark.parametrize("name", TOKENIZER_NAMES)
def test_token_bytes_concatenate_to_the_decoded_text(tokenizers, vocabularies, name):
    tokenizer, vocabulary = tokenizers[name], vocabularies[name]
    for text in TEXTS:
        ids = encode(tokenizer, text)
        data = b"".join(vocabulary.text_of(t) for t in ids)
        decoded = tokenizer.decode(ids, clean_up_tokenization_spaces=False)
        if vocabulary.strip_leading_space and data[:1] == b" ":
            data = data[1:]
        assert data.decode("utf-8") == decoded, f"{name}: {text!r}"


def test_scheme_detection(vocabularies):
    assert not vocabularies["llama3"].strip_leading_space
    assert not vocabularies["smollm2"].strip_leading_space
    assert vocabularies["sentencepiece"].strip_leading_space
    assert "byte-level" in vocabularies["llama3"].name and "sentencepiece" in vocabularies["sentencepiece"].name


def test_memoised_per_tokenizer(llama3_tokenizer, llama3_vocabulary):
    assert Vocabulary.from_transformers(llama3_tokenizer, (128001, 128009)) is llama3_vocabulary


@pytest.mark.parametrize("name", TOKENIZER_NAMES)
def test_special_tokens_are_never_allowed(tokenizers, vocabularies, name):
    tokenizer, vocabulary = tokenizers[name], vocabularies[name]
    specials = set(tokenizer.all_special_ids) | {i for i, t in tokenizer.added_tokens_decoder.items() if t.special}
    specials -= set(vocabulary.eos_token_ids)
    enforcer = TokenEnforcer(vocabulary, RegexParser(r"(.|\n)*"))
    allowed = set(enforcer.matcher().allowed_token_ids())
    assert specials and not (specials & allowed)
    assert set(vocabulary.eos_token_ids) <= allowed  # ".*" may end at once


@pytest.mark.parametrize("name", TOKENIZER_NAMES)
def test_eos_allowed_exactly_when_the_format_may_end(vocabularies, tokenizers, name):
    vocabulary = vocabularies[name]
    matcher = TokenEnforcer(vocabulary, ChoiceParser(["hot", "hotel"])).matcher()
    eos = set(vocabulary.eos_token_ids)
    assert not eos & set(matcher.allowed_token_ids())
    for token in encode(tokenizers[name], "hot"):
        assert matcher.accept_token(token)
    assert eos <= set(matcher.allowed_token_ids())


@pytest.mark.parametrize("name", TOKENIZER_NAMES)
@pytest.mark.parametrize("text", ["😀", "東京🎉", "é"])
def test_characters_split_over_tokens_are_generatable(tokenizers, vocabularies, name, text):
    """A character made of several byte tokens must be reachable wherever the format allows it."""
    ok, reason = accepts_text(vocabularies[name], tokenizers[name], ChoiceParser(["a", text]), text)
    assert ok, reason


def test_llama3_emoji_really_is_split(llama3_tokenizer):
    assert len(encode(llama3_tokenizer, "😀")) > 1  # otherwise the test above proves nothing


def test_import_loads_no_engine():
    import subprocess

    code = "import formatenforcer, sys; print(sorted(m for m in ('torch','transformers','vllm') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("name", TOKENIZER_NAMES)
@pytest.mark.parametrize("lead", [b'"', b"{ \n", bytes(range(0x61, 0x7B)), b"\xe4\xf0", b"\x00"])
def test_first_bytes_mask_holds_exactly_the_tokens_starting_with_those_bytes(vocabularies, name, lead):
    from formatenforcer.core.bitmask import ids_of

    vocabulary = vocabularies[name]
    expected = [i for i, data in enumerate(vocabulary.token_bytes) if data and data[0] in lead]
    assert ids_of(vocabulary.first_bytes_mask(lead)) == expected


@pytest.mark.parametrize("name", TOKENIZER_NAMES)
def test_subtree_entries_are_the_bytes_below_each_node(vocabularies, name):
    from formatenforcer.core.trie import IDS, subtree_entries

    vocabulary = vocabularies[name]
    # the tokens that start with a prefix are one run of the tokens sorted by their bytes, from the prefix's place
    ordered = sorted((data, i) for i, data in enumerate(vocabulary.token_bytes) if data)
    texts = [data for data, _ in ordered]
    for first, node in list(vocabulary.trie.items())[:40]:
        if first == IDS:
            continue
        for second, child in ([(None, node)] + [(b, c) for b, c in getattr(node, "items", dict)() if b != IDS])[:6]:
            prefix = bytes([first] if second is None else [first, second])
            start = end = bisect.bisect_left(texts, prefix)
            while end < len(texts) and texts[end].startswith(prefix):
                end += 1
            expected = sorted((i, data[len(prefix) :]) for data, i in ordered[start:end])
            assert sorted(subtree_entries(child, vocabulary.token_bytes)) == expected, prefix


@pytest.mark.parametrize("count", [0, 1, 8, 9, 127, 128, 5000])
def test_pack_ids_sets_exactly_the_given_bits(count):
    """Few, some and many ids take different packing paths; all set bit ``i % 32`` of word ``i // 32``."""
    import random

    import numpy as np

    from formatenforcer.core.run_tables import pack_ids

    size = 128_256
    ids = random.Random(count).sample(range(size), count) + ([0, 31, 32, size - 1] if count else [])
    for given in (ids, tuple(ids), iter(ids)):
        words = pack_ids(given, size)
        assert words.dtype == np.int32 and words.shape == ((size + 31) // 32,)
        bits = np.unpackbits(words.view(np.uint8), bitorder="little")
        assert np.flatnonzero(bits).tolist() == sorted(set(ids))


def _exit_set(table) -> set:
    """A table's exits as (run length, bytes past the run, id) triples."""
    from formatenforcer.core.trie import IDS, as_dict, ids_at

    out = set()
    for run, trie in table.all_exits().items():
        stack = [(trie, b"")]
        while stack:
            node, path = stack.pop()
            for key, child in as_dict(node).items():
                if key == IDS:
                    out.update((run, path, token_id) for token_id in ids_at(child))
                else:
                    stack.append((child, path + bytes((key,))))
    return out


@pytest.mark.parametrize("name", TOKENIZER_NAMES)
def test_small_subtree_tables_equal_the_vectorized_build(vocabularies, name):
    """FreeRunTable.small (a plain loop, for subtrees of a few tokens) builds the same table as the numpy
    build: the same run tokens and lengths, the same exits, the same bounded selections; on the small
    subtrees of real vocabularies (split characters, byte-fallback tokens included) and several classes."""
    import numpy as np

    from formatenforcer.core.charset import ANY, CharSet
    from formatenforcer.core.run_tables import FreeRunTable
    from formatenforcer.core.trie import IDS, subtree_entries

    vocabulary = vocabularies[name]
    classes = [ANY - CharSet.of('"\\'), CharSet.ranges(("0", "9")), CharSet.ranges(("a", "z"), ("à", "ÿ")),
               CharSet.ranges(("一", "鿿")), CharSet.of("x")]  # fmt: skip
    nodes, stack = [], [vocabulary.trie]
    while stack and len(nodes) < 300:  # small subtrees at various depths, multi-byte characters included
        node = stack.pop()
        for byte, child in node.items():
            if byte != IDS and child.__class__ is dict:
                (nodes if 1 < len(subtree_entries(child, vocabulary.token_bytes)) <= 24 else stack).append(child)
    assert len(nodes) >= 50
    for node in nodes:
        entries = subtree_entries(node, vocabulary.token_bytes)
        for chars in classes:
            small = FreeRunTable.small(entries, chars, vocabulary.size, node)
            full = FreeRunTable(entries, chars, vocabulary.size, bucketed=False, root=node)
            assert sorted(small.few) == sorted(full.few) and small.longest_run == full.longest_run
            assert small.exit_lengths == full.exit_lengths and _exit_set(small) == _exit_set(full)
            for limit in range(small.longest_run + 1):
                assert sorted(np.atleast_1d(small.within(limit))) == sorted(np.atleast_1d(full.within(limit)))


@pytest.mark.parametrize("name", TOKENIZER_NAMES)
def test_token_run_lengths_match_counting_characters(vocabularies, name):
    """TokenTexts.runs (narrow classes step over the tokens still inside, wide ones scan every character)
    gives each token's count of leading complete characters in the class, as a plain loop counts them."""
    from formatenforcer.core.charset import ANY, CharSet
    from formatenforcer.core.run_tables import TokenTexts

    vocabulary = vocabularies[name]
    texts = TokenTexts(enumerate(vocabulary.token_bytes))
    classes = [CharSet.of("0123456789"), CharSet.of("x"), CharSet(), ANY, ANY - CharSet.of('"\\'),
               CharSet.ranges(("a", "z"), ("A", "Z"), ("0", "9")) | CharSet.of("._%+-"),
               CharSet.ranges(("a", "z"), ("à", "ÿ")), CharSet.ranges(("一", "鿿")), CharSet.of(" \n")]  # fmt: skip
    for chars in classes:
        expected = []
        for text in (texts.text(row) for row in range(len(texts.ids))):
            count = 0
            for ch in text:
                if ch not in chars:
                    break
                count += 1
            expected.append(count)
        assert texts.runs(chars).tolist() == expected, chars


@pytest.mark.parametrize("name", TOKENIZER_NAMES)
def test_big_subtree_tables_from_the_whole_vocabulary_texts_equal_the_subtree_build(vocabularies, name):
    """The texts below a big trie node (the space: 58k tokens of Llama 3) are read as a view of the whole
    vocabulary's texts; the tables built on that view equal the tables built from the subtree's own texts."""
    import numpy as np

    from formatenforcer.core.charset import ANY, CharSet
    from formatenforcer.core.run_tables import FreeRunTable, TokenTexts
    from formatenforcer.core.trie import IDS, subtree_entries

    vocabulary = vocabularies[name]

    def is_big(node) -> bool:
        return node.__class__ is dict and subtree_entries(node, vocabulary.token_bytes, 2048) is None

    big = [(bytes((byte,)), child) for byte, child in vocabulary.trie.items() if byte != IDS and is_big(child)]
    for path, node in list(big):  # and one level down: a space then a letter, say
        big += [(path + bytes((b,)), c) for b, c in node.items() if b != IDS and is_big(c)]
    if name == "llama3":
        assert b" " in [path for path, _ in big]
    for path, node in big:
        view = vocabulary._suffix_source(node)
        try:
            path.decode("utf-8")
        except UnicodeDecodeError:
            assert view is None  # a path ending inside a character is read from the subtree
            continue
        own = TokenTexts(subtree_entries(node, vocabulary.token_bytes))
        assert sorted(view.ids.tolist()) == sorted(own.ids.tolist()), path
        classes = [CharSet.of(" \t\n\r"), ANY - CharSet.of('"\\'), CharSet.ranges(("a", "z")), CharSet.of("0123456789")]
        for chars in classes:
            a = FreeRunTable(view, chars, vocabulary.size, bucketed=False, root=node)
            b = FreeRunTable(own, chars, vocabulary.size, bucketed=False, root=node)
            assert a.longest_run == b.longest_run and a.exit_lengths == b.exit_lengths, (path, chars)
            if a.few is None:
                assert b.few is None and np.array_equal(a.runs_upto(None), b.runs_upto(None))
            else:
                assert sorted(a.few) == sorted(b.few)
            assert _exit_set(a) == _exit_set(b), (path, chars)


@pytest.mark.parametrize("name", TOKENIZER_NAMES)
def test_token_texts_decoded_in_c_equal_the_python_reading(vocabularies, name):
    """The whole vocabulary's texts, read by the compiled core's ``decode_tokens`` (what Vocabulary uses when
    it is built), equal the Python constructor's, row by row: ids, characters and trailing partial bytes."""
    from formatenforcer.core import backend
    from formatenforcer.core.run_tables import TokenTexts

    if backend.native is None:
        pytest.skip("the compiled core is not built or is switched off")
    vocabulary = vocabularies[name]
    expected = TokenTexts(enumerate(vocabulary.token_bytes))
    got = TokenTexts.decoded(vocabulary.token_bytes, backend.native)
    assert got.ids.tolist() == expected.ids.tolist()
    assert got.lengths.tolist() == expected.lengths.tolist()
    assert np.array_equal(got.code_points, expected.code_points)
    assert all(got.text(r) == expected.text(r) and got.tail(r) == expected.tail(r) for r in range(len(got.ids)))


@pytest.mark.parametrize("name", TOKENIZER_NAMES)
def test_whole_vocabulary_tables_read_the_trie_only_for_their_exits(vocabularies, name):
    """A whole-vocabulary table given its root as a function (``root_of``: the vocabulary's dict trie, made
    at its first use) does not call it to build its rows, and then gives the same exits and exit lengths as
    the table given the root itself, for wide and narrow classes."""
    from formatenforcer.core.charset import ANY, CharSet
    from formatenforcer.core.run_tables import FreeRunTable, TokenTexts

    vocabulary = vocabularies[name]
    texts = TokenTexts(enumerate(vocabulary.token_bytes))
    asked = []

    def root_of():
        asked.append(1)
        return vocabulary.trie

    for chars in [ANY - CharSet.of('"\\'), CharSet.of(" \n\t"), CharSet.of("0123456789"), CharSet.ranges(("a", "z"))]:
        asked.clear()
        late = FreeRunTable(texts, chars, vocabulary.size, root_of=root_of)
        eager = FreeRunTable(texts, chars, vocabulary.size, root=vocabulary.trie)
        assert np.array_equal(late.runs_upto(None), eager.runs_upto(None))
        assert np.array_equal(late.runs_upto(3), eager.runs_upto(3))
        assert not asked
        assert late.exit_lengths == eager.exit_lengths and asked == [1]
        assert _exit_set(late) == _exit_set(eager) and asked == [1]


def test_dict_trie_is_made_at_its_first_use_and_equals_the_reference(llama3_vocabulary):
    """``Vocabulary.trie`` is made when first read, with the compiled core from the flat trie, and equals the
    dicts inserted in id order (trie.build); the one object is kept."""
    from formatenforcer.core import backend
    from formatenforcer.core.trie import build

    like = llama3_vocabulary
    vocabulary = Vocabulary(like.token_bytes, like.eos_token_ids, size=like.size)
    assert (vocabulary._trie is None) == (backend.native is not None)
    trie = vocabulary.trie
    assert trie is vocabulary.trie and trie == build(vocabulary.token_bytes)


def test_dict_trie_made_in_c_is_out_of_the_cycle_collectors_sight(llama3_vocabulary):
    """The dicts ``Trie.as_dicts`` makes (and its id tuples) are not tracked by the cycle collector, so the
    ~190,000 dicts of the Llama 3 trie cost a collection nothing without a ``gc.freeze``; a dict into which
    a container is put later is tracked again, as CPython does for any dict."""
    import gc

    from formatenforcer.core import backend, flat_trie

    if backend.native is None:
        pytest.skip("the compiled core is not built")
    trie = flat_trie.flat_trie(llama3_vocabulary).as_dicts()
    stack, seen = [trie], 0
    while stack:
        node = stack.pop()
        seen += 1
        assert not gc.is_tracked(node)
        for child in node.values():
            if child.__class__ is dict:
                stack.append(child)
            elif child.__class__ is tuple:
                assert not gc.is_tracked(child)
    assert seen > 150_000
    trie[0x20]["extra"] = []
    assert gc.is_tracked(trie[0x20])


def test_a_built_vocabulary_holds_the_tries_its_first_mask_reads(llama3_vocabulary):
    """``from_tokens`` and ``from_transformers`` leave the first mask nothing to build but what the Python
    walk alone reads: the flat trie with the compiled core, and the dict trie too when every walk is a
    Python walk (no compiled walk), but not when the compiled walk is on."""
    from formatenforcer.core import backend, flat_trie

    like = llama3_vocabulary
    made = Vocabulary.from_tokens(like.token_bytes, like.eos_token_ids, size=like.size)
    assert (flat_trie._TRIES.get(made) is not None) == (backend.native is not None)
    assert (made._trie is not None) == (not backend.active())
