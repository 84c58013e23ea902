"""Exact arithmetic on a number node's constraints: whether a decimal prefix can still end on an allowed value.

A prefix such as ``12`` can still become any value in ``[12·10^k, 13·10^k)`` for some k (or ``[12, 13)`` once
a ``.`` is read); ``feasible`` intersects each such interval with the bounds, the multiples of ``multipleOf``
and the excluded values. The number parser (numbers.py) asks it per character; stage one asks
``number_satisfiable`` when it merges bounds. Cost: a few Fraction comparisons, and a loop over k bounded by
the digits of ``maximum``; when the allowed values are the multiples of an integer between two integers
(integers under bounds, an integer ``multipleOf``: most bounded numbers of real schemas) the same intervals
are decided in int arithmetic instead (``_integer_set``), 5-50x cheaper per question
(``python benchmarks/number_walks.py``).

Numbers under bounds alone take exponents too (``1e-06`` is how Python's ``json.dumps`` writes 0.000001): a
mantissa prefix with significant digits ``s`` can still become any value ``0.s… × 10^j``, and an exponent
prefix reaches the exponents that start with its digits, so both are decided exactly against the bounds with
integer and Fraction arithmetic (``_mantissa_feasible``, ``exponent_feasible``), never by computing ``10**x``
for the exponent written. Numbers under ``multipleOf`` or excluded values are written in plain notation.
"""

from __future__ import annotations

from bisect import bisect_left
from fractions import Fraction
from functools import lru_cache
from math import ceil, floor, gcd

from ...core.charset import CharSet
from .ir import Number
from .validate import number_ok

DIGITS = "0123456789"
_MAX_K = 400


class NumberContext:
    """The compiled constraints of one Number node, mirrored for negative values (shared by its states)."""

    __slots__ = (
        "integer",
        "constrained",
        "exponent",
        "positive",
        "negative",
        "node",
        "charsets",
        "feasible",
        "value_ident",
        "integer_sets",
        "values_positive",
        "values_negative",
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
            node.low is not None
            or node.high is not None
            or multiple is not None
            or bool(node.excluded)
            or bool(non)
            or node.values is not None
        )
        if node.integer and multiple is None and self.constrained:
            # the candidates are integers, not every decimal: "0" cannot go on when 0 is excluded, and
            # [0.5, 0.9] holds no integer
            multiple = Fraction(1)
        self.exponent = not node.integer and multiple is None and not node.excluded and not non and node.values is None
        """Whether an exponent may follow the mantissa: unconstrained, or under bounds alone."""
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
        self.values_positive: tuple[Fraction, ...] | None = None
        """For a set of ``values``: those a text can spell, >= 0, ascending (with ``values_negative``, the
        magnitudes of those <= 0: 0 is both ``0`` and ``-0``); None without a set."""
        self.values_negative: tuple[Fraction, ...] | None = None
        self.value_ident: tuple = ("num", self.integer, self.exponent, self.positive, self.negative)
        """Equal for equal constraints of different schemas: their number walks are shared (see NumberParser)."""
        if node.values is not None:
            spelled = frozenset(v for v in node.values if _terminates(v) and number_ok(node, v, v.denominator == 1))
            self.values_positive = tuple(sorted(v for v in spelled if v >= 0))
            self.values_negative = tuple(sorted(-v for v in spelled if v <= 0))
            self.value_ident = (*self.value_ident, spelled)  # (a frozenset keeps its hash: cheap to look up)
        self.integer_sets = (
            (None, None) if node.values is not None else (_integer_set(self.positive), _integer_set(self.negative))
        )
        """Per sign (positive, negative), the allowed magnitudes as ``(lowest, step, highest)`` in plain ints
        when they are the multiples of an integer step between two integers (None: see ``_integer_set``)."""


def _terminates(value: Fraction) -> bool:
    """Whether ``value`` has a finite decimal expansion (only such values can be written in plain notation)."""
    d = value.denominator
    for p in (2, 5):
        while d % p == 0:
            d //= p
    return d == 1


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


def _integer_set(bounds: tuple) -> tuple[int | None, int, int | None] | None:
    """The allowed values of mirrored ``bounds`` as ``(lowest, step, highest)``: the multiples of ``step``
    from ``lowest`` to ``highest`` (None: unbounded), all plain ints, when ``multiple`` is an integer and
    nothing is excluded (integers, and numbers under an integer ``multipleOf``); else None. The bounds
    become the nearest integers inside them (``> 2.5`` is ``>= 3``, ``< 7`` is ``<= 6``)."""
    low, low_open, high, high_open, multiple, excluded, non = bounds
    if multiple is None or multiple.denominator != 1 or excluded or non:
        return None
    lowest = highest = None
    if low is not None:
        lowest = ceil(low)
        if low_open and lowest == low:
            lowest += 1
    if high is not None:
        highest = floor(high)
        if high_open and highest == high:
            highest -= 1
    return lowest, multiple.numerator, highest


def _integer_feasible(allowed: tuple[int | None, int, int | None], whole: str, fraction: str | None) -> bool:
    """``feasible`` for a prefix without exponent whose allowed set is ``_integer_set``'s, in int arithmetic:
    the same intervals as the general case (``_fraction_feasible``), each asked whether it holds a multiple
    of ``step`` between ``lowest`` and ``highest``. Most bounded numbers of real schemas are integers, and
    their first walk asks this for every digit token of the vocabulary."""
    lowest, step, highest = allowed

    def holds(a: int, b: int | None) -> bool:  # a multiple of step in [a, b] (b None: unbounded) and the set
        if lowest is not None and lowest > a:
            a = lowest
        x = -(-a // step) * step
        return (b is None or x <= b) and (highest is None or x <= highest)

    if whole == "":
        return holds(0, None)
    if fraction is not None:  # [p/q, (p+1)/q) with q >= 1 holds one integer at most: p/q when q divides p
        p, q = int(whole + fraction), 10 ** len(fraction)
        return p % q == 0 and holds(p // q, p // q)
    n = int(whole)
    if n == 0:
        return holds(0, 0)
    scale = 1
    for _ in range(_MAX_K):
        a = n * scale
        if highest is not None and a > highest:
            return False
        if holds(a, a + scale - 1):
            return True
        scale *= 10
    return False


def integer_complete(allowed: tuple[int | None, int, int | None], whole: str, fraction: str | None) -> bool:
    """Whether the magnitude written (digits, no exponent) is in ``_integer_set``'s set ``allowed``: what
    ``validate.number_ok`` answers for it, in int arithmetic."""
    lowest, step, highest = allowed
    if fraction:
        p, q = int(whole + fraction), 10 ** len(fraction)
        if p % q:
            return False
        value = p // q
    else:
        value = int(whole)
    return (lowest is None or value >= lowest) and (highest is None or value <= highest) and value % step == 0


def feasible(ctx: NumberContext, negative: bool, whole: str, fraction: str | None, exp: str | None = None) -> bool:
    """Whether the prefix (sign, integer digits, fraction digits or None, exponent text or None) can still end
    inside the set."""
    if not ctx.constrained:
        return True
    values = ctx.values_negative if negative else ctx.values_positive
    if values is not None:
        return _set_feasible(values, whole, fraction)
    allowed = ctx.integer_sets[1 if negative else 0]
    if allowed is not None and exp is None:
        return _integer_feasible(allowed, whole, fraction)
    return _fraction_feasible(ctx, negative, whole, fraction, exp)


def _fraction_feasible(
    ctx: NumberContext, negative: bool, whole: str, fraction: str | None, exp: str | None = None
) -> bool:
    """``feasible`` in Fraction arithmetic, for every constraint (the reference the int path must agree with)."""
    if not ctx.constrained:
        return True
    bounds = ctx.negative if negative else ctx.positive
    if whole == "":
        return _hits(Fraction(0), None, bounds)
    if exp is not None:
        return exponent_feasible(mantissa(whole, fraction), exp, bounds, False)
    if ctx.exponent:
        return _mantissa_feasible(whole, fraction, bounds)
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


def _set_feasible(values: tuple[Fraction, ...], whole: str, fraction: str | None) -> bool:
    """``feasible`` for a set of values (ascending magnitudes of one sign), in plain decimal notation: whether
    one of them lies in one of the intervals the prefix can still reach (the same intervals as above)."""
    if not values:
        return False
    if whole == "":
        return True
    if fraction is not None:
        a = Fraction(int(whole + fraction), 10 ** len(fraction))
        return _set_hits(values, a, a + Fraction(1, 10 ** len(fraction)))
    n = int(whole)
    if n == 0:
        return _set_hits(values, Fraction(0), Fraction(1))
    top, scale = values[-1], 1
    while n * scale <= top:
        if _set_hits(values, Fraction(n * scale), Fraction((n + 1) * scale)):
            return True
        scale *= 10
    return False


def _set_hits(values: tuple[Fraction, ...], a: Fraction, b: Fraction) -> bool:
    """Whether the ascending ``values`` hold one in ``[a, b)``."""
    i = bisect_left(values, a)
    return i < len(values) and values[i] < b


def mantissa(whole: str, fraction: str | None) -> Fraction:
    """The value of the digits read (no sign, no exponent)."""
    return Fraction(int(whole + (fraction or "")), 10 ** len(fraction or ""))


def _pow10(x: int) -> Fraction:
    return Fraction(10**x) if x >= 0 else Fraction(1, 10**-x)


def _floor_log10(r: Fraction) -> int:
    """The integer e with 10^e <= r < 10^(e+1), for r > 0 (exact: an estimate from the digit counts, adjusted)."""
    e = len(str(r.numerator)) - len(str(r.denominator))
    while _pow10(e) > r:
        e -= 1
    while _pow10(e + 1) <= r:
        e += 1
    return e


def _point_ok(value: Fraction, bounds: tuple) -> bool:
    low, low_open, high, high_open = bounds[:4]
    if low is not None and (value < low or (low_open and value == low)):
        return False
    return high is None or not (value > high or (high_open and value == high))


def _mantissa_feasible(whole: str, fraction: str | None, bounds: tuple) -> bool:
    """Whether a mantissa prefix, with an exponent still possible, can end inside the bounds: with significant
    digits ``s`` (n = int(s)) it can become any value in [n, n+1)·10^j for every integer j (more digits, then
    ``e`` and any exponent), or 0 while it has no significant digit. Only the smallest j with (n+1)·10^j above
    ``low`` can hit: every larger j starts at or above 10·n·10^j0."""
    significant = (whole + (fraction or "")).lstrip("0")
    if not significant:  # zeros so far: 0, or any positive value after more digits
        return _hits(Fraction(0), None, bounds)
    low, _, high, _ = bounds[:4]
    if high is None:
        return True  # a large enough exponent passes any minimum
    if high.numerator <= 0:  # (the sign of a Fraction is its numerator's: no Fraction comparison per character)
        return False
    n = int(significant)
    if low is None or low.numerator <= 0:
        return True  # a small enough exponent goes under any maximum > 0
    c = _pow10(_floor_log10(low / (n + 1)) + 1)  # the smallest power of ten with (n+1)·c > low
    return _hits(n * c, (n + 1) * c, bounds)


def _exponent_range(m: Fraction, bounds: tuple) -> tuple[int | None, int | None] | None:
    """For a mantissa m > 0, the integers x with m·10^x inside the bounds as (lowest, highest), None meaning
    unbounded on that side; None when there is none."""
    low, low_open, high, high_open = bounds[:4]
    lowest = highest = None
    if low is not None and low.numerator > 0:
        r = low / m
        e = _floor_log10(r)
        lowest = e if (_pow10(e) == r and not low_open) else e + 1
    if high is not None:
        if high.numerator <= 0:
            return None
        r = high / m
        e = _floor_log10(r)
        highest = e - 1 if (_pow10(e) == r and high_open) else e
    if lowest is not None and highest is not None and lowest > highest:
        return None
    return lowest, highest


def exponent_shape(n: int, bounds: tuple) -> tuple[int | None, int | None] | None:
    """For a bound pair under which every mantissa prefix is feasible (``high`` unbounded, or ``low <= 0``) and
    every mantissa ``m`` in ``[n, n+1)`` (n > 0, scaled by one power of ten), the exponents that put ``m`` at
    the bounds do not depend on ``m``: returns ``(h, l)``, ``h = floor(log10(high/n))`` (None: no maximum) and
    ``l = floor(log10(low/n))`` (None: no minimum above 0), so that ``_exponent_range`` of every such ``m·10^s``
    is ``(l + 1 - s, h - s)``. None when a bound's ratio meets a power of ten inside the interval (the digits
    still to come decide there), or when both bounds are live (then the mantissa prefix itself may fail).

    States of a number whose mantissas share these offsets accept the same continuations, so the token walk
    of one is the walk of all (NumberParser._far_shape)."""
    low, _, high, _ = bounds[:4]
    if n <= 0 or (high is not None and high.numerator <= 0):
        return None
    live_low = low is not None and low.numerator > 0
    if live_low and high is not None:
        return None
    offsets: list[int | None] = []
    for bound in (high, low if live_low else None):
        if bound is None:
            offsets.append(None)
            continue
        e = _floor_log10(bound / n)
        if _pow10(e) * (n + 1) > bound:  # a power of ten in (bound/(n+1), bound/n]: not the same for every m
            return None
        offsets.append(e)
    return offsets[0], offsets[1]


def exponent_feasible(m: Fraction, exp: str, bounds: tuple, complete: bool) -> bool:
    """Whether the exponent text ``exp`` (after ``e``: a sign, then digits) can still give a value m·10^x inside
    the bounds; ``complete``: whether the value as written is inside (the text must hold a digit). The
    exponents reachable from digits d are int(d + t) for every digit string t: the union over k of
    [int(d)·10^k, (int(d)+1)·10^k) (every natural number when int(d) is 0)."""
    if m == 0:
        return _point_ok(Fraction(0), bounds)
    span = _exponent_range(m, bounds)
    if span is None:
        return False
    lowest, highest = span
    digits = exp.lstrip("+-")
    if complete:
        x = -int(digits) if exp.startswith("-") else int(digits)
        return (lowest is None or x >= lowest) and (highest is None or x <= highest)
    if exp == "":
        return True  # any integer exponent, and the range is not empty
    # the magnitudes n of the exponent that fit: x = n or x = -n
    if exp.startswith("-"):
        a, b = (0 if highest is None else max(0, -highest)), (None if lowest is None else -lowest)
    else:
        a, b = (0 if lowest is None else max(0, lowest)), highest
    if b is not None and b < a:
        return False
    start = int(digits) if digits else 0
    if start == 0 or b is None:
        return True
    k = 1
    while start * k <= b:
        if (start + 1) * k - 1 >= a:
            return True
        k *= 10
    return False


def number_satisfiable(node: Number) -> bool:
    """Whether any JSON number matches ``node`` (as this parser writes numbers)."""
    return _satisfiable((node.integer, node.low, node.low_open, node.high, node.high_open, node.multiple_of,
                         node.excluded, node.not_multiples, node.values))  # fmt: skip


def bounds_satisfiable(integer: bool, low: Fraction | None, low_open: bool, high: Fraction | None, high_open: bool,
                       multiple_of: Fraction | None) -> bool:  # fmt: skip
    """``number_satisfiable`` of the Number node with these fields and no excluded values or non-multiples,
    without building the node (the normalizer asks it once per bound of a schema)."""
    return _satisfiable((integer, low, low_open, high, high_open, multiple_of, frozenset(), (), None))


@lru_cache(maxsize=1024)
def _satisfiable(fields: tuple) -> bool:
    """``number_satisfiable`` by the constraints' values: every bound merged into a schema asks it again
    (``integer`` AND ``minimum`` AND ``maximum``), and schemas repeat the same few bounds."""
    ctx = NumberContext(Number(*fields))
    return feasible(ctx, True, "", None) or any(feasible(ctx, False, d, None) for d in DIGITS)
