"""The compiled JSON machine gives the Python parsers' answers exactly, and its C entry points refuse bad input.

A schema the machine covers (jsonschema/machine_program.py) runs on ``_native.Machine`` (core/_machine.c):
every mask and every step must equal the Python parsers' (the reference), character by character and token
by token, on the benchmark cases, on random schemas and documents, and on the three real tokenizers. Its
programs and states come from Python, so the C side checks them: a wrong program or state is a ValueError,
never a crash (the sanitizer build runs this module, .ci/sanitize.sh).
"""

from __future__ import annotations

import json
import random
import struct
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from formatenforcer import JsonParser, JsonSchemaParser, TokenEnforcer
from formatenforcer.core import backend
from formatenforcer.core.machine import MachineState
from formatenforcer.core.walk import advance, allowed_mask
from formatenforcer.jsonschema.config import JsonConfig

from .json_schema_strategies import schemas

pytestmark = pytest.mark.skipif(backend.native is None, reason="the compiled core is not built or is switched off")

CASES = Path(__file__).resolve().parent.parent / "benchmarks" / "cases"

SCHEMAS = [
    {"type": "string"},
    {"type": "string", "minLength": 2, "maxLength": 5},
    {"type": "object", "properties": {"name": {"type": "string"}, "n": {"type": "integer"}}, "required": ["name"]},
    {"type": "object", "properties": {"a": {"type": "boolean"}, "é": {"type": "null"}}, "additionalProperties": False},
    {"type": "array", "items": {"enum": ["red", "green", "blue"]}, "minItems": 1, "maxItems": 3},
    {"type": "string", "pattern": "^[a-z0-9-]+$"},
    {"type": "string", "format": "date"},
    {"type": "string", "format": "email"},
    {"type": "string", "pattern": "^[a-zé]+$", "maxLength": 6},
    {"type": "integer", "minimum": -12, "maximum": 305},
    {"type": "integer", "exclusiveMinimum": 0},
    {"type": "number", "minimum": 0, "maximum": 1000000},
    {"type": ["string", "null"], "maxLength": 3},
    {"type": "array", "prefixItems": [{"type": "number"}, {"type": "string"}], "items": {"type": "boolean"}},
    True,
]


def _twin(parser):
    twin = parser.compiled_twin()
    assert isinstance(twin, MachineState), "the schema should be covered by the machine"
    return twin


def _same_masks(vocabulary, reference, machine, pending=b""):
    want = allowed_mask(vocabulary, reference, pending, False, {})
    got = allowed_mask(vocabulary, machine, pending, False, {})
    if not np.array_equal(want, got):
        diff = np.flatnonzero(np.unpackbits((want ^ got).view(np.uint8), bitorder="little"))
        shown = [vocabulary.token_bytes[int(t)] for t in diff[:8]]
        raise AssertionError(f"masks differ on {len(diff)} tokens, e.g. {shown}")
    return want


def random_token_walk(vocabulary, parser, rng, steps):
    """Up to ``steps`` tokens, each chosen at random among those allowed: the same mask and the same step on
    the Python parsers and on the machine at every token."""
    reference, machine, pending = parser, _twin(parser), b""
    for _ in range(steps):
        mask = _same_masks(vocabulary, reference, machine, pending)
        ids = np.flatnonzero(np.unpackbits(mask.view(np.uint8), bitorder="little"))
        ids = [int(t) for t in ids if vocabulary.token_bytes[int(t)]]
        if not ids:
            break
        data = vocabulary.token_bytes[rng.choice(ids)]
        stepped, moved = advance(reference, pending, data), advance(machine, pending, data)
        assert stepped is not None and moved is not None
        reference, pending, machine = stepped[0], stepped[1], moved[0]


def _force(vocabulary, tokenizer, parser, text):
    """Every position of ``text``'s tokens: the same mask and the same step on both."""
    reference, machine, pending = parser, _twin(parser), b""
    for token in tokenizer.encode(text, add_special_tokens=False):
        _same_masks(vocabulary, reference, machine, pending)
        data = vocabulary.token_bytes[token]
        stepped, moved = advance(reference, pending, data), advance(machine, pending, data)
        assert stepped is not None and moved is not None and stepped[1] == moved[1]
        reference, pending, machine = stepped[0], stepped[1], moved[0]
    _same_masks(vocabulary, reference, machine, pending)
    assert reference.can_end() and machine.can_end()


def _cases():
    out = []
    for path in sorted(CASES.glob("*.json")):
        out.extend(json.loads(path.read_text(encoding="utf-8")))
    return out


def force_cases_with(vocabulary, tokenizer, keyword: str) -> int:
    """Every position of the covered benchmark cases whose schema holds ``keyword``, in both layouts (``_force``);
    how many were covered."""
    covered = 0
    for case in _cases():
        if f'"{keyword}"' not in json.dumps(case["schema"]):
            continue
        parser = JsonSchemaParser(case["schema"])
        if parser.compiled_twin() is None:
            continue
        covered += 1
        for indent, separators in ((None, (",", ":")), (2, None)):
            text = json.dumps(case["instance"], ensure_ascii=False, indent=indent, separators=separators)
            _force(vocabulary, tokenizer, parser, text)
    return covered


@pytest.mark.parametrize(
    ("style", "part"),
    [
        ("compact", 0),
        pytest.param("compact", 1, marks=pytest.mark.slow),
        pytest.param("indent", None, marks=pytest.mark.slow),
    ],
)
def test_every_position_of_the_covered_benchmark_cases(llama3_vocabulary, llama3_tokenizer, style, part):
    """(The fast suite takes every other covered case in the compact layout; the full suite all of them, in
    both layouts.)"""
    covered = 0
    for case in _cases():
        parser = JsonSchemaParser(case["schema"])
        if parser.compiled_twin() is None:
            continue
        covered += 1
        if part is not None and covered % 2 != part:
            continue
        indent = None if style == "compact" else 2
        separators = (",", ":") if style == "compact" else None
        text = json.dumps(case["instance"], ensure_ascii=False, indent=indent, separators=separators)
        _force(llama3_vocabulary, llama3_tokenizer, parser, text)
    assert covered >= 76  # (the covered share is a figure of docs/performance.md; it may only grow)


def _walk_characters(reference, machine, rng, steps):
    """A random walk by characters: at each state the same allowed characters, end and refusals."""
    for _ in range(steps):
        allowed = reference.allowed_characters()
        assert machine.allowed_characters() == allowed
        assert machine.can_end() == reference.can_end()
        for probe in '"\\{}[],: \n-0e.aZé😀\x01':
            assert (machine.add_character(probe) is None) == (reference.add_character(probe) is None), probe
        if not allowed.intervals:
            return
        lo, hi = rng.choice(allowed.intervals)
        ch = chr(rng.randint(lo, min(hi, lo + 40)))
        reference, machine = reference.add_character(ch), machine.add_character(ch)
        assert reference is not None and machine is not None


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=schemas(depth=2), seed=st.integers(0, 2**16), flexible=st.booleans())
def test_random_schemas_character_by_character(schema, seed, flexible):
    config = JsonConfig(whitespace="flexible" if flexible else "compact", max_whitespace=3)
    walk_if_covered(schema, config, seed, 2, 50)


def walk_if_covered(schema, config, seed, walks, steps):
    """``walks`` random character walks of ``steps`` (``_walk_characters``) where the schema builds and the
    machine covers it."""
    try:
        parser = JsonSchemaParser(schema, config=config)
    except Exception:  # noqa: BLE001 - refused schemas are not the machine's
        return
    machine = parser.compiled_twin()
    if machine is None:
        return
    rng = random.Random(seed)
    for _ in range(walks):
        _walk_characters(parser, machine, rng, steps)


@pytest.mark.parametrize(
    "bounds",
    [
        {"minimum": 0},
        {"minimum": 1},
        {"maximum": 0},
        {"minimum": -12, "maximum": 305},
        {"minimum": 400, "maximum": 599},
        {"exclusiveMinimum": 0, "exclusiveMaximum": 10},
        {"minimum": 7, "maximum": 7},
        {"minimum": -5.5, "maximum": 2.5},
        {"minimum": 1000000},
        {"maximum": -90},
    ],
)
def test_integer_bounds_on_every_short_prefix(bounds):
    parser = JsonSchemaParser({"type": "integer", **bounds}, config=JsonConfig(whitespace="compact"))
    machine = _twin(parser)
    layer = [(parser, machine)]
    for _ in range(4):  # every text over the number's characters up to four long
        nxt = []
        for reference, twin in layer:
            assert twin.allowed_characters() == reference.allowed_characters()
            assert twin.can_end() == reference.can_end()
            for ch in "-0123456789":
                a, b = reference.add_character(ch), twin.add_character(ch)
                assert (a is None) == (b is None)
                if a is not None:
                    nxt.append((a, b))
        layer = nxt


NUMBER_BOUNDS = [
    {"minimum": 0},
    {"exclusiveMinimum": 0},
    {"exclusiveMaximum": 0},
    {"minimum": -180, "maximum": 180},
    {"minimum": 1, "maximum": 1},
    {"exclusiveMinimum": -5, "exclusiveMaximum": 7},
    {"minimum": 123456789},
    {"minimum": 99999999, "exclusiveMaximum": 100000000},
]


NUMBER_SCHEMAS = [{"type": "number", **bounds} for bounds in NUMBER_BOUNDS] + [
    {"enum": [1, 2, 30, -4]},  # a union of numbers: one text, any of them
    {"anyOf": [{"type": "integer", "minimum": 10}, {"type": "number", "maximum": -1}]},
]


def _numbers_in(schema):
    """The numbers a schema holds (its bounds, its enum), for texts that come near them."""
    if isinstance(schema, dict):
        return [n for value in schema.values() for n in _numbers_in(value)]
    if isinstance(schema, list):
        return [n for value in schema for n in _numbers_in(value)]
    return [schema] if isinstance(schema, (int, float)) and not isinstance(schema, bool) else []


@pytest.mark.parametrize("schema", NUMBER_SCHEMAS)
def test_number_bounds_on_every_short_prefix_and_long_mantissas(schema):
    """Numbers under bounds take fractions and exponents, decided exactly (number_bounds.py): every text up to
    four characters, then texts with long mantissas (past the digits the machine keeps) and exponents."""
    parser = JsonSchemaParser(schema, config=JsonConfig(whitespace="compact"))

    machine = _twin(parser)
    layer = [(parser, machine)]
    for _ in range(4):
        nxt = []
        for reference, twin in layer:
            assert twin.allowed_characters() == reference.allowed_characters()
            assert twin.can_end() == reference.can_end()
            for ch in "-0123456789.eE+":
                a, b = reference.add_character(ch), twin.add_character(ch)
                assert (a is None) == (b is None)
                if a is not None:
                    nxt.append((a, b))
        layer = nxt
    rng = random.Random(5)
    values = [str(abs(int(v))) for v in _numbers_in(schema)]
    for _ in range(150):
        text = ("-" if rng.random() < 0.3 else "") + rng.choice(values + [""])
        text += "".join(rng.choice(rng.choice(["09", "9", "0", "0123456789"])) for _ in range(rng.randint(0, 18)))
        if rng.random() < 0.5:
            text += "." + "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 15)))
        if rng.random() < 0.5:
            text += rng.choice("eE") + rng.choice(["", "+", "-"]) + str(rng.randint(0, 40))
        reference, twin = parser, machine
        for ch in text:
            assert twin.allowed_characters() == reference.allowed_characters(), text
            assert twin.can_end() == reference.can_end(), text
            reference, twin = reference.add_character(ch), twin.add_character(ch)
            assert (reference is None) == (twin is None), text
            if reference is None:
                break


@pytest.mark.parametrize(
    ("name", "walks"),
    [("llama3", 1), ("smollm2", 1), ("sentencepiece", 1), pytest.param("llama3", 3, marks=pytest.mark.slow)],
)
def test_random_token_walks_on_three_tokenizers(vocabularies, name, walks):
    vocabulary = vocabularies[name]
    rng = random.Random(7 + walks)
    for schema in SCHEMAS:
        parser = JsonSchemaParser(schema)
        for _ in range(walks):
            random_token_walk(vocabulary, parser, rng, 25)


def test_the_enforcer_runs_a_covered_schema_on_the_machine(llama3_vocabulary, llama3_tokenizer):
    parser = JsonSchemaParser(SCHEMAS[2])
    enforcer = TokenEnforcer(llama3_vocabulary, parser)
    assert isinstance(enforcer.start.state, MachineState)
    matcher = enforcer.matcher()
    for token in llama3_tokenizer.encode('{"name":"Ada","n":-3}', add_special_tokens=False):
        assert matcher.accept_token(token)
    assert matcher.is_finished() or llama3_vocabulary.eos_token_ids[0] in matcher.allowed_token_ids()
    backend.use_compiled(False)
    try:
        assert not isinstance(TokenEnforcer(llama3_vocabulary, JsonSchemaParser(SCHEMAS[2])).start.state, MachineState)
    finally:
        backend.use_compiled(True)


RECURSIVE = [
    {"type": "object", "properties": {"v": {"type": "integer"}, "kids": {"type": "array", "items": {"$ref": "#"}}},
     "required": ["v"]},
    {"type": "array", "items": {"$ref": "#"}},
    {"$defs": {"n": {"type": "object", "properties": {
        "next": {"$ref": "#/$defs/n"},
        "x": {"type": "array", "items": {"type": "object", "required": ["y"], "properties": {
            "y": {"type": "array", "minItems": 1, "items": {"type": "array"}}}}}}}}, "$ref": "#/$defs/n"},
    {"type": "object", "additionalProperties": {"type": "object", "required": ["z"], "properties": {
        "z": {"type": "array", "items": {"type": "array"}, "minItems": 1}}}},
    {"type": "array", "prefixItems": [{"type": "array", "items": {"type": "array"}, "minItems": 1}, {"type": "string"}],
     "items": {"$ref": "#"}},
]  # fmt: skip


@pytest.mark.parametrize("schema", RECURSIVE)
@pytest.mark.parametrize("max_depth", [2, 3, 5])
def test_recursive_schemas_near_the_depth_limit(schema, max_depth):
    """Near ``max_depth`` a key, an item or a container is offered only where its value still fits in the
    levels left (depth_room.py): random walks that prefer opening brackets, character by character."""
    parser = JsonSchemaParser(schema, config=JsonConfig(max_depth=max_depth, whitespace="compact"))
    machine = _twin(parser)
    rng = random.Random(max_depth)
    for _ in range(25):
        reference, twin = parser, machine
        for _ in range(40):
            allowed = reference.allowed_characters()
            assert twin.allowed_characters() == allowed and twin.can_end() == reference.can_end()
            if not allowed.intervals:
                break
            opening = [c for c in '{["' if c in allowed]
            if opening and rng.random() < 0.5:
                ch = rng.choice(opening)
            else:
                lo, hi = rng.choice(allowed.intervals)
                ch = chr(rng.randint(lo, min(hi, lo + 30)))
            reference, twin = reference.add_character(ch), twin.add_character(ch)


def test_any_json_runs_on_the_machine_up_to_its_depth_limit():
    parser = JsonParser(config=JsonConfig(max_depth=3))
    machine = _twin(parser)
    assert machine.add_text("[[[") is not None and machine.add_text("[[[[") is None
    assert parser.add_text("[[[[") is None
    assert machine.accepts('{"a":[1,{"b":null}]}') and not machine.accepts('{"a":[1,{"b":[null]}]}')


def _program():
    parser = JsonSchemaParser(SCHEMAS[2])
    return _twin(parser)._machine


def test_a_wrong_program_is_refused_with_its_place():
    good = _program()
    with pytest.raises(ValueError, match="not a machine program"):
        backend.native.Machine(b"\0" * 64, ())
    with pytest.raises(ValueError, match="int32"):
        backend.native.Machine(b"\0" * 63, ())
    with pytest.raises(TypeError, match="Automaton"):
        backend.native.Machine(b"\0" * 64, (5,))
    assert good.start()


def test_a_wrong_state_is_a_value_error(llama3_vocabulary):
    machine = _program()
    start = machine.start()
    for bad in (b"", b"\0" * 3, start[:-4], start + b"\0" * 24, b"\xff" * len(start)):
        with pytest.raises(ValueError, match="not a state"):
            machine.step(bad, b"{")
        with pytest.raises(ValueError, match="not a state"):
            machine.can_end(bad)
    with pytest.raises(ValueError, match="whole UTF-8"):
        machine.step(start, b"\xc3")
    out = np.zeros((llama3_vocabulary.size + 31) // 32, dtype=np.int32)
    from formatenforcer.core.flat_trie import flat_trie

    with pytest.raises(ValueError, match="pending"):
        machine.mask(flat_trie(llama3_vocabulary), start, b"\xc3\xa9", out)
    with pytest.raises(ValueError, match="output"):
        machine.mask(flat_trie(llama3_vocabulary), start, b"", out[:10])
    with pytest.raises(ValueError, match="row"):
        machine.mask(flat_trie(llama3_vocabulary), start, b"", out, out)  # (not in a string's body)


def test_random_programs_and_states_never_crash():
    """Random changes to a valid program and to valid states: refused, or run without a fault (the
    sanitizer build turns any bad read into a failure)."""
    good = _program()
    code = bytearray(good.code)
    rng = random.Random(3)
    words = len(code) // 4
    for _ in range(400):
        mutated = bytearray(code)
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(words)
            value = rng.choice([-1, 0, 1, 2, 5, 63, 64, 1 << 30, -(1 << 31), rng.randint(-100, 1000)])
            mutated[4 * at : 4 * at + 4] = struct.pack("<i", value)
        try:
            machine = backend.native.Machine(bytes(mutated), ())
        except ValueError:
            continue
        state = machine.start()
        for text in ('{"name":"x","n":12}', '{"n":-0,"zz":[true]}', "[1,2]"):
            for ch in text:
                after = machine.step(state, ch.encode())
                if after is None:
                    break
                state = after
            machine.can_end(state)
            machine.allowed(state)
    state = good.start()
    for _ in range(400):
        data = bytearray(good.step(state, b'{"name":"a') or state)
        at = rng.randrange(len(data))
        data[at] = rng.randrange(256)
        try:
            good.step(bytes(data), b"b")
            good.allowed(bytes(data))
        except ValueError:
            pass


@pytest.mark.parametrize("pattern", ["^[a-z0-9-]+$", "^(GET|POST)$", "^[^@ ]+@[^@ ]+$", "^[α-ωa-c]{2,4}x$"])
def test_exported_automata_allow_what_their_states_take(pattern):
    """An export's per-state allowed characters are computed in C from its classes and transitions: they are
    the characters ``CompiledRegex.charset`` gives, state by state (with a format's too)."""
    from formatenforcer.core.automaton import native_automaton
    from formatenforcer.jsonschema.formats.patterns import format_automaton
    from formatenforcer.parsers.regex import compile_regex

    date = format_automaton("date")
    for dfa in (compile_regex(pattern.strip("^$")), compile_regex(date) if isinstance(date, str) else date):
        automaton = native_automaton(dfa)
        start, lo, hi = (
            np.frombuffer(getattr(automaton, f), dtype=np.int32) for f in ("allow_start", "allow_lo", "allow_hi")
        )
        for state in range(automaton.states):
            got = list(zip(lo[start[state] : start[state + 1]].tolist(), hi[start[state] : start[state + 1]].tolist()))
            assert got == [tuple(i) for i in dfa.charset(state).intervals], state


def _random_trie(seed: int):
    from .test_native_fuzz import random_tokens, trie_of

    return trie_of(random_tokens(random.Random(seed), 300))


def _states_along(machine: MachineState, texts: list[str]) -> list[MachineState]:
    out = [machine]
    for text in texts:
        state = machine
        for ch in text:
            nxt = state.add_character(ch)
            if nxt is None:
                break
            state = nxt
            out.append(state)
    return out


def test_machine_masks_on_random_tries_stay_inside_their_row():
    """Masks over tries of arbitrary bytes (split and invalid UTF-8, empty tokens), from every kind of state,
    with and without a run row: each writes its row and nothing past it (the sanitizer build faults on any
    bad access)."""
    parser = JsonSchemaParser(SCHEMAS[2])
    states = _states_along(_twin(parser), ['{"name":"a\\u00e9\\ud83d\\ude00b","n":-12', '{"zz":[true,{"q":"é"}]}'])
    for seed in range(4):
        trie = _random_trie(seed)
        words = (trie.vocab_size + 31) // 32
        row = np.full(words, -1, dtype=np.int32)
        for state in states:
            program, data = state.machine_state()
            out = np.full(words + 1, 12345, dtype=np.int32)
            for pending in (b"", b"\xc3", b"\xf0\x9f"):
                program.mask(trie, data, pending, out[:words])
                assert out[-1] == 12345
            if program.body_room(data) is not None:
                program.mask(trie, data, b"", out[:words], row)
                assert out[-1] == 12345


@pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="reads the resident size from /proc")
def test_no_leak_over_100000_machine_masks_and_steps():
    import os

    def rss() -> int:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    parser = JsonSchemaParser(SCHEMAS[2])
    states = _states_along(_twin(parser), ['{"name":"ab', '{"n":-1', '{"zz":[1,'])
    trie = _random_trie(9)
    out = np.zeros((trie.vocab_size + 31) // 32, dtype=np.int32)
    row = np.zeros_like(out)
    pairs = [state.machine_state() for state in states]

    def burst(count: int) -> None:
        for i in range(count):
            program, data = pairs[i % len(pairs)]
            program.mask(trie, data, b"", out, row if program.body_room(data) is not None else None)
            program.step(data, b"x")
            program.allowed(data)

    burst(10_000)
    before = rss()
    burst(100_000)
    grown = rss() - before
    assert grown < 1 << 20, f"resident size grew by {grown} bytes over 100,000 masks and steps"
