"""``uniqueItems`` over arrays and objects: a duplicate's closing bracket is refused (JSON equality: 1 == 1.0,
any key order), scalars are excluded up front; random walks never dead-end."""

from __future__ import annotations

import json
import random
import re

import jsonschema
import pytest

from formatenforcer import JsonSchemaParser, SchemaError, TokenEnforcer, UnsupportedSchemaError
from formatenforcer.core.charset import CharSet
from formatenforcer.jsonschema.partial_item import PartialItem

from .checking import random_walk
from .json_checks import accepts_tokens, char_walk

SCHEMAS = [
    {"uniqueItems": True},
    {"type": "array", "items": {"type": ["array", "object", "integer"]}, "uniqueItems": True},
    {"prefixItems": [{"type": "boolean"}, {"type": "boolean"}], "uniqueItems": True},
    {"type": "array", "items": {"anyOf": [{"type": "object"}, {"type": "string"}]}, "uniqueItems": True, "maxItems": 4},
    # open objects with constrained properties: a duplicate's bracket refused, a fresh key can always come
    {"type": "array", "uniqueItems": True, "items": {"anyOf": [
        {"type": "object", "properties": {"k": {"const": 1}, "v": {"enum": ["x", "y"]}}, "required": ["k", "v"]},
        {"type": "object", "properties": {"k": {"const": 2}}, "required": ["k"], "patternProperties": {"^z": {}}},
    ]}},
]  # fmt: skip

OPEN_OBJECTS = {
    "type": "array",
    "items": {"type": "object", "properties": {"a": {"type": "boolean"}, "n": {"type": "number"}}, "required": ["a"]},
    "uniqueItems": True,
    "minItems": 3,
}


def _finished_valid_walks(schema: dict, seed: int, walks: int, max_chars: int, end_bias: float) -> int:
    """Random character walks (each asserting there is no dead end); every finished text valid under
    ``schema`` by jsonschema. Returns how many finished."""
    parser = JsonSchemaParser(schema)
    validator = jsonschema.Draft202012Validator(schema)
    rng = random.Random(seed)
    finished = 0
    for _ in range(walks):
        text, done = char_walk(parser, rng, max_chars=max_chars, end_bias=end_bias)
        if done:
            finished += 1
            assert validator.is_valid(json.loads(text)), (schema, text)
    return finished


@pytest.mark.parametrize("schema", SCHEMAS)
def test_walks_never_dead_end_and_end_unique(schema):
    assert _finished_valid_walks(schema, 7, 300, max_chars=120, end_bias=0.1) > 50


@pytest.mark.parametrize(
    ("text", "valid"),
    [
        ("[[1], [1.0]]", False), ('[{"a": 1, "b": 2}, {"b": 2, "a": 1}]', False), ("[[], {}]", True),
        ("[[1], [1, 1]]", True), ("[1, 1.0]", False), ('[{"a": [1]}, {"a": [2]}]', True), ("[[ ], []]", False),
        ('["1", 1, [1], {"1": 1}]', True), ("[true, 1]", True), ("[null, null]", False),
    ],
)  # fmt: skip
def test_json_equality_decides(text, valid):
    assert JsonSchemaParser({"uniqueItems": True}).accepts(text) == valid


def test_state_key_tells_items_apart():
    parser = JsonSchemaParser({"type": "array", "items": {"type": "integer"}, "uniqueItems": True})
    one, two = parser, parser
    for ch in "[1":
        one = one.add_character(ch)
    for ch in "[2":
        two = two.add_character(ch)
    assert one.key() != two.key()


CLOSED = {"type": "object", "properties": {"a": {"type": "boolean"}}, "required": ["a"], "additionalProperties": False}
RECORD = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 3}, "n": {"enum": [1, 2]}},
          "required": ["name"], "additionalProperties": False}  # fmt: skip
GUARDED_ITEMS = [
    {"type": "array", "maxItems": 1},
    {"anyOf": [{"type": "object"}, {"const": [1]}]},
    {"type": "object", "properties": {"a": {"type": "boolean"}}, "additionalProperties": False},
    {"type": "object", "properties": {"a": {"type": "boolean"}}, "maxProperties": 3},
    {"type": "object", "properties": {"a": {"type": "boolean"}}, "additionalProperties": {"type": "null"}},
    {"type": "object", "propertyNames": {"maxLength": 2}},
    CLOSED,
    RECORD,
    {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 1}, "maxItems": 2},
    {"enum": [[1], [1, 2], {"k": 1.5}]},
    {"type": "array", "prefixItems": [{"type": "boolean"}, {"enum": ["x", "y"]}], "items": False},
]


@pytest.mark.parametrize("seed", [11, pytest.param(12, marks=pytest.mark.slow)])
@pytest.mark.parametrize("items", GUARDED_ITEMS)
def test_constrained_compound_items_are_enforced(items, seed):
    """Items whose values can run out (unique_guard.py): char walks never dead-end, every offered character
    is taken, and every finished array is one ``jsonschema`` finds valid (its items unique). 75 walks of one
    seed in the fast suite, 75 of another in the full suite (each finishes 44 to 75 of them)."""
    schema = {"type": "array", "items": items, "uniqueItems": True}
    parser = JsonSchemaParser(schema)
    validator = jsonschema.Draft202012Validator(schema)
    rng = random.Random(seed)
    finished = 0
    for _ in range(75):
        text, done = char_walk(parser, rng, max_chars=160, end_bias=0.05)
        if done:
            finished += 1
            assert validator.is_valid(json.loads(text)), text
    assert finished > 30


@pytest.mark.parametrize(
    ("items", "prefix", "refused", "allowed"),
    [
        (CLOSED, '[{"a":true},{"a":', "t", "f"),  # only `true}` would follow
        (CLOSED, '[{"a":true},{ "a" : fals', "", "e"),
        (RECORD, '[{"name":"ab","n":1},{"n":1,"name":"ab', '"', "c"),  # any key order
        (RECORD, '[{"name":"ab"},{"name":"ab","n":1},{"name":"ab",', "", '"'),  # "n": 2 is left
        (RECORD, '[{"name":"ab"},{"name":"ab","n":1},{"name":"ab","n":2},{"name":"ab', '"', "c"),  # all used
        ({"enum": [[1], [1, 2]]}, "[[1],[1", "]", ","),
        ({"enum": [[1], [1, 2]]}, "[[1],[1.0", "]", ","),  # 1 == 1.0
        ({"enum": [[1], [1, 2]]}, "[[1, 2.0],[1", ",", "]"),
    ],
)
def test_a_character_that_leaves_only_seen_values_is_refused(items, prefix, refused, allowed):
    """The mask and the step agree: a character after which the item could only end as an earlier item is
    neither offered nor taken; one that leaves a new value is."""
    state = JsonSchemaParser({"type": "array", "items": items, "uniqueItems": True})
    for ch in prefix:
        state = state.add_character(ch)
        assert state is not None, prefix
    offered = state.allowed_characters()
    for ch in refused:
        assert ch not in offered and state.add_character(ch) is None, (prefix, ch)
    for ch in allowed:
        assert ch in offered and state.add_character(ch) is not None, (prefix, ch)


def test_the_comma_waits_for_a_value_left() -> None:
    parser = JsonSchemaParser({"type": "array", "items": CLOSED, "uniqueItems": True})
    state = parser.add_text('[{"a":true},{"a":false}')
    assert "," not in state.allowed_characters() and state.add_character(",") is None
    assert state.add_character("]").can_end()


@pytest.mark.parametrize(
    ("schema", "error"),
    [
        ({"items": CLOSED, "uniqueItems": True, "minItems": 3}, "unsatisfiable"),  # two values only
        ({"items": {"enum": [[1], [2]]}, "uniqueItems": True, "minItems": 3}, "unsatisfiable"),
        ({"prefixItems": [CLOSED, CLOSED, CLOSED], "uniqueItems": True, "minItems": 3}, "uniqueItems"),
    ],
)
def test_too_few_distinct_items_for_min_items_is_decided_at_construction(schema, error) -> None:
    with pytest.raises(SchemaError, match=error):
        JsonSchemaParser({"type": "array", **schema})


# (100 character walks, ~10 CPU-s in the unique guard: 30 in the fast suite, the other 70 in the full suite)
@pytest.mark.parametrize(("seed", "walks"), [(5, 30), pytest.param(6, 70, marks=pytest.mark.slow)])
def test_min_items_over_closed_records_with_room_builds_and_walks(seed: int, walks: int) -> None:
    schema = {"type": "array", "items": RECORD, "uniqueItems": True, "minItems": 3}
    parser = JsonSchemaParser(schema)
    validator = jsonschema.Draft202012Validator(schema)
    rng = random.Random(seed)
    finished = 0
    for _ in range(walks):
        text, done = char_walk(parser, rng, max_chars=200, end_bias=0.05)
        if done:
            finished += 1
            assert validator.is_valid(json.loads(text)), text
    assert finished


def test_closed_records_judged_as_the_validator_judges() -> None:
    """Random arrays from a small pool of closed records (duplicates frequent, any key order, 1 == 1.0):
    accepted exactly when ``jsonschema`` finds them valid."""
    schema = {"type": "array", "items": RECORD, "uniqueItems": True}
    parser = JsonSchemaParser(schema)
    validator = jsonschema.Draft202012Validator(schema)
    pool = [{"name": "ab"}, {"name": "ab", "n": 1}, {"n": 1.0, "name": "ab"}, {"name": "", "n": 2}, {"name": "x"}]
    rng = random.Random(4)
    verdicts = set()
    for _ in range(300):
        value = [dict(rng.sample(list(o.items()), len(o))) for o in rng.choices(pool, k=rng.randint(0, 4))]
        for text in (json.dumps(value, separators=(",", ":")), json.dumps(value, indent=2)):
            valid = validator.is_valid(value)
            assert parser.accepts(text) == valid, text
            verdicts.add(valid)
    assert verdicts == {True, False}


@pytest.mark.parametrize("seeds", [range(3), pytest.param(range(3, 6), marks=pytest.mark.slow)], ids=["0-2", "3-5"])
@pytest.mark.parametrize("items", [CLOSED, RECORD, GUARDED_ITEMS[8]])
def test_guarded_items_on_tokens(vocabularies, tokenizers, items, seeds) -> None:
    """Llama 3 and SmolLM2: random token walks (no dead end on the way) end in valid unique arrays, and the
    mask equals the step right where the next item could only repeat one. (Six walks a vocabulary, ~1 CPU-s
    each in the unique guard: three in the fast suite, the others in the full suite.)"""
    from .json_checks import mask_and_step

    schema = {"type": "array", "items": items, "uniqueItems": True}
    parser = JsonSchemaParser(schema)
    validator = jsonschema.Draft202012Validator(schema)
    for name in ("llama3", "smollm2"):
        enforcer = TokenEnforcer(vocabularies[name], parser)
        finished = 0
        for seed in seeds:
            text, done = random_walk(enforcer, seed, max_tokens=40)
            if done:
                finished += 1
                assert validator.is_valid(json.loads(text)), text
        assert finished, name
        if items is CLOSED:
            mask, step = mask_and_step(enforcer, tokenizers[name], '[{"a":true},{"a":')
            assert mask == step
            assert not any(vocabularies[name].text_of(t).lstrip().startswith(b"t") for t in mask)
        if items is RECORD:  # inside a string that may still repeat "ab"
            mask, step = mask_and_step(enforcer, tokenizers[name], '[{"name":"ab"},{"name":"')
            assert mask == step


UNIQUE_TEXTS = ['["foo", "bar", "foobar"]', '[["a", "b"], ["b", "a"], {"a": "b"}]', '[{"k": "long text here"}, "k"]']


@pytest.mark.parametrize("schema", [{"uniqueItems": True}, {"type": "array", "items": {"type": "string"},
                                                             "uniqueItems": True}])  # fmt: skip
def test_tokens_natural_and_random_walks(vocabularies, tokenizers, schema):
    parser = JsonSchemaParser(schema)
    validator = jsonschema.Draft202012Validator(schema)
    for name in ("llama3", "smollm2"):
        enforcer = TokenEnforcer(vocabularies[name], parser)
        for text in UNIQUE_TEXTS:
            value = json.loads(text)
            if validator.is_valid(value):
                for layout in (json.dumps(value, separators=(",", ":")), json.dumps(value, indent=2)):
                    ok, why = accepts_tokens(enforcer, tokenizers[name], layout)
                    assert ok, f"{name}: {layout!r}: {why}"
        for seed in range(3):
            text, finished = random_walk(enforcer, seed, max_tokens=60)
            if finished:
                assert validator.is_valid(json.loads(text)), text


@pytest.mark.parametrize(
    ("items", "min_items", "builds"),
    [
        ({"enum": [1, 1.0, True]}, 2, True),  # 1 and 1.0 are one value, true another
        ({"enum": [1, 1.0, True]}, 3, False),
        ({"type": "integer", "minimum": 1, "maximum": 3}, 3, True),
        ({"type": "integer", "minimum": 1, "maximum": 3}, 4, False),
        ({"type": "integer", "exclusiveMinimum": 1, "exclusiveMaximum": 3}, 2, False),  # only 2
        ({"type": "integer", "minimum": 0, "maximum": 20, "multipleOf": 5}, 5, True),  # 0, 5, 10, 15, 20
        ({"type": "integer", "minimum": 0, "maximum": 20, "multipleOf": 5}, 6, False),
        ({"anyOf": [{"const": "a"}, {"enum": ["a", "b"]}]}, 2, True),
        ({"anyOf": [{"const": "a"}, {"enum": ["a", "b"]}]}, 3, False),  # "a" counted once across branches
        ({"anyOf": [{"type": "null"}, {"type": "boolean"}]}, 3, True),
    ],
)
def test_unique_items_count_the_distinct_values_exactly(items: dict, min_items: int, builds: bool) -> None:
    """An array of unique items needs ``minItems`` distinct values: counted exactly (an over-count offers an
    item no value can fill, an under-count refuses a schema that has instances)."""
    schema = {"type": "array", "items": items, "uniqueItems": True, "minItems": min_items}
    if builds:
        JsonSchemaParser(schema)
    else:
        with pytest.raises(SchemaError, match="unsatisfiable"):
            JsonSchemaParser(schema)


TWO_ITEMS_IN_ONE_TOKEN = re.compile(
    r'"\s*,\s*"(?:[^"\\]|\\.)+"'  # a string item closes, then a whole non-empty one
    r"|[0-9]\s*,\s*-?[0-9][0-9.eE+-]*[\s,\]]"  # a number item, then a whole number (ended by what follows)
    r"|[\]}]\s*,\s*[\[{].*[\]}]"  # a compound item closes, then another closes
)


def test_no_token_holds_an_item_that_might_repeat_one_read_in_a_run(vocabularies) -> None:
    """The one case where the uniqueItems free-run stand-in would differ from the real state
    (jsonschema/partial_item.py): a single token that closes an item read partly in a run, then holds a
    whole later item of the same kind. None of the test vocabularies has such a token, so on them the
    stand-in's masks are exact; a vocabulary with one would lose those tokens from masks at such points."""
    for name, vocabulary in vocabularies.items():
        texts = [raw.decode("utf-8", errors="replace") for raw in vocabulary.token_bytes if raw]
        shaped = [text for text in texts if TWO_ITEMS_IN_ONE_TOKEN.search(text)]
        assert not shaped, (name, shaped[:10])
        if name == "llama3":  # the separators are tokens there, so the check does see item boundaries
            assert any(text == '","' for text in texts)


@pytest.mark.parametrize(
    ("partial", "seen", "may"),
    [
        (('{"a":"b', 2, '"}'), '{"a":"bcd"}', True),  # 'cd' fills it
        (('{"a":"b', 2, '"}'), '{"a":"bc"}', False),  # one character short
        (('{"a":"b', 1, '"}'), '{ "a" : "b\\u00e9" }', True),  # another layout, an escape: the same value
        (('{"a":"b', 2, '","z":1}'), '{"z":1.0,"a":"bxy"}', True),  # any key order, 1 == 1.0
        (('{"a":"b', 2, '","z":1}'), '{"z":2,"a":"bxy"}', False),
        (('["', 3, '"]'), '["abc"]', True),
        (('["', 3, '"]'), '[["abc"]]', False),
        (('{"', 2, '":1}'), '{"zz":2}', True),  # a gap in a key: conservative
    ],
)
def test_a_compound_item_read_in_a_run_may_equal_exactly_the_seen_items_it_can_spell(partial, seen, may) -> None:
    """jsonschema/partial_item.py: an array or object with a string run's gap is compared with a seen item by
    its canonical form, one character for each gap character."""
    head, gap, tail = partial
    item = PartialItem.after_run(head, gap, CharSet.ranges((" ", "~")))
    for ch in tail:
        item = item + ch
    assert item.may_equal(seen) is may


def test_open_objects_with_constrained_properties_judged_as_the_validator_judges() -> None:
    """Random arrays drawn from a small pool of objects (so duplicates are frequent, in any key order and
    with 1 == 1.0), compact and indented: accepted exactly when ``jsonschema`` finds them valid."""
    parser = JsonSchemaParser(OPEN_OBJECTS)
    validator = jsonschema.Draft202012Validator(OPEN_OBJECTS)
    pool = [{"a": True}, {"a": False}, {"n": 1, "a": True}, {"a": True, "n": 1.0}, {"a": False, "z": [1]}, {"n": 2}]
    rng = random.Random(3)
    verdicts = set()
    for _ in range(300):
        value = [dict(rng.sample(list(o.items()), len(o))) for o in rng.choices(pool, k=rng.randint(0, 5))]
        for text in (json.dumps(value, separators=(",", ":")), json.dumps(value, indent=2)):
            valid = validator.is_valid(value)
            assert parser.accepts(text) == valid, text
            verdicts.add(valid)
    assert verdicts == {True, False}


@pytest.mark.parametrize("prefix", ['[{"a":true},{"a":true', '[{"n":1,"a":true},{"a":false},{"a":true,"n":1.0 '])
def test_a_duplicate_s_bracket_is_refused_and_a_fresh_key_finishes_it(prefix: str) -> None:
    state = JsonSchemaParser(OPEN_OBJECTS)
    for ch in prefix:
        state = state.add_character(ch)
        assert state is not None, prefix
    allowed = state.allowed_characters()
    assert "}" not in allowed and state.add_character("}") is None and "," in allowed
    assert JsonSchemaParser(OPEN_OBJECTS).accepts(prefix + ',"fresh":null},{"a":false,"x":0}]')


def test_open_objects_with_constrained_properties_on_tokens(llama3_tokenizer, llama3_vocabulary) -> None:
    """Llama 3: at a duplicate's closing bracket the mask (= the step) holds no closer, a fresh key can still
    come, and a natural tokenization is taken token by token."""
    from .json_checks import mask_and_step

    enforcer = TokenEnforcer(llama3_vocabulary, JsonSchemaParser(OPEN_OBJECTS))
    mask, step = mask_and_step(enforcer, llama3_tokenizer, '[{"a":true},{"b":0,"a":false},{"a":true')
    assert mask == step
    texts = {llama3_vocabulary.text_of(token) for token in mask}
    assert b"," in texts and not any(text.lstrip().startswith(b"}") for text in texts)
    ok, why = accepts_tokens(enforcer, llama3_tokenizer, '[{"a":true},{"a":false},{"a":true,"c":[1]}]')
    assert ok, why


@pytest.mark.slow  # (~14 CPU-s: the Python walk's masks; the fast suite walks unique arrays on tokens above)
def test_open_objects_with_constrained_properties_random_token_walks(llama3_vocabulary) -> None:
    """Llama 3: random token walks of open objects with constrained properties end in valid unique arrays."""
    schema = OPEN_OBJECTS
    validator = jsonschema.Draft202012Validator(schema)
    enforcer = TokenEnforcer(llama3_vocabulary, JsonSchemaParser(schema))
    union = SCHEMAS[-1]  # walks of OPEN_OBJECTS wander in free keys; the union's finish (some as "[]")
    union_validator = jsonschema.Draft202012Validator(union)
    union_enforcer = TokenEnforcer(llama3_vocabulary, JsonSchemaParser(union))
    finished = 0
    for seed in range(8):
        for walked, check in ((enforcer, validator), (union_enforcer, union_validator)):
            text, done = random_walk(walked, seed, max_tokens=120)  # asserts no dead end on the way
            if done:
                finished += 1
                assert check.is_valid(json.loads(text)), text
    assert finished


TUPLES_STUCK = [
    # after [1 the second item could only be 1 again
    {"prefixItems": [{"enum": [1, 2]}, {"const": 1}], "uniqueItems": True, "minItems": 2},
    # after [true,false the third boolean could only repeat one
    {"prefixItems": [{"type": "boolean"}], "items": {"type": "boolean"}, "uniqueItems": True, "minItems": 3},
]
TUPLES_FINE = [
    {"type": "array", "prefixItems": [{"const": "x"}, {"const": "y"}], "uniqueItems": True, "minItems": 2},
    {"type": "array", "prefixItems": [{"type": "string"}], "items": {"enum": [1, 2]}, "uniqueItems": True,
     "minItems": 3},
    {"type": "array", "prefixItems": [{"enum": ["a", "b"]}, {"enum": ["a", "b", "c"]}], "uniqueItems": True,
     "minItems": 2},
]  # fmt: skip


@pytest.mark.parametrize("schema", TUPLES_STUCK)
def test_tuples_whose_scalar_items_could_run_out_are_refused(schema):
    with pytest.raises(UnsupportedSchemaError, match="which the items before it can all have taken"):
        JsonSchemaParser(schema)


@pytest.mark.parametrize("schema", TUPLES_FINE)
def test_tuples_whose_scalar_items_cannot_run_out_walk_to_valid_ends(schema):
    assert _finished_valid_walks(schema, 3, 200, max_chars=300, end_bias=0.2) > 20
