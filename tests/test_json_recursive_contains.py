"""Recursive items (``items: {"$ref": "#"}``) beside ``contains`` (issue #18): built at once, enforced exactly.

The finiteness check and the array contexts follow the merged schema of an item that must (or must not)
match ``contains``. Each merge used to build a fresh node, whose own ``contains`` match was a fresh merge
again, so a recursive schema unfolded without end: the check ran for minutes (``contains: {"type":
"array"}``) or the build hit a ``RecursionError`` (``contains: {"const": []}``). The merger now gives one node
per pair of nodes (and one complement per node), so the unfolding meets itself and stays finite.

Each schema is checked against the ``jsonschema`` package on every small document below, and by random
character walks that must never dead-end and must finish as valid documents.
"""

from __future__ import annotations

import itertools
import json
import random
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import jsonschema
import pytest

from formatenforcer import JsonSchemaParser, UnsupportedSchemaError

from .json_checks import char_walk

BUILD_LIMIT = 30
"""Seconds a build may take before the test fails instead of hanging (the builds here take well under one)."""


@contextmanager
def _time_limit(seconds: int) -> Iterator[None]:
    """Fails the test when the body runs longer than ``seconds`` (main thread only: signals)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum, frame):  # noqa: ANN001, ANN202, ARG001
        raise AssertionError(f"the build ran longer than {seconds} s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _build(schema: dict) -> JsonSchemaParser:
    with _time_limit(BUILD_LIMIT):
        return JsonSchemaParser(schema)


def _documents() -> list[str]:
    """Arrays nested up to three levels, 0 to 4 items each, of arrays, numbers, null and ``{}``; compact."""
    level: list = [[], 1]
    for _ in range(3):
        out = [1, None, {}]
        for n in range(5):
            out.extend(list(combo) for combo in itertools.islice(itertools.product(level, repeat=n), 60))
        level = out
    texts = dict.fromkeys(json.dumps(d, separators=(",", ":")) for d in level)
    texts.update(dict.fromkeys(['{"a":[]}', '{"a":[[]],"b":null}', '{"a":1,"b":2,"c":3}', '[{"a":[]}]']))
    texts.update(dict.fromkeys(["[null]", "[[null]]", "[[null],null]", "[[[null]],[]]", "[null,null,null]"]))
    return list(texts)


DOCUMENTS = _documents()


def _recursive(contains: dict, **more: object) -> dict:
    return {"type": "array", "items": {"$ref": "#"}, "contains": contains, **more}


SHORT = {"type": "array", "items": {"$ref": "#"}, "maxItems": 3}

ENFORCED = {
    "contains-array": {"anyOf": [_recursive({"type": "array"}), SHORT]},
    "contains-const-empty": {"anyOf": [_recursive({"const": []}), SHORT]},
    "min-contains": {"anyOf": [_recursive({"type": "array"}, minContains=2), SHORT]},
    "max-contains": {"anyOf": [_recursive({"const": []}, maxContains=1), SHORT]},
    # maxItems: whether an item can match `contains` is read from the item's start, here the union being
    # built (it was taken for None: no match, so `[null]` was refused)
    "max-items": {"anyOf": [_recursive({}, maxItems=2), {"type": "null"}]},
    "max-items-max-contains": {"anyOf": [_recursive({"type": "array"}, maxItems=2, maxContains=1), {"type": "null"}]},
    "max-items-min-contains": {"anyOf": [_recursive({"type": "array"}, maxItems=2, minContains=2), {"type": "null"}]},
    "objects-all-of": {
        "anyOf": [
            {"type": "object", "additionalProperties": {"$ref": "#"}, "allOf": [{"maxProperties": 2}]},
            _recursive({"type": "object"}),
            SHORT,
        ]
    },
}


@pytest.mark.parametrize("name", sorted(ENFORCED))
def test_recursive_items_beside_contains_are_enforced_exactly(name: str) -> None:
    schema = ENFORCED[name]
    parser = _build(schema)
    validator = jsonschema.Draft202012Validator(schema)
    verdicts = {text: parser.accepts(text) for text in DOCUMENTS}
    wrong = [text for text in DOCUMENTS if verdicts[text] != validator.is_valid(json.loads(text))]
    assert not wrong, wrong[:5]
    accepted = sum(verdicts.values())
    assert 0 < accepted < len(DOCUMENTS)  # the documents tell both answers apart
    finished = 0
    for seed in range(20):
        text, done = char_walk(parser, random.Random(seed), max_chars=200, end_bias=0.4)
        if done:
            finished += 1
            assert validator.is_valid(json.loads(text)), text
    assert finished >= 8


@pytest.mark.parametrize("contains", [{"type": "array"}, {"const": []}])
def test_one_of_the_same_branches_is_refused_at_construction(contains: dict) -> None:
    # oneOf needs the first branch's complement beside the second: an array counting a second `contains`
    # with a maximum, which the arrays cannot enforce; refused with the documented error (it hung before)
    schema = {"oneOf": [_recursive(contains), SHORT]}
    with pytest.raises(UnsupportedSchemaError) as raised:
        _build(schema)
    assert raised.value.problems == [("#", "contains")]
    assert "two 'contains' with maxContains on one array" in str(raised.value)
