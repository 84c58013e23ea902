"""The parser contract, checked generically on every parser kind, including JSON states reached by text.

- immutability: feeding a character leaves the old state's key and allowed set unchanged;
- allowed_characters is exact: a character is accepted iff it is in the set;
- the FreeRun promise: runs of the promised characters are accepted, and ``after(len)`` is the state they
  lead to, or a stand-in that accepts a subset of its continuations (see parser.FreeRun).
"""

from __future__ import annotations

import random

import pytest

from formatenforcer import ChoiceParser, JsonParser, JsonSchemaParser, RegexParser, SequenceParser, UnionParser

PROBE = list('{}[]",:. 0123456789-+eEtrufalsn\\/abcxyzé😀\n\tA_')

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string", "maxLength": 5}},
        "note": {"type": "string", "pattern": "^[a-z ]*$"},
    },
    "required": ["name"],
}

# (parser, prefixes that lead to interesting states)
CASES = [
    (RegexParser(r"[a-z]+@[a-z]+\.[a-z]{2,}"), ["", "ab", "ab@c", "ab@c.d"]),
    (RegexParser(r'"[^"]*"'), ["", '"', '"abc']),
    (ChoiceParser(["abc", "abx", "b"]), ["", "a", "ab"]),
    (SequenceParser([RegexParser("a*"), RegexParser('[^"]*')]), ["", "a", "ab"]),
    (UnionParser([RegexParser("ab+"), ChoiceParser(["ac", "a"])]), ["", "a"]),
    (JsonParser(), ["", '{"', '{"a', '{"a": "x', '[1, "', '["ab\\n']),
    (JsonSchemaParser(SCHEMA), ["", '{"', '{"na', '{"name": "', '{"name": "Al', '{"x": "', '{"tags": ["ab']),
    (RegexParser(r"(- [A-Za-z ]{1,30}\n){2}"), ["- ", "- ab"]),  # counted chains: bounded runs
    (JsonSchemaParser({"type": "string", "format": "email"}), ['"a@', '"a@b.c']),
    (UnionParser([JsonSchemaParser({"type": "object"}), JsonSchemaParser({"type": "object", "maxProperties": 1})]),
     ['{"', '{"ab']),  # fmt: skip
    (UnionParser([RegexParser('"[^"]*"'), RegexParser('"[^"]*"x')]), ['"', '"ab']),
    (JsonSchemaParser({"anyOf": [{"type": "object", "properties": {"a": {"type": "string"}}},
                                 {"type": "object", "properties": {"b": {"type": "integer"}}}]}),
     ['{"', '{"x', '{"a": "', '{"a": "xy']),
    (JsonSchemaParser({"uniqueItems": True}), ['["ab', '["ab", "', '[["ab"], ["a', '[{"k": "v']),
    # keys whose text is kept (minProperties counts distinct keys; patternProperties pick the value schema)
    (JsonSchemaParser({"type": "object", "minProperties": 2}), ['{"', '{"ab', '{"ab": 1, "a']),
    (JsonSchemaParser({"type": "object", "patternProperties": {"^x": {"type": "integer"}}}), ['{"', '{"xy']),
]  # fmt: skip


def states():
    for parser, prefixes in CASES:
        for prefix in prefixes:
            state = parser.add_text(prefix)
            assert state is not None, (parser, prefix)
            yield f"{type(parser).__name__}:{prefix!r}", state


STATES = list(states())


@pytest.mark.parametrize("label, state", STATES, ids=[label for label, _ in STATES])
def test_immutable_and_exact_charset(label, state):
    key, allowed = state.key(), state.allowed_characters()
    for ch in PROBE:
        assert (state.add_character(ch) is not None) == (ch in allowed), (label, ch)
    assert state.key() == key and state.allowed_characters() == allowed


@pytest.mark.parametrize("label, state", STATES, ids=[label for label, _ in STATES])
def test_free_run_promise(label, state):
    run = state.free_run()
    if run is None:
        return
    rng = random.Random(label)
    pool = [ch for ch in PROBE if ch in run.chars] or run.chars.chars(64)
    limit = 12 if run.max_length is None else min(run.max_length, 12)
    if run.max_length is not None and run.max_length < 80:
        # the mask never looks at longer runs, so one more character of the class must be refused
        longer = "".join(rng.choice(pool) for _ in range(run.max_length + 1))
        assert state.add_text(longer) is None, (label, longer)
    for _ in range(30):
        text = "".join(rng.choice(pool) for _ in range(rng.randint(0, limit)))
        direct = state.add_text(text)
        assert direct is not None, (label, text)
        promised = run.after(len(text))
        exact = promised.key() == direct.key()
        for ch in PROBE:
            real, stand_in = direct.add_character(ch), promised.add_character(ch)
            if exact:
                assert (real is None) == (stand_in is None), (label, text, ch)
            else:  # a stand-in may refuse more, never accept more
                assert stand_in is None or real is not None, (label, text, ch)
