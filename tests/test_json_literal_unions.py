"""Unions written out as hundreds of literals (``anyOf``/``oneOf`` of string ``const``s, a TypeScript string
union or a generated enum spelled branch by branch) are one enum, not hundreds of branches: they build, past
the 256-branch limit that applies to real expansions, and are enforced exactly, on the Llama 3 vocabulary."""

from __future__ import annotations

import json

import jsonschema
import pytest

from formatenforcer import JsonSchemaParser, TokenEnforcer, UnsupportedSchemaError

from .checking import random_walk
from .json_checks import accepts_tokens, mask_and_step

NAMES = [f"{word}_{i}" for i in range(150) for word in ("alpha", "Beta")]  # 300 names, shared prefixes
SCHEMAS = {
    "anyOf": {"anyOf": [{"const": name} for name in NAMES]},
    "oneOf": {"oneOf": [{"const": name} for name in NAMES]},
    "mixed": {
        "anyOf": [
            *({"const": name} for name in NAMES),
            {"enum": ["zeta", None, True]},
            {"const": False},
            {"type": "null"},
            {"type": "integer", "minimum": 0},
        ]
    },
    "property": {
        "type": "object",
        "properties": {"kind": {"oneOf": [{"const": name} for name in NAMES]}, "n": {"type": "integer"}},
        "required": ["kind"],
        "additionalProperties": False,
    },
}


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_accepts_what_the_validator_accepts(name: str) -> None:
    schema = SCHEMAS[name]
    parser = JsonSchemaParser(schema)
    validator = jsonschema.Draft202012Validator(schema)
    values = [*NAMES[::13], NAMES[-1], "zeta", "alpha_150", "alpha", "", None, True, False, 0, 7, -1, 1.5, [], {}]
    instances = [*({"kind": v} for v in values), {"kind": "Beta_3", "n": 2}] if name == "property" else values
    for instance in instances:
        text = json.dumps(instance)
        assert parser.accepts(text) == validator.is_valid(instance), text


def test_a_real_expansion_past_the_limit_is_still_refused() -> None:
    """Distinct branches (not literals of one kind) are still counted against the limit."""
    schema = {"anyOf": [{"type": "string", "maxLength": n} for n in range(300)] + [{"type": "null"}]}
    with pytest.raises(UnsupportedSchemaError, match="more than 256 alternatives"):
        JsonSchemaParser(schema)


def test_every_literal_is_written_by_its_natural_tokens(llama3_tokenizer, llama3_vocabulary) -> None:
    enforcer = TokenEnforcer(llama3_vocabulary, JsonSchemaParser(SCHEMAS["property"]))
    for name in NAMES[::7] + NAMES[-3:]:
        ok, reason = accepts_tokens(enforcer, llama3_tokenizer, f'{{"kind": "{name}", "n": 3}}')
        assert ok, (name, reason)


@pytest.mark.parametrize("prefix", ['{"kind": "alpha_1', '{"kind": "Beta_149"'])
def test_the_mask_is_the_step(llama3_tokenizer, llama3_vocabulary, prefix: str) -> None:
    enforcer = TokenEnforcer(llama3_vocabulary, JsonSchemaParser(SCHEMAS["property"]))
    mask, step = mask_and_step(enforcer, llama3_tokenizer, prefix)
    assert mask == step and mask


def test_random_token_walks_end_in_valid_documents(llama3_vocabulary) -> None:
    validator = jsonschema.Draft202012Validator(SCHEMAS["mixed"])
    enforcer = TokenEnforcer(llama3_vocabulary, JsonSchemaParser(SCHEMAS["mixed"]))
    finished = 0
    for seed in range(40):
        text, done = random_walk(enforcer, seed, max_tokens=60)
        if done:
            finished += 1
            assert validator.is_valid(json.loads(text)), text
    assert finished >= 30
