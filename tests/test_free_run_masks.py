"""Free runs are a shortcut, never a change of meaning: the mask computed with them equals the mask of a plain
trie walk that never uses them, on real vocabularies, for states where each kind of run applies (JSON strings,
counted regex chains such as a hostname label or ``[0-9]{4}``, keys of open objects once they leave every
named key, unions of such states, bounded strings)."""

from __future__ import annotations

from collections.abc import Hashable

import numpy as np
import pytest

from formatenforcer import JsonConfig, JsonSchemaParser, RegexParser
from formatenforcer.core import backend
from formatenforcer.core.charset import ANY as ANY_CHARS
from formatenforcer.core.charset import CharSet
from formatenforcer.core.protocol import CharacterParser
from formatenforcer.core.trie import as_dict
from formatenforcer.core.walk import allowed_mask


class WalkOnly(CharacterParser):
    """The same states with the shortcut switched off."""

    __slots__ = ("inner",)

    # The walk keeps a memo of each (state, byte) step unless a state's class says it memoises its own. A
    # plain walk reaches each of these objects at one trie node and steps each byte from it once, so that memo
    # never hits; it would only hold every state of the walk alive (~240k inside a key or a string). Every
    # answer is still this object's own add_character.
    STEPS_MEMOISED = True

    def __init__(self, inner: CharacterParser) -> None:
        self.inner = inner

    def add_character(self, ch: str) -> CharacterParser | None:
        nxt = self.inner.add_character(ch)
        return None if nxt is None else WalkOnly(nxt)

    def allowed_characters(self) -> CharSet:
        return self.inner.allowed_characters()

    def can_end(self) -> bool:
        return self.inner.can_end()

    def key(self) -> Hashable:
        return self.inner.key()


NOTIFY = {
    "type": "array",
    "items": {
        "anyOf": [
            {"type": "object", "properties": {"channel": {"const": "email"}, "to": {"type": "string"}}},
            {"type": "object", "properties": {"channel": {"const": "sms"}, "phone": {"type": "string"}}},
        ]
    },
}
EMAIL = {"type": "object", "properties": {"email": {"type": "string", "format": "email"}}}
DATED = {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}$", "maxLength": 7}

CASES = [
    (RegexParser(r"(- [A-Za-z ]{1,30}\n){3}"), ["-", "- ", "- Apple", "- Apple\n-", "- Apple\n- Ba"]),
    (RegexParser(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9]+)*"), ["", "exa", "ex-am"]),
    (JsonSchemaParser(EMAIL), ['{"email":"ann@', '{"email":"ann@exam', '{"email":"ann@example.c']),
    (JsonSchemaParser(DATED), ['"', '"20', '"2024-']),
    (JsonSchemaParser(NOTIFY), ['[{"', '[{"x', '[{"chan', '[{"note":"a', '[{"channel":"sms","p']),
    # one shared key automaton for every key of an open object: names already used are refused on closing
    (
        JsonSchemaParser({"type": "object", "properties": {"ab": {"type": "integer"}, "a": {"type": "string"}}}),
        ['{"', '{"a', '{"ab":1,"', '{"ab":1,"a', '{"ab":1,"a":"x","a'],
    ),  # fmt: skip
    (JsonSchemaParser({"type": "string", "minLength": 3, "maxLength": 9}), ['"', '"ab']),
]


NESTED = {
    "type": "object",
    "properties": {
        "n": {"type": "integer", "minimum": 3, "maximum": 120},
        "x": {"type": "number"},
        "tags": {"type": "array", "items": {"type": "string", "maxLength": 4}},
        "deep": {"type": "array", "items": {"type": "object", "properties": {"k": {"enum": ["ab", "abc"]}}}},
    },
}
CASES += [
    (
        JsonSchemaParser(NESTED),
        [
            '{"',
            '{"n":1',
            '{"n":12',
            '{"x":-0',
            '{"x":1.5e',
            '{"tags":["a',
            '{"tags":["abcd',
            '{"deep":[{"',
            '{"deep":[{"k":"ab',
            '{"deep":[{"k":"abc"}]',
        ],
    ),  # fmt: skip
    # value starts: whitespace and the value's first characters walked alone (spaced.py), then resumed
    (
        JsonSchemaParser(NESTED),
        [
            '{"n":',
            '{"n": ',
            '{"x":\n  ',
            '{"tags":',
            '{"tags":["a",',
            '{"tags":["a", ',
            '{"deep":[{"k":"ab"},',
            '{"deep":[{"k":',
            '{"n":5,"deep":',
        ],
    ),  # fmt: skip
    (JsonSchemaParser(NOTIFY), ['[{"channel":', '[{"channel":"sms"},', '[{"channel":"sms"}, ']),
    (JsonSchemaParser({"type": "array", "items": {"type": "number"}, "maxItems": 3}), ["[1,", "[1, 2,", "[1,2,"]),
    # flexible whitespace between tokens: a bounded run of [ \t\n\r] (20 by default), near its cap too
    (
        JsonSchemaParser(NESTED),
        [
            "{\n  ",
            '{\n  "n": 5,\n  ',
            '{"n":5 ',
            '{"tags": [\n    "a"\n  ',
            '{"tags":[' + " " * 18,
            "{" + " " * 19,
            '{"deep": [ {"k": "ab" } ,\n',
        ],
    ),  # fmt: skip
    # unions carried up through containers: the mask is the OR of the branches' masks (alternatives())
    (JsonSchemaParser(NOTIFY), ['[{"channel":"email","sub', '[{"channel":"sms"},{"', '[{"phone":"+1']),
    (
        JsonSchemaParser(
            {
                "anyOf": [
                    {"type": "object", "properties": {"a": {"type": "integer"}}},
                    {"type": "object", "properties": {"ab": {"type": "string"}}, "required": ["ab"]},
                    {"type": "array", "items": {"type": ["string", "null"]}},
                ]
            }
        ),
        ['{"', '{"a', '{"ab', '{"a":1', '["x",', '["x",n', '[null,"'],
    ),  # fmt: skip
    # bounded numbers: far from the bounds (one cached walk for every value) and near them
    (
        JsonSchemaParser({"type": "array", "items": {"type": "number", "minimum": -5, "maximum": 100}}),
        ["[12.", "[12.5", "[99.", "[99.9", "[-4.", "[-4.9", "[-5", "[0", "[0.", "[1", "[10", "[100"],
    ),
    (JsonSchemaParser({"type": "array", "items": {"type": "integer", "minimum": 10}}), ["[1", "[12", "[123", "[9"]),
    # under a maximum, 25 and 30 take the same digit counts (one walk); 4 and 49 are decided by value
    (
        JsonSchemaParser({"type": "array", "items": {"type": "integer", "minimum": 1, "maximum": 500}}),
        ["[2", "[25", "[30", "[4", "[49", "[1", "[25,3"],
    ),
]


# digit runs (NumberParser.free_run): the number may end after any digit, so a lexeme walk records an end at
# every exit of the run ("12," "5}") and the full state reads what follows; bounded runs stop where the bound does
NUMBERS = {"type": "object", "properties": {
    "x": {"type": "number"}, "n": {"type": "integer", "maximum": 65535}, "p": {"type": "number", "minimum": -1},
    "r": {"type": "array", "items": {"anyOf": [{"type": "number"}, {"type": "string"}]}}}}  # fmt: skip
CASES += [
    (JsonSchemaParser({"type": "number"}), ["1", "12", "-3", "1.", "1.5", "1e", "1e+", "1E-0", "1e5", "0", "-0.0"]),
    (
        JsonSchemaParser(NUMBERS),
        [
            '{"x":',
            '{"x":7',
            '{"x":70.',
            '{"x":70.25',
            '{"x":7e1',
            '{"n":6',
            '{"n":65',
            '{"n":6553',
            '{"n":1',
            '{"p":0.',
            '{"p":3',
            '{"p":-0.5',
            '{"r":[1',
            '{"r":[1.2',
            '{"r":[1,"a",2',
            '{"x":7,"n":12',
        ],
    ),  # fmt: skip
    (JsonSchemaParser({"type": "array", "items": {"type": "integer", "multipleOf": 5}}), ["[1", "[15", "[150"]),
]


# keys of an open object on the trie of names: the children of a wide trie node that leave the names share
# one state, and their tokens come from one cached group (walk._Walk._shared_children)
INVOICE_KEYS = {"type": "object", "properties": {name: {"type": "integer"} for name in [
    "id", "invoice_number", "issued", "status", "subtotal", "line_items", "currency", "total", "payment"]}}  # fmt: skip
CLOSED_KEYS = {"type": "object", "properties": {"a": {"type": "integer"}, "ab": {"type": "string"},
                                                "b": {"type": "boolean"}}, "additionalProperties": False}  # fmt: skip
CASES += [
    (
        JsonSchemaParser(INVOICE_KEYS),
        ['{"', '{"i', '{"in', '{"id":1,"', '{"id":1,"s', '{"x', '{"id":1,"inv', '{"id":1,"issued":2,"i', '{"st'],
    ),  # fmt: skip
    # after a comma: whitespace, quote and key walked alone (ObjectParser._key_start_lexeme), names checked
    (
        JsonSchemaParser(INVOICE_KEYS),
        ['{"id": 1,', '{"id": 1,\n  ', '{"id": 1, "', '{"id": 1,\n  "is', '{"id": 1, "issued": 2,\n    '],
    ),  # fmt: skip
    (
        JsonSchemaParser(CLOSED_KEYS),
        ['{"a": 1,', '{"a": 1,\n  ', '{"a": 1, "', '{"a": 1, "ab": "x",\n  ', '{"b": true,"a'],
    ),  # fmt: skip
]


# names starting with non-ASCII characters: their lead bytes are the split's exceptions (标 and 标签 share E6
# with most CJK characters, walked from the real state; every other lead byte is off the names)
CJK_NAMES = ["标题", "标签", "作者", "正文", "é"]
CJK_KEYS = {"type": "object", "properties": {name: {"type": "string"} for name in CJK_NAMES}}
CASES += [
    (JsonSchemaParser(CJK_KEYS), ['{"', '{"标', '{"标题":"x","', '{"作', '{"x', '{"标题":"x","标']),
]


# a token that closes a key goes on into the colon and the value (``name":"``, ``id":[``): that continuation
# is walked by the colon-and-value state alone (ObjectParser._member_lexeme), cached below the vocabulary node
# after the quote and shared across positions and schemas whose values start alike (walk._walk_below)
MEMBER_A = {"type": "object", "properties": {"name": {"type": "string"}, "id": {"type": "integer"},
                                             "tags": {"type": "array", "items": {"type": "string"}}}}  # fmt: skip
MEMBER_B = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 2}, "id": {"type": "string"},
                                             "tags": {"type": "object"}}, "additionalProperties": False}  # fmt: skip
MEMBER_C = {"type": "array", "items": {"type": "object", "properties": {"user": MEMBER_A, "name": {"enum": ["x"]}},
                                       "required": ["user"]}}  # fmt: skip
CASES += [
    (
        JsonSchemaParser(MEMBER_A),
        ['{"', '{"na', '{"name"', '{"name" ', '{"id":1,"', '{"id": 1, "name"', '{"x"', '{"tags":["a"],"'],
    ),  # fmt: skip
    (JsonSchemaParser(MEMBER_B), ['{"', '{"na', '{"name"', '{"id":"1","', '{"name":"ab","t', '{"tags"']),
    (
        JsonSchemaParser(MEMBER_C),
        ['[{"', '[{"user":{"', '[{"user":{"name"', '[{"user":{},"', '[{"name":"x","us', '[{"user":{"id":2}},{"'],
    ),  # fmt: skip
    (JsonSchemaParser(MEMBER_A, config=JsonConfig(whitespace="compact")), ['{"', '{"name"', '{"id":1,"']),
    (JsonSchemaParser(MEMBER_A, config=JsonConfig(whitespace_pattern=r"[ ]?")), ['{"', '{"name"', '{"name" ']),
]


CUSTOMER = {"type": "object", "properties": {"id": {"type": "string", "pattern": "^cus_[A-Za-z0-9]{8}$"}}}
CASES += [
    # a counted repeat entered part-way through tokens: one subtree table selected by run length
    (JsonSchemaParser(CUSTOMER), ['{"id":"', '{"id":"cus', '{"id":"cus_', '{"id":"cus_Ab', '{"id":"cus_Ab12cd']),
    (RegexParser(r"[a-z]{2,5}-[0-9A-F]{3}"), ["a", "abc", "abcde", "ab-", "ab-0F"]),
]

TRACKED = {"type": "array", "items": {"type": "string"}, "minItems": 3,
           "contains": {"type": "string", "minLength": 0, "maxLength": 6}}  # fmt: skip
TRACKED_PATTERN = {"type": "array", "items": {"type": "string", "maxLength": 12}, "minContains": 2,
                   "contains": {"type": "string", "pattern": "^[a-z]+$"}}  # fmt: skip
KINDS = {"type": "object", "properties": {"kind": {"type": "string"}, "note": {"type": "string"}}}
KIND_X = {"type": "object", "properties": {"kind": {"const": "x"}}, "required": ["kind"]}
TRACKED_OBJECTS = {"type": "array", "items": KINDS, "contains": KIND_X}
CASES += [
    # an item string with its contains tracker riding along: the run over the characters both take, the
    # tracker gone once past its own bound (or on a character it refuses, walked as an exit)
    (JsonSchemaParser(TRACKED), ['["', '["abc', '["abcdef', '["abcdefg', '["x","', '["x","yy","']),
    (JsonSchemaParser(TRACKED_PATTERN), ['["', '["ab', '["aB', '["abcdefghijk', '["abc","d']),
    # a string value inside an object item, the tracker an object of its own reading the same value
    (
        JsonSchemaParser(TRACKED_OBJECTS),
        ['[{"note":"', '[{"note":"hello w', '[{"kind":"', '[{"kind":"x', '[{"kind":"xy'],
    ),
]


@pytest.mark.parametrize("schema", [{}, {"type": "number"}, {"type": "string", "maxLength": 5}, NESTED, NOTIFY,
                                    {"anyOf": [{"type": "integer"}, {"type": "array"}]}])  # fmt: skip
def test_first_mask_with_shortcuts_equals_plain_walk(llama3_vocabulary, schema):
    """The first mask of a byte-level vocabulary uses the same shortcuts (union branches, a top-level
    scalar's shared walk) as later ones."""
    parser = JsonSchemaParser(schema)
    fast = allowed_mask(llama3_vocabulary, parser, b"", True, {})
    plain = allowed_mask(llama3_vocabulary, WalkOnly(parser), b"", True)
    assert np.array_equal(fast, plain)


_PLAIN: dict[tuple[int, int, str], tuple[object, CharacterParser, np.ndarray]] = {}


def plain_mask(vocabulary: object, parser: CharacterParser, prefix: str) -> np.ndarray:
    """The plain walk's mask after ``prefix`` (the reference the shortcuts are compared with), walked once per
    process: the narrow lookup test below checks the same walk against testing every child. The module is
    one xdist group (tests/conftest.py), so both tests of a pair find one walk. (The entry holds on to the
    vocabulary and the parser, so that their ids are not reused by other objects.)"""
    key = (id(vocabulary), id(parser), prefix)
    entry = _PLAIN.get(key)
    if entry is None:
        state = parser.add_text(prefix)
        assert state is not None
        entry = _PLAIN[key] = (vocabulary, parser, allowed_mask(vocabulary, WalkOnly(state), b"", False))
    return entry[2]


HEAVY = {'[{"phone":"+1'}
"""Pairs whose plain walk takes over 10 CPU-seconds: in the full suite only."""


def _every_sixth_and_each_case() -> list:
    """Every sixth (parser, prefix) pair, and the first pair of a case that has none of those, run in the fast
    suite (HEAVY aside); all of them in the full suite (a plain walk steps every token of Llama 3: a few
    CPU-seconds)."""
    out, i = [], 0
    for p, prefixes in CASES:
        fast = [j for j in range(len(prefixes)) if (i + j) % 6 == 0 and prefixes[j] not in HEAVY] or [0]
        out.extend(pytest.param(p, x, marks=() if j in fast else pytest.mark.slow) for j, x in enumerate(prefixes))
        i += len(prefixes)
    return out


ALL_PREFIXES = _every_sixth_and_each_case()


@pytest.mark.parametrize("parser, prefix", ALL_PREFIXES)
def test_mask_with_free_runs_equals_plain_walk(llama3_vocabulary, parser, prefix):
    """The shortcuts (free runs, and the cached walks of inner strings/numbers) change nothing."""
    state = parser.add_text(prefix)
    assert state is not None
    fast = allowed_mask(llama3_vocabulary, state, b"", False, {})
    plain = plain_mask(llama3_vocabulary, parser, prefix)
    differ = np.flatnonzero(fast != plain)
    assert differ.size == 0, [
        llama3_vocabulary.text_of(i)
        for i in np.flatnonzero(np.unpackbits((fast ^ plain).view(np.uint8), bitorder="little"))[:10]
    ]


UNIQUE = JsonSchemaParser({"type": "array", "items": {"type": "string"}, "uniqueItems": True})
UNIQUE_IN_OBJECT = JsonSchemaParser({"type": "object", "properties": {
    "skills": {"type": "array", "items": {"type": "string"}, "uniqueItems": True}}})  # fmt: skip


_SLOW = pytest.mark.slow  # (the fast suite keeps a start, a start after items and non-ASCII first letters)


@pytest.mark.parametrize("parser, prefix", [
    (UNIQUE, '["'), pytest.param(UNIQUE, '["Py', marks=_SLOW), pytest.param(UNIQUE, '["Python","', marks=_SLOW),
    pytest.param(UNIQUE, '["Python","SQ', marks=_SLOW),
    # an item start after earlier items: the twin's mask plus walks of the earlier items' first letters
    (UNIQUE, '["Python","SQL","'), pytest.param(UNIQUE, '["Python", "Perl", "', marks=_SLOW),
    pytest.param(UNIQUE, '["Python","SQL","S', marks=_SLOW),
    pytest.param(UNIQUE_IN_OBJECT, '{"skills":["Python","SQL","', marks=_SLOW),
    pytest.param(UNIQUE_IN_OBJECT, '{"skills":["a","b","c","', marks=_SLOW),
    # non-ASCII first letters: lead bytes as exceptions
    (UNIQUE, '["标题","作者","'), pytest.param(UNIQUE, '["标题","标', marks=_SLOW),
])  # fmt: skip
def test_unique_items_run_equals_the_plain_walk(llama3_vocabulary, parser, prefix):
    """Under uniqueItems the run's stand-in carries the item's text with a gap (jsonschema/partial_item.py),
    so a token that closes the item *and* goes on (``.",``, ``x"]``) after a run is in the mask, as the plain
    walk has it: the masks are equal."""
    state = parser.add_text(prefix)
    fast = allowed_mask(llama3_vocabulary, state, b"", False, {})
    plain = allowed_mask(llama3_vocabulary, WalkOnly(state), b"", False)
    differ = np.flatnonzero(np.unpackbits((plain ^ fast).view(np.uint8), bitorder="little"))
    assert not len(differ), [llama3_vocabulary.text_of(int(t)) for t in differ[:10]]


def test_key_walks_share_one_state_below_wide_nodes(llama3_vocabulary):
    """The Python walk takes the shortcut (else a key walk steps every child of every letter's node): after a
    mask at a key start of an open object, the vocabulary holds shared-children groups. (The compiled core
    walks such keys from tables instead: tests/test_native_lexeme.py.)"""
    before = backend.active()
    backend.use_compiled(False)
    try:
        llama3_vocabulary.shared_groups.clear()
        allowed_mask(llama3_vocabulary, JsonSchemaParser(INVOICE_KEYS).add_text('{"'), b"", False, {})
        assert llama3_vocabulary.shared_groups
    finally:
        backend.use_compiled(before)


def test_digit_runs_are_offered_where_digits_loop():
    """The shortcut exists where it should (else number walks step every digit token): past a non-zero first
    digit, in fractions and exponents, under a bound while the digits stay inside it; not on a first digit,
    after a leading zero, or next to a bound or a multipleOf."""
    number = JsonSchemaParser({"type": "number"})
    assert all(number.add_text(p).free_run() is not None for p in ["1", "-12", "0.", "1.5", "1e", "1e+2"])
    assert all(number.add_text(p).free_run() is None for p in ["-", "0", "-0"])
    assert number.free_run().chars == CharSet.of(" \t\n\r")  # at "", whitespace may come before the value
    bounded = JsonSchemaParser({"type": "integer", "minimum": 1, "maximum": 500})
    assert bounded.add_text("2").free_run().max_length == 2  # 2, 2x, 2xx are all inside
    assert bounded.add_text("25").free_run().max_length == 1
    assert bounded.add_text("5").free_run() is None  # 5xx may pass 500: decided digit by digit
    assert JsonSchemaParser({"type": "integer", "multipleOf": 5}).add_text("1").free_run() is None


@pytest.mark.parametrize("prefix", ["[1", "[12,", "[12,3", "[1.5,2.", "[7, 70"])
def test_unique_number_items_run_equals_the_plain_walk(llama3_vocabulary, prefix):
    """A uniqueItems array of numbers: tokens that end the number and go on (``5,``) after a digit run are in
    the mask, as the plain walk has them (the item finishes with a gap in its text)."""
    state = JsonSchemaParser({"type": "array", "items": {"type": "number"}, "uniqueItems": True}).add_text(prefix)
    fast = allowed_mask(llama3_vocabulary, state, b"", False, {})
    plain = allowed_mask(llama3_vocabulary, WalkOnly(state), b"", False)
    differ = np.flatnonzero(np.unpackbits((plain ^ fast).view(np.uint8), bitorder="little"))
    assert not len(differ), [llama3_vocabulary.text_of(int(t)) for t in differ[:10]]


@pytest.mark.parametrize("schema, prefixes", [
    ({"type": "object", "properties": {"e": {"type": "string", "format": "email"}}},
     ['{"e":"ann@exa', '{"e":"annabelle@exa', '{"e":"a@b', '{"e":"x' + "y" * 120]),
    pytest.param({"type": "array", "items": {"type": "string", "maxLength": 300}},
                 ['["ab', '["' + "x" * 150, '["' + "x" * 290], marks=pytest.mark.slow),  # (8 CPU-seconds)
])  # fmt: skip
def test_lexeme_cache_shared_across_lengths_far_from_max_length(llama3_vocabulary, schema, prefixes):
    """States that differ only in a length far from ``maxLength`` share one cached lexeme walk (see
    ``lexeme_key``); each mask must still equal its own plain walk, near the limit too."""
    parser, lexemes = JsonSchemaParser(schema), {}
    for prefix in prefixes:
        state = parser.add_text(prefix)
        fast = allowed_mask(llama3_vocabulary, state, b"", False, lexemes)
        plain = allowed_mask(llama3_vocabulary, WalkOnly(state), b"", False)
        assert (fast == plain).all(), prefix
    walks = [key for key in lexemes if key[0] != "resumed"]  # (the cache also memoises walks past an end)
    assert len(walks) < len(prefixes)


def test_value_keyed_lexemes_are_shared_between_schemas(llama3_vocabulary):
    """Two different schemas reaching an email string reuse one walk cached on the vocabulary; the masks of
    both still equal their plain walks (the reused end points resume into each schema's own containers)."""
    first = JsonSchemaParser({"type": "object", "properties": {"mail": {"type": "string", "format": "email"}}})
    second = JsonSchemaParser({"type": "array", "items": {"type": "string", "format": "email"}, "maxItems": 2})
    prefix_one, prefix_two = '{"mail":"joe@exam', '["ann@b.c","joe@exam'
    state = first.add_text(prefix_one)
    key = state.lexeme().inner.shared_lexeme_key(llama3_vocabulary.longest_token)
    assert key == second.add_text(prefix_two).lexeme().inner.shared_lexeme_key(llama3_vocabulary.longest_token)
    for parser, prefix in [(first, prefix_one), (second, prefix_two), (second, '["ann@b.c","joe@exam')]:
        state = parser.add_text(prefix)
        fast = allowed_mask(llama3_vocabulary, state, b"", False, {})
        plain = plain_mask(llama3_vocabulary, parser, prefix)  # (the second pair again: one plain walk)
        assert (fast == plain).all(), prefix
    assert (key, False, None) in llama3_vocabulary.lexeme_cache


def test_number_and_value_start_walks_are_shared_between_schemas(llama3_vocabulary):
    """Numbers with equal constraints, and the start of such a value after a key, are keyed by value: a
    second schema reuses the first one's walks from the vocabulary's cache, and both masks still equal
    their plain walks."""
    # (a maximum would make them value-keyed: an exponent reaches it at a point the value decides, 12.5e2
    # is inside 10000 and 4400.25e1 is not)
    price = {"type": "number", "minimum": 0}
    first = JsonSchemaParser({"type": "object", "properties": {"price": price}})
    second = JsonSchemaParser({"type": "object", "properties": {"cost": price, "name": {"type": "string"}}})
    horizon = llama3_vocabulary.longest_token
    # 12.5 and 4400.25 are far from the bound: their fraction digits and endings do not depend on the value
    for one, two in [('{"price":', '{"name":"x","cost":'), ('{"price":12.', '{"cost":4400.'),
                     ('{"price":12.5', '{"cost":4400.25')]:  # fmt: skip
        key = first.add_text(one).lexeme().inner.shared_lexeme_key(horizon)
        assert key is not None and key == second.add_text(two).lexeme().inner.shared_lexeme_key(horizon)
        for parser, prefix in [(first, one), (second, two)]:
            state = parser.add_text(prefix)
            fast = allowed_mask(llama3_vocabulary, state, b"", False, {})
            plain = allowed_mask(llama3_vocabulary, WalkOnly(state), b"", False)
            assert (fast == plain).all(), prefix
        assert (key, False, None) in llama3_vocabulary.lexeme_cache


def test_key_close_continuations_are_shared_between_schemas(llama3_vocabulary):
    """A token that closes a key and goes on (``":``, ``":"``) is walked past the quote by the colon-and-value
    state alone, cached below the vocabulary node of the quote: a second schema whose ``id`` value starts
    alike reuses that walk from the vocabulary's cache, and both masks still equal their plain walks."""
    integer = {"type": "integer", "minimum": 0}
    first = JsonSchemaParser({"type": "object", "properties": {"id": integer, "name": {"type": "string"}}})
    second = JsonSchemaParser({"type": "array", "items": {"type": "object", "properties": {"id": integer},
                                                          "additionalProperties": False}})  # fmt: skip
    quote = id(as_dict(llama3_vocabulary.trie[ord('"')]))

    def below_quote() -> set:
        return {key for key in llama3_vocabulary.lexeme_cache if key[0] == "below" and key[1] == quote}

    found = []
    for parser, prefix in [(first, '{"name":"x","id'), (second, '[{"id":1},{"id')]:
        state = parser.add_text(prefix)
        fast = allowed_mask(llama3_vocabulary, state, b"", False, {})
        plain = allowed_mask(llama3_vocabulary, WalkOnly(state), b"", False)
        assert (fast == plain).all(), prefix
        found.append(below_quote())
    assert found[0], "the continuation past the key's quote was not cached by value"
    assert found[1] == found[0], "the second schema walked again what the first had cached"


def test_integers_below_a_maximum_share_walks_by_digit_room():
    """25 and 30 under a maximum of 500 both take one or no further digit and end alike: one lexeme key."""
    # (compact: the number itself is the root state, with no whitespace wrapper around it)
    schema = {"type": "integer", "minimum": 1, "maximum": 500}
    parser = JsonSchemaParser(schema, config=JsonConfig(whitespace="compact"))
    keys = {text: parser.add_text(text).lexeme_key(128) for text in ["25", "30", "2", "49"]}
    assert keys["25"] == keys["30"] != keys["2"]
    assert "49" in keys["49"]  # near the bound: keyed by its value


def test_union_inside_containers_splits_into_branches():
    """An object key inside an anyOf item: the state offers its branches, each wrapped in the same array."""
    state = JsonSchemaParser(NOTIFY).add_text('[{"channel":"sms"},{"')
    branches = state.alternatives()
    assert branches is not None and len(branches) == 2
    assert all(type(branch) is type(state) for branch in branches)


NARROW = [(p, x) for p, prefixes in CASES[::3] for x in prefixes[:4]]
NARROW_FAST = {"-", '"', '[{"channel":', "[1", '{"x":', '{"id": 1,', '{"name"', "a"}
"""The fast suite's share of NARROW: a cheap prefix of each case (two plain walks of Llama 3 per pair; those
inside keys take 10 to 40 CPU-seconds each), all of them in the full suite."""


@pytest.mark.parametrize(
    "parser, prefix", [pytest.param(p, x, marks=() if x in NARROW_FAST else pytest.mark.slow) for p, x in NARROW]
)
def test_narrow_lookup_in_wide_nodes_equals_testing_every_child(llama3_vocabulary, parser, prefix, monkeypatch):
    """A wide trie node (the root) is entered through a narrow set's own bytes (``CharSet.narrow``); the
    same plain walk testing every child gives the same mask."""
    import formatenforcer.core.walk as walk

    state = parser.add_text(prefix)
    narrow = plain_mask(llama3_vocabulary, parser, prefix)  # (NARROW's pairs are pairs of CASES)
    monkeypatch.setattr(walk, "_WIDE", 10**9)
    every = allowed_mask(llama3_vocabulary, WalkOnly(state), b"", False)
    assert np.array_equal(narrow, every)


@pytest.mark.parametrize("chars, expected", [
    (CharSet.of(",}"), (44, 125)), (CharSet.of(",} \t\n\r"), (9, 10, 13, 32, 44, 125)),
    (CharSet.ranges(("a", "t")), tuple(range(97, 117))), (CharSet.ranges(("a", "z")), None), (CharSet.of(",é"), None),
    (CharSet.ranges(("\x00", "\x7f")), None), (CharSet(), ()),
])  # fmt: skip
def test_charset_narrow(chars, expected):
    assert chars.narrow == expected


@pytest.mark.parametrize("prefix", ["", "ab", "x" * 19_990])
def test_a_long_counted_repeat_is_one_run(llama3_vocabulary, prefix):
    """``[\\s\\S]{0,20000}`` is a chain of 20,001 states: from each, one run reaches the end of the chain (its
    length the characters left), and the mask with that run equals the plain walk's, near the end of the
    chain too, where only tokens of 10 characters or fewer fit."""
    parser = RegexParser(r"[\s\S]{0,20000}")
    state = parser.add_text(prefix)
    run = state.free_run()
    assert run is not None and run.max_length == 20_000 - len(prefix)
    assert run.after(run.max_length).can_end() and not run.after(run.max_length).allowed_characters()
    fast = allowed_mask(llama3_vocabulary, state, b"", False, {})
    plain = allowed_mask(llama3_vocabulary, WalkOnly(state), b"", False)
    assert np.array_equal(fast, plain)


@pytest.mark.parametrize("name", ["llama3", "smollm2", "sentencepiece"])
@pytest.mark.parametrize("chars", [CharSet.of(" \t\n\r"), CharSet.of("etaoinshr"), CharSet.of(" ")])
def test_shared_exit_tries_hold_the_tokens_inserted_ones_do(vocabularies, name, chars):
    """The exits of a run of a few ASCII characters are the vocabulary's own subtrees (merged where several
    runs lead to one byte): for every run length and ASCII byte past the run, the same tokens with the same
    bytes below as the trie built token by token from the table's rows (a table without its root)."""
    from formatenforcer.core.run_tables import FreeRunTable
    from formatenforcer.core.trie import subtree_entries

    vocabulary = vocabularies[name]
    with vocabulary._lock:
        texts = vocabulary._token_texts()
    shared = FreeRunTable(texts, chars, vocabulary.size, root=vocabulary.trie)
    inserted = FreeRunTable(texts, chars, vocabulary.size)
    compared = own = 0
    for length in shared.exit_lengths:
        if length == 0:
            continue
        ours, theirs = shared.exits_for(length, ANY_CHARS), inserted.exits_for(length, ANY_CHARS)
        assert set(ours) == set(theirs)
        for byte in ours:
            if byte >= 0x80:
                continue
            if length == 1 and chars.narrow == (0x20,):  # one path: the vocabulary's node itself, not a copy
                own += ours[byte] is vocabulary.trie[0x20][byte]
            below = sorted(subtree_entries(as_dict(ours[byte]), vocabulary.token_bytes))
            assert below == sorted(subtree_entries(as_dict(theirs[byte]), vocabulary.token_bytes)), (length, byte)
            compared += len(below)
    assert compared > 20  # (runs of these characters start tokens in every vocabulary)
    assert own > 10 or chars.narrow != (0x20,)
