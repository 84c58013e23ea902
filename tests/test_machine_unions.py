"""Unions of objects (and of arrays, and of strings) on the compiled JSON machine give the Python parsers'
answers exactly.

A union (``anyOf``, or a ``oneOf`` whose options are disjoint) of several objects starts alike (``{``), so
the machine reads it all its options' ways at once, each way a whole state, until the text rules options
out (core/_machine.c, ``fork_options``; jsonschema/machine_program.py bounds the ways a schema may need);
several arrays (``[``) or strings (``"``) are read the same way.
The Python parsers' ``UnionParser`` is the reference: every mask and step must equal its own, at every
token of the benchmark cases that hold such unions, on random unions of objects character by character
with keys in any order, on recursive unions near ``max_depth``, and the C side must refuse a wrong state of
several ways with a ValueError, never a crash (the sanitizer build runs this module, .ci/sanitize.sh).
"""

from __future__ import annotations

import itertools
import json
import random
import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from formatenforcer import JsonSchemaParser, TokenEnforcer
from formatenforcer.core import backend
from formatenforcer.core.flat_trie import flat_trie
from formatenforcer.core.machine import MachineState
from formatenforcer.core.walk import advance, allowed_mask
from formatenforcer.jsonschema import machine_program
from formatenforcer.jsonschema.config import JsonConfig

from .test_machine import _cases, _force, _same_masks, _twin, _walk_characters, walk_if_covered

pytestmark = pytest.mark.skipif(backend.native is None, reason="the compiled core is not built or is switched off")

PAYMENT = {
    "type": "object",
    "properties": {
        "amount": {"type": "integer", "minimum": 1},
        "method": {
            "oneOf": [
                {"type": "object", "properties": {"type": {"const": "card"},
                                                  "last4": {"type": "string", "pattern": "^[0-9]{4}$"}},
                 "required": ["type", "last4"], "additionalProperties": False},
                {"type": "object", "properties": {"type": {"const": "iban"}, "iban": {"type": "string"},
                                                  "holder": {"type": "string"}},
                 "required": ["type", "iban", "holder"], "additionalProperties": False},
                {"type": "object", "properties": {"type": {"const": "wallet"},
                                                  "provider": {"enum": ["applepay", "paypal"]}},
                 "required": ["type", "provider"], "additionalProperties": False},
            ]
        },
    },
    "required": ["amount", "method"],
}  # fmt: skip

EXPR = {
    "$defs": {"expr": {"oneOf": [
        {"type": "object", "properties": {"op": {"enum": ["+", "-"]}, "left": {"$ref": "#/$defs/expr"},
                                          "right": {"$ref": "#/$defs/expr"}},
         "required": ["op", "left", "right"], "additionalProperties": False},
        {"type": "object", "properties": {"num": {"type": "number"}}, "required": ["num"],
         "additionalProperties": False},
        {"type": "object", "properties": {"var": {"type": "string", "pattern": "^[a-z]+$"}}, "required": ["var"],
         "additionalProperties": False},
    ]}},
    "$ref": "#/$defs/expr",
}  # fmt: skip

OPEN_CHANNELS = {
    "type": "array",
    "items": {"anyOf": [
        {"type": "object", "properties": {"channel": {"const": "email"}, "subject": {"type": "string"}},
         "required": ["channel", "subject"]},
        {"type": "object", "properties": {"channel": {"const": "sms"},
                                          "phone": {"type": "string", "pattern": "^\\+[0-9]{3,6}$"}},
         "required": ["channel", "phone"]},
        {"type": "object", "properties": {"channel": {"const": "push"}, "badge": {"type": "integer", "minimum": 0}},
         "required": ["channel"], "additionalProperties": {"type": "boolean"}},
    ]},
}  # fmt: skip


def _union_cases():
    """The benchmark cases whose schema holds a union of objects."""
    out = [case for case in _cases() if "anyOf" in json.dumps(case["schema"]) or "oneOf" in json.dumps(case["schema"])]
    return [case for case in out if _objects_union(JsonSchemaParser(case["schema"]))]


def _objects_union(parser) -> bool:
    """Whether the parser's machine program reads a union of several objects."""
    twin = parser.compiled_twin()
    if twin is None:
        return False
    code = struct.unpack(f"<{len(twin._machine.code) // 4}i", twin._machine.code)
    nodes = code[1]  # (the header's node count)
    for node in range(nodes):
        at = code[machine_program.HEADER + node]
        if code[at] == machine_program.K_UNION:
            kinds = [code[code[machine_program.HEADER + o]] for o in code[at + 2 : at + 2 + code[at + 1]]]
            if kinds.count(machine_program.K_OBJECT) > 1:
                return True
    return False


@pytest.mark.parametrize("indent", [None, 2])
def test_every_position_of_the_benchmark_unions_of_objects(llama3_vocabulary, llama3_tokenizer, indent):
    """The discriminated unions (closed and open objects), the union of objects with different key sets and
    the recursive ``oneOf`` of MaskBench: every mask and step of their instances, in both layouts."""
    cases = _union_cases()
    names = {case["name"] for case in cases}
    assert {"payment_method_oneof", "notification_anyof_channels", "calendar_event_union_time",
            "shapes_anyof_array", "json_expression_ast"} <= names  # fmt: skip
    for case in cases:
        separators = (",", ":") if indent is None else None
        text = json.dumps(case["instance"], ensure_ascii=False, indent=indent, separators=separators)
        _force(llama3_vocabulary, llama3_tokenizer, JsonSchemaParser(case["schema"]), text)


def _documents():
    """Documents of PAYMENT, OPEN_CHANNELS and EXPR with their keys in every order (the discriminator first,
    last or between), values that tell the options apart late, and extra keys of open objects."""
    methods = [
        {"type": "card", "last4": "4242"},
        {"type": "iban", "iban": "PT50 0002", "holder": "Ana"},
        {"type": "wallet", "provider": "paypal"},
    ]
    for method in methods:
        for order in itertools.permutations(method):
            yield PAYMENT, {"method": {k: method[k] for k in order}, "amount": 3}
    items = [
        {"channel": "email", "subject": "hi", "phone": "+1"},
        {"channel": "sms", "phone": "+12345"},
        {"channel": "push", "badge": 2, "phone": True},
    ]
    for item in items:
        for order in itertools.permutations(item):
            yield OPEN_CHANNELS, [{k: item[k] for k in order}, items[0]]
    tree = {"op": "+", "left": {"num": 2.5}, "right": {"op": "-", "left": {"var": "x"}, "right": {"num": -1}}}
    yield EXPR, tree
    yield EXPR, {"right": tree, "left": {"var": "y"}, "op": "-"}


def test_keys_in_every_order_mask_by_mask(llama3_vocabulary, llama3_tokenizer):
    for schema, document in _documents():
        parser = JsonSchemaParser(schema)
        for indent in (None, 2):
            separators = (",", ":") if indent is None else None
            _force(
                llama3_vocabulary, llama3_tokenizer, parser, json.dumps(document, indent=indent, separators=separators)
            )


def test_a_union_of_objects_is_read_several_ways_until_the_text_tells_them_apart(llama3_vocabulary):
    """After ``{`` the state holds one way per option; a value only some options take leaves those; the
    discriminator's value leaves one. Masks from a state of several ways are the union's."""
    parser = JsonSchemaParser(OPEN_CHANNELS)
    twin = _twin(parser)
    one = len(twin.add_text('[{"channel":"sms"').key())  # (one way, as deep as the others below)
    reference, machine = parser, twin
    for ch in '[{"channel":"s':
        reference, machine = reference.add_character(ch), machine.add_character(ch)
        _same_masks(llama3_vocabulary, reference, machine)
    assert len(machine.key()) == one
    # email and sms are open (any extra value), push takes extra booleans and an integer badge
    for text, ways in (("[{", 3), ('[{"phone":"+1', 2), ('[{"badge":1', 3), ('[{"badge":true', 2), ('[{"x":1', 2)):
        state = twin.add_text(text).key()
        assert len(state) == ways * one and len(twin._machine.ways(state)) == ways, text
    assert twin._machine.ways(machine.key()) is None


def test_ways_that_reach_the_same_state_are_one_again(llama3_vocabulary):
    """Two open objects both take ``{"c":1}``: read two ways, they close into one state (kept once), and an
    array of them stays one way between its items however many items it reads."""
    options = [{"type": "object", "properties": {name: {"type": "integer"}}} for name in ("a", "b")]
    parser = JsonSchemaParser({"type": "array", "items": {"anyOf": options}})
    twin = _twin(parser)
    program = twin._machine
    assert len(program.ways(twin.add_text('[{"c":1').key())) == 2
    reference, machine = parser, twin
    text = '[{"c":1},{"a":2},{"b":3,"a":4},{"c":{}}'
    for at, ch in enumerate(text):
        reference, machine = reference.add_character(ch), machine.add_character(ch)
        _same_masks(llama3_vocabulary, reference, machine)
        if ch == "}" and text[at + 1 : at + 2] in (",", ""):  # (an item just closed)
            assert program.ways(machine.key()) is None, text[: at + 1]
    assert machine.add_text("]").can_end()


STRINGS = {"anyOf": [{"type": "string", "format": "date"}, {"type": "string", "maxLength": 4}, {"enum": ["ok", "no"]}]}


@pytest.mark.parametrize("name", ["llama3", "smollm2", "sentencepiece"])
def test_random_token_walks_on_three_tokenizers(vocabularies, name):
    """Random tokens of the allowed ones, from the first token (SentencePiece's, whose leading space is
    dropped, is the Python walk's over the machine's state) on: the same masks and the same steps."""
    vocabulary = vocabularies[name]
    rng = random.Random(17)
    for schema in (PAYMENT, OPEN_CHANNELS, EXPR, STRINGS):
        parser = JsonSchemaParser(schema)
        for _ in range(2):
            reference, machine, pending, at_start = parser, _twin(parser), b"", True
            for _ in range(30):
                mask = allowed_mask(vocabulary, reference, pending, at_start, {})
                assert np.array_equal(mask, allowed_mask(vocabulary, machine, pending, at_start, {}))
                ids = np.flatnonzero(np.unpackbits(mask.view(np.uint8), bitorder="little"))
                ids = [int(t) for t in ids if vocabulary.token_bytes[int(t)]]
                if not ids:
                    break
                data = vocabulary.token_bytes[rng.choice(ids)]
                if at_start and vocabulary.strip_leading_space and data[:1] == b" ":
                    data = data[1:]
                stepped, moved = advance(reference, pending, data), advance(machine, pending, data)
                assert stepped is not None and moved is not None and stepped[1] == moved[1]
                reference, pending, machine, at_start = stepped[0], stepped[1], moved[0], False


def test_the_enforcer_runs_unions_of_objects_on_the_machine(llama3_vocabulary, llama3_tokenizer):
    """Through ``TokenEnforcer`` (steps with ``add_bytes``, masks with ``machine_mask``): the same allowed
    tokens at every position as an enforcer on the Python parsers."""
    text = '{"amount":5,"method":{"provider":"paypal","type":"wallet"}}'
    on_machine = TokenEnforcer(llama3_vocabulary, JsonSchemaParser(PAYMENT))
    backend.use_machine(False)
    try:
        on_python = TokenEnforcer(llama3_vocabulary, JsonSchemaParser(PAYMENT))
    finally:
        backend.use_machine(True)
    assert isinstance(on_machine.start.state, MachineState)
    assert not isinstance(on_python.start.state, MachineState)
    machine, python = on_machine.matcher(), on_python.matcher()
    for token in llama3_tokenizer.encode(text, add_special_tokens=False):
        assert machine.allowed_token_ids() == python.allowed_token_ids()
        assert machine.accept_token(token) and python.accept_token(token)
    assert machine.allowed_token_ids() == python.allowed_token_ids()
    assert set(llama3_vocabulary.eos_token_ids) <= set(machine.allowed_token_ids())


def test_a_mask_of_several_ways_in_one_call_is_the_union_of_their_masks(llama3_vocabulary):
    """``Machine.mask`` walks each way of a state into the same bits (the Python side asks way by way, so
    that each string body takes its run row): both give the same tokens."""
    twin = _twin(JsonSchemaParser(OPEN_CHANNELS))
    program, trie = twin._machine, flat_trie(llama3_vocabulary)
    words = (llama3_vocabulary.size + 31) // 32
    for text in ("[{", '[{"', '[{"subject":"a', '[{"x":', '[{"badge":1'):
        state = twin.add_text(text).key()
        whole, part, union = (np.zeros(words, dtype=np.int32) for _ in range(3))
        program.mask(trie, state, b"", whole)
        for way in program.ways(state):
            program.mask(trie, way, b"", part)
            union |= part
        assert np.array_equal(whole, union) and np.count_nonzero(whole), text


OBJECT_VALUES = [
    {"const": "x"},
    {"const": "y"},
    {"enum": ["x", "z"]},
    {"type": "integer", "minimum": 0},
    {"type": "string", "maxLength": 3},
    {"type": "boolean"},
    {"type": "null"},
    {"type": "array", "items": {"type": "integer"}, "maxItems": 2},
    {"type": "object", "properties": {"q": {"type": "integer"}}, "additionalProperties": False},
]


@st.composite
def _object_options(draw):
    names = draw(st.lists(st.sampled_from(["k", "a", "ab", "b", "type"]), min_size=1, max_size=3, unique=True))
    properties = {name: draw(st.sampled_from(OBJECT_VALUES)) for name in names}
    required = draw(st.lists(st.sampled_from(names), unique=True))
    option = {"type": "object", "properties": properties, "required": required}
    extra = draw(st.sampled_from(["absent", "false", "integer"]))
    if extra == "false":
        option["additionalProperties"] = False
    elif extra == "integer":
        option["additionalProperties"] = {"type": "integer"}
    return option


@st.composite
def _unions_of_objects(draw):
    options = draw(st.lists(_object_options(), min_size=2, max_size=4))
    union = {draw(st.sampled_from(["anyOf", "oneOf"])): options}
    where = draw(st.sampled_from(["root", "item", "property"]))
    if where == "item":
        return {"type": "array", "items": union, "maxItems": 3}
    if where == "property":
        return {"type": "object", "properties": {"u": union, "n": {"type": "integer"}}, "required": ["u"]}
    return union


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=_unions_of_objects(), seed=st.integers(0, 2**16), flexible=st.booleans())
def test_random_unions_of_objects_character_by_character(schema, seed, flexible):
    """Random unions of 2-4 objects (shared and distinct names, consts, closed and open objects, at the root,
    as items and as a property): the same allowed characters, ends and refusals at every character of
    random walks, which read keys in whatever order they happen to take."""
    config = JsonConfig(whitespace="flexible" if flexible else "compact", max_whitespace=2)
    walk_if_covered(schema, config, seed, 3, 60)


STRING_OPTIONS = [
    {"type": "string"},
    {"type": "string", "maxLength": 2},
    {"type": "string", "minLength": 3},
    {"type": "string", "format": "date"},
    {"type": "string", "pattern": "^[a-c]+$"},
    {"enum": ["ab", "abc", "x"]},
    {"const": "é"},
]
ARRAY_OPTIONS = [
    {"type": "array", "items": {"type": "integer"}},
    {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 2},
    {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": {"type": "boolean"}},
    {"type": "array", "items": {"type": "array", "items": {"type": "null"}}},
    {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "integer"}}}, "maxItems": 1},
]


RECURSION = [{"$ref": "#/$defs/u"}, {"type": "array", "items": {"$ref": "#/$defs/u"}, "maxItems": 2}]


@st.composite
def _recursive_unions(draw):
    """A union of 2-3 objects whose properties may hold the union again (directly or as array items), with
    a scalar option or not, as the root: read near a small ``max_depth``."""
    options = draw(st.lists(_object_options(), min_size=2, max_size=3))
    for option in options:
        for name in option["properties"]:
            if draw(st.booleans()):
                option["properties"][name] = draw(st.sampled_from(RECURSION))
    options += draw(st.sampled_from([[], [{"type": "null"}], [{"type": "string", "maxLength": 2}]]))
    return {"$defs": {"u": {"anyOf": options}}, "$ref": "#/$defs/u"}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=_recursive_unions(), seed=st.integers(0, 2**16), max_depth=st.sampled_from([2, 3, 5, 20]))
def test_random_recursive_unions_near_the_depth_limit(schema, seed, max_depth):
    """Random recursive unions of objects (a shared key may hold the union, so some need too many ways and
    stay on the Python parsers): where covered, the same answers at every character of walks that prefer
    opening brackets, and never more ways than the program's bound."""
    try:
        parser = JsonSchemaParser(schema, config=JsonConfig(max_depth=max_depth, whitespace="compact"))
    except Exception:  # noqa: BLE001 - refused schemas are not the machine's
        return
    machine = parser.compiled_twin()
    if machine is None:
        return
    rng = random.Random(seed)
    for _ in range(3):
        reference, twin = parser, machine
        for _ in range(80):
            allowed = reference.allowed_characters()
            assert twin.allowed_characters() == allowed and twin.can_end() == reference.can_end()
            ways = twin._machine.ways(twin.key())
            assert ways is None or len(ways) <= machine_program.MAX_WAYS
            if not allowed.intervals:
                break
            opening = [c for c in '{["' if c in allowed]
            if opening and rng.random() < 0.5:
                ch = rng.choice(opening)
            else:
                lo, hi = rng.choice(allowed.intervals)
                ch = chr(rng.randint(lo, min(hi, lo + 30)))
            reference, twin = reference.add_character(ch), twin.add_character(ch)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    strings=st.lists(st.sampled_from(STRING_OPTIONS), max_size=3, unique_by=json.dumps),
    arrays=st.lists(st.sampled_from(ARRAY_OPTIONS), max_size=3, unique_by=json.dumps),
    objects=st.lists(_object_options(), max_size=2),
    seed=st.integers(0, 2**16),
    flexible=st.booleans(),
)
def test_random_unions_of_strings_arrays_and_objects_character_by_character(strings, arrays, objects, seed, flexible):
    """Unions of several strings (contents that overlap: a date, a pattern, an enum, lengths), several arrays
    (items and prefixes that differ) and objects, each kind read all its options' ways at once: the same
    allowed characters, ends and refusals at every character of random walks."""
    options = strings + arrays + objects
    if len(options) < 2:
        return
    config = JsonConfig(whitespace="flexible" if flexible else "compact", max_whitespace=2)
    parser = JsonSchemaParser({"anyOf": options}, config=config)
    machine = parser.compiled_twin()
    assert machine is not None
    rng = random.Random(seed)
    for _ in range(3):
        _walk_characters(parser, machine, rng, 60)


def test_random_unions_of_objects_are_mostly_covered():
    """The random unions above run on the machine (else the test before would compare nothing)."""
    covered = 0
    for seed in range(40):
        rng = random.Random(seed)
        options = []
        for _ in range(rng.randint(2, 4)):
            names = rng.sample(["k", "a", "ab", "b", "type"], rng.randint(1, 3))
            options.append({"type": "object", "properties": {n: rng.choice(OBJECT_VALUES) for n in names},
                            "required": names[:1], "additionalProperties": rng.random() < 0.5})  # fmt: skip
        schema = {"anyOf": options}
        covered += JsonSchemaParser(schema).compiled_twin() is not None
    assert covered >= 35


RECURSIVE_UNIONS = [
    EXPR,
    {"$defs": {"n": {"anyOf": [  # a key both options name: a node's value, or a string
        {"type": "object", "properties": {"t": {"const": "a"}, "val": {"$ref": "#/$defs/n"}}, "required": ["t"]},
        {"type": "object", "properties": {"t": {"const": "b"}, "val": {"type": "string"}}, "required": ["t"]},
    ]}}, "$ref": "#/$defs/n"},
    {"$defs": {"t": {"anyOf": [  # arrays of trees or of strings
        {"type": "array", "items": {"$ref": "#/$defs/t"}, "maxItems": 2},
        {"type": "array", "items": {"type": "string", "maxLength": 2}, "minItems": 1},
    ]}}, "$ref": "#/$defs/t"},
    {"$defs": {"v": {"anyOf": [  # a JSON value: a loop through a union of containers and scalars
        {"type": "object", "additionalProperties": {"$ref": "#/$defs/v"}},
        {"type": "array", "items": {"$ref": "#/$defs/v"}},
        {"type": "string"}, {"type": "integer"}, {"type": "boolean"}, {"type": "null"},
    ]}}, "$ref": "#/$defs/v"},
    {"$defs": {"n": {"anyOf": [  # a list ended by null
        {"type": "object", "properties": {"v": {"type": "integer"}, "next": {"$ref": "#/$defs/n"}},
         "required": ["v", "next"], "additionalProperties": False},
        {"type": "null"},
    ]}}, "$ref": "#/$defs/n"},
]  # fmt: skip


@pytest.mark.parametrize("schema", range(len(RECURSIVE_UNIONS)))
@pytest.mark.parametrize("max_depth", [2, 3, 4, 6])
def test_recursive_unions_near_the_depth_limit(schema, max_depth):
    """Recursive unions near ``max_depth``: an option is opened only where its value fits in the levels
    left, so near the limit ``{`` or ``[`` may be read fewer ways (walks that prefer opening brackets)."""
    config = JsonConfig(max_depth=max_depth, whitespace="compact")
    parser = JsonSchemaParser(RECURSIVE_UNIONS[schema], config=config)
    machine = _twin(parser)
    rng = random.Random(max_depth)
    for _ in range(20):
        reference, twin = parser, machine
        for _ in range(60):
            allowed = reference.allowed_characters()
            assert twin.allowed_characters() == allowed and twin.can_end() == reference.can_end()
            ways = twin._machine.ways(twin.key())  # (never more than the program's bound)
            assert ways is None or len(ways) <= machine_program.MAX_WAYS
            if not allowed.intervals:
                break
            opening = [c for c in '{["' if c in allowed]
            if opening and rng.random() < 0.5:
                ch = rng.choice(opening)
            else:
                lo, hi = rng.choice(allowed.intervals)
                ch = chr(rng.randint(lo, min(hi, lo + 30)))
            reference, twin = reference.add_character(ch), twin.add_character(ch)


@pytest.mark.parametrize("max_depth", [2, 3, 4, 6])
def test_a_recursive_union_of_objects_as_deep_as_the_limit(llama3_vocabulary, max_depth):
    """The masks at each step of an instance of the recursive ``oneOf`` as deep as the limit allows, and one
    level deeper refused by both."""
    parser = JsonSchemaParser(EXPR, config=JsonConfig(max_depth=max_depth, whitespace="compact"))
    machine = _twin(parser)
    text = '{"num":1}'
    for _ in range(max_depth - 1):
        text = '{"op":"+","left":' + text + ',"right":{"var":"x"}}'
    reference, twin = parser, machine
    for ch in text:
        _same_masks(llama3_vocabulary, reference, twin)
        reference, twin = reference.add_character(ch), twin.add_character(ch)
        assert reference is not None and twin is not None
    assert reference.can_end() and twin.can_end()
    deeper = '{"op":"+","left":' + text
    assert JsonSchemaParser(EXPR, config=JsonConfig(max_depth=max_depth)).add_text(deeper) is None
    assert machine.add_text(deeper) is None


def test_unions_that_could_need_too_many_ways_stay_on_the_python_parsers():
    """Options that share a key whose values may both be the union again: each level could double the ways
    (``{"k":{"k":{"k":`` is read under every choice of options so far)."""
    options = [
        {"type": "object", "properties": {"k": {"$ref": "#/$defs/x"}, name: {"type": "integer"}}} for name in ("a", "b")
    ]
    schema = {"$defs": {"x": {"anyOf": options}}, "$ref": "#/$defs/x"}
    parser = JsonSchemaParser(schema)
    with pytest.raises(machine_program.NotCovered, match="a union read more than 16 ways"):
        builder = machine_program._Builder(parser.compiler, parser._root)  # noqa: SLF001
        builder.finish(builder.node(parser._root))  # noqa: SLF001
    assert parser.compiled_twin() is None
    assert parser.accepts('{"k":{"k":{"a":1},"b":2}}')


def test_wrong_states_of_several_ways_are_value_errors(llama3_vocabulary):
    """A state of several ways is checked way by way: cut, padded, mixed or changed bytes are refused or run
    without a fault (the sanitizer build turns a bad read into a failure), through every entry point."""
    machine = _twin(JsonSchemaParser(PAYMENT))
    program = machine._machine
    several = machine.add_text('{"method":{').key()
    single = machine.add_text('{"method":{"type":"c').key()
    assert len(several) == 3 * len(single)
    trie = flat_trie(llama3_vocabulary)
    out = np.zeros((llama3_vocabulary.size + 31) // 32, dtype=np.int32)
    for bad in (several[:-4], several + b"\0" * 8, several + several[:20], several * 30):
        with pytest.raises(ValueError):
            program.step(bad, b'"')
        with pytest.raises(ValueError):
            program.mask(trie, bad, b"", out)
        with pytest.raises(ValueError):
            program.ways(bad)
    rng = random.Random(5)
    for _ in range(300):
        data = bytearray(rng.choice([several, several + single, single + several]))
        for _ in range(rng.randint(1, 3)):
            data[rng.randrange(len(data))] = rng.choice([0, 1, 2, 0xFF, rng.randrange(256)])
        try:
            program.step(bytes(data), b'"type"')
            program.allowed(bytes(data))
            program.can_end(bytes(data))
            program.body_room(bytes(data))
            program.ways(bytes(data))
            program.mask(trie, bytes(data), b"", out)
        except ValueError:
            pass


def test_random_union_programs_never_crash():
    """Random changes to the program of a recursive union of objects: refused, or run without a fault."""
    good = _twin(JsonSchemaParser(EXPR))._machine
    code = bytearray(good.code)
    rng = random.Random(11)
    words = len(code) // 4
    for _ in range(400):
        mutated = bytearray(code)
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(words)
            value = rng.choice([-1, 0, 1, 2, 3, 7, 63, 1 << 30, -(1 << 31), rng.randint(-100, 1000)])
            mutated[4 * at : 4 * at + 4] = struct.pack("<i", value)
        try:
            machine = backend.native.Machine(bytes(mutated), good.automata)
        except ValueError:
            continue
        state = machine.start()
        for text in ('{"op":"+","left":{"num":1},"right":{"var":"x"}}', '{{{{"var":"a"}', '[{"num":2}]'):
            for ch in text:
                try:
                    after = machine.step(state, ch.encode())
                except ValueError:  # (more ways than the machine keeps)
                    break
                if after is None:
                    break
                state = after
            machine.can_end(state)
            machine.allowed(state)
