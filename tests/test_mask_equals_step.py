"""Mask = step on open objects whose keys' texts matter (issue 18): a token is in the mask exactly when the
step accepts it, checked over every token of Llama 3 at positions inside extra keys.

``{"type":"object","minProperties":1}`` after ``{"abc`` used to leave out 211 tokens such as ``."``: the key's
free run stood for the text with a state that did not know it, and refused to close the key. The stand-in now
keeps the text's known head and the length of the run (key_content.PartialText), and no run is offered where
a key already seen might be spelled by it, so the walk decides every close as the step does. Where
patternProperties choose the value by the text, the old stand-in stays (documented, measured below).
"""

from __future__ import annotations

import pytest

from formatenforcer import JsonSchemaParser, TokenEnforcer

from .json_checks import mask_and_step

MIN1 = {"type": "object", "minProperties": 1}
NAMED = {"type": "object", "properties": {"name": {"type": "string"}}, "minProperties": 3, "maxProperties": 4}

FAST = [(MIN1, '{"abc')]  # (each case steps all 128,256 tokens of Llama 3: 10 to 15 CPU-seconds)
SLOW = [
    (MIN1, '{"abc":1,"abc'),
    (NAMED, '{"k1":1,"k2":2,"k'),
    (MIN1, '{"a":1,"b":2,"cdef'),
    ({"type": "object", "required": ["name"], "minProperties": 2}, '{"name":"x","na'),
    ({"type": "object", "required": ["name"], "minProperties": 2}, '{"zz'),
    ({"type": "object", "propertyNames": {"maxLength": 3}, "minProperties": 2}, '{"ab":1,"a'),
    ({"type": "object", "propertyNames": {"pattern": "^[a-z]+$"}, "minProperties": 1}, '{"abc'),
    ({"type": "object", "dependentRequired": {"a": ["b"]}, "minProperties": 1}, '{"ab'),
    ({"type": "object", "dependentSchemas": {"a": {"required": ["c"]}}, "minProperties": 2}, '{"a":1,"cz'),
    (NAMED, '{"name":"x","key.'),
]


def _check(tokenizer, vocabulary, schema, prefix: str) -> None:
    mask, step = mask_and_step(TokenEnforcer(vocabulary, JsonSchemaParser(schema)), tokenizer, prefix)
    assert len(step) > 1000  # inside a free key: most of the vocabulary continues it
    assert not mask - step, [tokenizer.decode([t]) for t in sorted(mask - step)[:10]]
    assert not step - mask, [tokenizer.decode([t]) for t in sorted(step - mask)[:10]]


@pytest.mark.parametrize(("schema", "prefix"), FAST, ids=[p for _, p in FAST])
def test_mask_equals_step_inside_extra_keys(llama3_tokenizer, llama3_vocabulary, schema, prefix) -> None:
    _check(llama3_tokenizer, llama3_vocabulary, schema, prefix)


@pytest.mark.slow
@pytest.mark.parametrize(("schema", "prefix"), SLOW, ids=[p for _, p in SLOW])
def test_mask_equals_step_on_more_open_objects(llama3_tokenizer, llama3_vocabulary, schema, prefix) -> None:
    _check(llama3_tokenizer, llama3_vocabulary, schema, prefix)


PATTERNS = [
    (
        {
            "type": "object",
            "patternProperties": {"^x": {"type": "integer"}},
            "additionalProperties": {"type": "string"},
        },
        '{"xy',
    ),
    ({"type": "object", "patternProperties": {"^x": {"type": "integer"}}, "minProperties": 1}, '{"ab'),
]


@pytest.mark.slow
@pytest.mark.parametrize(("schema", "prefix"), PATTERNS, ids=[p for _, p in PATTERNS])
def test_pattern_keys_leave_out_only_tokens_that_close_the_key_after_a_run(
    llama3_tokenizer, llama3_vocabulary, schema, prefix
) -> None:
    """The documented stand-in (key_content.KeyContent.free): where patternProperties choose the value by
    the key's text, a token that closes the key after a free run is left to the next step."""
    mask, step = mask_and_step(TokenEnforcer(llama3_vocabulary, JsonSchemaParser(schema)), llama3_tokenizer, prefix)
    assert not mask - step
    missing = [llama3_tokenizer.decode([t]) for t in step - mask]
    assert all('"' in text and text[0] != '"' for text in missing), missing[:10]
    assert len(missing) < 0.01 * len(step)


def test_a_pattern_key_run_never_spells_a_key_already_seen(llama3_tokenizer, llama3_vocabulary) -> None:
    """Found by the 100,000-step fuzz job: with patternProperties and bounded key lengths, the key's free run
    was offered even where it could spell a key already seen, so the mask took ``"The`` after
    ``{"The":1,`` though the key then has no way to close (it is at its maximum length and taken)."""
    schema = {"type": "object", "propertyNames": {"maxLength": 3}, "patternProperties": {"^p_": {}}}
    mask, step = mask_and_step(
        TokenEnforcer(llama3_vocabulary, JsonSchemaParser(schema)), llama3_tokenizer, '{"The":1,'
    )
    assert not mask - step, [llama3_tokenizer.decode([t]) for t in sorted(mask - step)[:10]]
    assert llama3_tokenizer.encode('"The', add_special_tokens=False)[0] not in mask


def test_the_issue_example_closes_the_key(llama3_tokenizer, llama3_vocabulary) -> None:
    """``."`` closes ``{"abc`` into ``{"abc."``, which has a valid completion; a repeated key stays refused."""
    enforcer = TokenEnforcer(llama3_vocabulary, JsonSchemaParser(MIN1))
    matcher = enforcer.matcher()
    assert matcher.accept_tokens(llama3_tokenizer.encode('{"abc', add_special_tokens=False))
    closing = llama3_tokenizer.encode('."', add_special_tokens=False)
    assert len(closing) == 1 and closing[0] in matcher.allowed_token_ids()
    assert matcher.accept_tokens(closing + llama3_tokenizer.encode(":1}", add_special_tokens=False))
    assert matcher.can_end()
    again = enforcer.matcher()
    assert again.accept_tokens(llama3_tokenizer.encode('{"ab":1,"ab', add_special_tokens=False))
    quote = llama3_tokenizer.encode('"', add_special_tokens=False)[0]
    assert quote not in again.allowed_token_ids() and not again.accept_token(quote)


ANY_UNIQUE = {"type": "array", "items": {}, "uniqueItems": True}
STRINGS_UNIQUE = {"type": "array", "items": {"type": "string"}, "uniqueItems": True}
UNIQUE = [
    (ANY_UNIQUE, '["ab'),  # the fuzz job's case: '"\n' closes the item after a run, then whitespace
    (ANY_UNIQUE, '["ab","cd","x'),  # a string that has left the seen ones
    (ANY_UNIQUE, "[3,12"),  # digits: a number item ends inside the run
    (ANY_UNIQUE, '[1,{"a":"b'),  # a compound item, no compound seen: its closing bracket after a run
    (ANY_UNIQUE, '[{"a":"b"},{"a":"b'),  # a compound item that might repeat one seen
    (ANY_UNIQUE, '[{"a":"bcd"},{"a":"b'),  # ... where 'cd"}' would close a duplicate and 'cx"}' would not
    (ANY_UNIQUE, '[{"a":123},{"a":1'),  # a number's digits inside it: walked from real states
    (STRINGS_UNIQUE, '["ab","a'),
]


@pytest.mark.slow  # (fast: the same runs against the plain walk, test_free_run_masks.py)
@pytest.mark.parametrize(("schema", "prefix"), UNIQUE[:1], ids=[p for _, p in UNIQUE[:1]])
def test_mask_equals_step_inside_unique_items(llama3_tokenizer, llama3_vocabulary, schema, prefix) -> None:
    """A uniqueItems item read partly in a free run still finishes and is recorded exactly
    (jsonschema/partial_item.py): the tokens that close it after the run are in the mask."""
    _check(llama3_tokenizer, llama3_vocabulary, schema, prefix)


@pytest.mark.slow
@pytest.mark.parametrize(("schema", "prefix"), UNIQUE[1:], ids=[p for _, p in UNIQUE[1:]])
def test_mask_equals_step_inside_more_unique_items(llama3_tokenizer, llama3_vocabulary, schema, prefix) -> None:
    _check(llama3_tokenizer, llama3_vocabulary, schema, prefix)


RECORD = {"type": "object", "properties": {"name": {"type": "string"}, "n": {"enum": [1, 2]}},
          "required": ["name"], "additionalProperties": False}  # fmt: skip
SHORT = {**RECORD, "properties": {"name": {"type": "string", "maxLength": 3}, "n": {"enum": [1, 2]}}}
GUARDED = [
    ({"type": "array", "items": RECORD, "uniqueItems": True}, '[{"name":"ab"},{"name":"a'),  # may repeat "ab"
    ({"type": "array", "items": RECORD, "uniqueItems": True}, '[{"name":"abc"},{"name":"x'),  # cannot: runs
    ({"type": "array", "items": SHORT, "uniqueItems": True}, '[{"name":"ab","n":1},{"n":1,"name":"a'),
]


@pytest.mark.parametrize(("schema", "prefix"), GUARDED[:1], ids=[p for _, p in GUARDED[:1]])
def test_mask_equals_step_inside_closed_unique_items(llama3_tokenizer, llama3_vocabulary, schema, prefix) -> None:
    """uniqueItems over closed objects (jsonschema/unique_guard.py): inside a string of an item that may
    still repeat a seen one, every character is checked, and the mask holds exactly the tokens the step
    takes."""
    _check(llama3_tokenizer, llama3_vocabulary, schema, prefix)


@pytest.mark.slow
@pytest.mark.parametrize(("schema", "prefix"), GUARDED[1:], ids=[p for _, p in GUARDED[1:]])
def test_mask_equals_step_inside_more_closed_unique_items(llama3_tokenizer, llama3_vocabulary, schema, prefix) -> None:
    """Once the item cannot repeat a seen one its strings take free runs; the one stand-in that shrinks the
    mask (docs/json-schema.md): a token that ends the item inside the run and holds the comma after it,
    ``."},\n`` and ``)"},\n`` in Llama 3, where the next item's check does not know the run's text."""
    mask, step = mask_and_step(TokenEnforcer(llama3_vocabulary, JsonSchemaParser(schema)), llama3_tokenizer, prefix)
    assert len(step) > 1000 and not mask - step
    left_out = {llama3_vocabulary.text_of(token) for token in step - mask}
    assert left_out <= {b'."},\n', b')"},\n'}, left_out


AGREE = [
    (MIN1, '{"abc'),  # an open key: most tokens continue it
    ({"type": "array", "items": {"enum": list(range(300))}, "uniqueItems": True, "maxItems": 4}, "[299, 7"),
    ({"type": "object", "properties": {"code": {"type": "integer"}, "p": {"type": "number"}}}, '{"code": -15'),
    ({"type": "string", "pattern": "^[a-zé ]+$", "maxLength": 9}, '"caf'),  # multi-byte characters next
    (STRINGS_UNIQUE, ""),  # the start: a leading space dropped (SentencePiece)
]


AGREE_CASES = [
    pytest.param(
        name,
        schema,
        prefix,
        id=f"{prefix or 'start'}-{name}",
        marks=[pytest.mark.slow] if name == "llama3" and prefix in ('{"abc', "[299, 7") else [],
    )
    for schema, prefix in AGREE
    for name in ("llama3", "smollm2", "sentencepiece")
]  # (two of Llama 3's full passes, 3 CPU-s each, run in the full suite only)


@pytest.mark.parametrize(("name", "schema", "prefix"), AGREE_CASES)
def test_the_step_refuses_what_starts_with_a_refused_token(tokenizers, vocabularies, name, schema, prefix) -> None:
    """What ``mask_and_step`` relies on to skip most of the vocabulary: at these positions its step set is
    the step over every token, and so is it after the first byte of a two-byte character (pending bytes)."""
    from .json_checks import mask_and_step_at, step_over_every_token

    vocabulary = vocabularies[name]
    enforcer = TokenEnforcer(vocabulary, JsonSchemaParser(schema))
    positions = [enforcer.start]
    for token in tokenizers[name].encode(prefix, add_special_tokens=False):
        positions.append(enforcer.step(positions[-1], token))
        assert positions[-1] is not None, prefix
    lead = vocabulary.token_bytes.index(b"\xc3") if b"\xc3" in vocabulary.token_bytes else None
    if lead is not None and enforcer.step(positions[-1], lead) is not None:  # "é" is b"\xc3\xa9"
        positions.append(enforcer.step(positions[-1], lead))
    for position in positions[-2:]:
        everything = step_over_every_token(enforcer, position)
        mask, step = mask_and_step_at(enforcer, position)
        assert step == everything, sorted(step ^ everything)[:10]
        assert mask == step
