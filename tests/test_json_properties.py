"""Property tests: generated schemas, generated valid instances, random walks that must end valid.

- character level (cheap, many examples): seeded random walks over allowed characters never dead-end, and
  every finished walk is a document ``jsonschema`` validates;
- token level, on every test tokenizer: the natural tokenization of each hypothesis-jsonschema instance
  (compact and indent=2) is accepted token by token with EOS at the end, and seeded random walks over
  allowed tokens never dead-end and finish in valid documents.
"""

from __future__ import annotations

import json
import random

import jsonschema
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

from formatenforcer import JsonSchemaParser, SchemaError, TokenEnforcer

from .checking import random_walk
from .json_checks import accepts_tokens, char_walk
from .json_schema_strategies import schemas

SETTINGS = dict(deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


def _parser(schema: dict) -> JsonSchemaParser:
    try:
        return JsonSchemaParser(schema)
    except SchemaError:  # unsupported or unsatisfiable combinations the strategy may produce
        assume(False)
        raise


def _validate(schema: dict, text: str) -> None:
    value = json.loads(text)
    jsonschema.Draft202012Validator(schema).validate(value)


def _exponent_under_bounds(schema: dict, value: object) -> bool:
    """Floats Python writes with an exponent, where numbers are bounded (a documented difference)."""
    text = json.dumps(schema)
    bounded = any(k in text for k in ("minimum", "maximum", "xclusive", "multipleOf"))
    floats = []

    def collect(v: object) -> None:
        if isinstance(v, float):
            floats.append(v)
        elif isinstance(v, list):
            for item in v:
                collect(item)
        elif isinstance(v, dict):
            for item in v.values():
                collect(item)

    collect(value)
    return bounded and any("e" in repr(f) for f in floats)


@settings(max_examples=150, **SETTINGS)
@given(schema=schemas(), seed=st.integers(0, 2**16))
def test_character_walks_never_dead_end_and_end_valid(schema, seed):
    parser = _parser(schema)
    rng = random.Random(seed)
    for _ in range(6):
        text, finished = char_walk(parser, rng)
        if finished:
            _validate(schema, text)


@settings(max_examples=20, **SETTINGS)
@given(schema=schemas(depth=1), data=st.data())
def test_natural_tokenization_of_generated_instances_accepted(vocabularies, tokenizers, schema, data):
    parser = _parser(schema)
    value = data.draw(from_schema(schema), label="instance")
    assume(not _exponent_under_bounds(schema, value))
    texts = [json.dumps(value, separators=(",", ":"), ensure_ascii=False), json.dumps(value, indent=2)]
    for name, vocabulary in vocabularies.items():
        enforcer = TokenEnforcer(vocabulary, parser)
        for text in texts:
            ok, why = accepts_tokens(enforcer, tokenizers[name], text)
            assert ok, f"{name}: {text!r}: {why}"


@settings(max_examples=12, **SETTINGS)
@given(schema=schemas(depth=1), seed=st.integers(0, 2**16))
def test_token_walks_never_dead_end_and_end_valid(vocabularies, schema, seed):
    parser = _parser(schema)
    for name in ("llama3", "smollm2"):
        enforcer = TokenEnforcer(vocabularies[name], parser)
        for k in range(2):
            text, finished = random_walk(enforcer, seed + k, max_tokens=60)
            if finished:
                _validate(schema, text)


@pytest.mark.parametrize("seed", range(3))
def test_any_json_walks_end_in_json(vocabularies, seed):
    from formatenforcer import JsonParser

    enforcer = TokenEnforcer(vocabularies["llama3"], JsonParser())
    text, finished = random_walk(enforcer, seed, max_tokens=80)
    if finished:
        json.loads(text)
