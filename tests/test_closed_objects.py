"""The closed-object policy (``JsonConfig.closed_objects``, jsonschema/schema/closed.py): objects whose schema
names their properties get no others when it is on, which is the default for pydantic models that ignore
extra fields; JSON Schema's open objects stay the default for every other schema."""

from __future__ import annotations

import json
from typing import Literal

import jsonschema
import pytest
from pydantic import BaseModel, ConfigDict

from formatenforcer import JsonConfig, JsonSchemaParser, TokenEnforcer
from formatenforcer.core.bitmask import ids_of

from .test_cli import run

CLOSED = JsonConfig(closed_objects=True)
OPEN = JsonConfig(closed_objects=False)


class Author(BaseModel):
    name: str
    born: int | None = None


class Cat(BaseModel):
    kind: Literal["cat"]
    lives: int


class Dog(BaseModel):
    model_config = ConfigDict(extra="allow")
    kind: Literal["dog"]
    bark: str


class Book(BaseModel):
    title: str
    author: Author
    pet: Cat | Dog
    tags: dict[str, int] = {}
    meta: dict = {}


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")
    a: int


class Loose(BaseModel):
    model_config = ConfigDict(extra="allow")
    a: int


BOOK = {"title": "t", "author": {"name": "n"}, "pet": {"kind": "cat", "lives": 3}}


@pytest.mark.parametrize(
    ("instance", "closed"),
    [
        (BOOK, True),
        ({**BOOK, "isbn": "x"}, False),  # an extra key at the root
        ({**BOOK, "author": {"name": "n", "x": 1}}, False),  # inside a nested model
        ({**BOOK, "pet": {"kind": "cat", "lives": 3, "bark": "x"}}, False),  # a key of the other union branch
        ({**BOOK, "pet": {"kind": "dog", "bark": "x", "extra": 1}}, True),  # Dog allows extras: stays open
        ({**BOOK, "tags": {"any": 1}, "meta": {"free": [1]}}, True),  # dicts name no keys: stay open
    ],
)
def test_a_pydantic_model_that_ignores_extras_gets_no_extra_keys(instance: dict, closed: bool) -> None:
    text = json.dumps(instance)
    assert JsonSchemaParser(Book).accepts(text) is closed
    assert JsonSchemaParser(Book, config=OPEN).accepts(text)  # the option turns it off
    if closed:
        Book.model_validate_json(text)


def test_the_places_closed_are_reported() -> None:
    assert JsonSchemaParser(Book).closed_objects == ["#", "#/properties/author", "#/properties/pet/anyOf/0"]
    assert JsonSchemaParser(Book.model_json_schema()).closed_objects == []  # a plain schema: open by default
    assert JsonSchemaParser(Loose).closed_objects == []  # extra="allow": open
    assert JsonSchemaParser(Strict).closed_objects == []  # extra="forbid" closes it already
    assert not JsonSchemaParser(Strict).accepts('{"a":1,"b":2}')


@pytest.mark.parametrize(
    ("schema", "accepted", "refused"),
    [
        # named properties, nothing else said: closed
        ({"properties": {"a": {}}}, ['{"a":1}', "{}"], ['{"b":1}']),
        # an object built from parts keeps every part's keys
        (
            {"allOf": [{"properties": {"a": {}}}, {"properties": {"b": {}}}]},
            ['{"a":1,"b":2}'],
            ['{"a":1,"c":3}'],
        ),
        # the author said something about other keys: as written
        ({"properties": {"a": {}}, "additionalProperties": True}, ['{"b":1}'], []),
        ({"properties": {"a": {}}, "patternProperties": {"^x": {}}}, ['{"xy":1}', '{"b":1}'], []),
        # a required key the schema does not name: closing would leave nothing, so it stays open
        ({"properties": {"a": {}}, "required": ["b"]}, ['{"b":1,"c":2}'], []),
        # no named property (a free-form object): open
        ({"type": "object", "minProperties": 1}, ['{"q":1}'], []),
        # $ref to a definition: closed where it is used
        (
            {"$defs": {"P": {"properties": {"x": {}}}}, "properties": {"p": {"$ref": "#/$defs/P"}}},
            ['{"p":{"x":1}}'],
            ['{"p":{"y":1}}', '{"q":1}'],
        ),
        # a draft-07 document (no unevaluatedProperties): plain places closed with additionalProperties
        (
            {"$schema": "http://json-schema.org/draft-07/schema#", "properties": {"a": {"properties": {"b": {}}}}},
            ['{"a":{"b":1}}'],
            ['{"a":{"c":1}}', '{"z":1}'],
        ),
        # ... and a draft-07 place with a $ref (its siblings ignored there) left open
        (
            {
                "$schema": "http://json-schema.org/draft-07/schema#",
                "definitions": {"P": {"properties": {"x": {}}}},
                "properties": {"p": {"$ref": "#/definitions/P"}},
            },  # fmt: skip
            ['{"p":{"y":1}}'],
            ['{"q":1}'],
        ),
    ],
)
def test_closed_objects_for_any_schema(schema: dict, accepted: list[str], refused: list[str]) -> None:
    parser = JsonSchemaParser(schema, config=CLOSED)
    for text in accepted:
        assert parser.accepts(text), text
        assert jsonschema.validators.validator_for(schema)(schema).is_valid(json.loads(text))
    for text in refused:
        assert not parser.accepts(text), text
        assert JsonSchemaParser(schema).accepts(text), text  # open by default


def test_the_users_schema_is_not_changed() -> None:
    schema = {"properties": {"a": {"properties": {"b": {}}}}}
    before = json.dumps(schema)
    JsonSchemaParser(schema, config=CLOSED)
    assert json.dumps(schema) == before


def test_closing_a_schema_thousands_of_levels_deep() -> None:
    depth = 5_000
    schema: dict = {"properties": {"end": {"type": "integer"}}}
    for _ in range(depth - 1):
        schema = {"properties": {"a": schema}}
    parser = JsonSchemaParser(schema, config=CLOSED)
    assert len(parser.closed_objects) == depth
    assert parser.accepts('{"a":{"a":{}}}')
    assert not parser.accepts('{"a":{"a":{"end":1}}}')  # "end" is named only at the deepest level
    assert JsonSchemaParser(schema).accepts('{"a":{"a":{"end":1}}}')


def test_a_bad_setting_is_refused() -> None:
    with pytest.raises(ValueError, match="closed_objects"):
        JsonConfig(closed_objects="yes")  # type: ignore[arg-type]


def test_the_mask_offers_no_comma_once_every_named_key_is_written(llama3_tokenizer, llama3_vocabulary) -> None:
    """Token level, Llama 3: after the last named property of a closed model only ``}`` (or whitespace) may
    come; the open schema still offers a comma and another key."""

    class Point(BaseModel):
        x: int
        y: int

    prefix = '{"x":1,"y":2'
    for parser, comma in ((JsonSchemaParser(Point), False), (JsonSchemaParser(Point, config=OPEN), True)):
        enforcer = TokenEnforcer(llama3_vocabulary, parser)
        position = enforcer.start
        for token in llama3_tokenizer.encode(prefix, add_special_tokens=False):
            position = enforcer.step(position, token)
        allowed = [llama3_vocabulary.text_of(t) for t in ids_of(enforcer.mask(position))]
        assert any(text.startswith(b"}") for text in allowed)
        assert any(text.startswith(b",") for text in allowed) is comma


@pytest.mark.slow
def test_the_pydantic_sample_finishes_on_the_command_line() -> None:
    """SmolLM2 through the CLI: with extra keys allowed it loops on invented keys until --max-tokens; closed
    (the default for this model) it writes the four fields and stops, and the CLI says the policy applies."""
    args = ("generate", "Recommend a classic book.", "--pydantic", "samples.pydantic_model:Book", "--max-tokens", "200")
    result = run(*args, timeout=600)
    assert result.returncode == 0, result.stderr
    assert "closed objects" in result.stderr
    from samples.pydantic_model import Book as SampleBook

    book = SampleBook.model_validate_json(result.stdout)
    assert set(json.loads(result.stdout)) == set(SampleBook.model_fields)
    assert book.genre in ("novel", "poetry", "history", "science")
