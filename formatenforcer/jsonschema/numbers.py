"""JSON numbers with exact bounds, ``multipleOf`` and excluded values, decided digit by digit.

The JSON number grammar is followed exactly (no leading zeros, no ``+``, no bare ``.``). Under constraints a
character is allowed only if some completion of the text stays inside the allowed set, which the exact
arithmetic of schema/number_bounds.py decides. So the parser never reaches a dead end, and
``minimum``/``maximum`` are enforced while generating, not checked afterwards.

Integers never take a fraction or exponent. Numbers under bounds alone take exponents too (``1e-06``), decided
exactly by schema/number_bounds.py; numbers under ``multipleOf``, excluded values or a set of values (a large
number enum) are written in plain decimal notation.
"""

from __future__ import annotations

from collections.abc import Hashable

from ..core.charset import EMPTY, CharSet
from ..core.hooks import FreeRun
from ..core.protocol import CharacterParser
from .schema.number_bounds import (
    NumberContext,
    exponent_feasible,
    exponent_shape,
    feasible,
    integer_complete,
    mantissa,
)

DIGITS = "0123456789"
_DIGIT_SET = CharSet.of(DIGITS)


class NumberParser(CharacterParser):
    """One JSON number. State: sign, integer digits, fraction digits (None before '.'), exponent text."""

    __slots__ = ("_ctx", "_neg", "_whole", "_frac", "_exp", "_allowed", "_end")
    SCALAR_LEXEME = True

    def __init__(
        self, ctx: NumberContext, neg: bool = False, whole: str = "", frac: str | None = None, exp: str | None = None
    ) -> None:
        self._ctx = ctx
        self._neg = neg
        self._whole = whole
        self._frac = frac
        self._exp = exp
        self._allowed: CharSet | None = None
        self._end: bool | None = None  # can_end, once: stepping each token refused here asks it again

    def _candidates(self) -> str:
        ctx = self._ctx
        if self._exp is not None:
            if self._exp == "":
                return "+-" + DIGITS
            return DIGITS
        if self._whole == "":
            return DIGITS if self._neg else "-" + DIGITS
        e = "eE" if ctx.exponent else ""
        dot = "" if ctx.integer else "."
        if self._frac is None:
            return (dot + e) if self._whole == "0" else (DIGITS + dot + e)
        return DIGITS + e if self._frac else DIGITS

    def _next(self, ch: str) -> tuple[bool, str, str | None, str | None]:
        """The fields after reading ``ch``, a candidate."""
        neg, whole, frac, exp = self._neg, self._whole, self._frac, self._exp
        if exp is not None:
            return neg, whole, frac, exp + ch
        if ch == "-":
            return True, whole, frac, exp
        if ch == "e" or ch == "E":
            return neg, whole, frac, ""
        if ch == ".":
            return neg, whole, "", exp
        if frac is not None:
            return neg, whole, frac + ch, exp
        return neg, whole + ch, frac, exp

    def _feasible(self, fields: tuple[bool, str, str | None, str | None]) -> bool:
        """Whether a constrained prefix can still end inside the set (memoized per context)."""
        memo = self._ctx.feasible
        ok = memo.get(fields)
        if ok is None:
            ok = memo[fields] = feasible(self._ctx, *fields)
            if len(memo) > 65536:
                memo.clear()
        return ok

    def add_character(self, ch: str) -> NumberParser | None:
        if ch not in self._candidates():
            return None
        fields = self._next(ch)
        if self._ctx.constrained and not self._feasible(fields):
            return None
        return NumberParser(self._ctx, *fields)

    def allowed_characters(self) -> CharSet:
        if self._allowed is None:
            chars = self._candidates()
            if self._ctx.constrained:  # (unconstrained, every candidate is allowed: see add_character)
                chars = "".join(c for c in chars if self._feasible(self._next(c)))
            memo = self._ctx.charsets
            hit = memo.get(chars)
            if hit is None:
                hit = memo[chars] = CharSet.of(chars) if chars else EMPTY
            self._allowed = hit
        return self._allowed

    def can_end(self) -> bool:
        end = self._end
        if end is None:
            end = self._end = self._can_end()
        return end

    def _can_end(self) -> bool:
        if self._whole == "" or self._frac == "" or (self._exp is not None and not self._exp.strip("+-")):
            return False
        if not self._ctx.constrained:
            return True
        allowed = self._ctx.integer_sets[1 if self._neg else 0]
        if allowed is not None and self._exp is None:
            return integer_complete(allowed, self._whole, self._frac)
        value = mantissa(self._whole, self._frac)
        if self._exp is not None:  # bounds alone (see NumberContext.exponent), decided without 10**x
            return exponent_feasible(value, self._exp, self._ctx.negative if self._neg else self._ctx.positive, True)
        from .schema.validate import number_ok

        return number_ok(self._ctx.node, -value if self._neg else value, True)

    def key(self) -> Hashable:
        if self._ctx.constrained:
            return ("num", id(self._ctx), self._neg, self._whole, self._frac, self._exp)
        whole = 0 if self._whole == "" else 1 if self._whole == "0" else 2
        frac = None if self._frac is None else len(self._frac) > 0
        exp = None if self._exp is None else min(len(self._exp.strip("+-")), 1) + (2 if self._exp else 0)
        return ("num", id(self._ctx), self._neg and whole == 0, whole, frac, exp)

    def free_run(self) -> FreeRun | None:
        """Digits that loop: the integer part past a non-zero first digit, the fraction, the exponent. The
        walk then takes every digit token from a precomputed table instead of stepping a thousand of them
        (stepping them costs ~6 ms per first walk). The number may end after any digit of the run (``ends_inside``).
        ``after(n)`` appends ``n`` zeros: unconstrained, a state with the same key; under bounds, runs are
        offered only while every continuation stays inside them (``_far_shape``), for as many digits as that
        lasts, and the zeros give a state with the same far shape, so the same continuations."""
        ctx, neg, whole, frac, exp = self._ctx, self._neg, self._whole, self._frac, self._exp
        if exp is not None:
            if ctx.constrained:
                return None  # (under bounds, the exponent's digits decide: see exponent_feasible)
            return FreeRun(_DIGIT_SET, None, lambda n: NumberParser(ctx, neg, whole, frac, exp + "0" * n), True)
        if whole == "" or (whole == "0" and frac is None):
            return None  # the first digit decides, and no digit follows a leading zero
        limit = None
        if ctx.constrained:
            shape = self._far_shape()
            if shape is None:
                return None
            if shape[0] == "below":  # the number of digits that keeps the value under its bound
                limit = shape[1] - 1
                if limit <= 0:
                    return None
        if frac is None:
            return FreeRun(_DIGIT_SET, limit, lambda n: NumberParser(ctx, neg, whole + "0" * n, None, None), True)
        return FreeRun(_DIGIT_SET, limit, lambda n: NumberParser(ctx, neg, whole, frac + "0" * n, None), True)

    def lexeme_key(self, horizon: int) -> Hashable:
        far = self._far_shape()
        return self.key() if far is None else ("num", id(self._ctx), self._neg, *far)

    def shared_lexeme_key(self, horizon: int) -> Hashable | None:
        # the walk of a number depends on its constraints' values only: "price" in one schema and "amount"
        # in another (or in the next request's schema) share it through the vocabulary's lexeme cache
        return (self._ctx.value_ident, *self.lexeme_key(horizon)[2:])

    def _far_shape(self) -> tuple | None:
        """For a bounded number whose every continuation stays inside its bounds, what its continuations
        depend on (the value does not): ``1200.`` and ``37.`` under ``0 <= x <= 10000`` accept the same
        digits and may end alike, so their walks are one cached walk. None when the value matters (near a
        bound, multipleOf, excluded values) or the number has no digit yet."""
        ctx, whole, frac = self._ctx, self._whole, self._frac
        if not ctx.constrained or whole == "" or self._exp is not None or ctx.values_positive is not None:
            return None
        low, _, high, _, multiple, excluded, non = ctx.negative if self._neg else ctx.positive
        if excluded or non or not (multiple is None or (ctx.integer and multiple == 1)):
            return None
        magnitude = int(whole)  # bounds are mirrored for negatives: they bound the magnitude
        if ctx.exponent and ((low is not None and low.numerator > 0) or high is not None):
            # an exponent reaches values near 0 and past any maximum (``1201e-1`` is 120.1 under 1000): any
            # digits may follow, and what decides the continuations is which exponents put the mantissa
            # inside the bounds — the same for every mantissa the prefix can become, unless a bound's ratio
            # crosses a power of ten there (exponent_shape)
            if frac is None:
                if whole == "0":
                    return None
                shape = exponent_shape(magnitude, (low, None, high, None))
                return None if shape is None else ("exp", "integer", *shape)
            significant = int(whole + frac)
            shape = exponent_shape(significant, (low, None, high, None))
            if shape is None:
                return None
            phase = "point" if frac == "" else "fraction"
            return ("exp", phase, *(None if e is None else e + len(frac) for e in shape))
        if frac is not None or whole == "0":  # every value in [W, W+1] is reachable
            inside = (low is None or low < magnitude) and (high is None or magnitude + 1 < high)
            return ("far", whole == "0", frac is None, frac == "") if inside else None
        if low is not None and low >= magnitude:
            return None  # below the minimum: which digits may follow depends on the value
        if high is None:  # appending digits reaches every value from W upwards
            return ("far", False, True, False)
        # with k more digits the integer part lies in [W*10^k, (W+1)*10^k): wholly inside the bound or wholly
        # past it for every k, states with as many "wholly inside" lengths behave alike (25 and 30 under 500)
        inside, scale = 0, 1
        while magnitude * scale <= high:
            if (magnitude + 1) * scale >= high:
                return None  # the bound falls inside this length's range: the value decides
            inside += 1
            scale *= 10
        return ("below", inside)

    def __repr__(self) -> str:
        sign = "-" if self._neg else ""
        frac = "" if self._frac is None else "." + self._frac
        exp = "" if self._exp is None else "e" + self._exp
        return f"NumberParser({sign}{self._whole}{frac}{exp!s})"
