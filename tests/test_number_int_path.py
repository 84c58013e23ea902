"""The int-arithmetic path of ``feasible`` (integers, and numbers under an integer ``multipleOf``) agrees with
the Fraction reference on seeded random bounds (integer, decimal and arbitrary fractions, open and closed,
negative, huge, one-sided, empty) and random prefixes, a number ends where ``validate.number_ok`` accepts its
value, and a bounded integer's walk reads the same characters along random digit strings as the reference
would allow."""

from __future__ import annotations

import random
from fractions import Fraction

from formatenforcer.jsonschema.numbers import NumberParser
from formatenforcer.jsonschema.schema.ir import Number
from formatenforcer.jsonschema.schema.number_bounds import NumberContext, _fraction_feasible, feasible, mantissa
from formatenforcer.jsonschema.schema.validate import number_ok


def _bound(rng: random.Random) -> Fraction | None:
    kind = rng.randrange(6)
    if kind == 0:
        return None
    sign = rng.choice((1, -1))
    if kind == 1:  # small integers, where most real bounds are
        return Fraction(sign * rng.randrange(0, 3000))
    if kind == 2:  # huge: far past the vocabulary's digit tokens, and past 10**_MAX_K now and then
        return Fraction(sign * rng.randrange(1, 10) * 10 ** rng.choice((12, 30, 80, 399, 400, 401, 420)))
    if kind == 3:  # a power of ten or one off it, where the digit-count loop turns
        return Fraction(sign * (10 ** rng.randrange(0, 8) + rng.choice((-1, 0, 1))))
    if kind == 4:  # plain decimals
        return Fraction(sign * rng.randrange(0, 100000), 10 ** rng.randrange(1, 4))
    return Fraction(sign * rng.randrange(0, 1000), rng.randrange(1, 30))  # any fraction


def _multiple(rng: random.Random) -> Fraction | None:
    return rng.choice((None, Fraction(1), Fraction(2), Fraction(5), Fraction(7), Fraction(100), Fraction(1, 2),
                       Fraction(5, 2), Fraction(3, 10), Fraction(1, 3)))  # fmt: skip


def _node(rng: random.Random) -> Number:
    low, high = _bound(rng), _bound(rng)
    if low is not None and high is not None and low > high and rng.random() < 0.8:
        low, high = high, low  # mostly non-empty, sometimes empty
    excluded: frozenset[Fraction] = frozenset()
    if rng.random() < 0.1:
        excluded = frozenset(Fraction(rng.randrange(-20, 20)) for _ in range(3))
    non: tuple[Fraction, ...] = (Fraction(rng.randrange(2, 6)),) if rng.random() < 0.05 else ()
    return Number(rng.random() < 0.6, low, rng.random() < 0.3, high, rng.random() < 0.3, _multiple(rng), excluded,
                  non)  # fmt: skip


def _prefix(rng: random.Random, integer: bool) -> tuple[str, str | None]:
    shape = rng.randrange(4)
    if shape == 0:
        whole = "" if rng.random() < 0.3 else "0"
    else:
        whole = str(rng.randrange(1, 10)) + "".join(rng.choice("0123456789") for _ in range(rng.randrange(0, 12)))
    if integer or whole == "" or rng.random() < 0.5:
        return whole, None
    return whole, "".join(rng.choice("0000123456789") for _ in range(rng.randrange(0, 6)))


def test_int_path_agrees_with_fraction_reference() -> None:
    rng = random.Random(17)
    fast = 0
    for _ in range(1500):
        node = _node(rng)
        ctx = NumberContext(node)
        for _ in range(25):
            negative = rng.random() < 0.4
            whole, fraction = _prefix(rng, node.integer)
            expected = _fraction_feasible(ctx, negative, whole, fraction)
            assert feasible(ctx, negative, whole, fraction) == expected, (node, negative, whole, fraction)
            fast += ctx.integer_sets[1 if negative else 0] is not None
    assert fast > 15000  # most cases took the int path (the rest check the fallback still answers)


def test_int_path_end_agrees_with_number_ok() -> None:
    """A number may end where the value written satisfies its node (``can_end`` reads the int set)."""
    rng = random.Random(71)
    fast = 0
    for _ in range(1500):
        node = _node(rng)
        ctx = NumberContext(node)
        for _ in range(25):
            negative = rng.random() < 0.4
            whole, fraction = _prefix(rng, node.integer)
            if whole == "" or fraction == "":
                continue
            value = mantissa(whole, fraction)
            expected = number_ok(node, -value if negative else value, True)
            assert NumberParser(ctx, negative, whole, fraction).can_end() == expected, (node, negative, whole, fraction)
            fast += ctx.integer_sets[1 if negative else 0] is not None
    assert fast > 10000


def test_bounded_integer_digits_match_reference() -> None:
    """Along random digit strings of random integer bounds, each state's allowed digits are those whose
    prefix the Fraction reference finds feasible."""
    rng = random.Random(1717)
    for _ in range(300):
        node = Number(True, *(_bound(rng), rng.random() < 0.3, _bound(rng), rng.random() < 0.3),
                      rng.choice((None, Fraction(3), Fraction(10))))  # fmt: skip
        ctx = NumberContext(node)
        for negative in (False, True):
            state: NumberParser | None = NumberParser(ctx)
            text = ""
            if negative:
                state = state.add_character("-")
                if state is None:
                    assert not _fraction_feasible(ctx, True, "", None)
                    continue
            for _ in range(rng.randrange(1, 10)):
                assert state is not None
                allowed = state.allowed_characters()
                digits = [d for d in "0123456789" if d in allowed]
                if text != "0":
                    assert digits == [d for d in "0123456789" if _fraction_feasible(ctx, negative, text + d, None)]
                if not digits:
                    break
                text += rng.choice(digits)
                state = state.add_character(text[-1])
