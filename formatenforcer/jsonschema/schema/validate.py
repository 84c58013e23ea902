"""Checks one Python JSON value against the intermediate form.

Used while normalizing, never during generation: to keep the ``enum``/``const`` values that the rest of the
schema allows, and to decide whether branches overlap. Cost: proportional to the value's size.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from functools import lru_cache
from typing import Any

from ..ecma.parse import EcmaSyntaxError, EcmaUnsupported
from ..ecma.translate import search
from .format_checks import format_checks
from .ir import AnyValue, Array, Boolean, Never, Node, Null, Number, Object, String, Union, deref


def to_fraction(value: int | float) -> Fraction:
    """The exact value a JSON number denotes (floats by their shortest decimal form, so 0.1 is 1/10)."""
    if isinstance(value, float):
        return _float_fraction(value) if math.isfinite(value) else Fraction(0)
    return Fraction(value)


@lru_cache(maxsize=1024)
def _float_fraction(value: float) -> Fraction:
    """Parsing a float's shortest form is the slow part; schemas repeat the same bounds (0.0, 1.0, 0.01)."""
    return Fraction(repr(value))


@lru_cache(maxsize=256)
def _regex(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def string_ok(node: String, text: str) -> bool:
    """Whether ``text`` satisfies the string node."""
    if node.values is not None:
        return text in node.values
    if text in node.excluded:
        return False
    if len(text) < node.min_length or (node.max_length is not None and len(text) > node.max_length):
        return False
    if not all(_search(p, text, True) for p in node.patterns):
        return False
    checks = format_checks()
    if any(len(text) > checks.max_length.get(f, len(text)) for f in node.formats):
        return False
    if any(_search(p, text, False) for p in node.not_patterns):
        return False
    if any(checks.matches(f, text) for f in node.not_formats):
        return False
    return all(checks.matches(f, text) for f in node.formats)


def _search(pattern: str, text: str, unknown: bool) -> bool:
    """ECMA-262 search (ecma/parse.py); ``unknown`` for a pattern that cannot be translated (reported as
    unsupported while normalizing, so only reached with ``lenient=True``, where the pattern is not enforced)."""
    try:
        return search(pattern, text)
    except (EcmaSyntaxError, EcmaUnsupported):
        return unknown


def number_ok(node: Number, value: Fraction, is_integral: bool) -> bool:
    """Whether the number ``value`` satisfies the number node."""
    if node.integer and not is_integral:
        return False
    if node.low is not None and (value < node.low or (node.low_open and value == node.low)):
        return False
    if node.high is not None and (value > node.high or (node.high_open and value == node.high)):
        return False
    if node.multiple_of is not None and (value / node.multiple_of).denominator != 1:
        return False
    if any((value / m).denominator == 1 for m in node.not_multiples):
        return False
    return value not in node.excluded and (node.values is None or value in node.values)


def accepts(node: Node, value: Any) -> bool:
    """Whether the JSON value ``value`` is an instance of ``node``."""
    node = deref(node)
    if isinstance(node, AnyValue):
        return True
    if isinstance(node, Never):
        return False
    if isinstance(node, Union):
        return any(accepts(option, value) for option in node.options)
    if value is None:
        return isinstance(node, Null)
    if isinstance(value, bool):
        return isinstance(node, Boolean) and value in node.values
    if isinstance(value, (int, float)):
        if not isinstance(node, Number):
            return False
        exact = to_fraction(value)
        return number_ok(node, exact, exact.denominator == 1)
    if isinstance(value, str):
        return isinstance(node, String) and string_ok(node, value)
    if isinstance(value, list):
        return isinstance(node, Array) and _array_ok(node, value)
    if isinstance(value, dict):
        return isinstance(node, Object) and _object_ok(node, value)
    return False


def _array_ok(node: Array, value: list) -> bool:
    if len(value) < node.min_items or (node.max_items is not None and len(value) > node.max_items):
        return False
    for i, item in enumerate(value):
        if not accepts(node.prefix[i] if i < len(node.prefix) else node.items, item):
            return False
    if node.unique:
        seen = [_canonical(item) for item in value]
        if len(set(seen)) != len(seen):
            return False
    if node.contains is not None:
        count = sum(1 for item in value if accepts(node.contains, item))
        if count < node.min_contains or (node.max_contains is not None and count > node.max_contains):
            return False
    return all(sum(1 for item in value if accepts(schema, item)) >= low for schema, low in node.also_contains)


def _canonical(value: Any) -> Any:
    """A hashable form under JSON equality (1 == 1.0, but True != 1)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return (type(value).__name__, value)
    if isinstance(value, (int, float)):
        return ("number", to_fraction(value))
    if isinstance(value, list):
        return ("array", tuple(_canonical(v) for v in value))
    return ("object", frozenset((k, _canonical(v)) for k, v in value.items()))


def value_schemas(node: Object, key: str) -> list[Node]:
    """The schemas the value of ``key`` must match: one or more per side."""
    out: list[Node] = []
    for side in node.sides:
        matched = False
        for name, schema in side.properties:
            if name == key:
                out.append(schema)
                matched = True
        for pattern, schema in side.patterns:
            if _search(pattern, key, False):
                out.append(schema)
                matched = True
        if not matched:
            out.append(side.additional)
    return out


def _object_ok(node: Object, value: dict) -> bool:
    if len(value) < node.min_properties or (node.max_properties is not None and len(value) > node.max_properties):
        return False
    if not node.required <= value.keys():
        return False
    for key, item in value.items():
        if node.property_names is not None and not accepts(node.property_names, key):
            return False
        if not all(accepts(schema, item) for schema in value_schemas(node, key)):
            return False
    for key, needed in node.dependent_required:
        if key in value and not set(needed) <= value.keys():
            return False
    return all(
        any(accepts(keys, key) and accepts(schema, item) for key, item in value.items()) for keys, schema in node.exists
    )
