"""The compiled JSON machine decides numbers under decimal bounds, number enums and integer ``multipleOf``
exactly as the Python number parser does (jsonschema/numbers.py, schema/number_bounds.py).

A bound is held by the machine as a decimal M·10^scale (jsonschema/machine_program.py's ``_number_record``)
and compared with a number's kept significant digits (core/_machine.c); an integer's ``multipleOf`` is a step
whose remainder the machine carries past 2^30. Every answer is compared with the Python parser's: every
short text over the number's characters, long mantissas with exponents near each bound, random bounds, and
masks on the Llama 3 tokenizer. Schemas the machine does not decide stay on the Python parsers.
"""

from __future__ import annotations

import random
import re
import struct
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from formatenforcer import JsonSchemaParser
from formatenforcer.core import backend
from formatenforcer.core.machine import MachineState
from formatenforcer.core.walk import advance
from formatenforcer.jsonschema import machine_program
from formatenforcer.jsonschema.config import JsonConfig

from .test_machine import _same_masks, random_token_walk

pytestmark = pytest.mark.skipif(backend.native is None, reason="the compiled core is not built or is switched off")

COMPACT = JsonConfig(whitespace="compact")
NUMBER_CHARACTERS = "-0123456789.eE+"

DECIMAL_BOUNDS = [
    {"minimum": 0, "maximum": 0.3},
    {"exclusiveMinimum": 0.5},
    {"minimum": 99.99},
    {"exclusiveMaximum": -0.25},
    {"minimum": -1.5, "maximum": 2.25},
    {"exclusiveMinimum": -1.5, "exclusiveMaximum": 2.25},
    {"minimum": 1e-7},
    {"maximum": 1.5e12},
    {"minimum": 12345678.9},
    {"minimum": 0.000123, "exclusiveMaximum": 0.000124},
    {"minimum": 0.5, "maximum": 0.5},
    {"minimum": 1e300},
    {"maximum": -3e-20},
]

ENUMS = [
    {"enum": [0.25, 0.5, 0.75, 1.0]},
    {"enum": [1, 2, 3, "max", None, True]},
    {"enum": [1e-3, 2.5e10, -7.125, 0]},
    {"anyOf": [{"type": "number", "minimum": 0.5, "maximum": 0.75}, {"type": "integer", "minimum": 3}]},
]

MULTIPLES = [
    {"type": "integer", "minimum": 0, "maximum": 100, "multipleOf": 5},
    {"type": "integer", "multipleOf": 7},
    {"type": "integer", "multipleOf": 3, "minimum": -20},
    {"type": "integer", "multipleOf": 2.5, "exclusiveMaximum": 50},
    {"type": "integer", "multipleOf": 1000000007, "minimum": -5},
    {"type": "integer", "minimum": 12, "maximum": 16, "multipleOf": 5},
    {"anyOf": [{"type": "integer", "multipleOf": 4}, {"type": "integer", "multipleOf": 6, "maximum": 100}]},
]

INTEGRAL = [  # numbers (not integers) under an integer multipleOf: plain notation, a fraction of zeros
    {"type": "number", "multipleOf": 1},
    {"type": "number", "multipleOf": 5, "minimum": 0, "maximum": 100},
    {"type": "number", "multipleOf": 3, "exclusiveMinimum": -7.5},
    {"type": "number", "multipleOf": 1, "maximum": 2**63 - 1, "minimum": -(2**40)},
    {"anyOf": [{"type": "number", "multipleOf": 2}, {"type": "number", "minimum": 0.25, "maximum": 0.5}]},
    {"anyOf": [{"type": "number", "multipleOf": 4, "maximum": 40}, {"type": "integer", "multipleOf": 6}]},
]

DECIMAL_MULTIPLES = [  # numbers under a multipleOf with a fraction: plain notation, in units of its last place
    {"type": "number", "multipleOf": 0.01, "minimum": 0},
    {"type": "number", "multipleOf": 0.5, "minimum": -2.25, "maximum": 10},
    {"type": "number", "multipleOf": 2.5, "exclusiveMaximum": 100},
    {"type": "number", "multipleOf": 0.25},
    {"type": "number", "multipleOf": 0.001, "minimum": 0.0005, "exclusiveMaximum": 0.01},
    {"type": "number", "multipleOf": 0.01, "maximum": 1e15, "exclusiveMinimum": -0.02},
    {"anyOf": [{"type": "number", "multipleOf": 0.05, "maximum": 1}, {"type": "integer", "minimum": 5}]},
    {"anyOf": [{"type": "number", "multipleOf": 0.5, "minimum": 3}, {"type": "number", "multipleOf": 0.04}]},
    {"anyOf": [{"type": "number", "multipleOf": 0.3}, {"type": "number", "minimum": 1.5, "maximum": 1.75}]},
]

_RNG = random.Random(17)
_MANY = sorted({round(_RNG.uniform(-50, 300), _RNG.choice([0, 1, 2, 3])) for _ in range(90)} | {0, 12, 12.5, 120, 1.25})
VALUE_SETS = [  # more than 64 number literals: one Number with a set of values, written in plain notation
    {"enum": _MANY},
    {"enum": [*range(100, 200, 3), 0.5, 0.05, 7.25, 1e-3, -0.0]},
    {"type": "integer", "enum": [int(v) for v in _MANY] + list(range(1000, 1100, 7))},
    {"allOf": [{"enum": _MANY}, {"minimum": 0, "exclusiveMaximum": 120}]},
    {"anyOf": [{"enum": _MANY}, {"type": "integer", "minimum": 1000}, {"type": "number", "maximum": -100.5}]},
    {"anyOf": [{"enum": list(range(70))}, {"type": "number", "multipleOf": 0.25, "minimum": 100}]},
]

LARGE_INTEGER_BOUNDS = [
    {"minimum": -(2**63), "maximum": 2**63 - 1},
    {"minimum": 0, "maximum": 2**31 - 1},
    {"minimum": 0, "maximum": 2**32 - 1},
    {"minimum": -(2**53 - 1), "maximum": 2**53 - 1},
    {"minimum": 2**40},
    {"exclusiveMaximum": -(10**15)},
    {"minimum": 10**18 - 3, "maximum": 10**18 + 3},
    {"minimum": 1, "maximum": 2**63 - 1, "multipleOf": 1000},
]


def _twin(parser: JsonSchemaParser) -> MachineState:
    twin = parser.compiled_twin()
    assert isinstance(twin, MachineState), "the schema should be covered by the machine"
    return twin


def _every_short_text(parser: JsonSchemaParser, length: int, alphabet: str = NUMBER_CHARACTERS) -> int:
    """Every text over ``alphabet`` up to ``length`` characters: the same allowed characters, end and
    refusals on both. Returns how many texts were compared (so a test sees it did not stop at once)."""
    layer = [(parser, _twin(parser))]
    seen = 0
    for _ in range(length):
        nxt = []
        for reference, twin in layer:
            seen += 1
            assert twin.allowed_characters() == reference.allowed_characters()
            assert twin.can_end() == reference.can_end()
            for ch in alphabet:
                a, b = reference.add_character(ch), twin.add_character(ch)
                assert (a is None) == (b is None), ch
                if a is not None:
                    nxt.append((a, b))
        layer = nxt
    return seen


def _same_along(parser: JsonSchemaParser, text: str) -> None:
    """Character by character along ``text``: the same allowed characters, end and refusal."""
    reference, twin = parser, _twin(parser)
    for ch in text:
        assert twin.allowed_characters() == reference.allowed_characters(), text
        assert twin.can_end() == reference.can_end(), text
        reference, twin = reference.add_character(ch), twin.add_character(ch)
        assert (reference is None) == (twin is None), text
        if reference is None:
            return
    assert twin.can_end() == reference.can_end(), text


def _near(value: Fraction, rng: random.Random) -> str:
    """A number text near ``value``: its digits (a few changed, cut or extended), a fraction, an exponent."""
    digits = format(abs(value.numerator) * 10**30 // value.denominator, "d").lstrip("0") or "0"
    point = len(str(abs(int(value)))) if abs(value) >= 1 else 0
    body = list(digits[: rng.randint(1, len(digits))])
    for _ in range(rng.randint(0, 2)):
        body[rng.randrange(len(body))] = rng.choice("0123456789")
    tail = "".join(rng.choice(rng.choice(["0", "9", "0123456789"])) for _ in range(rng.randint(0, 16)))
    text = "".join(body) + tail
    shift = rng.choice([0, 0, 1, -1, 3])
    cut = max(1, point + shift) if rng.random() < 0.7 else len(text)
    whole, frac = text[:cut].lstrip("0") or "0", text[cut:]
    if abs(value) < 1 and rng.random() < 0.6:
        whole, frac = "0", "0" * rng.randint(0, 8) + text
    out = ("-" if value < 0 or rng.random() < 0.2 else "") + whole + ("." + frac if frac else "")
    if rng.random() < 0.5:
        out += rng.choice("eE") + rng.choice(["", "+", "-"]) + str(rng.choice([0, 1, 2, 5, 7, 12, 20, 40, 300, 330]))
    return out


def _numbers_in(schema) -> list[Fraction]:
    if isinstance(schema, dict):
        return [n for value in schema.values() for n in _numbers_in(value)]
    if isinstance(schema, list):
        return [n for value in schema for n in _numbers_in(value)]
    if isinstance(schema, (int, float)) and not isinstance(schema, bool):
        return [Fraction(repr(schema)) if isinstance(schema, float) else Fraction(schema)]
    return []


@pytest.mark.parametrize("bounds", DECIMAL_BOUNDS)
def test_decimal_bounds_on_every_short_text_and_long_mantissas(bounds):
    parser = JsonSchemaParser({"type": "number", **bounds}, config=COMPACT)
    assert _every_short_text(parser, 4) >= 5
    rng = random.Random(11)
    values = _numbers_in(bounds)
    for _ in range(300):
        _same_along(parser, _near(rng.choice(values), rng))


@pytest.mark.parametrize("schema", ENUMS)
def test_number_enums_on_every_short_text_and_near_their_values(schema):
    parser = JsonSchemaParser(schema, config=COMPACT)
    assert _every_short_text(parser, 5, NUMBER_CHARACTERS + "mnt") > 20
    rng = random.Random(12)
    values = _numbers_in(schema)
    for _ in range(200):
        _same_along(parser, _near(rng.choice(values), rng))


@pytest.mark.parametrize("schema", MULTIPLES)
def test_integer_multiples_on_every_short_text_and_long_integers(schema):
    """Integers under ``multipleOf``: every text up to five characters, then integers of up to 40 digits, past
    the magnitudes the machine keeps exactly (it keeps their remainder)."""
    parser = JsonSchemaParser(schema, config=COMPACT)
    assert _every_short_text(parser, 5, "-0123456789.e") >= 3
    rng = random.Random(13)
    for _ in range(300):
        digits = str(rng.randint(1, 9)) + "".join(rng.choice("0123456789") for _ in range(rng.randint(0, 39)))
        _same_along(parser, ("-" if rng.random() < 0.3 else "") + digits)


@pytest.mark.parametrize("schema", INTEGRAL)
def test_integral_numbers_on_every_short_text_and_long_texts(schema):
    """A number under an integer ``multipleOf`` takes ``15.0`` and ``15.000`` but not ``15.5`` or ``1.5e1``
    (number_bounds.py's ``_integer_set``): every text up to five characters, then long integers with
    fractions of zeros (or not) and exponents."""
    parser = JsonSchemaParser(schema, config=COMPACT)
    assert _every_short_text(parser, 5, "-0123456789.e") >= 3
    rng = random.Random(15)
    for _ in range(300):
        text = ("-" if rng.random() < 0.3 else "") + str(rng.choice([0, 1, 4, 5, 6, 12, 15, 40, 100, 10**19]))
        text += "".join(rng.choice("0123456789") for _ in range(rng.choice([0, 0, 1, 3, 25])))
        if rng.random() < 0.6:
            text += "." + "".join(rng.choice(rng.choice(["0", "0", "05"])) for _ in range(rng.randint(0, 6)))
        if rng.random() < 0.2:
            text += "e1"
        _same_along(parser, text)


@pytest.mark.parametrize("schema", DECIMAL_MULTIPLES)
def test_decimal_multiples_on_every_short_text_and_near_their_multiples(schema):
    """A number under ``multipleOf`` 0.01 takes ``12.34`` and ``12.3400`` but not ``12.345`` or ``1.2e1``
    (number_bounds.py's ``_hits``): every text up to five characters, then multiples (and neighbours) with
    long integer parts, long fractions and trailing zeros."""
    parser = JsonSchemaParser(schema, config=COMPACT)
    assert _every_short_text(parser, 5, "-0123456789.e") >= 3
    rng = random.Random(16)
    steps = [v for v in _numbers_in(schema) if v]
    for _ in range(300):
        value = rng.choice(steps) * rng.choice([1, 2, 3, 7, 40, 399, 10**6 + 1, 10**20 + 3]) + rng.choice(
            [0, 0, Fraction(1, 100), Fraction(1, 1000)]
        )
        text = str(value.numerator * 10**25 // value.denominator)
        whole, frac = text[:-25] or "0", text[-25:].rstrip("0")
        frac = frac[: rng.randint(0, len(frac))] + "0" * rng.choice([0, 0, 1, 3])
        text = ("-" if rng.random() < 0.3 else "") + whole + ("." + frac if frac or rng.random() < 0.1 else "")
        if rng.random() < 0.1:
            text += "e1"
        _same_along(parser, text)


@pytest.mark.parametrize("schema", VALUE_SETS)
def test_value_sets_on_every_short_text_and_near_their_values(schema):
    """A large number enum: texts that start a value's plain text, or that text padded with zeros (``12.50``
    for 12.5, ``120.0`` for 120), and nothing else (number_bounds.py's ``_set_feasible``)."""
    parser = JsonSchemaParser(schema, config=COMPACT)
    assert _every_short_text(parser, 5, "-0123456789.e") > 20
    rng = random.Random(18)
    values = _numbers_in(schema)
    for _ in range(400):
        value = rng.choice(values)
        text = ("-" if value < 0 or rng.random() < 0.1 else "") + _plain_text(abs(value))
        if rng.random() < 0.5:
            text += ("" if "." in text else ".") + "0" * rng.randint(0, 3)
        if rng.random() < 0.3:
            text = text[: rng.randint(1, len(text))] + rng.choice(["", "0", "5", "00", "1", ".", "e1"])
        _same_along(parser, text)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    values=st.lists(st.tuples(st.integers(-(10**6), 10**6), st.integers(0, 4)), min_size=65, max_size=120, unique=True),
    seed=st.integers(0, 2**16),
)
def test_random_value_sets(values, seed):
    """Random sets of more than 64 decimals (up to four places): texts near them, step by step."""
    exact = sorted({Fraction(m, 10**p) for m, p in values})
    schema = {"enum": [int(v) if v.denominator == 1 else float(v) for v in exact]}
    parser = JsonSchemaParser(schema, config=COMPACT)
    rng = random.Random(seed)
    for _ in range(60):
        value = rng.choice(exact)
        text = ("-" if value < 0 else "") + _plain_text(abs(value))
        text = text[: rng.randint(1, len(text))] + rng.choice(["", "0", "00", "5", "."]) if rng.random() < 0.5 else text
        _same_along(parser, text)


def _plain_text(value: Fraction) -> str:
    whole, rest = divmod(value, 1)
    text = str(whole)
    if rest:
        digits = str(rest.numerator * 10**30 // rest.denominator).rjust(30, "0").rstrip("0")
        text += "." + digits
    return text


@pytest.mark.parametrize("bounds", LARGE_INTEGER_BOUNDS)
def test_64_bit_integer_bounds_on_short_texts_and_near_the_bounds(bounds):
    """Integer bounds up to 2^63 in magnitude (int32, uint32, int64, JavaScript's safe integers): every short
    text, then texts of the bound's digits with a few changed, cut or extended."""
    parser = JsonSchemaParser({"type": "integer", **bounds}, config=COMPACT)
    assert _every_short_text(parser, 4, "-0123456789.e") >= 3
    rng = random.Random(14)
    values = [str(abs(v)) for v in bounds.values()]
    for _ in range(300):
        digits = list(rng.choice(values))
        for _ in range(rng.randint(0, 2)):
            digits[rng.randrange(len(digits))] = rng.choice("0123456789")
        text = "".join(digits[: rng.randint(1, len(digits))] if rng.random() < 0.3 else digits)
        text += "".join(rng.choice("0123456789") for _ in range(rng.choice([0, 0, 0, 1, 2])))
        _same_along(parser, ("-" if rng.random() < 0.4 else "") + text.lstrip("0") or "0")


def test_long_multiples_end_where_their_remainder_is_zero():
    """Past 2^30 the machine keeps a magnitude's remainder: a 25-digit multiple of 7 ends, its neighbours do
    not (the Python parser's answers, asserted directly)."""
    parser = JsonSchemaParser({"type": "integer", "multipleOf": 7}, config=COMPACT)
    twin = _twin(parser)
    base = 7 * 142857142857142857142857
    for value, ends in ((base, True), (base + 1, False), (base - 7, True), (-base, True), (-(base + 3), False)):
        state = twin
        for ch in str(value):
            state = state.add_character(ch)
        assert state.can_end() is ends, value


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    low=st.none() | st.tuples(st.integers(-(10**9), 10**9), st.integers(-12, 12), st.booleans()),
    high=st.none() | st.tuples(st.integers(-(10**9), 10**9), st.integers(-12, 12), st.booleans()),
    seed=st.integers(0, 2**16),
)
def test_random_decimal_bounds(low, high, seed):
    """Random bounds M·10^s (up to ten digits), each exclusive or not: texts near them, step by step."""
    schema: dict = {"type": "number"}
    values = []
    for bound, names in ((low, ("minimum", "exclusiveMinimum")), (high, ("maximum", "exclusiveMaximum"))):
        if bound is None:
            continue
        value = Fraction(bound[0]) * Fraction(10) ** bound[1]
        schema[names[bound[2]]] = float(value) if value.denominator != 1 else int(value)
        values.append(_numbers_in(schema[names[bound[2]]])[0])
    try:
        parser = JsonSchemaParser(schema, config=COMPACT)
    except Exception:  # noqa: BLE001 - an empty range is refused before the machine is asked
        return
    assert parser.compiled_twin() is not None
    rng = random.Random(seed)
    for _ in range(40):
        _same_along(parser, _near(rng.choice(values or [Fraction(1)]), rng))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    step=st.integers(2, 10**6),
    low=st.none() | st.integers(-(10**6), 10**6),
    high=st.none() | st.integers(-(10**6), 10**6),
    seed=st.integers(0, 2**16),
)
def test_random_integer_multiples(step, low, high, seed):
    schema: dict = {"type": "integer", "multipleOf": step}
    if low is not None:
        schema["minimum"] = low
    if high is not None:
        schema["maximum"] = high
    try:
        parser = JsonSchemaParser(schema, config=COMPACT)
    except Exception:  # noqa: BLE001 - a set with no value is refused before the machine is asked
        return
    rng = random.Random(seed)
    anchors = [v for v in (low, high, step, 7 * step) if v is not None]
    for _ in range(40):
        text = str(rng.choice(anchors) + rng.randint(-3, 3))
        text += "".join(rng.choice("0123456789") for _ in range(rng.choice([0, 0, 1, 4, 20])))
        _same_along(parser, text)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    units=st.integers(1, 999),
    places=st.integers(0, 4),
    low=st.none() | st.tuples(st.integers(-(10**6), 10**6), st.integers(0, 5), st.booleans()),
    high=st.none() | st.tuples(st.integers(-(10**6), 10**6), st.integers(0, 5), st.booleans()),
    seed=st.integers(0, 2**16),
)
def test_random_decimal_multiples(units, places, low, high, seed):
    """A random multipleOf units / 10^places under random decimal bounds, each exclusive or not: texts near
    its multiples and the bounds, step by step."""
    step = Fraction(units, 10**places)
    schema: dict = {"type": "number", "multipleOf": float(step) if places else units}
    anchors = [step]
    for bound, names in ((low, ("minimum", "exclusiveMinimum")), (high, ("maximum", "exclusiveMaximum"))):
        if bound is not None:
            value = Fraction(bound[0], 10 ** bound[1])
            schema[names[bound[2]]] = float(value)
            anchors.append(value)
    try:
        parser = JsonSchemaParser(schema, config=COMPACT)
    except Exception:  # noqa: BLE001 - a set with no value is refused before the machine is asked
        return
    rng = random.Random(seed)
    for _ in range(40):
        value = rng.choice(anchors) + step * rng.randint(-3, 3)
        digits = str(abs(value.numerator) * 10**12 // value.denominator).rjust(13, "0")
        whole, frac = digits[:-12].lstrip("0") or "0", digits[-12:].rstrip("0")
        frac = frac[: rng.randint(0, len(frac))] + "0" * rng.choice([0, 1])
        text = ("-" if value < 0 else "") + whole + ("." + frac if frac else "")
        _same_along(parser, text + "".join(rng.choice("0123456789") for _ in range(rng.choice([0, 0, 1, 3]))))


@pytest.mark.parametrize(
    ("schema", "reason"),
    [
        ({"type": "number", "multipleOf": 1e-20, "minimum": 0}, "no short decimal form"),
        ({"type": "number", "multipleOf": 1 / 3}, "2^30"),
        ({"type": "number", "multipleOf": 0.5, "maximum": 2**62}, "64 bits"),
        ({"type": "number", "minimum": 1234567890.5}, "significant digits"),
        ({"type": "number", "maximum": 2**40 + 1}, "significant digits"),
        ({"type": "integer", "maximum": 2**63}, "64 bits"),
        ({"type": "integer", "minimum": -(2**63) - 1}, "64 bits"),
        ({"type": "integer", "multipleOf": 2**31}, "2^30"),
        ({"type": "number", "not": {"const": 3}}, "excluded"),
    ],
)
def test_numbers_the_machine_does_not_decide_stay_on_the_python_parsers(schema, reason):
    parser = JsonSchemaParser(schema, config=COMPACT)
    with pytest.raises(machine_program.NotCovered, match=re.escape(reason)):
        machine_program._Builder(parser.compiler, parser._root).node(parser._root)  # noqa: SLF001
    assert parser.compiled_twin() is None


def test_number_multiple_of_one_takes_plain_integral_values():
    """``{"type": "number", "multipleOf": 1}``: both sides take ``15.0`` and refuse ``1.5`` and ``1e5`` (the
    Python parser's answers, asserted directly on each)."""
    parser = JsonSchemaParser({"type": "number", "multipleOf": 1}, config=COMPACT)
    for state in (parser, _twin(parser)):
        assert state.add_text("15.00") is not None and state.add_text("15.00").can_end()
        assert state.add_text("1.5") is None
        assert state.add_text("1e") is None


SCHEMA_ON_TOKENS = {
    "type": "object",
    "properties": {
        "price": {"type": "number", "minimum": 0, "maximum": 99.99},
        "rate": {"type": "number", "exclusiveMinimum": 0, "maximum": 0.3},
        "ratio": {"enum": [0.25, 0.5, 0.75, 1.0]},
        "level": {"enum": [1, 2, 3, "max", None, True]},
        "percent": {"type": "integer", "minimum": 0, "maximum": 100, "multipleOf": 5},
        "big": {"type": "integer", "multipleOf": 7},
        "id": {"type": "integer", "minimum": 0, "maximum": 2**63 - 1},
        "whole": {"type": "number", "multipleOf": 5, "minimum": 0},
        "cents": {"type": "number", "multipleOf": 0.01, "minimum": 0, "maximum": 10000},
        "code": VALUE_SETS[1],
        "tiny": {"type": "number", "minimum": 1e-7, "exclusiveMaximum": 2.5e-6},
    },
}


@pytest.mark.parametrize(
    "text",
    [
        '{"price":99.99,"rate":0.3,"ratio":0.75,"level":"max","percent":95,"big":700000000007000000000,'
        '"tiny":2.4999e-6,"id":9223372036854775807,"whole":150.000,"cents":9999.99,"code":7.2500}',
        '{"price":0.00e0,"rate":3e-1,"ratio":1.0,"level":null,"percent":0,"big":-14,"tiny":1.0E-7,"id":0,"cents":0.10,'
        '"code":-0}',
        '{"price":99.989999999999,"rate":0.0001,"ratio":25e-2,"level":true,"percent":100,"tiny":0.0000001}',
    ],
)
def test_masks_along_documents_on_llama3(llama3_vocabulary, llama3_tokenizer, text):
    """Every token position of documents near the bounds: the same mask and the same step on both."""
    parser = JsonSchemaParser(SCHEMA_ON_TOKENS)
    reference, machine, pending = parser, _twin(parser), b""
    for token in llama3_tokenizer.encode(text, add_special_tokens=False):
        _same_masks(llama3_vocabulary, reference, machine, pending)
        data = llama3_vocabulary.token_bytes[token]
        stepped, moved = advance(reference, pending, data), advance(machine, pending, data)
        assert stepped is not None and moved is not None and stepped[1] == moved[1], text
        reference, pending, machine = stepped[0], stepped[1], moved[0]
    _same_masks(llama3_vocabulary, reference, machine, pending)
    assert reference.can_end() and machine.can_end()


def test_random_token_walks_on_llama3(llama3_vocabulary):
    """Random walks choosing among the allowed tokens (number tokens of every length, exponents, signs)."""
    vocabulary = llama3_vocabulary
    rng = random.Random(21)
    numbers = [{"type": "number", **b} for b in DECIMAL_BOUNDS[:6]]
    integers = [{"type": "integer", **b} for b in LARGE_INTEGER_BOUNDS[:4]]
    for schema in numbers + ENUMS + MULTIPLES + INTEGRAL + DECIMAL_MULTIPLES + VALUE_SETS + integers:
        parser = JsonSchemaParser(schema)
        for _ in range(2):
            random_token_walk(vocabulary, parser, rng, 12)


def _number_record_words(code: bytes) -> list[int]:
    """The word indexes of a program's number records (K_NUMBER and K_NUMSET, their options and the tables of
    their sets of values)."""
    words = struct.unpack(f"<{len(code) // 4}i", code)
    size = machine_program.NUM_WORDS
    out = []
    for node in range(words[1]):
        at = words[16 + node]
        if words[at] == machine_program.K_NUMBER:
            options = [at]
        elif words[at] == machine_program.K_NUMSET:
            out.extend((at, at + 1))
            options = [at + 2 + size * i for i in range(words[at + 1])]
        else:
            continue
        for o in options:
            out.extend(range(o, o + size))
            if words[o + 1] == 3:  # a set's table: a few of its words
                table = range(o + words[o + 3], o + words[o + 3] + words[o + 4] * 13)
                out.extend(table[:: max(1, len(table) // 40)])
    return out


def test_random_number_programs_and_states_never_crash():
    """Random changes to the words of number records (bounds, scales, steps, the set's size) and to number
    states: refused with a ValueError, or run without a fault (the sanitizer build turns a bad read, an
    overflow or a division by zero into a failure)."""
    rng = random.Random(4)
    texts = ("[-12.5e-3,0,700000000000000000000000,99.99,2.5E+10]", "[1,-0.000,3e300,-1e-400,12]")
    refused = ran = 0
    for items in (
        MULTIPLES[-1],
        {"enum": [0.25, 5, -3e-7]},
        {"type": "number", "minimum": -1.5, "maximum": 1e12},
        {"type": "integer", "minimum": -(2**63), "maximum": 2**53},
        INTEGRAL[-2],
        DECIMAL_MULTIPLES[-2],
        VALUE_SETS[1],
        VALUE_SETS[-1],
    ):
        program = _twin(JsonSchemaParser({"type": "array", "items": items}, config=COMPACT))._machine
        code = bytearray(program.code)
        places = _number_record_words(bytes(code))
        assert places
        for _ in range(300):
            mutated = bytearray(code)
            for _ in range(rng.randint(1, 2)):
                at = rng.choice(places)
                value = rng.choice([-1, 0, 1, 2, 4, 7, 15, 16, 999, 1000, 1001, -1001, (1 << 30) - 1, 1 << 30,
                                    -(1 << 31), (1 << 31) - 1, rng.randint(-2000, 2000)])  # fmt: skip
                mutated[4 * at : 4 * at + 4] = struct.pack("<i", value)
            try:
                machine = backend.native.Machine(bytes(mutated), ())
            except ValueError:
                refused += 1
                continue
            ran += 1
            for text in texts:
                state = machine.start()
                for ch in text:
                    after = machine.step(state, ch.encode())
                    if after is None:
                        break
                    state = after
                machine.can_end(state)
                machine.allowed(state)
        state = program.start()
        for ch in "[12345678901234":
            state = program.step(state, ch.encode()) or state
        for _ in range(300):
            data = bytearray(state)
            at = rng.randrange(len(data))
            data[at] = rng.randrange(256)
            try:
                program.step(bytes(data), b"7")
                program.allowed(bytes(data))
                program.can_end(bytes(data))
            except ValueError:
                pass
    assert refused > 100 and ran > 100  # (both sides of the check were exercised)
