"""No dead end at the nesting limit (issue 18): under a small ``JsonConfig.max_depth`` a key, an item or a union
branch whose value needs more levels than remain is not offered, so every state the mask or the step reaches
can still finish, and the documents that fit the limit are still accepted.

Checked exhaustively on schemas whose leaves are literals (compact layout, so the reachable states are
finite): every state reached from the start by allowed characters can still reach an end, and every allowed
character is taken by the step. Then token by token on Llama 3 at a position one level below the limit."""

from __future__ import annotations

import json
import random
import warnings

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from formatenforcer import FormatEnforcerError, JsonConfig, JsonSchemaParser, SchemaError, TokenEnforcer

from .format_oracle import valid
from .fuzz_strategies import fuzz_schemas
from .json_checks import char_walk, mask_and_step

# an optional key whose value is the object itself: at the limit "a" cannot be written, "b" can
OPTIONAL_KEY = {
    "type": "object",
    "properties": {"a": {"$ref": "#"}, "b": {"type": "boolean"}},
    "required": ["b"],
    "additionalProperties": False,
}
# an array of itself or an object: an array needs two levels, so at the limit only "{" starts the item
PAIR = {"type": "array", "items": {"type": "boolean"}, "minItems": 1, "maxItems": 1}
RECURSIVE_ITEMS = {
    "anyOf": [
        {"type": "array", "items": {"$ref": "#"}, "minItems": 1, "maxItems": 2},
        {"type": "object", "properties": {"v": {"type": "boolean"}}, "required": ["v"], "additionalProperties": False},
    ]
}
# optional items that are a boolean or an array needing two levels
DEEP_OPTION = {
    "type": "array",
    "items": {"anyOf": [{"type": "boolean"}, {"type": "array", "items": PAIR, "minItems": 1, "maxItems": 1}]},
    "maxItems": 2,
}
# extra keys (named by propertyNames) whose values need a level, next to a scalar named key
EXTRA_KEYS = {
    "type": "object",
    "properties": {"n": {"type": "null"}, "s": {"$ref": "#"}},
    "propertyNames": {"enum": ["n", "s", "x"]},
    "additionalProperties": {"type": "array", "items": {"type": "boolean"}, "minItems": 1, "maxItems": 1},
    "maxProperties": 2,
}
# the same items under a contains count: the array is not a transparent frame, its item is a stack of its own
CONTAINS = {**DEEP_OPTION, "contains": {"const": True}}
# a union of two arrays, both alive after "[", whose items may need two more levels
TWO_ARRAYS = {
    "anyOf": [
        {"type": "array", "items": {"anyOf": [{"type": "boolean"}, DEEP_OPTION["items"]["anyOf"][1]]}, "maxItems": 2},
        {"type": "array", "items": {"anyOf": [{"type": "null"}, DEEP_OPTION["items"]["anyOf"][1]]}, "maxItems": 3},
    ]
}
# an item that must contain an array of booleans (minContains): at the limit only null starts an item
MUST_CONTAIN = {
    "type": "array",
    "maxItems": 2,
    "items": {
        "anyOf": [
            {"type": "null"},
            {
                "type": "array",
                "contains": PAIR,
                "minContains": 1,
                "maxItems": 2,
                "items": {"anyOf": [{"type": "null"}, PAIR]},
            },
        ]
    },
}
CASES = [(OPTIONAL_KEY, 3), (OPTIONAL_KEY, 1), (RECURSIVE_ITEMS, 3), (RECURSIVE_ITEMS, 4), (DEEP_OPTION, 2),
         (EXTRA_KEYS, 2), (EXTRA_KEYS, 3), (CONTAINS, 2), (CONTAINS, 3),
         ({"type": "object", "properties": {"k": CONTAINS}, "additionalProperties": False}, 3),
         (TWO_ARRAYS, 2), ({"type": "array", "items": TWO_ARRAYS, "maxItems": 2}, 2), (MUST_CONTAIN, 2),
         (MUST_CONTAIN, 3)]  # fmt: skip


def _reachable(parser) -> tuple[dict, dict]:  # noqa: ANN001
    """Every state reached from ``parser`` by allowed characters (by key), with its text and its edges."""
    states, edges, texts = {parser.key(): parser}, {}, {parser.key(): ""}
    todo = [parser]
    while todo:
        state = todo.pop()
        key = state.key()
        edges[key] = []
        for lo, hi in state.allowed_characters().intervals:
            assert hi - lo < 200, (texts[key], chr(lo), chr(hi))  # literal leaves only: a small alphabet
            for code in range(lo, hi + 1):
                nxt = state.add_character(chr(code))
                assert nxt is not None, f"{chr(code)!r} allowed after {texts[key]!r} but refused by the step"
                edges[key].append(nxt.key())
                if nxt.key() not in states:
                    states[nxt.key()] = nxt
                    texts[nxt.key()] = texts[key] + chr(code)
                    todo.append(nxt)
                    assert len(states) < 20_000, "the reachable states are not finite"
    return states, {"edges": edges, "texts": texts}


SPACED = dict(whitespace="flexible", max_whitespace=1)  # (one space, tab, newline or return between tokens)


@pytest.mark.parametrize(
    ("schema", "max_depth", "layout"),
    [(schema, depth, dict(whitespace="compact")) for schema, depth in CASES]
    + [(OPTIONAL_KEY, 2, SPACED), (RECURSIVE_ITEMS, 3, SPACED), (CONTAINS, 2, SPACED)],
)
def test_every_reachable_state_can_finish_within_the_limit(schema: dict, max_depth: int, layout: dict) -> None:
    parser = JsonSchemaParser(schema, config=JsonConfig(max_depth=max_depth, **layout))
    states, graph = _reachable(parser)
    edges, texts = graph["edges"], graph["texts"]
    finishing = {key for key, state in states.items() if state.can_end()}
    assert finishing
    changed = True
    while changed:  # the states with a way to an end
        changed = False
        for key, out in edges.items():
            if key not in finishing and any(o in finishing for o in out):
                finishing.add(key)
                changed = True
    stranded = sorted((texts[key] for key in states if key not in finishing), key=len)
    assert not stranded, f"{len(stranded)} dead ends, e.g. {stranded[:5]}"
    validator = jsonschema.Draft202012Validator(schema)
    for key, state in states.items():
        if state.can_end():
            value = json.loads(texts[key])
            assert validator.is_valid(value), texts[key]


def _depth(value: object) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


@pytest.mark.parametrize(
    ("schema", "max_depth", "text"),
    [
        (OPTIONAL_KEY, 3, '{"a":{"a":{"b":true},"b":false},"b":true}'),
        (RECURSIVE_ITEMS, 3, '[[{"v":true}],[{"v":false}]]'),
        (RECURSIVE_ITEMS, 4, '[[[{"v":true}]],{"v":false}]'),
        (DEEP_OPTION, 3, "[true,[[false]]]"),
        (EXTRA_KEYS, 3, '{"s":{"x":[true]},"n":null}'),
        (CONTAINS, 3, "[[[false]],true]"),
    ],
)
def test_documents_that_fit_are_still_accepted(schema: dict, max_depth: int, text: str) -> None:
    assert _depth(json.loads(text)) == max_depth
    jsonschema.Draft202012Validator(schema).validate(json.loads(text))
    assert JsonSchemaParser(schema, config=JsonConfig(max_depth=max_depth, whitespace="compact")).accepts(text)


@pytest.mark.parametrize(
    ("schema", "max_depth", "prefix", "refused"),
    [
        (OPTIONAL_KEY, 3, '{"a":{"a":{', '"a'),  # at the limit: only "b"
        # (each steps all of Llama 3: a few CPU-seconds; the full suite runs these two as well)
        pytest.param(RECURSIVE_ITEMS, 3, "[[", "[", marks=pytest.mark.slow),  # room for an object only
        pytest.param(DEEP_OPTION, 2, "[true,", "[", marks=pytest.mark.slow),  # room for a boolean only
    ],
)
def test_mask_equals_step_one_level_below_the_limit(
    llama3_tokenizer, llama3_vocabulary, schema: dict, max_depth: int, prefix: str, refused: str
) -> None:
    """Token by token on Llama 3: the mask holds exactly what the step takes, and neither takes the token
    that would open (or name) a value the remaining levels cannot hold."""
    enforcer = TokenEnforcer(llama3_vocabulary, JsonSchemaParser(schema, config=JsonConfig(max_depth=max_depth)))
    mask, step = mask_and_step(enforcer, llama3_tokenizer, prefix)
    assert mask == step
    (token,) = llama3_tokenizer.encode(refused, add_special_tokens=False)
    assert token not in mask


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True, database=None)
@given(schema=fuzz_schemas(), seed=st.integers(0, 2**16), max_depth=st.integers(1, 4))
def test_fuzzed_schemas_under_a_small_limit_walk_without_dead_ends(schema, seed: int, max_depth: int) -> None:
    """The fuzz suite's schemas under a limit of 1 to 4 levels: a random character walk never dead-ends (and
    never opens more levels than the limit), and a finished walk is valid."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parser = JsonSchemaParser(schema, config=JsonConfig(max_depth=max_depth))
    except (FormatEnforcerError, TypeError, ValueError):
        return
    text, finished = char_walk(parser, random.Random(seed), max_chars=150)
    if finished:
        assert valid(schema, text), f"{json.dumps(schema)}: {text!r}"
        assert _depth(json.loads(text)) <= max_depth


def test_a_required_contains_match_counts_towards_the_smallest_depth() -> None:
    """The smallest value of an array that must hold a ``contains`` match nests that match: here an array of
    arrays inside the array, three levels, so a limit of 2 refuses the schema at construction (it used to
    build, and no document fitted)."""
    schema = {"type": "array", "contains": {"type": "array", "minItems": 1, "items": {"type": "array"}}}
    with pytest.raises(SchemaError, match="nests 3 arrays or objects"):
        JsonSchemaParser(schema, config=JsonConfig(max_depth=2))
    assert JsonSchemaParser(schema, config=JsonConfig(max_depth=3)).accepts("[[[]]]")
