"""Unknown ``format`` values are annotations (JSON Schema 2020-12 without the format-assertion vocabulary):
any value is allowed there, with a warning naming the format and its JSON pointer, and ``check`` still lists
them. The common OpenAPI formats and aliases mean exactly what OpenAPI says (issue 18)."""

from __future__ import annotations

import base64
import json
import random
import warnings

import pytest

from formatenforcer import JsonSchemaParser
from formatenforcer.cli.formats import unsupported_keywords


@pytest.mark.parametrize("fmt", ["color", "path", "non-blank", "snowflake"])
def test_unknown_format_is_a_plain_string_with_a_warning(fmt: str) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string", "format": fmt, "maxLength": 5}}}
    with pytest.warns(UserWarning, match=f"unknown format '{fmt}'.*#/properties/a/format"):
        parser = JsonSchemaParser(schema)
    assert parser.accepts('{"a": "red"}') and parser.accepts('{"a": ""}')
    assert not parser.accepts('{"a": "toolong"}') and not parser.accepts('{"a": 1}')  # the rest is enforced
    assert [(p.pointer, p.keyword) for p in parser.unknown_formats] == [("#/properties/a/format", "format")]
    listed = unsupported_keywords(schema)  # what `formatenforcer check` prints
    assert [(p.pointer, p.keyword) for p in listed] == [("#/properties/a/format", "format")]
    assert fmt in listed[0].reason


def test_known_formats_give_no_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for fmt in ["byte", "binary", "password", "int32", "int64", "float", "double", "url", "email"]:
            JsonSchemaParser({"format": fmt})


def test_byte_is_padded_base64() -> None:
    parser = JsonSchemaParser({"type": "string", "format": "byte"})
    rng = random.Random(5)
    for _ in range(200):
        raw = bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 12)))
        text = base64.b64encode(raw).decode()
        assert parser.accepts(json.dumps(text)), text
        if text:
            for broken in (text.rstrip("="), text + "=", text[:-1] + "*", " " + text):
                try:
                    valid = base64.b64decode(broken, validate=True) is not None and len(broken) % 4 == 0
                except ValueError:
                    valid = False
                assert parser.accepts(json.dumps(broken)) == valid, broken


@pytest.mark.parametrize("fmt", ["binary", "password"])
def test_binary_and_password_are_any_string(fmt: str) -> None:
    parser = JsonSchemaParser({"type": "string", "format": fmt})
    for text in ["", "x y", "ÿ\\u0000", "\U0001f600"]:
        assert parser.accepts(json.dumps(text))
    assert not parser.accepts("1")


@pytest.mark.parametrize(("fmt", "bits"), [("int32", 32), ("int64", 64)])
@pytest.mark.parametrize("kind", ["integer", "number"])
def test_int_formats_are_integers_of_that_width(fmt: str, bits: int, kind: str) -> None:
    parser = JsonSchemaParser({"type": kind, "format": fmt})
    top, bottom = 2 ** (bits - 1) - 1, -(2 ** (bits - 1))
    for value, ok in [(top, True), (top + 1, False), (bottom, True), (bottom - 1, False), (0, True), (7, True)]:
        assert parser.accepts(str(value)) is ok, value
    assert not parser.accepts("1.5")
    # a tighter schema bound still wins
    assert not JsonSchemaParser({"type": kind, "format": fmt, "maximum": 10}).accepts("11")
    # on a string, a number format constrains nothing
    assert JsonSchemaParser({"format": fmt}).accepts('"any text"')


@pytest.mark.parametrize("fmt", ["float", "double"])
def test_float_formats_are_any_number(fmt: str) -> None:
    parser = JsonSchemaParser({"type": "number", "format": fmt})
    for text in ["0", "-1.5", "1e308", "3.4028235e38", "1E-400"]:
        assert parser.accepts(text), text


def test_url_is_uri() -> None:
    url = JsonSchemaParser({"type": "string", "format": "url"})
    uri = JsonSchemaParser({"type": "string", "format": "uri"})
    for text in ["https://x.com/a?b=c#d", "mailto:a@b.c", "not a url", "/relative", "http://[::1]:80/", ""]:
        assert url.accepts(json.dumps(text)) == uri.accepts(json.dumps(text)), text
    assert url.accepts('"https://x.com/"') and not url.accepts('"no scheme"')
