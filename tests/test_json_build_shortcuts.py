"""The build's shortcuts (time to first mask) give what the general paths give: the reference scan skipped
for a document without identifiers, keyword checks that build a pointer only for an error, numbers merged
without a node per bound, one dict lookup per property name, memoised pattern checks and satisfiability,
and "any value" states built on first use. Each test can fail if a shortcut drifts from its general path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from formatenforcer import JsonSchemaParser, SchemaError, UnsupportedSchemaError
from formatenforcer.jsonschema.compile import Compiler, children
from formatenforcer.jsonschema.config import JsonConfig
from formatenforcer.jsonschema.objects import ObjectContext
from formatenforcer.jsonschema.schema.ir import AnyValue, Object, deref
from formatenforcer.jsonschema.schema.normalize import Normalizer
from formatenforcer.jsonschema.schema.validate import value_schemas

CASES = Path(__file__).resolve().parents[1] / "benchmarks" / "cases"


def _benchmark_schemas() -> list[dict]:
    out = []
    for path in sorted(CASES.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        out.extend(case["schema"] for case in (data if isinstance(data, list) else [data]))
    return out


UNMARKED = [
    {"type": "object", "properties": {"id": {"type": "integer"}, "$id": {"type": "string"}}, "required": ["id"]},
    {"$schema": "http://json-schema.org/draft-07/schema#", "$defs": {"a": {"enum": [{"$id": "x"}]}}},
    {"default": {"$id": "http://x.test/"}, "items": [{"type": "string"}, [{"const": 1}]]},
]
MARKED = [
    {"$defs": {"a": {"$id": "http://x.test/a", "type": "string"}}, "$ref": "http://x.test/a"},
    {"items": [{"$anchor": "here", "type": "integer"}], "additionalItems": {"$ref": "#here"}},
    {"properties": {"p": {"properties": {"q": {"id": "#q"}}}}},
    {"allOf": [[{"$dynamicAnchor": "d"}]]},
]


@pytest.mark.parametrize("schema", UNMARKED + _benchmark_schemas())
def test_a_document_without_identifiers_scans_to_the_lookup_defaults(schema):
    normalizer = Normalizer(schema)
    if not normalizer._unmarked(schema):
        return  # (the benchmark schemas that name a resource take the full scan)
    full = Normalizer({})  # the scan the shortcut skips, on the same document, from an empty record
    full.track, full.root_dialect = False, normalizer.root_dialect
    full._resources, full._bases, full._dialects, full._anchors = {}, {}, {}, {}
    full._scan(schema, "#", "", document=True)
    assert set(full._bases.values()) <= {""}
    assert set(full._dialects.values()) <= {normalizer.root_dialect}
    assert not full._anchors and not full._dynamic
    assert full._resources == {"": (schema, "#")} == normalizer._resources
    assert full.track == normalizer.track


@pytest.mark.parametrize("schema", MARKED)
def test_identifiers_anywhere_take_the_full_scan(schema):
    assert not Normalizer(schema)._unmarked(schema)


def test_an_anchor_in_a_tuple_item_resolves():
    parser = JsonSchemaParser(MARKED[1])
    assert parser.accepts("[1, 2, 3]") and not parser.accepts('[1, "a"]')


@pytest.mark.parametrize(
    ("schema", "pointer", "words"),
    [
        ({"properties": {"a/b~": {"minLength": -1}}}, "#/properties/a~1b~0/minLength", "non-negative"),
        ({"items": {"type": ["string", "nope"]}}, "#/items/type", "'type' must be"),
        ({"items": {"type": "nope"}}, "#/items/type", "'type' must be"),
        ({"anyOf": [{"pattern": 3}]}, "#/anyOf/0/pattern", "must be a string"),
        ({"not": {"multipleOf": 0}}, "#/not/multipleOf", "greater than 0"),
        ({"properties": {"x": {"minimum": 3, "maximum": 1}}}, "#/properties/x", "greater than"),
    ],
)
def test_keyword_errors_name_their_pointer(schema, pointer, words):
    with pytest.raises(SchemaError) as raised:
        JsonSchemaParser(schema)
    assert raised.value.pointer == pointer and words in str(raised.value)


@pytest.mark.parametrize(
    ("schema", "satisfiable"),
    [
        ({"type": "integer", "minimum": 5, "maximum": 5}, True),
        ({"type": "integer", "exclusiveMinimum": 5, "maximum": 5}, False),
        ({"type": "integer", "minimum": 4, "exclusiveMinimum": 5, "exclusiveMaximum": 6}, False),
        ({"type": "number", "minimum": 4, "exclusiveMinimum": 4, "exclusiveMaximum": 4.5}, True),
        ({"type": "integer", "minimum": 1, "maximum": 4, "multipleOf": 5}, False),
        ({"type": "number", "minimum": 0.5, "maximum": 0.9, "multipleOf": 0.25}, True),
        ({"type": "integer", "minimum": 0.5, "maximum": 0.9}, False),
    ],
)
def test_number_bounds_merge_as_intersections_do(schema, satisfiable):
    kind = schema["type"]
    bounds = [{"type": kind}] + [{"type": kind, key: value} for key, value in schema.items() if key != "type"]
    node = deref(Normalizer({}).node({"allOf": bounds}))  # the general path: one intersection per bound
    direct = Normalizer(schema).node(schema)
    assert type(direct) is type(node)
    if satisfiable:
        assert {f: getattr(direct, f) for f in direct.__dataclass_fields__} == {
            f: getattr(node, f) for f in node.__dataclass_fields__
        }
        JsonSchemaParser(schema)
    else:
        assert direct.reason == node.reason == "no number satisfies the bounds"
        with pytest.raises(SchemaError, match="no number satisfies the bounds"):
            JsonSchemaParser(schema)


@pytest.mark.parametrize("schema", _benchmark_schemas() + [
    {"allOf": [{"properties": {"a": {"type": "string"}}, "additionalProperties": {"type": "integer"}},
               {"properties": {"b": {"minimum": 1}}}], "required": ["c"]},
    {"properties": {"a": {"type": "string"}}, "patternProperties": {"^a": {"maxLength": 3}}},
    {"required": ["x", "y"], "dependentRequired": {"x": ["z"]}},
])  # fmt: skip
def test_named_value_schemas_are_those_of_value_schemas(schema):
    normalizer = Normalizer(schema)
    root = normalizer.node(schema)
    normalizer.finish()
    compiler = Compiler(JsonConfig(), normalizer.merger, lambda n: "#")
    todo, seen = [deref(root)], set()
    while todo:
        node = deref(todo.pop())
        if id(node) in seen:
            continue
        seen.add(id(node))
        todo.extend(children(node))
        if not isinstance(node, Object):
            continue
        context = ObjectContext(node, compiler)
        for name, value in zip(context.names, context.values):
            expected = AnyValue()
            for part in value_schemas(node, name):
                expected = normalizer.merger.lazy_and(expected, part)  # memoised: the same Ref for the same pair
            assert value is expected


def test_pattern_answers_are_the_same_when_asked_again():
    for _ in range(2):
        with pytest.raises(UnsupportedSchemaError) as raised:
            JsonSchemaParser({"properties": {"a": {"type": "string", "pattern": "(?<=x)y"}}})
        assert raised.value.problems == [("#/properties/a/pattern", "pattern")]
        with pytest.raises(SchemaError) as broken:
            JsonSchemaParser({"properties": {"a": {"type": "string", "pattern": "(x"}}})
        assert broken.value.pointer == "#/properties/a/pattern"
        assert JsonSchemaParser({"type": "string", "pattern": "^x+$"}).accepts('"xx"')


def test_satisfiability_is_remembered_per_length_limits():
    date = {"type": "string", "format": "date"}
    assert JsonSchemaParser({**date, "maxLength": 10}).accepts('"2024-01-31"')
    with pytest.raises(SchemaError):
        JsonSchemaParser({**date, "maxLength": 9})  # the same automaton, a limit it cannot meet
    with pytest.raises(SchemaError):
        JsonSchemaParser({**date, "minLength": 11})
    assert JsonSchemaParser({**date, "minLength": 10}).accepts('"2024-01-31"')


def test_any_value_is_built_on_first_use_and_reads_any_value():
    parser = JsonSchemaParser({"type": "object", "properties": {"a": {"type": "integer"}}})
    assert parser.compiler._any_value is None  # not built by the construction-time check
    assert parser.accepts('{"a": 1, "b": [null, {"c": "d"}, 2.5e3, true]}')
    assert parser.compiler._any_value is not None
    assert not parser.accepts('{"a": "x"}') and not parser.accepts('{"b": }')


def test_an_unsatisfiable_required_key_is_named_the_same_in_every_run():
    """The reason names the first offending key in sorted order, not in the set's hash order (which changed
    with PYTHONHASHSEED, so one schema's message differed between runs)."""
    schema = {"allOf": [{"type": "object", "required": ["zeta", "alpha", "mid"]},
                        {"type": "object", "properties": {"other": {}}, "additionalProperties": False}]}  # fmt: skip
    with pytest.raises(SchemaError, match="required property 'alpha' is not allowed"):
        JsonSchemaParser(schema)
