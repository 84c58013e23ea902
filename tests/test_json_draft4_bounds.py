"""draft-04's boolean exclusiveMinimum/exclusiveMaximum (also OpenAPI 3.0's): a flag on minimum/maximum, read
in every dialect, enforced by the mask as by the step, on Llama 3's tokens."""

from __future__ import annotations

import pytest

from formatenforcer import JsonSchemaParser, SchemaError, TokenEnforcer

DRAFT4 = "http://json-schema.org/draft-04/schema#"


@pytest.mark.parametrize(
    ("schema", "accepted", "refused"),
    [
        ({"$schema": DRAFT4, "type": "integer", "minimum": 3, "exclusiveMinimum": True}, ["4", "30"], ["3", "2"]),
        ({"type": "number", "maximum": 1.5, "exclusiveMaximum": True}, ["1.49", "-3"], ["1.5", "1.50", "2"]),
        ({"type": "number", "minimum": 0, "exclusiveMinimum": False}, ["0", "0.5"], ["-0.1"]),
        (
            {"type": "integer", "minimum": 1, "exclusiveMinimum": True, "maximum": 3, "exclusiveMaximum": True},
            ["2"],
            ["1", "3"],
        ),
    ],
)
def test_the_flag_makes_its_bound_exclusive(schema, accepted, refused) -> None:
    parser = JsonSchemaParser(schema)
    for text in accepted:
        assert parser.accepts(text), text
    for text in refused:
        assert not parser.accepts(text), text


def test_the_mask_refuses_the_bound_itself(llama3_vocabulary, llama3_tokenizer) -> None:
    parser = JsonSchemaParser({"$schema": DRAFT4, "type": "integer", "minimum": 3, "exclusiveMinimum": True,
                               "maximum": 7, "exclusiveMaximum": True})  # fmt: skip
    matcher = TokenEnforcer(llama3_vocabulary, parser).matcher()
    allowed = set(matcher.allowed_token_ids())
    for digit in "0123456789":
        (token,) = llama3_tokenizer.encode(digit, add_special_tokens=False)
        # only 4, 5 and 6 lie strictly between 3 and 7 (no longer integer does)
        assert (token in allowed) == (digit in "456"), digit
        assert matcher.validate_tokens([token]) == (1 if digit in "456" else 0)


def test_a_flag_without_its_bound_is_a_schema_error() -> None:
    with pytest.raises(SchemaError, match="'exclusiveMinimum': true needs 'minimum'") as raised:
        JsonSchemaParser({"type": "object", "properties": {"n": {"type": "number", "exclusiveMinimum": True}}})
    assert raised.value.pointer == "#/properties/n/exclusiveMinimum"
    JsonSchemaParser({"type": "number", "exclusiveMaximum": False})  # a false flag needs nothing
