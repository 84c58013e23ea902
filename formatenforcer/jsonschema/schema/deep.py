"""Deeply nested schemas without deep recursion: ``prepare`` normalizes the sub-schemas of a schema nested
more than ``DEEP`` levels deepest first, so that when ``Normalizer.node`` reads a schema, every sub-schema it
asks for is already in its memo (by pointer) and the recursion stays one level deep, whatever the nesting.

It visits the sub-schemas ``Normalizer._read`` would visit, with the same pointers: the kinds' keywords
(``items``, ``prefixItems``, ``additionalItems``, ``contains``; ``properties``, ``patternProperties``,
``additionalProperties``, ``propertyNames``) where the schema's ``type`` allows that kind, and the combining
keywords (``allOf``, ``anyOf``, ``oneOf``, ``not``, ``if``/``then``/``else``, ``dependentSchemas``). Only
documents with no ``$id`` or anchor (``References.plain``): there every pointer has the base "" and the root's
dialect and is read under the root's dynamic scope, as ``node`` reads it later. ``$ref`` targets are read
when resolved (``Normalizer.finish``), which walks references one at a time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .dialects import is_legacy, unknown_keywords
from .references import _escape

if TYPE_CHECKING:
    from .normalize import Normalizer

DEEP = 40
"""Schemas nested less deeply are read top-down as usual (the recursion is short)."""

_ARRAY_KEYWORDS = frozenset({"items", "prefixItems", "additionalItems", "contains", "minItems", "maxItems",
                             "uniqueItems", "minContains", "maxContains"})  # fmt: skip
_OBJECT_KEYWORDS = frozenset({"properties", "patternProperties", "additionalProperties", "propertyNames",
                              "required", "minProperties", "maxProperties", "dependentRequired",
                              "dependencies"})  # fmt: skip


def _allows(schema: dict, kind: str, keywords: frozenset[str]) -> bool:
    declared = schema.get("type")
    if declared is None:
        return not keywords.isdisjoint(schema)
    return kind in (declared if isinstance(declared, list) else [declared])


def _children(schema: dict, pointer: str) -> list[tuple[Any, str]]:
    out: list[tuple[Any, str]] = []
    if _allows(schema, "array", _ARRAY_KEYWORDS):
        items = schema.get("items")
        if isinstance(items, list):
            out.extend((s, f"{pointer}/items/{i}") for i, s in enumerate(items))
            if "additionalItems" in schema:
                out.append((schema["additionalItems"], f"{pointer}/additionalItems"))
        else:
            if isinstance(schema.get("prefixItems"), list):
                out.extend((s, f"{pointer}/prefixItems/{i}") for i, s in enumerate(schema["prefixItems"]))
            if items is not None:
                out.append((items, f"{pointer}/items"))
        if "contains" in schema:
            out.append((schema["contains"], f"{pointer}/contains"))
    if _allows(schema, "object", _OBJECT_KEYWORDS):
        for keyword in ("properties", "patternProperties"):
            if isinstance(schema.get(keyword), dict):
                out.extend((s, f"{pointer}/{keyword}/{_escape(n)}") for n, s in schema[keyword].items())
        for keyword in ("additionalProperties", "propertyNames"):
            if keyword in schema:
                out.append((schema[keyword], f"{pointer}/{keyword}"))
    for keyword in ("allOf", "anyOf", "oneOf"):
        if isinstance(schema.get(keyword), list):
            out.extend((s, f"{pointer}/{keyword}/{i}") for i, s in enumerate(schema[keyword]))
    if "not" in schema:
        out.append((schema["not"], f"{pointer}/not"))
    if "if" in schema and ("then" in schema or "else" in schema):
        out.extend((schema[k], f"{pointer}/{k}") for k in ("if", "then", "else") if k in schema)
    if isinstance(schema.get("dependentSchemas"), dict):
        out.extend((s, f"{pointer}/dependentSchemas/{_escape(n)}") for n, s in schema["dependentSchemas"].items()
                   if not isinstance(s, list))  # fmt: skip
    return out


def prepare(normalizer: Normalizer, root: Any) -> None:
    """Normalizes the sub-schemas of ``root`` deepest first when it is nested ``DEEP`` levels or more."""
    if not normalizer.plain or not isinstance(root, dict) or normalizer.nesting < DEEP:
        return  # (``nesting`` counts every schema below that ``_children`` visits, and more)
    dialect = normalizer.dialect_at("#")
    unknown = unknown_keywords(dialect)
    legacy = is_legacy(dialect)
    order: list[tuple[Any, str]] = []
    todo: list[tuple[Any, str, int]] = [(root, "#", 0)]
    deepest = 0
    while todo:
        schema, pointer, depth = todo.pop()
        if not isinstance(schema, dict):
            continue
        order.append((schema, pointer))
        deepest = max(deepest, depth)
        if unknown and not unknown.isdisjoint(schema):
            schema = {key: value for key, value in schema.items() if key not in unknown}
        if legacy and "$ref" in schema:
            continue  # the siblings of a legacy $ref are not read
        todo.extend((sub, where, depth + 1) for sub, where in _children(schema, pointer))
    if deepest < DEEP:
        return
    for schema, pointer in reversed(order):  # (a pre-order reversed: every schema after its sub-schemas)
        normalizer.node(schema, pointer)
