"""Likely misspelled keywords in a JSON Schema: ``maxLenght`` is not a keyword, so a validator (and
formatenforcer) ignores it as an annotation, and the limit its author meant is silently not enforced.

``likely_typos`` reads every schema position of a document (iteratively: schemas may nest thousands of
levels deep) and reports each key that is not a keyword but is close to one (edit similarity, or the same
letters in another case), with the keyword it probably meant. Keys far from every keyword (``x-order``,
``example``, vendor extensions) are left alone: unknown keywords are legal annotations.
"""

from __future__ import annotations

from difflib import get_close_matches
from typing import Any

from .ir import ANNOTATIONS, IMPLEMENTED_KEYWORDS

KEYWORDS = IMPLEMENTED_KEYWORDS | ANNOTATIONS
"""Every keyword formatenforcer reads, enforces or knows as an annotation."""
_LOWER = {keyword.lower(): keyword for keyword in KEYWORDS}
_SCHEMA_VALUES = ("additionalProperties", "propertyNames", "not", "if", "then", "else", "contains",
                  "additionalItems", "unevaluatedProperties", "unevaluatedItems", "items", "contentSchema")  # fmt: skip
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems", "items")
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies")


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def suggestion(key: str) -> str | None:
    """The keyword ``key`` probably misspells, or None when it is a keyword or close to none."""
    if key in KEYWORDS:
        return None
    same_letters = _LOWER.get(key.lower())
    if same_letters is not None:
        return same_letters
    close = get_close_matches(key, KEYWORDS, n=1, cutoff=0.8)
    return close[0] if close else None


def likely_typos(schema: Any) -> list[tuple[str, str, str]]:
    """``(JSON pointer of the key, key, the keyword it probably means)`` for every likely misspelled
    keyword in ``schema``, in document order."""
    out: list[tuple[str, str, str]] = []
    stack: list[tuple[Any, str]] = [(schema, "")]
    while stack:
        node, pointer = stack.pop()
        if not isinstance(node, dict):
            continue
        children: list[tuple[Any, str]] = []
        for key, value in node.items():
            if not isinstance(key, str):
                continue
            meant = suggestion(key)
            where = f"{pointer}/{_escape(key)}"
            if meant is not None:
                out.append((f"#{where}", key, meant))
            if key in _SCHEMA_VALUES and isinstance(value, dict):
                children.append((value, where))
            if key in _SCHEMA_LISTS and isinstance(value, list):
                children.extend((item, f"{where}/{i}") for i, item in enumerate(value))
            if key in _SCHEMA_MAPS and isinstance(value, dict):
                children.extend((sub, f"{where}/{_escape(str(name))}") for name, sub in value.items())
        stack.extend(reversed(children))
    return out


__all__ = ["KEYWORDS", "likely_typos", "suggestion"]
