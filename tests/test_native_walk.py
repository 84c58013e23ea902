"""The compiled walk gives the Python walk's masks, bit for bit, on the real tokenizers.

Each mask is computed twice in one process, once with the compiled core (``use_compiled(True)``) and once
on the Python walk, from every state the regex tests reach (and their pending bytes of split characters,
and the start of a SentencePiece output), along seeded random walks, and for random regexes (hypothesis).
The flat trie the compiled walk reads is checked against the dict trie the Python walk reads.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from formatenforcer import RegexError, RegexParser, TokenEnforcer, core_backend
from formatenforcer.core import backend, token_texts
from formatenforcer.core.compiled_walk import native_run
from formatenforcer.core.flat_trie import arrays, flat_trie
from formatenforcer.core.trie import IDS, build
from formatenforcer.core.walk import allowed_mask

from .conftest import TOKENIZER_NAMES
from .test_regex_tokenizers import CASES

pytestmark = pytest.mark.skipif(backend.native is None, reason="the compiled core is not built or is switched off")


@pytest.fixture
def both():
    """Runs the test body with the compiled walk on, and leaves it as it found it."""
    before = backend.active()
    yield
    backend.use_compiled(before)


def masks(vocabulary, state, pending: bytes = b"", at_start: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(compiled mask, Python mask) of one position, EOS included, neither from a cache."""
    backend.use_compiled(True)
    compiled = allowed_mask(vocabulary, state, pending, at_start)
    backend.use_compiled(False)
    python = allowed_mask(vocabulary, state, pending, at_start)
    backend.use_compiled(True)
    return compiled, python


def assert_same(vocabulary, state, pending: bytes = b"", at_start: bool = False) -> None:
    compiled, python = masks(vocabulary, state, pending, at_start)
    if not np.array_equal(compiled, python):
        diff = np.flatnonzero(np.unpackbits((compiled ^ python).view(np.uint8), bitorder="little"))
        shown = [(int(i), vocabulary.text_of(int(i))) for i in diff[:8]]
        raise AssertionError(f"{state!r} pending={pending!r} at_start={at_start}: {len(diff)} tokens differ {shown}")


def reachable(parser: RegexParser, limit: int = 60, per_state: int = 24) -> list[RegexParser]:
    """States reached breadth first (a few characters of each allowed interval per state)."""
    seen = {parser.key(): parser}
    todo = [parser]
    while todo and len(seen) < limit:
        state = todo.pop(0)
        chars = []
        for lo, hi in state.allowed_characters().intervals:
            chars.extend(chr(cp) for cp in {lo, hi, (lo + hi) // 2} if not 0xD800 <= cp <= 0xDFFF)
        for ch in chars[:per_state]:
            nxt = state.add_character(ch)
            if nxt is not None and nxt.key() not in seen:
                seen[nxt.key()] = nxt
                todo.append(nxt)
    return list(seen.values())


def pendings(state: RegexParser) -> list[bytes]:
    """Incomplete characters to test from ``state``: prefixes of characters it accepts, and a few it does not."""
    out = {b"\xc3", b"\xe4\xb8", b"\xf0\x9f", b"\xf0\x9f\x98", b"\xed", b"\xe0", b"\xf4\x8f", b"\xe0\x80", b"\xed\xa0"}
    for lo, hi in state.allowed_characters().intervals:
        for cp in (lo, hi):
            if cp >= 0x80 and not 0xD800 <= cp <= 0xDFFF:
                data = chr(cp).encode()
                out.update(data[:n] for n in range(1, len(data)))
    return sorted(out)


@pytest.mark.parametrize("name", TOKENIZER_NAMES)
def test_flat_trie_matches_the_dict_trie(vocabularies, name):
    """Preorder with sorted children over the dict trie gives exactly the flat trie's arrays."""
    vocabulary = vocabularies[name]
    flat = arrays(flat_trie(vocabulary))
    edge_start, edge_byte, edge_child, tok_start, tok_ids = [0], [], [], [0], []
    subtree_end: list[int] = []
    count = 0

    def visit(node) -> None:
        nonlocal count
        number = count
        count += 1
        subtree_end.append(0)
        ids = (node,) if node.__class__ is int else node.get(IDS, ())
        tok_ids.extend(sorted((ids,) if ids.__class__ is int else ids))
        tok_start.append(len(tok_ids))
        children = [] if node.__class__ is int else sorted(key for key in node if key != IDS)
        edge_start.append(edge_start[-1] + len(children))
        base = len(edge_byte)
        edge_byte.extend(children)
        edge_child.extend([0] * len(children))
        for k, byte in enumerate(children):
            edge_child[base + k] = count
            visit(node[byte])
        subtree_end[number] = count

    visit(vocabulary.trie)
    expected_edges = np.array(edge_start, dtype=np.int32)  # a node's edges are appended when it is visited
    assert np.array_equal(flat["tok_start"], np.array(tok_start, dtype=np.int32))
    assert np.array_equal(flat["tok_ids"], np.array(tok_ids, dtype=np.int32))
    assert np.array_equal(flat["subtree_end"], np.array(subtree_end, dtype=np.int32))
    assert np.array_equal(flat["edge_start"], expected_edges)
    assert np.array_equal(flat["edge_byte"], np.array(edge_byte, dtype=np.uint8))
    assert np.array_equal(flat["edge_child"], np.array(edge_child, dtype=np.int32))


@pytest.mark.parametrize("name", TOKENIZER_NAMES)
@pytest.mark.parametrize("pattern", [case[0] for case in CASES])
def test_regex_states_same_masks(vocabularies, both, name, pattern):
    vocabulary = vocabularies[name]
    for state in reachable(RegexParser(pattern)):
        assert_same(vocabulary, state)
        if vocabulary.strip_leading_space:
            assert_same(vocabulary, state, at_start=True)
        for pending in pendings(state):
            assert_same(vocabulary, state, pending)


@pytest.mark.parametrize("name", TOKENIZER_NAMES)
@pytest.mark.parametrize("pattern", [case[0] for case in CASES])
def test_random_walks_same_masks(vocabularies, both, name, pattern):
    """Seeded walks that pick any allowed token (split characters included): the same mask at every step.
    A position whose cache key (state key, pending bytes, at start) was met before is compared once: equal
    keys allow the same tokens, and a pattern's few states come back at most steps."""
    vocabulary = vocabularies[name]
    enforcer = TokenEnforcer(vocabulary, RegexParser(pattern))
    compared: dict = {}  # position cache key -> the compiled mask, equal to the Python one
    for seed in range(3):
        rng = random.Random(seed)
        position = enforcer._start
        for _ in range(40):
            compiled = compared.get(position.cache_key())
            if compiled is None:
                compiled, python = masks(vocabulary, position.state, position.pending, position.at_start)
                assert np.array_equal(compiled, python), (pattern, seed, position)
                compared[position.cache_key()] = compiled
            ids = np.flatnonzero(np.unpackbits(compiled.view(np.uint8), bitorder="little")[: vocabulary.size])
            ids = [int(i) for i in ids if int(i) not in vocabulary.eos_token_ids]
            if not ids:
                break
            position = enforcer.step(position, rng.choice(ids))
            assert position is not None


PIECES = [
    "a", "b", "é", "ü", "😀", "中", " ", "\\n", ".", "[a-c]", "[à-ÿ]", "[😀-🙏]", "[一-龥]", "[^a]", "[^\\n]",
    "\\d", "\\w", "[0-9]", "(ab|c)", "(é|😀)", "[^😀]",
]  # fmt: skip


@st.composite
def regexes(draw) -> str:
    parts = []
    for _ in range(draw(st.integers(1, 4))):
        piece = draw(st.sampled_from(PIECES))
        suffix = draw(st.sampled_from(["", "", "*", "+", "?", "{2}", "{1,3}", "{0,5}"]))
        parts.append(piece + suffix if len(piece) == 1 or piece[-1] in ")]" or piece[0] == "\\" else piece)
    if draw(st.booleans()):
        return "|".join(parts)
    return "".join(parts)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pattern=regexes(), seed=st.integers(0, 1000))
def test_random_regexes_same_masks(vocabularies, both, pattern, seed):
    """Random patterns (split characters, classes, counted repeats) on Llama 3 and SentencePiece."""
    try:
        parser = RegexParser(pattern)
    except RegexError:
        return
    rng = random.Random(seed)
    name = rng.choice(["llama3", "sentencepiece"])
    vocabulary = vocabularies[name]
    states = reachable(parser, limit=8, per_state=6)
    for state in states:
        assert_same(vocabulary, state, at_start=rng.random() < 0.3)
        choices = pendings(state)
        assert_same(vocabulary, state, rng.choice(choices))


def test_core_backend_reports_the_compiled_walk(both):
    assert core_backend() == "compiled"
    backend.use_compiled(False)
    assert core_backend() == "python"


@pytest.mark.parametrize("name", TOKENIZER_NAMES)
@pytest.mark.parametrize("pattern", [".?é", ".{0,2}é", "[a-zé]{1,3}x", ".?.?[é-ë]"])
def test_bounded_runs_with_a_split_character_at_their_bound(vocabularies, name, pattern, both):
    """A token of as many run characters as the bound allows, ending in the first bytes of one more
    character, is taken when what follows the run may start with that character: ``.?é`` takes Llama 3's
    `` \\xc3`` (a space, then é's first byte). The Python walk's free-run tables left it out (a hypothesis
    example of the differential test found it); both walks now agree with the character-level step."""
    vocabulary = vocabularies[name]
    assert_same(vocabulary, RegexParser(pattern))
    if name == "llama3" and pattern == ".?é":
        token = vocabulary.token_bytes.index(b" \xc3")
        backend.use_compiled(False)
        mask = allowed_mask(vocabulary, RegexParser(pattern), b"", False)
        assert mask[token >> 5] >> (token & 31) & 1


RUN_PATTERNS = [
    ".*", "[^\\n]{3,20}", "[^x]{0,5}x", "(yes|no)\\n.{0,12}", "é?[^a-z]*", '"[^"\\\\]*"', "[^@]+@.+", ".{2,}\\n",
]  # fmt: skip


@pytest.mark.parametrize("name", TOKENIZER_NAMES)
@pytest.mark.parametrize("pattern", RUN_PATTERNS)
def test_walks_from_a_free_run_same_masks(vocabularies, both, name, pattern):
    """States looping over a class that holds every non-ASCII character (unbounded, counted, after a
    non-ASCII character) start the compiled walk from the vocabulary's run row
    (``native_run``): the masks are the Python walk's, also with pending bytes and at a SentencePiece
    start (where no row is handed over)."""
    vocabulary = vocabularies[name]
    taken = 0
    for state in reachable(RegexParser(pattern), limit=24, per_state=8):
        backend.use_compiled(True)
        taken += native_run(vocabulary, state) is not None
        assert_same(vocabulary, state)
        assert_same(vocabulary, state, at_start=True)
        for pending in pendings(state)[:4]:
            assert_same(vocabulary, state, pending)
    assert taken, "no state handed the compiled walk a run: the check would prove little"


def same_trie(built, reference, path: bytes = b"") -> None:
    """``built`` is ``reference``: the same dicts, keys in the same order, the same bare ids and id tuples."""
    assert built.__class__ is reference.__class__, f"at {path!r}: {built!r} vs {reference!r}"
    if reference.__class__ is not dict:
        assert built == reference, f"at {path!r}"
        return
    assert list(built) == list(reference), f"keys at {path!r}: {list(built)[:8]} vs {list(reference)[:8]}"
    for key, child in reference.items():
        same_trie(built[key], child, path + bytes([key]) if key != IDS else path)


@pytest.mark.parametrize("name", TOKENIZER_NAMES)
def test_the_compiled_dict_trie_is_the_inserted_one(vocabularies, name):
    """The vocabulary's dict trie, built in C from the flat trie, is node for node (key order and bare leaf
    ids included) the trie that inserting every token in id order builds (``trie.build``, the reference)."""
    vocabulary = vocabularies[name]
    same_trie(flat_trie(vocabulary).as_dicts(), build(vocabulary.token_bytes))
    same_trie(vocabulary.trie, build(vocabulary.token_bytes))


@pytest.mark.parametrize("name", ["llama3", "smollm2"])
def test_byte_level_pieces_read_in_c_as_one_at_a_time(tokenizers, name):
    """A byte-level vocabulary's token bytes read in one compiled call are those read one piece at a time
    (``piece_bytes``), special and added tokens included."""
    tokenizer = tokenizers[name]
    pieces, special, added = token_texts._pieces(tokenizer)
    decode_one = token_texts._decoder_of(tokenizer)
    assert token_texts._scheme(tokenizer, pieces) == "byte-level"
    one_at_a_time = token_texts._each_piece(pieces, special, added, "byte-level", decode_one)
    assert token_texts._byte_level_bytes(pieces, special, added) == one_at_a_time
