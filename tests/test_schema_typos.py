"""Likely misspelled keywords (jsonschema/schema/typos.py): ``maxLenght`` is an annotation to a validator, so
the limit its author meant is silently not enforced; ``formatenforcer check`` warns with the keyword meant."""

from __future__ import annotations

import subprocess
import sys

from formatenforcer.jsonschema.schema.typos import likely_typos, suggestion


def test_typos_are_found_at_every_schema_position_with_their_pointer() -> None:
    schema = {
        "type": "object",
        "requird": ["name"],
        "properties": {
            "name": {"type": "string", "maxLenght": 5},
            "tags": {"type": "array", "itmes": {"type": "string"}, "items": {"minLenght": 1}},
            "a/b": {"Minimum": 3},
        },
        "$defs": {"d": {"anyOf": [{"type": "string"}, {"patern": "^x"}]}},
    }
    assert likely_typos(schema) == [
        ("#/requird", "requird", "required"),
        ("#/properties/name/maxLenght", "maxLenght", "maxLength"),
        ("#/properties/tags/itmes", "itmes", "items"),
        ("#/properties/tags/items/minLenght", "minLenght", "minLength"),
        ("#/properties/a~1b/Minimum", "Minimum", "minimum"),
        ("#/$defs/d/anyOf/1/patern", "patern", "pattern"),
    ]


def test_names_annotations_and_vendor_keys_are_left_alone() -> None:
    schema = {
        "type": "object",
        "properties": {"maxLenght": {"type": "integer"}, "requird": {}},  # property names, not keywords
        "x-order": 3,
        "example": {"maxLenght": 1},  # an annotation's value is not a schema
        "description": "Minimum age",
        "enum": [{"itmes": 1}],
    }
    assert likely_typos(schema) == []
    assert suggestion("maxLength") is None and suggestion("x-order") is None and suggestion("zzz") is None


def test_deep_schemas_are_read_without_recursion() -> None:
    schema: dict = {"type": "string", "maxLenght": 2}
    for _ in range(5000):
        schema = {"items": schema}
    found = likely_typos(schema)
    assert len(found) == 1 and found[0][1:] == ("maxLenght", "maxLength")
    assert found[0][0] == "#" + "/items" * 5000 + "/maxLenght"


def test_check_warns_with_the_keyword_meant(tmp_path) -> None:
    path = tmp_path / "schema.json"
    path.write_text('{"type": "object", "properties": {"name": {"type": "string", "maxLenght": 5}}}')
    result = subprocess.run(
        [sys.executable, "-m", "formatenforcer", "check", str(path)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert "#/properties/name/maxLenght" in result.stdout and "did you mean 'maxLength'" in result.stdout
