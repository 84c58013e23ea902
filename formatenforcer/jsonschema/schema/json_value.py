"""Whether a schema given as Python data is JSON data at all, checked once before it is read.

A schema dict built in code can hold what no JSON text can: a ``set``, a non-string key, ``float("inf")``,
bytes, any object. Read further, each surfaced as an internal ``AttributeError``/``TypeError`` (or, for
``inf``, as a bound that silently accepted every number). ``check_json_data`` names the first such value and
its JSON pointer instead, as a ``SchemaError``. Iterative (an explicit stack), so any depth is checked.
"""

from __future__ import annotations

import math
from typing import Any

from ...core.errors import SchemaError


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


_PLAIN = frozenset({str, bool, int, type(None)})
"""The types of values that are JSON data with nothing to check below them."""
_KEYS = frozenset({str})


def _pointer(path: tuple | None) -> str:
    """The JSON pointer of a value from its path: nested (parent path, key or index) pairs, None at the root."""
    parts: list[str] = []
    while path is not None:
        path, step = path
        parts.append(_escape(step) if isinstance(step, str) else str(step))
    return "/".join(["#", *reversed(parts)])


def check_json_data(root: Any) -> None:
    """Raises SchemaError at the first value (depth first) that is not JSON data: dict with string keys,
    list, string, bool, None, int, finite float. A value's pointer is spelled only for the error (each value
    keeps its path as nested pairs): a schema is checked in one pass over its values, before any is read."""
    stack: list[tuple[Any, tuple | None]] = [(root, None)]
    pop, push = stack.pop, stack.append
    while stack:
        value, path = pop()
        kind = value.__class__
        if kind is str or kind is bool or kind is int or value is None:
            continue
        if kind is dict:
            if _PLAIN.issuperset(map(type, value.values())) and _KEYS.issuperset(map(type, value)):
                continue  # string keys and plain values only (most schemas below a property): one C pass
            for key, item in value.items():
                if key.__class__ is not str and not isinstance(key, str):
                    raise SchemaError(f"object keys must be strings, not {type(key).__name__} {key!r}", _pointer(path))
                item_kind = item.__class__
                if item_kind is str or item_kind is bool or item_kind is int or item is None:
                    continue  # (a leaf: nothing to check, nothing to push)
                push((item, (path, key)))
            continue
        if kind is list:
            if not _PLAIN.issuperset(map(type, value)):  # (``required``, ``type``, most enums: nothing to push)
                stack.extend((item, (path, i)) for i, item in enumerate(value))
            continue
        if isinstance(value, (str, bool, int)):
            continue
        if isinstance(value, float):
            if not math.isfinite(value):
                raise SchemaError(f"{value!r} is not a JSON number (JSON numbers are finite)", _pointer(path))
            continue
        if isinstance(value, dict):
            for key, item in value.items():
                if not isinstance(key, str):
                    raise SchemaError(f"object keys must be strings, not {type(key).__name__} {key!r}", _pointer(path))
                push((item, (path, key)))
            continue
        if isinstance(value, list):
            stack.extend((item, (path, i)) for i, item in enumerate(value))
            continue
        raise SchemaError(f"a {type(value).__name__} is not JSON data (use a dict, list, str, number, bool or None)",
                          _pointer(path))  # fmt: skip
