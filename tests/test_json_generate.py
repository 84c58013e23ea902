"""End to end: the real SmolLM2-135M-Instruct (CPU) writes JSON for realistic pydantic models through
``model.generate``; every output must validate with ``jsonschema`` and parse back into the model."""

from __future__ import annotations

import datetime as dt
import enum
import json
import re
import uuid
from typing import Annotated, Literal

import jsonschema
import pytest
from pydantic import BaseModel, ConfigDict, Field

from formatenforcer import JsonConfig, JsonSchemaParser

pytestmark = pytest.mark.slow


class Closed(BaseModel):
    """Extra keys forbidden (``additionalProperties: false``): without it JSON Schema allows any extra key,
    and a 135M model happily invents them until the token budget runs out."""

    model_config = ConfigDict(extra="forbid")


class Address(Closed):
    street: str = Field(max_length=40)
    city: str = Field(max_length=30)
    postcode: str = Field(pattern=r"^[0-9]{5}$")


class Person(Closed):
    name: str = Field(max_length=30)
    age: int = Field(ge=0, le=120)
    email: str = Field(max_length=40, json_schema_extra={"format": "email"})
    address: Address
    nickname: str | None = None


class Status(str, enum.Enum):
    pending = "pending"
    shipped = "shipped"
    delivered = "delivered"


class Item(Closed):
    sku: str = Field(max_length=12)
    quantity: int = Field(ge=1, le=99)
    unit_price_cents: int = Field(ge=0, le=1_000_000)


class Order(Closed):
    order_id: uuid.UUID
    placed_on: dt.date
    status: Status
    items: list[Item] = Field(min_length=1, max_length=3)
    notes: str | None = Field(default=None, max_length=60)


class Cat(Closed):
    kind: Literal["cat"]
    name: str = Field(max_length=20)
    indoor: bool


class Dog(Closed):
    kind: Literal["dog"]
    name: str = Field(max_length=20)
    good_boy: bool


class Household(Closed):
    pets: list[Annotated[Cat | Dog, Field(discriminator="kind")]] = Field(min_length=1, max_length=2)
    moved_in: dt.datetime
    rooms: int = Field(ge=1, le=20)


class Product(Closed):
    """Fractional prices under bounds, a list of short tags, an optional URL."""

    name: str = Field(max_length=40)
    price_eur: float = Field(gt=0, le=10_000)
    discount: float | None = Field(default=None, ge=0, lt=1)
    tags: list[str] = Field(default_factory=list, max_length=3)
    homepage: str | None = Field(default=None, max_length=60, json_schema_extra={"format": "uri"})


CASES = [
    (Person, "Describe a fictional person living in Berlin as JSON.", JsonConfig(max_whitespace=2)),
    (Order, "Write a JSON order for two books.", JsonConfig(whitespace="compact")),
    (Household, "Describe a household with a cat as JSON.", JsonConfig(whitespace="compact")),
    (Address, "Give the address of a bakery in Paris as JSON.", JsonConfig(property_order="schema")),
    (Product, "Describe a coffee grinder for sale, with its price in euros, as JSON.", JsonConfig(max_whitespace=2)),
]


def _generate(model, tokenizer, prompt: str, parser, mode: str) -> str:  # noqa: ANN001
    from transformers import LogitsProcessorList

    from formatenforcer.integrations.transformers import (
        FormatEnforcerLogitsProcessor,
        build_prefix_allowed_tokens_fn,
    )

    text = tokenizer.apply_chat_template([{"role": "user", "content": prompt}], tokenize=False,
                                         add_generation_prompt=True)  # fmt: skip
    inputs = tokenizer(text, return_tensors="pt", add_special_tokens=False)
    kwargs = {}
    if mode == "prefix":
        kwargs["prefix_allowed_tokens_fn"] = build_prefix_allowed_tokens_fn(tokenizer, parser)
    else:
        kwargs["logits_processor"] = LogitsProcessorList([FormatEnforcerLogitsProcessor(tokenizer, parser)])
    output = model.generate(**inputs, max_new_tokens=320, do_sample=False, **kwargs)
    return tokenizer.decode(output[0, inputs["input_ids"].shape[1] :], skip_special_tokens=True)


@pytest.mark.parametrize("model_class, prompt, config", CASES, ids=[c[0].__name__ for c in CASES])
def test_generated_json_validates_and_parses(smollm2_model, model_class, prompt, config):
    model, tokenizer = smollm2_model
    schema = model_class.model_json_schema()
    parser = JsonSchemaParser(model_class, config=config)
    mode = "processor" if model_class is Order else "prefix"
    text = _generate(model, tokenizer, prompt, parser, mode)
    try:
        value = json.loads(text)
    except ValueError:
        pytest.fail(f"not complete JSON within the token budget: {text!r}")
    jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker()).validate(value)
    model_class.model_validate_json(text)
    if config.whitespace == "compact":
        outside_strings = re.sub(r'"(?:[^"\\]|\\.)*"', '""', text)
        assert not re.search(r"\s", outside_strings), text
    if config.property_order == "schema":
        assert list(value) == [k for k in schema["properties"] if k in value]
