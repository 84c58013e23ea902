"""The fuzz suite's oracle: ``jsonschema`` asserting exactly the formats formatenforcer asserts.

formatenforcer asserts the formats of ``KNOWN_FORMATS`` (formatenforcer/jsonschema/formats/) and treats any
other name as an annotation. jsonschema's default ``FORMAT_CHECKER`` asserts another set: only what its
optional packages provide (no ``duration`` without isoduration, no ``hostname`` without fqdn, no ``uri``
without rfc3987), and some of it by another definition. Either difference gives the oracle a different
verdict from the enforcer's under ``not`` or ``oneOf`` (``{"oneOf": [{"maxLength": 0}, {"format":
"duration"}]}`` and ``""``). The checker below has one entry per asserted format and none for the others:

- jsonschema's own check where it checks the format's definition: date, date-time, time, ipv4, ipv6, uuid,
  json-pointer, relative-json-pointer, idn-hostname (the idna package);
- formatenforcer's format check (``formats.matches``, Python ``re`` over the RFC patterns, independent of the
  enforcing automata) where jsonschema has none of that definition: ``regex`` (jsonschema compiles a Python
  pattern; the format is ECMA-262), ``email``/``idn-email`` (jsonschema only looks for an ``@``), and the
  formats its installed packages do not check at all; and for leap seconds in ``date-time``/``time``, which
  jsonschema always refuses (RFC 3339 allows ``23:59:60`` UTC).

The format checks themselves are tested against the JSON-Schema-Test-Suite (tests/test_json_formats.py and
others); this oracle judges everything else a fuzzed walk produces: structure, types, bounds, patterns and how
``not``/``oneOf``/``if`` combine the format verdicts.

Numbers are compared as the decimal values their JSON text writes (``Decimal``, schema and instance alike),
as JSON Schema defines them and formatenforcer enforces them. Parsed as floats, ``-5E-400`` would be ``-0.0``
and fail ``exclusiveMaximum: 0``, and ``0.99999999999999999999`` would be ``1.0`` and fail ``exclusiveMaximum:
1``, though both values are within the bounds.
"""

from __future__ import annotations

import json
import re
from decimal import MAX_EMAX, MIN_EMIN, Decimal, InvalidOperation, localcontext

import jsonschema

from formatenforcer.jsonschema.formats import FORMAT_MAX_LENGTH, KNOWN_FORMATS, matches

JSONSCHEMA_CHECKS = frozenset(
    {
        "date",
        "date-time",
        "time",
        "ipv4",
        "ipv6",
        "uuid",
        "json-pointer",
        "relative-json-pointer",
        "idn-hostname",
    }
)
"""Formats whose jsonschema check implements the same definition as formatenforcer's (leap seconds aside)."""

_LEAP_SECOND = re.compile(r"(?:^|T|t)[0-9]{2}:[0-9]{2}:60")


def _own_check(name: str):  # noqa: ANN202
    cap = FORMAT_MAX_LENGTH.get(name)

    def check(instance: object) -> bool:
        if not isinstance(instance, str):
            return True  # formats constrain strings only
        return matches(name, instance) and (cap is None or len(instance) <= cap)

    return check


def _jsonschema_check(name: str, default: jsonschema.FormatChecker):  # noqa: ANN202
    own = _own_check(name)

    def check(instance: object) -> bool:
        if name in ("date-time", "time") and isinstance(instance, str) and _LEAP_SECOND.search(instance):
            return own(instance)
        return default.conforms(instance, name)

    return check


def format_checker() -> jsonschema.FormatChecker:
    """A FormatChecker asserting exactly ``KNOWN_FORMATS``, each as described in the module docstring."""
    default = jsonschema.Draft202012Validator.FORMAT_CHECKER
    checker = jsonschema.FormatChecker(formats=())
    for name in sorted(KNOWN_FORMATS):
        if name in JSONSCHEMA_CHECKS and name in default.checkers:
            checker.checks(name)(_jsonschema_check(name, default))
        else:
            checker.checks(name)(_own_check(name))
    return checker


FORMAT_CHECKER = format_checker()


def valid(schema: object, text: str) -> bool:
    """Whether the JSON ``text`` is valid under ``schema`` (2020-12), formats asserted as formatenforcer does."""
    exact = json.loads(json.dumps(schema), parse_float=Decimal)
    with localcontext() as context:  # exact remainders for multipleOf, any exponent
        context.prec, context.Emax, context.Emin = 100_000, MAX_EMAX, MIN_EMIN
        validator = jsonschema.Draft202012Validator(exact, format_checker=FORMAT_CHECKER)
        return validator.is_valid(json.loads(text, parse_float=_exact_number))


def _exact_number(text: str) -> Decimal:
    """The JSON number ``text`` as a Decimal; an exponent beyond Decimal's range (over 18 digits) gives the
    largest or smallest Decimal of the value's sign, which compares with every bound as the value does."""
    try:
        return Decimal(text)
    except InvalidOperation:
        mantissa, _, exponent = text.lower().partition("e")
        sign = -1 if mantissa.startswith("-") else 1
        if Decimal(mantissa) == 0:
            return Decimal(0)
        return sign * Decimal("1E+999999999999999999" if not exponent.startswith("-") else "1E-999999999999999999")
