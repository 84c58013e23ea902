"""Strings under a pattern are walked in C with their end points, and give the Python walk's result exactly.

``walk.lexeme_result`` hands a string's inner state to the compiled core when its states are few
(core/lexeme_automaton.py): the compiled walk must give the same inside mask, bit for bit, and the same end
points (grouped by end state, with the same tokens below them), as the Python lexeme walk; and whole-schema
masks along teacher-forced and random walks must not change. Checked on Llama 3, SmolLM2 and a
SentencePiece byte-fallback vocabulary.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from formatenforcer import JsonSchemaParser, TokenEnforcer
from formatenforcer.core import backend
from formatenforcer.core.charset import CharSet
from formatenforcer.core.compiled_walk import native_run
from formatenforcer.core.hooks import walk_lexeme
from formatenforcer.core.lexeme_automaton import compiled_lexeme
from formatenforcer.core.protocol import CharacterParser
from formatenforcer.core.trie import IDS, ids_at
from formatenforcer.core.walk import _expanded, allowed_mask, lexeme_result, trie_of

from .conftest import TOKENIZER_NAMES

pytestmark = pytest.mark.skipif(backend.native is None, reason="the compiled core is not built or is switched off")

SCHEMAS = [
    {"type": "string", "pattern": "^[A-Z][A-Za-z0-9]+$"},
    {"type": "string", "pattern": "^[0-9]+(s|m|h)$"},
    {"type": "string", "pattern": "^dev-[0-9a-f]{8}$"},
    {"type": "string", "pattern": "^[a-z_]+/[a-z_]+$"},  # a slash: the ``\\/`` escape is allowed
    {"type": "string", "format": "date"},
    {"type": "string", "format": "uuid"},
    {"type": "string", "pattern": "^[a-z]{2,5}$", "minLength": 3},
    {"type": "string", "pattern": "^(GET|POST|PUT)$"},
    {"type": "string", "pattern": "^[ -~]*$", "maxLength": 12},
    {"type": "string", "pattern": "^v[0-9]+\\.[0-9]+$"},
    {"type": "string", "pattern": "^[a-zé ]+$"},  # escapes may spell a character: C stops inside them
    {"type": "string", "pattern": "^.{0,8}$"},
]


@pytest.fixture
def restore():
    before = backend.active()
    yield
    backend.use_compiled(before)


def _tokens_below(node) -> set[int]:
    """The tokens strictly below a node: what the full state walks on from an end point (the tokens ending
    at the point itself are the inside mask's, and a merged copy of the Python walk's exits may hold more
    of those). A merged copy is filled on first use, as a walk fills it (``walk._expanded``)."""
    out: set[int] = set()
    stack = [child for byte, child in _expanded(node).items() if byte != IDS]
    while stack:
        current = stack.pop()
        if current.__class__ is int:
            out.add(current)
            continue
        for byte, child in _expanded(current).items():
            if byte == IDS:
                out.update(ids_at(child))
            else:
                stack.append(child)
    return out


def _groups(result) -> dict:
    """A lexeme result's end groups by end state (its key by value: explored automata are shared by every
    schema with the same pattern, like the vocabulary's shared lexeme walks): (ids decided there, tokens
    below)."""
    return {_by_value(state): (sorted(ids), _tokens_below(trie_of(merged))) for state, ids, merged in result[1]}


def _by_value(state: CharacterParser):
    """A state's key by value where it has one (a pattern's states), else its key (a key's states)."""
    found = state.lexeme_automaton()
    return state.key() if found is None else found[0]


def _string_states(schema: dict, rng: random.Random, count: int) -> list:
    """Inner string states along random walks through a schema's strings (character by character), each
    once: a state whose key was met before is left out (equal keys accept the same continuations, so its
    check would repeat one already made; the walks of a pattern meet the same few states again and again)."""
    out, seen = [], set()
    parser = JsonSchemaParser(schema)
    for _ in range(count):
        state = parser.add_character('"')
        for _ in range(rng.randrange(0, 12)):
            lexeme = walk_lexeme(state)
            if lexeme is not None and lexeme.inner.key() not in seen:
                seen.add(lexeme.inner.key())
                out.append(lexeme.inner)
            chars = state.allowed_characters()
            picks = [c for lo, hi in chars.intervals[:8] for c in (chr(lo), chr(hi)) if c != '"']
            if not picks:
                break
            nxt = state.add_character(rng.choice(picks))
            if nxt is None:
                break
            state = nxt
    return out


def _same_as_python(vocabulary, state, checked: bool, first: bytes | None, schema: dict) -> bool:
    """Whether the compiled core walks this lexeme; if it does, its result must equal the Python walk's."""
    backend.use_compiled(True)
    if compiled_lexeme(vocabulary, state, checked, first) is None:
        return False
    compiled = lexeme_result(vocabulary, state, checked, first)
    backend.use_compiled(False)
    python = lexeme_result(vocabulary, state, checked, first)
    assert np.array_equal(compiled[0], python[0]), (schema, state, first)
    assert _groups(compiled) == _groups(python), (schema, state, first)
    return True


@pytest.mark.parametrize("name", TOKENIZER_NAMES)
def test_compiled_lexeme_walks_equal_the_python_walks(vocabularies, name, restore):
    vocabulary = vocabularies[name]
    rng = random.Random(name)
    compiled_count = 0
    for schema in SCHEMAS:
        for inner in _string_states(schema, rng, 12):
            compiled_count += _same_as_python(vocabulary, inner, False, None, schema)
    assert compiled_count > 20, "too few states went to the compiled walk: the check would prove little"


RUN_SCHEMAS = [  # states that loop over a class holding every non-ASCII character: C starts from the run's row
    {"type": "string", "pattern": "^.*$"},
    {"type": "string", "pattern": "^[^@]+@[^@]+$"},
    {"type": "string", "pattern": "^.+$", "maxLength": 10},
    {"type": "string", "pattern": "^.{2,}x$", "minLength": 4},
    {"type": "string", "pattern": "^[^a-z]*é$"},
    {"type": "string", "pattern": "^[^\\\\]{0,5}$"},
    {"type": "string", "pattern": "^[^\n]*\\.[a-z]{2,4}$"},
]


@pytest.mark.parametrize("name", TOKENIZER_NAMES)
def test_compiled_walks_from_a_free_run_equal_the_python_walks(vocabularies, name, restore):
    """Pattern strings whose states loop over a wide class (bounded by maxLength or a count, after a
    minLength, with non-ASCII characters in and out of the class) hand C the vocabulary's run row: the
    inside masks and the tokens below every end point are the Python walk's."""
    vocabulary = vocabularies[name]
    rng = random.Random(name + "run")
    with_run = 0
    for schema in RUN_SCHEMAS:
        for inner in _string_states(schema, rng, 6):
            backend.use_compiled(True)
            taken = native_run(vocabulary, inner) is not None
            with_run += _same_as_python(vocabulary, inner, False, None, schema) and taken
    # every state with a run that the walks reach (8 of their 26-27 distinct states, on each vocabulary)
    assert with_run >= 8, "too few compiled walks started from a run's row: the check would prove little"


KEY_SCHEMAS = [
    {"type": "object", "properties": {"name": {}, "names": {}, "nickname": {}, "age": {}}, "required": ["age"]},
    {"type": "object", "properties": {"größe": {}, "名前": {}, "emoji😀": {}, 'quote"d': {}, "back\\slash": {}}},
    {"type": "object", "properties": {"a": {}, "ab": {}, "abc": {}, "": {}}, "maxProperties": 3},
    {
        "type": "object",
        "properties": {"id": {"type": "integer"}, "idx": {}},
        "additionalProperties": {"type": "string"},
    },
]


def _key_states(schema: dict, rng: random.Random) -> list:
    """Key states of an open object: at a key's start (first key, later key) and part-way through keys."""
    out = []
    parser = JsonSchemaParser(schema)
    for prefix in ('{"', '{"name":1,"', '{"a":1,"', '{"id":1,"'):
        state = parser.add_text(prefix)
        if state is None:
            continue
        for _ in range(6):
            current = state
            for _ in range(rng.randrange(0, 8)):
                lexeme = walk_lexeme(current)
                if lexeme is not None:
                    out.append((lexeme.inner, lexeme.checked_ends))
                picks = [c for c in current.allowed_characters().chars(64) if c != '"']
                nxt = current.add_character(rng.choice(picks)) if picks else None
                if nxt is None:
                    break
                current = nxt
    return out


@pytest.mark.parametrize("name", TOKENIZER_NAMES)
def test_compiled_key_walks_equal_the_python_walks(vocabularies, name, restore):
    """Keys of open objects are walked in C from tables read off the trie of names (string_tables.py):
    checked walks (every closing quote an end point for the object to decide), the walks of the tokens
    that start with a name's first bytes (``first_char_split``) and the walk off every name, each equal to
    the Python walk."""
    vocabulary = vocabularies[name]
    rng = random.Random(name)
    compiled_count = 0
    for schema in KEY_SCHEMAS:
        for inner, checked in _key_states(schema, rng):
            split = inner.first_char_split()
            walks = [(inner, None)] if split is None else [(inner, split[1]), (split[0], None)]
            for state, first in walks:
                compiled_count += _same_as_python(vocabulary, state, checked, first, schema)
    assert compiled_count > 20, "too few key states went to the compiled walk: the check would prove little"


def test_escapes_hand_the_walk_back_to_python(llama3_vocabulary, restore):
    """Inside ``\\uXXXX`` the states are not explored: C returns those points, and the Python walk goes on
    from them (Llama 3 has tokens that start an escape inside a string, such as ``\\u00``)."""
    from formatenforcer.core.lexeme_automaton import compiled_lexeme

    backend.use_compiled(True)
    state = JsonSchemaParser({"type": "string", "pattern": "^.*$"}).add_character('"')
    compiled = compiled_lexeme(llama3_vocabulary, walk_lexeme(state).inner)
    assert compiled is not None
    mask, ends, frontier = compiled
    assert frontier, "no token reached inside an escape"
    assert all(not state.can_end() for _, state in frontier) and all(state.can_end() for _, state in ends)


@pytest.mark.parametrize("name", TOKENIZER_NAMES)
def test_whole_masks_along_documents_are_unchanged(vocabularies, tokenizers, name, restore):
    """Every mask along documents with pattern strings, compiled and Python walks, fresh caches each."""
    vocabulary, tokenizer = vocabularies[name], tokenizers[name]
    schema = {
        "type": "object",
        "properties": {s.get("pattern", s.get("format", "x")): s for s in SCHEMAS},
        "additionalProperties": False,
    }
    document = {
        "^[A-Z][A-Za-z0-9]+$": "HighError",
        "^[0-9]+(s|m|h)$": "15m",
        "^dev-[0-9a-f]{8}$": "dev-0a1b2c3d",
        "^[a-z_]+/[a-z_]+$": "api_v/users",
        "date": "2024-02-29",
        "uuid": "123e4567-e89b-12d3-a456-426614174000",
    }
    _same_masks_along(vocabulary, tokenizer, schema, document, name)


def _same_masks_along(vocabulary, tokenizer, schema: dict, document: object, name: str) -> None:
    """Every mask along ``document`` (compact and indented, teacher-forced) is the same on both backends,
    each with fresh caches, and the document is accepted whole."""
    for text in (json.dumps(document), json.dumps(document, indent=2)):
        ids = tokenizer.encode(text, add_special_tokens=False)
        rows = {}
        for compiled in (True, False):
            backend.use_compiled(compiled)
            matcher = TokenEnforcer(vocabulary, JsonSchemaParser(schema)).matcher()
            rows[compiled] = []
            for token in ids:
                rows[compiled].append(matcher.mask().copy())
                assert matcher.accept_token(token)
            assert matcher.can_end()
        for index, (a, b) in enumerate(zip(rows[True], rows[False])):
            assert np.array_equal(a, b), (name, index)


def test_lexeme_walk_arguments_are_checked(llama3_vocabulary, restore):
    from formatenforcer.core.flat_trie import flat_trie
    from formatenforcer.core.lexeme_automaton import explore

    state = JsonSchemaParser({"type": "string", "pattern": "^[a-z]+$"}).add_character('"')
    automaton, states, stop, _ = explore(walk_lexeme(state).inner)
    trie = flat_trie(llama3_vocabulary)
    out = np.empty((llama3_vocabulary.size + 31) // 32, dtype=np.int32)
    with pytest.raises(ValueError):
        backend.native.walk_lexeme(trie, automaton, len(states), stop, out)  # no such state
    with pytest.raises(ValueError):
        backend.native.walk_lexeme(trie, automaton, 0, stop + b"\x00", out)  # one stop byte per state
    with pytest.raises(ValueError):
        backend.native.walk_lexeme(trie, automaton, 0, stop, out[:10])  # too small an output
    assert isinstance(backend.native.walk_lexeme(trie, automaton, 0, stop, out), bytes)
    assert allowed_mask(llama3_vocabulary, walk_lexeme(state).inner, b"", False).any()


class _Digits(CharacterParser):
    """``[0-9]+``: it may end after a digit and still read more, so it is no lexeme to stop at its end."""

    def __init__(self, count: int = 0) -> None:
        self.count = count

    def add_character(self, ch: str) -> CharacterParser | None:
        return _Digits(min(self.count + 1, 1)) if ch.isdigit() and ch.isascii() else None

    def allowed_characters(self) -> CharSet:
        return CharSet.of("0123456789")

    def can_end(self) -> bool:
        return self.count > 0

    def key(self) -> tuple:
        return ("digits", self.count)

    def lexeme_automaton(self) -> tuple:
        return self.key(), frozenset({0, 0x30, 0x3A})


def test_a_lexeme_that_may_end_and_go_on_is_not_explored(llama3_vocabulary, restore):
    """The compiled walk stops where a lexeme may end; ``12`` may end and read ``3``, so it stays in Python."""
    from formatenforcer.core.lexeme_automaton import explore

    backend.use_compiled(True)
    assert explore(_Digits(0)) is None
    assert compiled_lexeme(llama3_vocabulary, _Digits(0)) is None


DATE_TIME = {"type": "string", "format": "date-time"}  # 11,055 automaton states: tables, not exploring


@pytest.mark.parametrize("name", TOKENIZER_NAMES)
def test_a_large_format_walks_in_c_from_its_tables(vocabularies, tokenizers, name, restore):
    """A string over a format automaton too large to explore (``date-time``) is walked in C from tables read
    off the automaton (jsonschema/regex_tables.py): each inside mask and end group equals the Python walk's,
    and so does every whole mask along documents holding such strings."""
    vocabulary, tokenizer = vocabularies[name], tokenizers[name]
    rng = random.Random(name)
    states = _string_states(DATE_TIME, rng, 24)
    parser = JsonSchemaParser(DATE_TIME).add_character('"')
    for ch in "2024-02-29T23:59:59.5+01:00":  # along a real value too (a leap day)
        lexeme = walk_lexeme(parser)
        states.append(lexeme.inner)
        parser = parser.add_character(ch)
        assert parser is not None, ch
    compiled = sum(_same_as_python(vocabulary, inner, False, None, DATE_TIME) for inner in states)
    assert compiled >= len(states) // 2, "too few states went to the compiled walk: the check would prove little"
    schema = {"type": "array", "items": {"type": "object", "properties": {"at": DATE_TIME, "note": {"type": "string"}}}}
    document = [{"at": "2025-03-04T15:00:00+01:00", "note": "a"}, {"at": "1999-12-31t23:59:59.999z"}]
    _same_masks_along(vocabulary, tokenizer, schema, document, name)
