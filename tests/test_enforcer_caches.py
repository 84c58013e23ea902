"""The mask and walk caches belong to the (vocabulary, parser object) pair: every TokenEnforcer made for one
compiled schema shares them while the schema object lives, and they go with it."""

from __future__ import annotations

import gc
import json

import numpy as np

from formatenforcer import JsonSchemaParser, RegexParser, TokenEnforcer

SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}, "tags": {"type": "array", "items": {
    "type": "string"}}, "size": {"type": "integer", "minimum": 0}}, "required": ["name"]}  # fmt: skip
INSTANCE = {"name": "Ada Lovelace", "tags": ["math", "engines"], "size": 42}


def _positions(enforcer: TokenEnforcer, tokens: list[int]) -> list:
    positions = [enforcer.position_after(tokens[:i]) for i in range(len(tokens) + 1)]
    assert all(position is not None for position in positions)
    return positions


def test_enforcers_of_one_parser_share_their_masks(llama3_tokenizer, llama3_vocabulary):
    parser = JsonSchemaParser(SCHEMA)
    tokens = llama3_tokenizer.encode(json.dumps(INSTANCE), add_special_tokens=False)
    first = TokenEnforcer(llama3_vocabulary, parser)
    masks = [first.mask(position) for position in _positions(first, tokens)]
    second = TokenEnforcer(llama3_vocabulary, parser)
    again = [second.mask(position) for position in _positions(second, tokens)]
    assert all(a is b for a, b in zip(masks, again))  # the very cached arrays: nothing walked again
    # a new parser object of the same schema starts with caches of its own, and computes equal masks
    other = TokenEnforcer(llama3_vocabulary, JsonSchemaParser(SCHEMA))
    fresh = [other.mask(position) for position in _positions(other, tokens)]
    assert not any(a is b for a, b in zip(masks, fresh))
    assert all(np.array_equal(a, b) for a, b in zip(masks, fresh))


def test_caches_go_with_their_parser(llama3_vocabulary):
    gc.collect()
    count = len(llama3_vocabulary.format_caches)
    parser = RegexParser(r"[a-z]{3}-[0-9]+")
    enforcer = TokenEnforcer(llama3_vocabulary, parser)
    enforcer.allowed_tokens([])
    assert len(llama3_vocabulary.format_caches) == count + 1
    del enforcer, parser
    gc.collect()
    assert len(llama3_vocabulary.format_caches) == count


def test_a_state_in_the_middle_of_a_format_gets_caches_of_its_own(llama3_vocabulary):
    """Inner states are not weakly referable; an enforcer over one works as before, with private caches."""
    state = JsonSchemaParser(SCHEMA).add_text('{"name":"A')
    one, two = TokenEnforcer(llama3_vocabulary, state), TokenEnforcer(llama3_vocabulary, state)
    assert one.allowed_tokens([]) == two.allowed_tokens([])
    assert one._cache is not two._cache
