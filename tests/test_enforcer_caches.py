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


def test_caches_go_with_their_parser_after_generation(llama3_tokenizer, llama3_vocabulary):
    """The positions kept per place (with their memos) hold states of the parser, never the parser itself."""
    gc.collect()
    count = len(llama3_vocabulary.format_caches)
    parser = JsonSchemaParser(SCHEMA)
    matcher = TokenEnforcer(llama3_vocabulary, parser).matcher()
    assert matcher.accept_tokens(llama3_tokenizer.encode(json.dumps(INSTANCE), add_special_tokens=False))
    assert len(llama3_vocabulary.format_caches) == count + 1
    del matcher, parser
    gc.collect()
    assert len(llama3_vocabulary.format_caches) == count


def test_a_token_taken_again_is_a_look_up(llama3_tokenizer, llama3_vocabulary):
    """Matchers of one parser reach the same position objects for the same tokens, with their masks kept:
    the second sequence through a schema steps no parser and walks nothing."""
    parser = JsonSchemaParser(SCHEMA)
    tokens = llama3_tokenizer.encode(json.dumps(INSTANCE), add_special_tokens=False)
    seen = []
    for _ in range(2):
        matcher = TokenEnforcer(llama3_vocabulary, parser).matcher()
        path = []
        for token in tokens:
            matcher.mask()
            assert matcher.accept_token(token)
            path.append(matcher.position)
        seen.append(path)
    assert all(a is b for a, b in zip(*seen))
    assert all(position.mask is not None for position in seen[0][:-1])
    refused = TokenEnforcer(llama3_vocabulary, parser).matcher()
    assert not refused.accept_token(llama3_tokenizer.encode("]", add_special_tokens=False)[0])
    assert not refused.accept_token(llama3_tokenizer.encode("]", add_special_tokens=False)[0])  # memo: refused


def test_kept_positions_are_bounded(llama3_tokenizer, llama3_vocabulary):
    from formatenforcer import EnforcerConfig

    parser = RegexParser(r"[a-z ]{0,400}")
    enforcer = TokenEnforcer(llama3_vocabulary, parser, EnforcerConfig(cache_size=8))
    matcher = enforcer.matcher()
    first = None
    for token in llama3_tokenizer.encode("the quick brown fox jumps over the lazy dog " * 4, add_special_tokens=False):
        assert matcher.accept_token(token)
        first = first or matcher.position
    assert len(enforcer._positions) == 8
    assert first.next == {}  # evicted: it holds on to nothing
