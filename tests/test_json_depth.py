"""Deep nesting (issue 18): ``JsonConfig.max_depth`` enforced in the mask and in the step alike, thousands of
levels walked without recursion, and schemas 5,000 levels deep built, on the real Llama 3 vocabulary."""

from __future__ import annotations

import functools
import itertools
import sys

import pytest

from formatenforcer import (
    FormatError,
    JsonConfig,
    JsonParser,
    JsonSchemaParser,
    SchemaError,
    TokenEnforcer,
    UnsupportedSchemaError,
)

from .json_checks import mask_and_step_at

DEEP = 5_000


def _token(tokenizer, text: str) -> int:
    ids = tokenizer.encode(text, add_special_tokens=False)
    assert len(ids) == 1, (text, ids)
    return ids[0]


def _opens(text: str) -> int:
    """The most levels ``text`` opens beyond where it starts (outside a string), brackets in strings aside."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            escaped, in_string = (False, True) if escaped else (ch == "\\", ch != '"')
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def _walk(enforcer: TokenEnforcer, tokens: list[int]):  # noqa: ANN202
    position = enforcer.start
    for token in tokens:
        position = enforcer.step(position, token)
        assert position is not None
    return position


def test_default_limit_stops_the_thousand_and_first_bracket(llama3_tokenizer, llama3_vocabulary) -> None:
    """10,000 ``[`` offered to JsonParser(): the first 1,000 are taken, the other 9,000 refused by the mask
    and by the step, without an error; the document then closes and ends."""
    assert JsonConfig().max_depth == 1000
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)  # Python's default, whatever the other tests in this process left behind
    try:
        _thousand_brackets(llama3_tokenizer, llama3_vocabulary)
        assert sys.getrecursionlimit() == 1000  # not raised to make room
    finally:
        sys.setrecursionlimit(limit)


def _thousand_brackets(llama3_tokenizer, llama3_vocabulary) -> None:  # noqa: ANN001
    open_, close = _token(llama3_tokenizer, "["), _token(llama3_tokenizer, "]")
    matcher = TokenEnforcer(llama3_vocabulary, JsonParser()).matcher()
    taken = 0
    for step in range(10_000):
        offered = bool(int(matcher.mask()[open_ >> 5]) >> (open_ & 31) & 1)
        if step <= 1010 or step % 100 == 0:  # (listing ~128k ids 9,000 times more was a quarter of the test)
            assert (open_ in matcher.allowed_token_ids()) == offered
        if matcher.accept_token(open_):
            assert offered
            taken += 1
        else:
            assert not offered
    assert taken == 1000 and matcher.error is None
    allowed = set(matcher.allowed_token_ids())
    assert close in allowed and llama3_vocabulary.eos_token_ids[0] not in allowed
    assert all(_opens(llama3_tokenizer.decode([t])) <= 0 for t in allowed)  # ("[x" inside a string is fine)
    assert any("[" in llama3_tokenizer.decode([t]) for t in allowed)
    for _ in range(1000):
        assert matcher.accept_token(close)
    ends = matcher.allowed_token_ids()  # end of sequence, or one trailing whitespace character
    assert llama3_vocabulary.eos_token_ids[0] in ends
    assert all(t in llama3_vocabulary.eos_token_ids or not llama3_tokenizer.decode([t]).strip() for t in ends)


@functools.cache
def _most_opening_brackets(tokenizer, size: int) -> int:  # noqa: ANN001
    """The most ``[`` and ``{`` one token's text holds (decoded once per process, not once per depth)."""
    return max(sum(map(tokenizer.decode([t]).count, "[{")) for t in range(size))


@pytest.mark.parametrize("depth", [872, 873, 998, 999, 1000])
def test_mask_equals_step_at_the_limit(llama3_tokenizer, llama3_vocabulary, depth: int) -> None:
    """Near the limit every token of Llama 3 is in the mask exactly when the step takes it: ``[[`` at 999
    would open the 1,001st level, ``[`` at 1,000 too; ``{"`` and the like likewise. (Within 128 levels of
    the limit, past depth 872, the walk steps value starts character by character: exact for tokens with
    fewer than 128 opening brackets, and Llama 3's hold at most 3.)"""
    assert 0 < _most_opening_brackets(llama3_tokenizer, llama3_vocabulary.size) < 128
    enforcer = TokenEnforcer(llama3_vocabulary, JsonParser())
    position = _walk(enforcer, [_token(llama3_tokenizer, "[")] * depth)
    mask, step = mask_and_step_at(enforcer, position)
    assert mask == step
    texts = {llama3_tokenizer.decode([t]) for t in mask}
    assert ("[" in texts) == (depth < 1000) and ("[[" in texts) == (depth < 999)
    assert "]" in texts and "1" in texts


def test_raised_limit_ten_thousand_levels(llama3_tokenizer, llama3_vocabulary) -> None:
    """With max_depth=20,000, 10,000 levels of arrays and objects are walked with no exception and the
    masks stay equal to the steps down there; the document closes and is valid JSON."""
    config = JsonConfig(max_depth=20_000, whitespace="compact")
    enforcer = TokenEnforcer(llama3_vocabulary, JsonParser(config))
    matcher = enforcer.matcher()
    text = '[{"a":' * 5_000 + "1" + "}]" * 5_000
    tokens = llama3_tokenizer.encode(text, add_special_tokens=False)
    half = llama3_tokenizer.encode('[{"a":' * 5_000, add_special_tokens=False)
    for token in tokens:
        assert matcher.accept_token(token)
    assert matcher.error is None
    assert llama3_vocabulary.eos_token_ids[0] in matcher.allowed_token_ids()
    position = _walk(enforcer, half)
    mask, step = mask_and_step_at(enforcer, position)
    assert mask == step and _token(llama3_tokenizer, "[") in mask
    assert not matcher.accept_token(_token(llama3_tokenizer, "]"))  # (the document is closed)


def _nested(wrap, leaf):  # noqa: ANN001, ANN202
    schema = leaf
    for _ in range(DEEP):
        schema = wrap(schema)
    return schema


SCHEMAS = {
    "properties": lambda: _nested(lambda s: {"type": "object", "properties": {"a": s}}, {"type": "integer"}),
    "required": lambda: _nested(
        lambda s: {"type": "object", "properties": {"a": s}, "required": ["a"]}, {"type": "integer"}
    ),
    "items": lambda: _nested(lambda s: {"type": "array", "items": s}, {"type": "integer"}),
    "allOf": lambda: _nested(lambda s: {"allOf": [s, {"minimum": 0}]}, {"type": "integer"}),
    "anyOf": lambda: _nested(lambda s: {"anyOf": [s]}, {"type": "integer"}),
    "not": lambda: _nested(lambda s: {"not": s}, {"type": "integer"}),
    "$ref chain": lambda: {
        "$defs": {f"d{i}": {"$ref": f"#/$defs/d{i + 1}"} for i in range(DEEP)} | {f"d{DEEP}": {"type": "integer"}},
        "$ref": "#/$defs/d0",
    },
}


@pytest.mark.parametrize("name", list(SCHEMAS))
def test_schemas_five_thousand_levels_deep_build(llama3_tokenizer, llama3_vocabulary, name: str) -> None:
    parser = JsonSchemaParser(SCHEMAS[name](), config=JsonConfig(max_depth=20_000, whitespace="compact"))
    # an even number of `not`s: an integer; every other one: an integer too (allOf with minimum 0)
    assert parser.accepts("7") == (name not in ("properties", "required", "items"))
    if name in ("properties", "required"):
        text = '{"a":' * DEEP + "7" + "}" * DEEP
        assert parser.accepts(text) and not parser.accepts('{"a":' * DEEP + '"x"' + "}" * DEEP)
        matcher = TokenEnforcer(llama3_vocabulary, parser).matcher()
        for token in llama3_tokenizer.encode(text, add_special_tokens=False):
            assert matcher.accept_token(token)
        assert matcher.error is None and llama3_vocabulary.eos_token_ids[0] in matcher.allowed_token_ids()
    if name == "items":
        assert parser.accepts("[" * DEEP + "7" + "]" * DEEP) and not parser.accepts("[" * (DEEP + 1) + "]" * (DEEP + 1))


def test_a_union_five_thousand_levels_deep_of_repeated_literals_is_one_branch_each() -> None:
    """5,000 nested ``anyOf [s, null]`` flatten to an integer and one ``null``: the nulls are one branch."""
    parser = JsonSchemaParser(_nested(lambda s: {"anyOf": [s, {"type": "null"}]}, {"type": "integer"}))
    assert parser.accepts("7") and parser.accepts("null") and not parser.accepts('"x"')


def test_a_union_five_thousand_levels_deep_of_distinct_branches_is_a_documented_refusal() -> None:
    lengths = itertools.count()
    schema = _nested(lambda s: {"anyOf": [s, {"type": "string", "maxLength": next(lengths)}]}, {"type": "integer"})
    with pytest.raises(UnsupportedSchemaError, match="more than 256 alternatives"):
        JsonSchemaParser(schema)


def test_a_schema_nested_deeper_than_the_limit_is_refused(llama3_tokenizer, llama3_vocabulary) -> None:
    """Its smallest value needs 5 levels: refused at construction under max_depth=4; under 5 it builds and
    that value is written to the end with no dead end."""
    schema: dict = {"type": "integer"}
    for _ in range(5):
        schema = {"type": "object", "properties": {"a": schema}, "required": ["a"]}
    with pytest.raises(SchemaError, match=r"nests 5 arrays or objects, more than JsonConfig.max_depth \(4\)"):
        JsonSchemaParser(schema, config=JsonConfig(max_depth=4))
    matcher = TokenEnforcer(llama3_vocabulary, JsonSchemaParser(schema, config=JsonConfig(max_depth=5))).matcher()
    for token in llama3_tokenizer.encode('{"a": ' * 5 + "1" + "}" * 5, add_special_tokens=False):
        assert matcher.accept_token(token)
    assert llama3_vocabulary.eos_token_ids[0] in matcher.allowed_token_ids()
    # a shallower branch decides: 3 levels suffice through the array option
    union = {"anyOf": [schema, {"type": "array", "items": {"type": "array", "items": {"type": "array"}},
                                "minItems": 1}]}  # fmt: skip
    with pytest.raises(SchemaError, match="nests 2 arrays or objects"):
        JsonSchemaParser(union, config=JsonConfig(max_depth=1))
    JsonSchemaParser(union, config=JsonConfig(max_depth=2))


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "9"])
def test_max_depth_must_be_a_positive_int(bad) -> None:  # noqa: ANN001
    with pytest.raises(FormatError, match="max_depth must be an int >= 1"):
        JsonConfig(max_depth=bad)


def test_deep_items_of_unique_and_contains_arrays(llama3_tokenizer, llama3_vocabulary) -> None:
    """The item of a uniqueItems array, and a contains tracker, read 1,500 levels deep (past the recursion
    limit) without recursion: the duplicate's last bracket is refused by the mask and the step; contains
    counts the deep item."""
    config = JsonConfig(max_depth=20_000)
    close = _token(llama3_tokenizer, "]")
    item = "[" * 1500 + "]" * 1500
    unique = TokenEnforcer(llama3_vocabulary, JsonSchemaParser({"type": "array", "uniqueItems": True}, config=config))
    matcher = unique.matcher()
    for token in llama3_tokenizer.encode("[" + item + "," + item[:-1], add_special_tokens=False):
        assert matcher.accept_token(token)
    assert close not in matcher.allowed_token_ids() and not matcher.accept_token(close)
    assert matcher.error is None and matcher.accept_token(_token(llama3_tokenizer, ","))  # (another item in it)
    schema = {"type": "array", "contains": {"type": "array", "minItems": 1}, "minContains": 2}
    matcher = TokenEnforcer(llama3_vocabulary, JsonSchemaParser(schema, config=config)).matcher()
    for token in llama3_tokenizer.encode("[" + item + ",[]", add_special_tokens=False):
        assert matcher.accept_token(token)
    assert close not in matcher.allowed_token_ids()  # one match so far ("[]" has no item)
    for token in llama3_tokenizer.encode("," + item + "]", add_special_tokens=False):
        assert matcher.accept_token(token)
    assert matcher.error is None and llama3_vocabulary.eos_token_ids[0] in matcher.allowed_token_ids()


RECURSIVE_C = {"type": "object", "properties": {"c": {"type": "array", "items": {"$ref": "#"}}}}


@pytest.mark.parametrize(
    ("schema", "unit"), [({}, "["), ({"type": "array"}, "["), (RECURSIVE_C, '{"c":[')], ids=["any", "array", "c"]
)
def test_schemas_a_model_loops_in_stop_at_the_limit(llama3_tokenizer, llama3_vocabulary, schema, unit) -> None:
    """A model that repeats an opening text under a schema (any value, an array, an object whose "c" holds
    items of the root) is stopped at the default limit by the mask and the step alike, with no error, and
    what it opened can still be closed into a valid document."""
    enforcer = TokenEnforcer(llama3_vocabulary, JsonSchemaParser(schema))
    matcher = enforcer.matcher()
    offered = unit * (1200 // _opens(unit))
    for token in llama3_tokenizer.encode(offered, add_special_tokens=False):
        if not matcher.accept_token(token):
            break
    assert matcher.error is None
    text = llama3_tokenizer.decode(matcher.generated_tokens)
    assert _opens(text) in (999, 1000) and len(text) < len(offered)
    mask, step = mask_and_step_at(enforcer, matcher.position)
    assert mask == step
    # the rest of the unit begun (an opening bracket closed at once), then every bracket open
    rest = unit[len(text) % len(unit) :] if len(text) % len(unit) else ""
    closing = (rest + "]" if rest.endswith("[") else rest) + "".join(
        "]" if ch == "[" else "}" for ch in reversed(text) if ch in "[{"
    )
    assert matcher.accept_tokens(llama3_tokenizer.encode(closing, add_special_tokens=False))
    assert llama3_vocabulary.eos_token_ids[0] in matcher.allowed_token_ids()
    assert JsonSchemaParser(schema).accepts(text + closing)
