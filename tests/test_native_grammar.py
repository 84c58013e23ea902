"""Grammar terminals walked in C give the Python walk's masks exactly.

A grammar state whose next characters are one terminal's lexeme hands the terminal's automaton state
(``TerminalState.lexeme_dfa``) to the compiled core, from the root and below the end points of other lexemes
(core/lexeme_automaton.py, ``compiled_below``): C returns the tokens the terminal reads and the points where
it may end and a token goes on with a character it does not read, and the full grammar state is resumed
from those points in Python. Checked on MaskBench's grammars (benchmarks/grammar_cases.py) on Llama 3 and
SmolLM2: every mask along each text's natural tokenization and along random token walks equals the mask of
the Python walk, each side on a vocabulary with caches of its own; and each terminal walk's inside mask
equals the Python walk's, bit for bit, with every end point one where the terminal may end and a token
leaves it.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from grammar_cases import GRAMMARS  # noqa: E402

from formatenforcer import GrammarParser, TokenEnforcer, Vocabulary  # noqa: E402
from formatenforcer.core import backend, walk  # noqa: E402
from formatenforcer.core.lexeme_automaton import compiled_below  # noqa: E402
from formatenforcer.core.trie import IDS  # noqa: E402

from .checking import _first_bytes  # noqa: E402

pytestmark = pytest.mark.skipif(backend.native is None, reason="the compiled core is not built or is switched off")

NAMES = ("llama3", "smollm2")


@pytest.fixture
def restore():
    before = backend.active()
    yield
    backend.use_compiled(before)


def _fresh(vocabulary: Vocabulary) -> Vocabulary:
    """The same tokens with caches of its own (the trie is shared: it is read-only)."""
    return Vocabulary(
        vocabulary.token_bytes,
        vocabulary.eos_token_ids,
        size=vocabulary.size,
        strip_leading_space=vocabulary.strip_leading_space,
        trie=vocabulary.trie,
    )


def _lark(grammar: str) -> str:
    lark = GRAMMARS[grammar][0]
    return lark() if callable(lark) else lark


def _token_paths(grammar: str, vocabulary: Vocabulary, tokenizer) -> tuple[list[list[int]], TokenEnforcer]:
    """A natural tokenization of each text of the grammar, and two random token walks (a random first byte,
    then a random allowed token with it), chosen on the Python walk; and the enforcer that chose them (its
    cached masks are the Python walk's, and ``_masks`` reads the Python masks from it)."""
    backend.use_compiled(False)
    paths = [tokenizer.encode(text, add_special_tokens=False)[:30] for text in GRAMMARS[grammar][2]]
    enforcer = TokenEnforcer(_fresh(vocabulary), GrammarParser(_lark(grammar), "lark"))
    firsts = _first_bytes(vocabulary)
    eos = set(vocabulary.eos_token_ids)
    for seed in range(2):
        rng = random.Random(f"{grammar}-{seed}")
        matcher, path = enforcer.matcher(), []
        for _ in range(15):
            allowed = np.array([t for t in matcher.allowed_token_ids() if t not in eos])
            if not allowed.size:
                break
            group = rng.choice(sorted(set(firsts[allowed].tolist())))
            members = allowed[firsts[allowed] == group]
            token = int(members[rng.randrange(len(members))])
            assert matcher.accept_token(token)
            path.append(token)
        paths.append(path)
    return paths, enforcer


def _masks(
    grammar: str, vocabulary: Vocabulary, paths: list[list[int]], compiled: bool, enforcer: TokenEnforcer | None = None
) -> list[np.ndarray]:
    """The masks along ``paths``, from ``enforcer`` or a new one over a vocabulary with empty caches."""
    backend.use_compiled(compiled)
    if enforcer is None:
        enforcer = TokenEnforcer(_fresh(vocabulary), GrammarParser(_lark(grammar), "lark"))
    rows = []
    for path in paths:
        matcher = enforcer.matcher()
        for token in [*path, None]:
            rows.append(matcher.mask().copy())
            if token is not None:
                assert matcher.accept_token(token)
    return rows


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("grammar", ["sql", "arithmetic", "c_like", "json_grammar", "tool_call"])
def test_grammar_masks_equal_the_python_walk(vocabularies, tokenizers, name, grammar, restore):
    vocabulary = vocabularies[name]
    paths, chooser = _token_paths(grammar, vocabulary, tokenizers[name])
    python = _masks(grammar, vocabulary, paths, False, chooser)  # (the random walks' masks: already walked)
    calls = []
    original = walk.compiled_below

    def counted(*args):
        found = original(*args)
        calls.append(found is not None)
        return found

    walk.compiled_below = counted
    try:
        compiled = _masks(grammar, vocabulary, paths, True)
    finally:
        walk.compiled_below = original
    assert len(compiled) == len(python)
    for index, (a, b) in enumerate(zip(compiled, python)):
        differ = np.nonzero(np.unpackbits(np.bitwise_xor(a, b).view(np.uint8), bitorder="little"))[0]
        assert differ.size == 0, f"{grammar} on {name}, mask {index}: differs on tokens {differ[:10].tolist()}"
    assert sum(calls) >= 3, "too few terminal walks went to the compiled core: the check would prove little"


def _terminal_states(grammar: str) -> list:
    """The terminal states (``TerminalState``) grammar states hand to the walk along the grammar's texts,
    character by character, with the states of their lexemes after one and two characters."""
    parser = GrammarParser(_lark(grammar), "lark")
    out, seen = [], set()
    for text in GRAMMARS[grammar][2]:
        state = parser
        for ch in text:
            branches = state.alternatives() or (state,)
            for branch in branches:
                lexeme = branch.lexeme()
                if lexeme is not None and lexeme.inner.lexeme_dfa() is not None and lexeme.inner.key() not in seen:
                    seen.add(lexeme.inner.key())
                    out.append(lexeme.inner)
            state = state.add_character(ch)
            assert state is not None
    return out


def _python_inside(vocabulary: Vocabulary, inner, node) -> np.ndarray:
    walker = walk._LexemeWalk(vocabulary, False)
    walker.walk(node, inner, b"")
    return walk._packed(walker)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("grammar", ["sql", "c_like"])
def test_terminal_walks_equal_the_python_walk(vocabularies, name, grammar, restore):
    """Below the root, below the wide nodes of the vocabulary and below the continuations of the root walk's
    end points (several nodes, each cut to the bytes the terminal does not read), the compiled walk reads
    the Python walk's tokens; its end points are where the terminal may end and some edge below leaves it."""
    backend.use_compiled(True)
    vocabulary = vocabularies[name]
    trie = vocabulary.trie
    wide = [child for byte, child in trie.items() if byte != IDS and child.__class__ is dict and len(child) > 40]
    walked = 0
    for inner in _terminal_states(grammar):
        places = [((trie, None),), *[((node, None),) for node in wide[:6]]]
        root = compiled_below(vocabulary, inner, ((trie, None),))
        if root is not None:
            groups = walk._end_groups(_ends_walker(vocabulary, root[1]), False)
            places.extend(merged.sources for _, _, merged in groups if merged.__class__ is walk.Continuations)
        for sources in places:
            found = compiled_below(vocabulary, inner, sources)
            if found is None:
                continue
            walked += 1
            mask, ends = found
            python = np.zeros_like(mask)
            for node, first in sources:
                node = node if first is None else {byte: node[byte] for byte in first}
                python |= _python_inside(vocabulary, inner, node)
            assert np.array_equal(mask, python), (grammar, inner)
            for node, state in ends:
                assert state.can_end(), (grammar, inner, state)
                ok = state.allowed_characters().ascii
                assert any(byte >= 128 or not ok[byte] for byte in node if byte != IDS), (grammar, inner, state)
    assert walked > 10, "too few terminal walks went to the compiled core: the check would prove little"


def _ends_walker(vocabulary: Vocabulary, ends: list):
    walker = walk._LexemeWalk(vocabulary, False)
    walker.ends = ends
    return walker


def test_walk_arguments_are_checked(llama3_vocabulary, restore):
    from formatenforcer.core.automaton import native_automaton
    from formatenforcer.core.flat_trie import flat_trie

    inner = _terminal_states("sql")[0]
    dfa, state, _ = inner.lexeme_dfa()
    automaton = native_automaton(dfa)
    trie = flat_trie(llama3_vocabulary)
    stop = bytes(len(dfa.transitions))
    out = np.empty((llama3_vocabulary.size + 31) // 32, dtype=np.int32)
    root = np.array([0, 0], dtype=np.int32)
    native = backend.native
    with pytest.raises(ValueError):
        native.walk_lexeme_below(trie, automaton, len(dfa.transitions), stop, out, root, b"", b"")  # no such state
    with pytest.raises(ValueError):
        native.walk_lexeme_below(trie, automaton, state, stop + b"\x00", out, root, b"", b"")  # one byte per state
    with pytest.raises(ValueError):
        native.walk_lexeme_below(trie, automaton, state, b"\x04" * len(stop), out, root, b"", b"")  # no stop kind 4
    with pytest.raises(ValueError):
        native.walk_lexeme_below(trie, automaton, state, stop, out[:10], root, b"", b"")  # too small an output
    with pytest.raises(ValueError):
        native.walk_lexeme_below(trie, automaton, state, stop, out, np.array([trie.nodes, 0], np.int32), b"", b"")
    with pytest.raises(ValueError):
        native.walk_lexeme_below(trie, automaton, state, stop, out, np.array([0, -1], np.int32), b"", b"")
    with pytest.raises(ValueError):
        native.walk_lexeme_below(trie, automaton, state, stop, out, root, b"a", np.array([0], np.int32))  # 2 starts
    with pytest.raises(ValueError):
        native.walk_lexeme_below(trie, automaton, state, stop, out, root, b"a", np.array([0, 2], np.int32))  # past
    assert isinstance(native.walk_lexeme_below(trie, automaton, state, stop, out, root, b"", b""), bytes)
    assert isinstance(
        native.walk_lexeme_below(trie, automaton, state, stop, out, root, b"ab", np.array([0, 2], np.int32)), bytes
    )
