"""The finiteness check (jsonschema/finite.py) and the build's time limit (``parsers.regex.COMPILE_SECONDS``).

Whether an object leaves any value can need a key automaton. When that automaton runs out of time, the check
used to answer "possible" like for any other exception, and the node's own build, a moment later and on a
quieter machine, could finish and find no value: the parent was then built expecting a value that does not
exist (a dead end after ``[``). Now the check answers "possible" only for what really cannot be decided there
(a refused merge or key automaton, a reference that needs itself) and refuses a node whose check ran out of
time, as the documented UnsupportedSchemaError naming that node, consistently with its own build.

The schemas are real and their key automata real; only the time limit is made tiny. Each test uses its own
patterns: a compiled automaton is cached by its text, and a cached one needs no time at all.
"""

from __future__ import annotations

import json
import random
import warnings

import pytest

from formatenforcer import JsonConfig, JsonSchemaParser, UnsupportedSchemaError
from formatenforcer.jsonschema.compile import Compiler
from formatenforcer.jsonschema.finite import TimedOut
from formatenforcer.jsonschema.schema.ir import deref
from formatenforcer.jsonschema.schema.normalize import Normalizer
from formatenforcer.parsers import dfa_ops, regex

from .json_checks import char_walk


def _schema(a: str, b: str) -> dict:
    """An optional "list" of at least one object of at least one key, each key matching ``^a(a|b){10}z$``
    (patternProperties, nothing else allowed) and therefore also ``a(a|b){10}z``, whose value must be
    ``false``: no key has a value, so no such object, so "list" can never be written. Only the product of
    the two key automata tells."""
    key = f"{a}(?:{a}|{b}){{10}}z"
    item = {"type": "object", "minProperties": 1, "additionalProperties": False,
            "patternProperties": {key: False, f"^{key}$": {}}}  # fmt: skip
    return {"type": "object", "properties": {"list": {"type": "array", "items": item, "minItems": 1}}}


def _compiler(schema: dict) -> tuple[Compiler, object, object]:
    """The compiler JsonSchemaParser builds, and the IR nodes of "list" and of its items."""
    normalizer = Normalizer(schema)
    root = normalizer.node(schema)
    normalizer.finish()
    compiler = Compiler(JsonConfig(), normalizer.merger, lambda node: normalizer.origin.get(id(node), "#"))
    listed = dict(deref(root).sides[0].properties)["list"]
    return compiler, listed, deref(listed).items


@pytest.fixture()
def tiny_budget(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    monkeypatch.setattr(regex, "COMPILE_SECONDS", 0.0)
    monkeypatch.setattr(dfa_ops, "COMPILE_SECONDS", 0.0)
    return monkeypatch


def test_with_time_the_list_has_no_value() -> None:
    compiler, listed, item = _compiler(_schema("c", "d"))
    assert compiler.finite(listed) is False and compiler.start(item) is None
    parser = JsonSchemaParser(_schema("c", "d"))
    assert parser.accepts("{}") and not parser.accepts('{"list": []}')


def test_a_check_over_budget_refuses_the_node_instead_of_answering_possible(tiny_budget) -> None:
    compiler, listed, item = _compiler(_schema("e", "f"))
    with pytest.raises(TimedOut) as raised:
        compiler.finite(listed)  # (it answered True before: "possible", for a list that has no value)
    assert raised.value.node is deref(item) and "too complex" in raised.value.reason
    tiny_budget.undo()  # time enough now: the item's own build would find that it has no value
    with pytest.raises(UnsupportedSchemaError) as refused:
        compiler.start(item)  # refused alike, not built with an answer the check did not give
    assert refused.value.problems == [("#/properties/list/items", "patternProperties")]


def test_the_schema_is_refused_with_the_item_pointer(tiny_budget) -> None:
    with pytest.raises(UnsupportedSchemaError) as raised:
        JsonSchemaParser(_schema("g", "h"))
    assert ("#/properties/list/items", "patternProperties") in raised.value.problems
    assert "too complex" in str(raised.value)


def test_lenient_relaxes_the_item_and_never_dead_ends(tiny_budget) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parser = JsonSchemaParser(_schema("i", "j"), lenient=True)
    assert any("#/properties/list/items" in str(w.message) for w in caught)
    assert parser.accepts("{}")
    _walks_finish(parser)


def test_a_check_that_cannot_be_decided_still_answers_possible() -> None:
    # propertyNames with several string alternatives is refused where the object is built; the check
    # answers "possible" (it cannot decide), so the refusal names the object's own pointer
    names = {"anyOf": [{"type": "string", "pattern": "^k"}, {"type": "string", "maxLength": 1}]}
    schema = {"type": "object", "properties": {"o": {"type": "object", "required": ["k"], "propertyNames": names}}}
    with pytest.raises(UnsupportedSchemaError) as raised:
        JsonSchemaParser(schema)
    assert [p.pointer for p in raised.value.problems] == ["#/properties/o"]


def _contains_schema(a: str) -> tuple[dict, dict, dict]:
    """An optional "tags" array of strings matching ``^a(a|b){12}z$`` that must hold one matching
    ``^(a|b)*ba{3}`` too: whether any string matches both (so whether "tags" can be written) needs the product
    of the two automata. Returns the schema and the two string schemas."""
    items = {"type": "string", "pattern": f"^{a}(?:{a}|b){{12}}z$"}
    contains = {"type": "string", "pattern": f"^(?:{a}|b)*b{a}{{3}}"}
    tags = {"type": "array", "items": items, "contains": contains, "minItems": 1}
    return {"type": "object", "properties": {"tags": tags}}, items, contains


def test_a_contains_match_over_budget_is_refused_naming_contains(tiny_budget) -> None:
    # the array check used to answer "has a value" for the match whose build ran out of time (a guess: on a
    # quieter machine it could find none); now it refuses, naming the contains schema, not the array (#...)
    schema, items, contains = _contains_schema("k")
    tiny_budget.undo()
    JsonSchemaParser(items), JsonSchemaParser(contains)  # their own automata, cached: only the product runs out
    tiny_budget.setattr(regex, "COMPILE_SECONDS", 0.0)
    with pytest.raises(UnsupportedSchemaError) as raised:
        JsonSchemaParser(schema)
    assert raised.value.problems == [("#/properties/tags/contains", "pattern")]
    assert "too complex" in str(raised.value)
    tiny_budget.undo()  # with time, the same schema builds and enforces both patterns
    parser = JsonSchemaParser(schema)
    assert parser.accepts('{"tags": ["kbbbkkkbbbbbbz"]}') and not parser.accepts('{"tags": ["kkkkkkkkkkkkkz"]}')


def test_lenient_relaxes_an_over_budget_contains_match_and_never_dead_ends(tiny_budget) -> None:
    schema, items, contains = _contains_schema("m")
    tiny_budget.undo()
    JsonSchemaParser(items), JsonSchemaParser(contains)
    tiny_budget.setattr(regex, "COMPILE_SECONDS", 0.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parser = JsonSchemaParser(schema, lenient=True)
    assert any("#/properties/tags/contains" in str(w.message) for w in caught)
    assert parser.accepts('{"tags": ["mbbbmmmbbbbbbz"]}')
    _walks_finish(parser)


def test_a_required_string_over_budget_is_refused_at_its_own_pointer(tiny_budget) -> None:
    # the finiteness check asks whether the required string has a value; its build running out of time is
    # refused at the string's pointer (as its own build would), not at the object that asked
    key = {"type": "string", "pattern": "^w(?:w|b){12}z$", "not": {"pattern": "www"}}
    schema = {"type": "object", "properties": {"s": key}, "required": ["s"]}
    with pytest.raises(UnsupportedSchemaError) as raised:
        JsonSchemaParser(schema)
    assert raised.value.problems == [("#/properties/s", "pattern")]


def _walks_finish(parser: JsonSchemaParser) -> None:
    """30 random character walks: none dead-ends (``char_walk`` asserts it), at least 10 finish, each as JSON."""
    finished = 0
    for seed in range(30):
        text, done = char_walk(parser, random.Random(seed), max_chars=200, end_bias=0.4)
        if done:
            finished += 1
            json.loads(text)
    assert finished >= 10
