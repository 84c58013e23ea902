"""Exact arithmetic on a number node's constraints: whether a decimal prefix can still end on an allowed value.

A prefix such as ``12`` can still become any value in ``[12·10^k, 13·10^k)`` for some k (or ``[12, 13)`` once
a ``.`` is read); ``feasible`` intersects each such interval with the bounds, the multiples of ``multipleOf``
and the excluded values. The number parser (numbers.py) asks it per character; stage one asks
``number_satisfiable`` when it merges bounds. Cost: a few Fraction comparisons, and a loop over k bounded by
the digits of ``maximum``.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from math import ceil, gcd

from ...core.charset import CharSet
from .ir import Number

DIGITS = "0123456789"
_MAX_K = 400


class NumberContext:
    """The compiled constraints of one Number node, mirrored for negative values (shared by its states)."""

    __slots__ = (
        "integer", "constrained", "exponent", "positive", "negative", "node", "charsets", "feasible", "value_ident"
    )

    def __init__(self, node: Number) -> None:
        self.node = node
        self.charsets: dict[str, CharSet] = {}
        self.feasible: dict[tuple, bool] = {}
        self.integer = node.integer
        multiple = node.multiple_of
        if node.integer:
            multiple = _lcm_int(multiple) if multiple is not None else None
        non = node.not_multiples
        self.constrained = (
            node.low is not None or node.high is not None or multiple is not None or bool(node.excluded) or bool(non)
        )
        if node.integer and multiple is None and self.constrained:
            # the candidates are integers, not every decimal: "0" cannot go on when 0 is excluded, and
            # [0.5, 0.9] holds no integer
            multiple = Fraction(1)
        self.exponent = not node.integer and not self.constrained
        self.positive = (node.low, node.low_open, node.high, node.high_open, multiple, node.excluded, non)
        self.negative = (
            None if node.high is None else -node.high,
            node.high_open,
            None if node.low is None else -node.low,
            node.low_open,
            multiple,
            frozenset(-x for x in node.excluded),
            non,
        )
        self.value_ident = ("num", self.integer, self.exponent, self.positive, self.negative)
        """Equal for equal constraints of different schemas: their number walks are shared (see NumberParser)."""


def _lcm_int(multiple: Fraction) -> Fraction | None:
    """The step of integers that are multiples of ``multiple`` (None when every integer is)."""
    step = Fraction(multiple.numerator)  # lcm(p/q, 1) = p for p/q in lowest terms
    return None if step == 1 else step


_MAX_PERIOD = 10_000
"""Candidates tried past the excluded values when ``not_multiples`` skip some multiples (see ``_hits``)."""


def _period(multiple: Fraction, non: tuple[Fraction, ...]) -> int:
    """Among consecutive multiples k*M, those that are multiples of some m in ``non`` are the k divisible by
    denominator(M/m); k = 1 (mod the lcm of those) is never one, so a window of that lcm holds a good one.
    0: every multiple of M is also a multiple of some m (nothing allowed)."""
    period = 1
    for m in non:
        d = (multiple / m).denominator
        if d == 1:
            return 0
        period = period * d // gcd(period, d)
    return min(period, _MAX_PERIOD)


def _hits(a: Fraction, b: Fraction | None, bounds: tuple) -> bool:
    """Whether ``[a, b)`` (b None: unbounded) holds an allowed value (bounds already mirrored). An interval of
    positive length holds infinitely many decimals, so without ``multiple`` only a single point can fail."""
    low, low_open, high, high_open, multiple, excluded, non = bounds
    lo, lo_open = a, False
    if low is not None and (low > lo or (low == lo and low_open)):
        lo, lo_open = low, low_open
    hi, hi_open = b, True
    if high is not None and (hi is None or high < hi):
        hi, hi_open = high, high_open
    if hi is not None and (lo > hi or (lo == hi and (lo_open or hi_open))):
        return False
    if multiple is None:
        if hi is not None and lo == hi:
            return lo not in excluded and all((lo / m).denominator != 1 for m in non)
        return True
    period = _period(multiple, non) if non else 1
    if period == 0:
        return False
    x = ceil(lo / multiple) * multiple
    if lo_open and x == lo:
        x += multiple
    for _ in range(len(excluded) + period):
        if hi is not None and (x > hi or (x == hi and hi_open)):
            return False
        if x not in excluded and all((x / m).denominator != 1 for m in non):
            return True
        x += multiple
    return False


def feasible(ctx: NumberContext, negative: bool, whole: str, fraction: str | None) -> bool:
    """Whether the prefix (sign, integer digits, fraction digits or None) can still end inside the set."""
    if not ctx.constrained:
        return True
    bounds = ctx.negative if negative else ctx.positive
    if whole == "":
        return _hits(Fraction(0), None, bounds)
    if fraction is not None:
        a = Fraction(int(whole + fraction), 10 ** len(fraction))
        return _hits(a, a + Fraction(1, 10 ** len(fraction)), bounds)
    n = int(whole)
    if n == 0:
        return _hits(Fraction(0), Fraction(1), bounds)
    high = bounds[2]
    for k in range(_MAX_K):
        a = Fraction(n * 10**k)
        if high is not None and a > high:
            return False
        if _hits(a, Fraction((n + 1) * 10**k), bounds):
            return True
    return False


def number_satisfiable(node: Number) -> bool:
    """Whether any JSON number matches ``node`` (as this parser writes numbers)."""
    return _satisfiable((node.integer, node.low, node.low_open, node.high, node.high_open, node.multiple_of,
                         node.excluded, node.not_multiples))  # fmt: skip


def bounds_satisfiable(integer: bool, low: Fraction | None, low_open: bool, high: Fraction | None, high_open: bool,
                       multiple_of: Fraction | None) -> bool:  # fmt: skip
    """``number_satisfiable`` of the Number node with these fields and no excluded values or non-multiples,
    without building the node (the normalizer asks it once per bound of a schema)."""
    return _satisfiable((integer, low, low_open, high, high_open, multiple_of, frozenset(), ()))


@lru_cache(maxsize=1024)
def _satisfiable(fields: tuple) -> bool:
    """``number_satisfiable`` by the constraints' values: every bound merged into a schema asks it again
    (``integer`` AND ``minimum`` AND ``maximum``), and schemas repeat the same few bounds."""
    ctx = NumberContext(Number(*fields))
    return feasible(ctx, True, "", None) or any(feasible(ctx, False, d, None) for d in DIGITS)
