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


def check_json_data(root: Any) -> None:
    """Raises SchemaError at the first value (depth first) that is not JSON data: dict with string keys,
    list, string, bool, None, int, finite float."""
    stack: list[tuple[Any, str]] = [(root, "#")]
    while stack:
        value, pointer = stack.pop()
        if value is None or isinstance(value, (str, bool, int)):
            continue
        if isinstance(value, float):
            if not math.isfinite(value):
                raise SchemaError(f"{value!r} is not a JSON number (JSON numbers are finite)", pointer)
            continue
        if isinstance(value, dict):
            for key, item in value.items():
                if not isinstance(key, str):
                    raise SchemaError(f"object keys must be strings, not {type(key).__name__} {key!r}", pointer)
                stack.append((item, f"{pointer}/{_escape(key)}"))
            continue
        if isinstance(value, list):
            stack.extend((item, f"{pointer}/{i}") for i, item in enumerate(value))
            continue
        raise SchemaError(f"a {type(value).__name__} is not JSON data (use a dict, list, str, number, bool or None)",
                          pointer)  # fmt: skip
