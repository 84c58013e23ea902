"""Arrays whose items may be the array itself, beside ``contains`` (issue #18): ``[[1]]`` is accepted.

An array with ``contains`` builds its tracker and its "must match" / "must not match" items while the array
itself is being built. There the array's start is a placeholder None (it stands for "no value" only at the
array's own first character), so with ``items: anyOf [{"$ref": "#"}, integer]`` and ``contains: {}`` the
"must match" item (the items union itself) was built and kept without its array branch: the item start
after ``[`` offered no ``[``, and ``[[1]]`` was refused. Those builds are now kept only when they read no
placeholder (``Compiler.settled_start``), else built when first needed.

Arrays whose ``contains`` matches hold each other (``t`` contains ``t`` and holds ``u``, which holds ``t``)
raised ``RecursionError`` at construction: each match merged a new array node (``(t and u) and t`` beside
``t and u``). The merger now gives one node per set of merged nodes, and ``settled_start`` drops only the
starts that read a placeholder, not every start of that build (which rebuilt the nested matches once per
ask above them, exponentially).

Each schema is checked against the ``jsonschema`` package on every small document below, character by
character and on Llama 3 tokens, by random walks that must finish as valid documents, and by mask = step at
a few positions inside the nested arrays.
"""

from __future__ import annotations

import itertools
import json
import random

import jsonschema
import pytest

from formatenforcer import JsonSchemaParser, TokenEnforcer

from .checking import random_walk
from .json_checks import accepts_tokens, char_walk, mask_and_step

ITEMS = {"anyOf": [{"$ref": "#"}, {"type": "integer"}]}


def _array(contains: dict, items: dict = ITEMS, **more: object) -> dict:
    return {"type": "array", "items": items, "contains": contains, **more}


def _ref_or_integer(name: str) -> dict:
    return {"anyOf": [{"$ref": f"#/$defs/{name}"}, {"type": "integer"}]}


def _items(items: dict) -> dict:
    return {"type": "array", "items": items}


# an item that is the array again, under `contains` of several kinds
SCHEMAS = {
    "contains-any": _array({}),
    "contains-integer": _array({"type": "integer"}),
    "contains-self-or-integer": _array(ITEMS),
    "min-contains-2": _array({}, minContains=2),
    "max-contains-1": _array({}, maxContains=1),
    "min-0-max-contains-1": _array({}, minContains=0, maxContains=1),
    "max-items-2": _array({}, maxItems=2),
    "strings-too": _array({}, {"anyOf": [{"$ref": "#"}, {"type": "integer"}, {"type": "string"}]}),
    "under-a-union": {"anyOf": [_array({}), {"type": "null"}]},
    # deeper: the array holds another array that holds it again, each with its own `contains`
    "mutual": {
        "$defs": {
            "t": _array({}, {"anyOf": [{"$ref": "#/$defs/u"}, {"type": "integer"}]}),
            "u": _array({"type": "integer"}, {"anyOf": [{"$ref": "#/$defs/t"}, {"type": "integer"}]}),
        },
        "$ref": "#/$defs/t",
    },
    # arrays whose `contains` matches hold each other: each match merged a new array node, whose own match
    # was one merge deeper (RecursionError at construction); the merged nodes now meet themselves
    "contain-each-other": {
        "$defs": {"t": _array(_ref_or_integer("t"), _ref_or_integer("u")), "u": _items(_ref_or_integer("t"))},
        "$ref": "#/$defs/t",
    },
    "both-contain": {
        "$defs": {
            "t": _array(_ref_or_integer("t"), _ref_or_integer("u")),
            "u": _array(_ref_or_integer("u"), _ref_or_integer("t")),
        },
        "$ref": "#/$defs/t",
    },
    "three-in-a-cycle": {
        "$defs": {
            "t": _array(_ref_or_integer("t"), _ref_or_integer("u")),
            "u": _items(_ref_or_integer("v")),
            "v": _array(_ref_or_integer("v"), _ref_or_integer("t")),
        },
        "$ref": "#/$defs/t",
    },
    "contain-each-other-min-contains-2": {
        "$defs": {
            "t": _array(_ref_or_integer("t"), _ref_or_integer("u"), minContains=2),
            "u": _items(_ref_or_integer("t")),
        },
        "$ref": "#/$defs/t",
    },
    "contain-each-other-all-of": {
        "$defs": {"t": _array(_ref_or_integer("t"), _ref_or_integer("u")), "u": _items(_ref_or_integer("t"))},
        "allOf": [{"$ref": "#/$defs/t"}, {"$ref": "#/$defs/u"}],
    },
    # the same with a tuple, and under uniqueItems: "not contains" of such an array cannot be expressed, and
    # is needed only under maxContains, so it is built only there (it refused these at construction)
    "contain-each-other-prefix-items": {
        "$defs": {
            "t": {**_array(_ref_or_integer("t"), _ref_or_integer("u")), "prefixItems": [_ref_or_integer("u")]},
            "u": {**_items(_ref_or_integer("t")), "prefixItems": [_ref_or_integer("t")]},
        },
        "$ref": "#/$defs/t",
    },
    "contain-each-other-unique": {
        "$defs": {
            "t": _array(_ref_or_integer("t"), _ref_or_integer("u"), uniqueItems=True),
            "u": _items(_ref_or_integer("t")),
        },
        "$ref": "#/$defs/t",
    },
    "in-an-object": {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/t"}},
        "required": ["a"],
        "additionalProperties": False,
        "$defs": {"t": _array({}, {"anyOf": [{"$ref": "#/$defs/t"}, {"type": "integer"}]})},
    },
}


def _documents() -> list[str]:
    """Arrays nested up to three levels, 0 to 3 items each, of arrays, integers, null and a string."""
    level: list = [[], 1]
    for _ in range(3):
        out = [1, None, "a"]
        for n in range(4):
            out.extend(list(combo) for combo in itertools.islice(itertools.product(level, repeat=n), 40))
        level = out
    texts = dict.fromkeys(json.dumps(d, separators=(",", ":")) for d in level)
    texts.update(dict.fromkeys(["[[[[1]]]]", "[[[[]]]]", "[[1],[[1]]]", "[[[1],1]]", "[1,1,1]", "[[1,1],[1]]"]))
    texts.update(dict.fromkeys(f'{{"a":{t}}}' for t in list(texts)[:60]))
    return list(texts)


DOCUMENTS = _documents()


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_characters_agree_with_jsonschema(name: str) -> None:
    schema = SCHEMAS[name]
    parser = JsonSchemaParser(schema)
    validator = jsonschema.Draft202012Validator(schema)
    verdicts = {text: parser.accepts(text) for text in DOCUMENTS}
    wrong = [text for text in DOCUMENTS if verdicts[text] != validator.is_valid(json.loads(text))]
    assert not wrong, wrong[:5]
    accepted = sum(verdicts.values())
    assert 3 < accepted < len(DOCUMENTS)  # the documents tell both answers apart
    finished = 0
    for seed in range(20):
        text, done = char_walk(parser, random.Random(seed), max_chars=200, end_bias=0.4)
        if done:
            finished += 1
            assert validator.is_valid(json.loads(text)), text
    assert finished >= 8


def test_the_item_after_a_bracket_may_be_the_array_again() -> None:
    parser = JsonSchemaParser(SCHEMAS["contains-any"])
    for text in ["[[1]]", "[[1,2]]", "[[[1]]]", "[[1],1]", "[1,[1]]"]:
        assert parser.accepts(text), text
    for text in ["[]", "[[]]", "[[[]]]", "[1,[]]"]:
        assert not parser.accepts(text), text  # every array, the inner ones too, needs an item


TOKEN_SCHEMAS = ["contains-any", "contains-integer", "min-contains-2", "max-contains-1", "mutual", "both-contain"]


@pytest.mark.parametrize("half", [0, pytest.param(1, marks=pytest.mark.slow)], ids=["half0", "half1"])
@pytest.mark.parametrize("name", TOKEN_SCHEMAS)
def test_tokens_agree_with_jsonschema(llama3_tokenizer, llama3_vocabulary, name: str, half: int) -> None:
    """Every third document's natural tokenization, and 12 random token walks, agree with jsonschema: half of
    each (alternate documents, six of the walks' seeds) in the fast suite, the other half in the full one."""
    schema = SCHEMAS[name]
    enforcer = TokenEnforcer(llama3_vocabulary, JsonSchemaParser(schema))
    validator = jsonschema.Draft202012Validator(schema)
    wrong = []
    for text in DOCUMENTS[3 * half :: 6]:
        ok, reason = accepts_tokens(enforcer, llama3_tokenizer, text)
        if ok != validator.is_valid(json.loads(text)):
            wrong.append((text, reason))
    assert not wrong, wrong[:5]
    finished = 0
    for seed in range(6 * half, 6 * half + 6):
        text, done = random_walk(enforcer, seed, max_tokens=80, end_bias=0.5)
        if done:
            finished += 1
            assert validator.is_valid(json.loads(text)), text
    assert finished >= 4


# (each position steps all 128,256 tokens of Llama 3: several CPU-seconds)
FAST = [("contains-any", "[["), ("contains-any", "[[1],"), ("both-contain", "[[1,[")]
SLOW = [("contains-any", "[[1"), ("min-contains-2", "[1,["), ("max-contains-1", "[[[1]"), ("mutual", "[[[")]


def _check(tokenizer, vocabulary, name: str, prefix: str) -> None:
    mask, step = mask_and_step(TokenEnforcer(vocabulary, JsonSchemaParser(SCHEMAS[name])), tokenizer, prefix)
    assert len(step) > 10  # digits, brackets
    assert not mask - step, [tokenizer.decode([t]) for t in sorted(mask - step)[:10]]
    assert not step - mask, [tokenizer.decode([t]) for t in sorted(step - mask)[:10]]


@pytest.mark.parametrize(("name", "prefix"), FAST, ids=[f"{n}:{p}" for n, p in FAST])
def test_mask_equals_step_inside_nested_items(llama3_tokenizer, llama3_vocabulary, name: str, prefix: str) -> None:
    _check(llama3_tokenizer, llama3_vocabulary, name, prefix)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "prefix"), SLOW, ids=[f"{n}:{p}" for n, p in SLOW])
def test_mask_equals_step_at_more_positions(llama3_tokenizer, llama3_vocabulary, name: str, prefix: str) -> None:
    _check(llama3_tokenizer, llama3_vocabulary, name, prefix)


def test_contains_whose_complement_cannot_be_expressed_builds_without_max_contains() -> None:
    """Items that must not match ``contains`` exist only under ``maxContains``: without it, a ``contains``
    whose complement the schema algebra cannot express (an array with a tuple) builds and is exact."""
    schema = {
        "type": "array",
        "contains": {"type": "array", "prefixItems": [{"type": "integer"}], "items": {"type": "string"}},
    }
    parser = JsonSchemaParser(schema)
    validator = jsonschema.Draft202012Validator(schema)
    for text in ["[]", "[[1]]", '[[1,"a"]]', '[["a"]]', '[1,[2,"x","y"]]', "[[1,2]]", "[1]"]:
        assert parser.accepts(text) == validator.is_valid(json.loads(text)), text
