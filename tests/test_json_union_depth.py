"""Nested unions of containers (issue #18, "never stick"): a union whose branches all accept the same bracket
and all recurse into the union used to hold one nested state per way of choosing a branch at every level,
2^n at depth n (18 levels of ``[`` took 34 s). Its frames are now shared (jsonschema/depth.py), so a thousand
levels open in a fraction of a second, in the step and in the mask alike, on the real Llama 3 vocabulary."""

from __future__ import annotations

import json
import random
import sys

import jsonschema
import pytest

from formatenforcer import JsonConfig, JsonSchemaParser, TokenEnforcer

from .json_checks import char_walk, mask_and_step

ARRAYS = {
    "anyOf": [
        {"type": "array", "items": {"$ref": "#"}},
        {"type": "array", "items": {"$ref": "#"}, "maxItems": 3},
    ]
}
OBJECTS = {
    "anyOf": [
        {"type": "object", "additionalProperties": {"$ref": "#"}},
        {"type": "object", "additionalProperties": {"$ref": "#"}, "maxProperties": 3},
    ]
}
_TAGGED = [
    {"type": "object", "properties": {"t": {"const": tag}}, "required": ["t"], "additionalProperties": {"$ref": "#"}}
    for tag in (1, 2)
]
_TAGGED[1]["maxProperties"] = 3
MIXED = {"oneOf": [*_TAGGED, {"type": "array", "items": {"$ref": "#"}}, {"type": "null"}]}
"""Two objects that both take ``{"a":`` and recurse (told apart by the tag ``t``, which ``oneOf`` needs: the
compiler supports only branches it can prove disjoint), an array that recurses, and a scalar."""
MIXED_ANY = {"anyOf": MIXED["oneOf"]}
"""The same language (the branches are disjoint): jsonschema checks ``oneOf`` by evaluating every branch, 2^n
work on a document n levels deep, and ``anyOf`` stops at the first branch that matches."""

STRINGS = {
    "anyOf": [
        {"type": "object", "additionalProperties": {"anyOf": [{"$ref": "#"}, {"type": "string"}]}},
        {
            "type": "object",
            "additionalProperties": {"anyOf": [{"$ref": "#"}, {"type": "string", "maxLength": 5}]},
            "maxProperties": 2,
        },
        {"type": "array", "items": {"$ref": "#"}, "maxItems": 2},
    ]
}
"""Objects whose string values differ (one has a ``maxLength``): inside such a value the two containers of
the level are read as two stacks over the same frames, walked by their shared free run."""

LEVELS = 1000
CASES = {
    # name: (schema, the text that opens one level, a value at the bottom, the text that closes one level)
    "arrays": (ARRAYS, "[", "[]", "]"),
    "objects": (OBJECTS, '{"a":', "{}", "}"),
    "mixed": (MIXED, '[{"a":', "null", ',"t":1}]'),
}


def _validate(name: str, text: str) -> None:
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20 * LEVELS))  # (json and jsonschema recurse per level; the parser does not)
    try:
        schema = {"mixed": MIXED_ANY, "strings": STRINGS}.get(name) or CASES[name][0]
        jsonschema.validate(json.loads(text), schema)
    finally:
        sys.setrecursionlimit(limit)


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_thousand_levels_open_and_close_character_by_character(name: str) -> None:
    """1,000 levels opened one character at a time, then a value and 1,000 closings: every character taken
    (the mask holds it), the document may end and jsonschema finds it valid. (Before: 2^n states, the
    20th level out of reach.) The states stay small: a level costs one frame, not one per branch choice."""
    schema, opener, bottom, closer = CASES[name]
    parser = JsonSchemaParser(schema, config=JsonConfig(max_depth=2 * LEVELS))
    state = parser
    for _ in range(LEVELS):
        for ch in opener:
            assert ch in state.allowed_characters()
            state = state.add_character(ch)
            assert state is not None
    assert len(repr(state)) < 500
    text = opener * LEVELS + bottom + closer * LEVELS
    state = state.add_text(bottom + closer * LEVELS)
    assert state is not None and state.can_end()
    assert parser.accepts(text)
    _validate(name, text)


def test_the_mixed_schema_is_checked_by_one_of_too() -> None:
    """The ``oneOf`` schema itself, on a document shallow enough for jsonschema's oneOf: the same verdicts
    as the parser's, on valid documents and on ones that only a ``oneOf`` refuses (tag missing)."""
    depth = 8
    good = '[{"a":' * depth + "null" + ',"t":1}]' * depth
    bad = '[{"a":' * depth + "null" + "}]" * depth
    parser = JsonSchemaParser(MIXED)
    assert parser.accepts(good) and not parser.accepts(bad)
    jsonschema.validate(json.loads(good), MIXED)
    assert not jsonschema.Draft202012Validator(MIXED).is_valid(json.loads(bad))


_SLOW = pytest.mark.slow
"""Three of the deep mask = step cases (the key alone 5-6 CPU-s) run in the full suite only; the fast suite keeps
eight, at least one for each schema (value starts, ended values, the arrays' short branch)."""


@pytest.mark.parametrize(
    ("name", "prefix"),
    [
        ("arrays", "[" * 300),
        pytest.param("arrays", "[" * 300 + "[]", marks=_SLOW),  # the value ended: both containers may read on
        ("arrays", "[" * 300 + "[[],[],[]"),  # the short branch (maxItems 3) only in the items read
        ("arrays", "[" * 3 + "[]],"),
        pytest.param("objects", '{"a":' * 200 + '{"b', marks=_SLOW),  # inside a key
        ("objects", '{"a":' * 200 + "{}"),
        pytest.param("objects", '{"a":' * 200 + '{"b":{},"c":{},"d":{}', marks=_SLOW),  # past maxProperties 3
        ("mixed", '[{"a":' * 150 + "null"),
        ("mixed", '[{"a":' * 150 + 'null,"t":'),  # which tag decides which branch the object was
        ("mixed", '[{"a":' * 150 + "[null,"),
        ("strings", '{"a":[' * 100 + '{"c":"xyzab'),  # one of the strings must close, the other may go on
        ("strings", '{"a":[' * 100 + '{"c":"xy"'),
        ("strings", '{"a":[' * 100 + '{"c":{"x":"xyzabcd"},"d":"a","e":'),
    ],
    ids=lambda value: value if len(value) < 20 else f"{value[:6]}..{value[-12:]}",
)
def test_mask_equals_step_deep_in_the_union(llama3_tokenizer, llama3_vocabulary, name: str, prefix: str) -> None:
    """Token by token on Llama 3 down to a few hundred levels: the mask holds exactly the tokens the step
    takes, at a value's start, inside a key, where a value ended under several containers, past a limit
    one branch has and the other has not."""
    schema = STRINGS if name == "strings" else CASES[name][0]
    enforcer = TokenEnforcer(llama3_vocabulary, JsonSchemaParser(schema, config=JsonConfig(max_depth=2 * LEVELS)))
    mask, step = mask_and_step(enforcer, llama3_tokenizer, prefix)
    assert mask == step and mask


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_thousand_levels_token_by_token(llama3_tokenizer, llama3_vocabulary, name: str) -> None:
    """The document of the character test, fed as Llama 3 tokens through a matcher: each token taken, and at
    every 64th token and the last few (a mask costs a vocabulary walk: every one of the ~3,000 would take a
    minute, union or not) the token is in the mask and end of sequence is not, until the end."""
    schema, opener, bottom, closer = CASES[name]
    enforcer = TokenEnforcer(llama3_vocabulary, JsonSchemaParser(schema, config=JsonConfig(max_depth=2 * LEVELS)))
    matcher = enforcer.matcher()
    eos = llama3_vocabulary.eos_token_ids[0]
    tokens = llama3_tokenizer.encode(opener * LEVELS + bottom + closer * LEVELS, add_special_tokens=False)
    for i, token in enumerate(tokens):
        if i % 64 == 0 or i > len(tokens) - 4:
            allowed = set(matcher.allowed_token_ids())
            assert token in allowed and eos not in allowed
        assert matcher.accept_token(token)
    assert eos in matcher.allowed_token_ids() and matcher.error is None


@pytest.mark.parametrize("name", [*sorted(CASES), "strings"])
@pytest.mark.parametrize(
    "seed", [0, 1, pytest.param(2, marks=pytest.mark.slow), pytest.param(3, marks=pytest.mark.slow)]
)
def test_random_walks_never_dead_end(name: str, seed: int) -> None:
    """Random character walks (brackets as likely as anything else) never meet a dead end nor a refused
    offer, and the finished ones are valid; under a small limit too, where the room left narrows what each
    container of a level may still offer. (Seeds 0-1 in the fast suite, 2-3 in the full one.)"""
    schema = STRINGS if name == "strings" else CASES[name][0]
    rng = random.Random(seed)
    for max_depth in (3, 40):
        parser = JsonSchemaParser(schema, config=JsonConfig(max_depth=max_depth))
        for _ in range(40):
            text, finished = char_walk(parser, rng, max_chars=300, end_bias=0.05)
            if finished:
                _validate(name, text)


COUNTED = {
    "anyOf": [
        {"type": "array", "items": {"$ref": "#"}, "maxItems": 1},
        {"type": "array", "items": {"$ref": "#"}, "minItems": 3, "maxItems": 3},
        {"type": "object", "additionalProperties": {"$ref": "#"}, "minProperties": 2},
        {"type": "object", "properties": {"t": {"const": 0}}, "required": ["t"], "additionalProperties": {"$ref": "#"}},
    ]
}
"""Which branch a container was decides what it may hold (0, 1 or 3 items; 2 keys or more, or a tag), so a
level whose containers were merged must still count for each of them."""


def _document(rng: random.Random, depth: int) -> object:
    if depth == 0 or rng.random() < 0.35:
        return [] if rng.random() < 0.5 else {"t": 0}
    if rng.random() < 0.5:
        return [_document(rng, depth - 1) for _ in range(rng.choice((0, 1, 2, 3, 3, 4)))]
    keys = rng.sample(["a", "b", "t"], rng.choice((1, 2, 2, 3)))
    return {key: 0 if key == "t" and rng.random() < 0.5 else _document(rng, depth - 1) for key in keys}


@pytest.mark.parametrize("seed", range(3))
def test_random_documents_are_judged_as_jsonschema_judges_them(seed: int) -> None:
    """Random nested documents, valid and not, deep inside a union whose branches count items and keys
    differently: the parser accepts exactly those jsonschema finds valid."""
    rng = random.Random(seed)
    parser = JsonSchemaParser(COUNTED)
    validator = jsonschema.Draft202012Validator(COUNTED)
    verdicts = set()
    for _ in range(120):
        document = _document(rng, rng.randint(2, 5))  # (jsonschema tries every branch at each level)
        expected = validator.is_valid(document)
        assert parser.accepts(json.dumps(document, separators=(",", ":"))) == expected, document
        verdicts.add(expected)
    assert verdicts == {True, False}
