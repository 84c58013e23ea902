"""``not`` of an object rule on keys it does not name (``propertyNames``, ``additionalProperties``,
``patternProperties``): the object must hold a member "some key of K with a value of V", tracked left to
right (jsonschema/object_exists.py). Checked against the ``jsonschema`` validator: fixed texts, a pool of
values, random character walks and random token walks on Llama 3 (no dead end, every finished output
valid), and mask = step at positions where the member decides what may come.
"""

from __future__ import annotations

import json
import random

import jsonschema
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from formatenforcer import JsonSchemaParser, SchemaError, TokenEnforcer
from formatenforcer.core.errors import UnsupportedSchemaError
from formatenforcer.jsonschema.config import JsonConfig

from .checking import random_walk
from .json_checks import accepts_tokens, assert_accepts_exactly, char_walk, mask_and_step

SETTINGS = dict(deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)

SCHEMAS = [
    {"not": {"type": "object", "additionalProperties": {"type": "string"}}},
    {"type": "object", "not": {"additionalProperties": {"type": "string"}}},
    {"not": {"propertyNames": {"maxLength": 2}}},
    {"type": "object", "not": {"propertyNames": {"enum": ["a", "b"]}}},
    {"type": "object", "not": {"propertyNames": {"pattern": "^[a-z]+$"}}, "properties": {"a": {"type": "integer"}}},
    {"type": "object", "not": {"patternProperties": {"^x": {"type": "integer"}}}},
    {"type": "object", "properties": {"a": {"type": "integer"}}, "minProperties": 2,
     "not": {"properties": {"a": {}}, "additionalProperties": {"type": ["integer", "string"]}}},
    # several members at once, with the object's own key rules
    {"type": "object", "propertyNames": {"pattern": "^[a-c]"}, "minProperties": 2,
     "allOf": [{"not": {"propertyNames": {"pattern": "^a"}}}, {"not": {"additionalProperties": {"type": "null"}}}]},
    {"type": "object", "patternProperties": {"^n": {"type": "number"}}, "additionalProperties": {"type": "boolean"},
     "not": {"patternProperties": {"^n": {"minimum": 0}}}},
    # nested, and under anyOf
    {"type": "array", "items": {"type": "object", "not": {"propertyNames": {"const": "id"}}}, "maxItems": 3},
    {"anyOf": [{"type": "integer"}, {"type": "object", "not": {"additionalProperties": {"type": "object"}}}]},
    {"type": "object", "additionalProperties": {"anyOf": [{"$ref": "#"}, {"type": "integer"}]},
     "not": {"propertyNames": {"maxLength": 1}}},
]  # fmt: skip

VALUES = [None, 1, "a", [], {}, {"a": 1}, {"a": "x"}, {"ab": 1}, {"abc": None}, {"x1": 2}, {"x1": -2},
          {"n1": 1}, {"n1": -1, "b": True}, {"id": 1}, {"id": 1, "k": {}}, {"a": 1, "b": 2}, {"a": 1, "c": 2},
          {"A": 1}, {"": 0}, {"a": 1, "bbbb": None}, {"k": {"q": 1}}, {"abc": {"d": 1}}]  # fmt: skip


def _valid(schema: object, text: str) -> bool:
    return jsonschema.Draft202012Validator(schema).is_valid(json.loads(text))


@pytest.mark.parametrize("schema", SCHEMAS, ids=range(len(SCHEMAS)))
def test_accepts_exactly_the_valid_values(schema):
    parser = JsonSchemaParser(schema)
    for value in VALUES:
        text = json.dumps(value)
        assert parser.accepts(text) == _valid(schema, text), (schema, text)


_SHORT = '}"0:,x[n-a'


def _short_walk(parser: JsonSchemaParser, rng: random.Random, max_chars: int = 300) -> tuple[str, bool]:
    """A random character walk that picks, half of the time, among the allowed characters of ``}":,0x[n-a``
    (so keys and values stay short and objects close), else any allowed character; asserts no dead end."""
    state, out = parser, []
    for _ in range(max_chars):
        if state.can_end() and rng.random() < 0.3:
            return "".join(out), True
        allowed = state.allowed_characters()
        assert allowed or state.can_end(), f"dead end after {''.join(out)!r}"
        if not allowed:
            return "".join(out), True
        short = [c for c in _SHORT if c in allowed]
        if short and rng.random() < 0.5:
            ch = rng.choice(short)
        else:
            lo, hi = allowed.intervals[rng.randrange(len(allowed.intervals))]
            ch = chr(rng.randint(lo, min(hi, lo + 300)))
        state = state.add_character(ch)
        assert state is not None, f"offered {ch!r} refused after {''.join(out)!r}"
        out.append(ch)
    return "".join(out), False


@pytest.mark.parametrize("schema", SCHEMAS, ids=range(len(SCHEMAS)))
def test_char_walks_never_dead_end_and_end_valid(schema):
    parser = JsonSchemaParser(schema)
    rng = random.Random(11)
    finished = 0
    for i in range(200):
        text, done = char_walk(parser, rng, max_chars=200) if i % 2 else _short_walk(parser, rng)
        if done:
            finished += 1
            assert _valid(schema, text), (schema, text)
    assert finished > 10


@pytest.mark.parametrize(
    ("schema", "valid", "invalid"),
    [
        ({"type": "object", "not": {"additionalProperties": {"type": "string"}}},
         ['{"a": 1}', '{"a": "x", "b": null}', '{"a": "x", "b": {"c": "d"}}'],
         ["{}", '{"a": "x"}', '{"a": "x", "b": "y"}']),
        ({"type": "object", "not": {"propertyNames": {"enum": ["a", "b"]}}},
         ['{"c": 1}', '{"a": 1, "ab": 2}', '{"": 0}'], ["{}", '{"a": 1}', '{"a": 1, "b": 2}']),
        ({"type": "object", "not": {"patternProperties": {"^x": {"type": "integer"}}}},
         ['{"x": "1"}', '{"y": 1, "xy": null}'], ["{}", '{"x": 1}', '{"y": "s"}']),
        ({"type": "object", "properties": {"a": {"type": "integer"}},
          "not": {"properties": {"a": {}}, "additionalProperties": {"type": "integer"}}},
         ['{"a": 1, "b": "s"}', '{"b": [1]}'], ['{"a": 1}', '{"a": 1, "b": 2}', '{"a": "s"}']),
        ({"type": "object", "not": {"propertyNames": {"maxLength": 2}}},
         ['{"abc": 1}', '{"ab\\u00e9": 1}'], ['{"ab": 1}', '{"\\u00e9b": 1, "c": 2}']),
    ],
)  # fmt: skip
def test_cases(schema, valid, invalid):
    assert_accepts_exactly(JsonSchemaParser(schema), valid, invalid)
    for text in valid + invalid:
        assert _valid(schema, text) == (text in valid), text


def test_a_repeated_key_never_stands_for_a_member():
    # {"a": 1, "a": "x"} is {"a": "x"} to a JSON reader: the member read first would be overwritten
    parser = JsonSchemaParser({"type": "object", "not": {"additionalProperties": {"type": "string"}}})
    assert not parser.accepts('{"a": 1, "a": "x"}')


def test_double_complement_and_complement_of_a_union():
    twice = JsonSchemaParser({"not": {"not": {"propertyNames": {"maxLength": 2}}}})
    assert twice.accepts('{"ab": 1}') and twice.accepts("1") and not twice.accepts('{"abc": 1}')
    either = {"type": "object", "not": {"anyOf": [{"additionalProperties": {"type": "string"}},
                                                  {"propertyNames": {"pattern": "^[a-z]"}}]}}  # fmt: skip
    assert_accepts_exactly(JsonSchemaParser(either), ['{"A": 1}', '{"b": "x", "C": 2}'], ['{"b": 1}', '{"A": "x"}'])


@pytest.mark.parametrize(
    ("schema", "reason"),
    [
        ({"type": "object", "not": {"propertyNames": {"maxLength": 2}}, "maxProperties": 3}, "under maxProperties"),
        ({"type": "object", "not": {"patternProperties": {"^a$": {"type": "string"}}}}, "finitely many keys"),
        ({"type": "object", "propertyNames": {"maxLength": 4}, "not": {"propertyNames": {"pattern": "^a"}}},
         "finitely many keys"),
        ({"type": "object", "properties": {"a": {}, "b": {}}, "additionalProperties": False,
          "not": {"propertyNames": {"enum": ["a"]}}}, "finitely many keys"),
    ],
)  # fmt: skip
def test_members_that_cannot_be_decided_left_to_right_are_refused(schema, reason):
    with pytest.raises(UnsupportedSchemaError) as raised:
        JsonSchemaParser(schema)
    assert [(p.keyword, reason in p.reason) for p in raised.value.problems] == [("not", True)]


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "not": {"propertyNames": {"maxLength": 2}}, "propertyNames": {"maxLength": 2}},
        {"type": "object", "not": {"propertyNames": {"maxLength": 2}}, "maxProperties": 0},
        {
            "type": "object",
            "additionalProperties": {"type": "string"},
            "not": {"additionalProperties": {"type": "string"}},
        },
        {"type": "object", "additionalProperties": {"$ref": "#"}, "not": {"propertyNames": {"maxLength": 1}}},
    ],
)
def test_members_no_object_can_hold_leave_no_value(schema):
    with pytest.raises(SchemaError, match="unsatisfiable"):
        JsonSchemaParser(schema)


def _depth(value: object) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


def test_members_near_the_depth_limit():
    schema = SCHEMAS[-1]
    parser = JsonSchemaParser(schema, config=JsonConfig(max_depth=3))
    assert parser.accepts('{"ab": {"cd": {"ef": 1}}}') and not parser.accepts('{"ab": {"cd": {"ef": {"gh": 1}}}}')
    rng = random.Random(5)
    deepest = 0
    for i in range(200):
        text, done = char_walk(parser, rng, max_chars=200) if i % 2 else _short_walk(parser, rng)
        if done:
            assert _valid(schema, text) and _depth(json.loads(text)) <= 3, text
            deepest = max(deepest, _depth(json.loads(text)))
    assert deepest == 3


def test_members_hundreds_of_levels_deep():
    schema = SCHEMAS[-1]
    text = '{"ab": ' * 400 + "1" + "}" * 400
    assert JsonSchemaParser(schema).accepts(text)
    assert not JsonSchemaParser(schema, config=JsonConfig(max_depth=399)).accepts(text)


@st.composite
def _object_not(draw):  # noqa: ANN001, ANN202
    """An object with its own key rules and the ``not`` of another's."""
    keys = st.sampled_from(["a", "b", "id", "x1"])
    leaf = st.sampled_from([{"type": "integer"}, {"type": "string"}, {"minimum": 0}, {"type": "null"}, {}, False])
    outer: dict = {"type": "object"}
    inner: dict = {}
    for rules in (outer, inner):
        if draw(st.booleans()):
            rules["properties"] = draw(st.dictionaries(keys, leaf, max_size=2))
        if draw(st.integers(0, 2)) == 0:
            rules["patternProperties"] = {draw(st.sampled_from(["^x", "[0-9]", "^i"])): draw(leaf)}
        if draw(st.booleans()):
            rules["additionalProperties"] = draw(leaf)
        if draw(st.integers(0, 2)) == 0:
            rules["propertyNames"] = draw(
                st.sampled_from([{"maxLength": 2}, {"pattern": "^[a-z]+$"}, {"enum": ["a", "id"]}])
            )
    if draw(st.booleans()):
        outer["required"] = draw(st.lists(keys, unique=True, max_size=2))
    if draw(st.integers(0, 3)) == 0:
        outer["minProperties"] = draw(st.integers(1, 3))
    outer["not"] = inner
    return outer


@settings(max_examples=60, **SETTINGS)
@given(schema=_object_not(), seed=st.integers(0, 2**16))
def test_fuzzed_objects_walk_valid_and_accept_exactly(schema, seed):
    """60 fuzzed schemas in the fast suite; ``..._more`` draws 60 others in the full suite."""
    _check_fuzzed_object(schema, seed)


@pytest.mark.slow
@settings(max_examples=60, **SETTINGS)
@given(schema=_object_not(), seed=st.integers(0, 2**16))
def test_fuzzed_objects_walk_valid_and_accept_exactly_more(schema, seed):
    _check_fuzzed_object(schema, seed)


def _check_fuzzed_object(schema, seed):  # noqa: ANN001, ANN202
    try:
        parser = JsonSchemaParser(schema)
    except SchemaError:
        assume(False)
        raise
    for value in VALUES:
        text = json.dumps(value)
        assert parser.accepts(text) == _valid(schema, text), (schema, text)
    rng = random.Random(seed)
    for i in range(8):
        text, done = char_walk(parser, rng, max_chars=150) if i % 2 else _short_walk(parser, rng)
        if done:
            assert _valid(schema, text), (schema, text)


TOKEN_SCHEMAS = [SCHEMAS[1], SCHEMAS[3], SCHEMAS[5], SCHEMAS[7]]


@pytest.mark.parametrize("schema", TOKEN_SCHEMAS, ids=range(len(TOKEN_SCHEMAS)))
def test_token_walks_never_dead_end_and_end_valid(llama3_vocabulary, schema):
    enforcer = TokenEnforcer(llama3_vocabulary, JsonSchemaParser(schema))
    for seed in range(4):
        text, done = random_walk(enforcer, seed, max_tokens=40, end_bias=0.5)
        if done:
            assert _valid(schema, text), (schema, text)


def test_tokens_of_valid_and_invalid_texts(llama3_tokenizer, llama3_vocabulary):
    schema = SCHEMAS[3]
    enforcer = TokenEnforcer(llama3_vocabulary, JsonSchemaParser(schema))
    for text in ['{"a": 1, "name": "x"}', '{"abc": [1, 2]}', '{"a": 1}', '{"a": 1, "b": 2}']:
        accepted, _ = accepts_tokens(enforcer, llama3_tokenizer, text)
        assert accepted == _valid(schema, text), text


MASK_CASES = [
    (SCHEMAS[3], '{"a": 1, "b'),  # inside a key: its text decides whether it holds the member
    (SCHEMAS[1], '{"a": "x", "b": 1'),  # a tracked value that may end: `}` now allowed
]
SLOW_MASK_CASES = [
    (SCHEMAS[1], '{"a": "x"'),  # `}` refused, `,` allowed
    (SCHEMAS[5], '{"x1": "ab'),
    (SCHEMAS[7], '{"bc": 1, "a'),  # (keys start with a, b or c; one must not start with a)
]


def _check(tokenizer, vocabulary, schema, prefix: str) -> None:
    mask, step = mask_and_step(TokenEnforcer(vocabulary, JsonSchemaParser(schema)), tokenizer, prefix)
    assert not mask - step, [tokenizer.decode([t]) for t in sorted(mask - step)[:10]]
    assert not step - mask, [tokenizer.decode([t]) for t in sorted(step - mask)[:10]]


@pytest.mark.parametrize(("schema", "prefix"), MASK_CASES, ids=[p for _, p in MASK_CASES])
def test_mask_equals_step(llama3_tokenizer, llama3_vocabulary, schema, prefix):
    _check(llama3_tokenizer, llama3_vocabulary, schema, prefix)


@pytest.mark.slow
@pytest.mark.parametrize(("schema", "prefix"), SLOW_MASK_CASES, ids=[p for _, p in SLOW_MASK_CASES])
def test_mask_equals_step_more(llama3_tokenizer, llama3_vocabulary, schema, prefix):
    _check(llama3_tokenizer, llama3_vocabulary, schema, prefix)


def test_a_member_whose_value_cannot_fit_under_the_depth_limit_is_not_started():
    # each item must hold a member whose value is an object: at max_depth 2 no item object can be written
    schema = {
        "type": "array",
        "items": {"type": "object", "not": {"additionalProperties": {"not": {"type": "object"}}}},
    }
    for depth, deepest in ((2, 1), (3, 3)):
        parser = JsonSchemaParser(schema, config=JsonConfig(max_depth=depth))
        assert parser.accepts('[{"a": {}}]') == (depth == 3)
        rng = random.Random(1)
        seen = 0
        for i in range(200):
            text, done = char_walk(parser, rng, max_chars=150) if i % 2 else _short_walk(parser, rng, 150)
            if done:
                assert _valid(schema, text), text
                seen = max(seen, _depth(json.loads(text)))
        assert seen == deepest
