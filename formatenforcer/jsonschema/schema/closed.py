"""The closed-object policy (``JsonConfig.closed_objects``): objects that name their properties get no others.

JSON Schema allows any key an object schema does not mention. A model asked for such an object keeps
inventing keys, since every one is allowed; pydantic then drops them (its default ``extra="ignore"``), so
they cost tokens and can keep generation from ever closing the object. Under this policy, each place in the
document where a value is read (the root, a property's value, an item, ...) whose schema names properties
and says nothing of other keys gets ``unevaluatedProperties: false``. That keyword sees the properties named
through ``allOf``, ``anyOf``, ``oneOf``, ``if``/``then``/``else`` and ``$ref`` at the same place, so a
union of models keeps each branch's own keys, and an object built from several parts keeps all of them.

A union there (``anyOf``/``oneOf`` and nothing else that names keys, as pydantic writes ``Union[A, B]``)
is closed branch by branch instead when it cannot be closed as a whole. A place is left open when any schema
there mentions other keys (``additionalProperties``,
``patternProperties`` or ``unevaluatedProperties``, whatever their value: the author decided), when it names
no property at all (a free-form ``dict``), when a required key is not among the named ones (closing would
make the schema unsatisfiable), or when a ``$ref`` there cannot be followed inside the document. In a
draft 4, 6 or 7 document, which has no ``unevaluatedProperties``, only places whose own keywords name the
properties, with no ``$ref`` or combinator beside them, are closed (``additionalProperties: false``).

The document is copied, never changed, and walked without recursion (schemas thousands of levels deep).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from .dialects import dialect_of, is_legacy

_MAP_VALUES = ("properties", "patternProperties")
"""Keywords whose values are schemas of new places (each property's value)."""

_ONE_VALUE = ("additionalProperties", "unevaluatedProperties", "additionalItems", "unevaluatedItems",
              "contains", "propertyNames")  # fmt: skip
_SAME_PLACE_ONE = ("not", "if", "then", "else")
_SAME_PLACE_LISTS = ("allOf", "anyOf", "oneOf")
_SAME_PLACE_MAPS = ("$defs", "definitions", "dependentSchemas", "dependencies")
_OTHER_KEYS = ("additionalProperties", "patternProperties", "unevaluatedProperties")
_UNION_SIBLINGS = ("properties", "required", "allOf", "$ref", "if", "then", "else", "dependentSchemas",
                   "dependencies", *_OTHER_KEYS, "$dynamicRef", "$recursiveRef", "minProperties")  # fmt: skip
_COMBINATORS = ("$ref", "allOf", "anyOf", "oneOf", "if", "then", "else", "dependentSchemas", "dependencies",
                "$dynamicRef", "$recursiveRef")  # fmt: skip


def _children(schema: dict) -> list[tuple[Any, bool]]:
    """The subschemas of ``schema``, each with whether it is read at a new place (a property's value, an
    item) rather than at the same place (a combinator's branch, a definition)."""
    out: list[tuple[Any, bool]] = []
    for keyword in _MAP_VALUES:
        values = schema.get(keyword)
        if isinstance(values, dict):
            out.extend((value, True) for value in values.values())
    for keyword in _ONE_VALUE:
        if keyword in schema:
            out.append((schema[keyword], True))
    items = schema.get("items")
    if isinstance(items, list):
        out.extend((value, True) for value in items)
    elif items is not None:
        out.append((items, True))
    prefix = schema.get("prefixItems")
    if isinstance(prefix, list):
        out.extend((value, True) for value in prefix)
    for keyword in _SAME_PLACE_ONE:
        if keyword in schema:
            out.append((schema[keyword], False))
    for keyword in _SAME_PLACE_LISTS:
        values = schema.get(keyword)
        if isinstance(values, list):
            out.extend((value, False) for value in values)
    for keyword in _SAME_PLACE_MAPS:
        values = schema.get(keyword)
        if isinstance(values, dict):
            out.extend((value, False) for value in values.values() if isinstance(value, (dict, bool)))
    return out


def _resolve(root: Any, ref: Any) -> Any:
    """The schema a document-local ``$ref`` (``#`` or ``#/a/b``) names, or None."""
    if not isinstance(ref, str) or not ref.startswith("#"):
        return None
    target = root
    if ref in ("#", "#/"):
        return target
    if not ref.startswith("#/"):
        return None  # an anchor: not followed
    for part in ref[2:].split("/"):
        part = unquote(part).replace("~1", "/").replace("~0", "~")
        if isinstance(target, dict) and part in target:
            target = target[part]
        elif isinstance(target, list) and part.isdigit() and int(part) < len(target):
            target = target[int(part)]
        else:
            return None
    return target


def _should_close(root: Any, place: dict, legacy: bool) -> bool:
    """Whether the schemas read at ``place`` (through combinators and ``$ref``) name properties, mention no
    other keys and require only named ones."""
    if legacy:
        if any(keyword in place for keyword in _COMBINATORS) or any(k in place for k in _OTHER_KEYS):
            return False
        names = place.get("properties")
        required = place.get("required", [])
        return isinstance(names, dict) and bool(names) and all(name in names for name in required)
    names: set[str] = set()
    required: set[str] = set()
    seen: set[int] = set()
    stack = [place]
    while stack:
        schema = stack.pop()
        if not isinstance(schema, dict) or id(schema) in seen:
            continue
        seen.add(id(schema))
        if any(keyword in schema for keyword in _OTHER_KEYS) or "$dynamicRef" in schema or "$recursiveRef" in schema:
            return False
        if "$ref" in schema:
            target = _resolve(root, schema["$ref"])
            if target is None:
                return False
            stack.append(target)
        properties = schema.get("properties")
        if isinstance(properties, dict):
            names.update(properties)
        if isinstance(schema.get("required"), list):
            required.update(name for name in schema["required"] if isinstance(name, str))
        for keyword in ("if", "then", "else"):
            stack.append(schema.get(keyword))
        for keyword in _SAME_PLACE_LISTS:
            if isinstance(schema.get(keyword), list):
                stack.extend(schema[keyword])
        for keyword in ("dependentSchemas", "dependencies"):
            if isinstance(schema.get(keyword), dict):
                stack.extend(schema[keyword].values())
    return bool(names) and required <= names


def _close_place(root: Any, place: dict, legacy: bool, targets: dict[int, Any]) -> None:
    """Closes ``place`` when it qualifies; else, when it is only a union (``anyOf``/``oneOf`` with nothing
    else that names keys: a pydantic ``Union`` of models), each branch on its own, so a model that allows
    extra keys leaves the other branches closed."""
    branches: list[Any] = [place]
    while branches:
        schema = branches.pop()
        if not isinstance(schema, dict):
            continue
        if _should_close(root, schema, legacy):
            targets[id(schema)] = schema
        elif not legacy and not any(keyword in schema for keyword in _UNION_SIBLINGS):
            for keyword in ("anyOf", "oneOf"):
                if isinstance(schema.get(keyword), list):
                    branches.extend(schema[keyword])


def close_objects(root: Any) -> tuple[Any, list[str]]:
    """A copy of the schema document ``root`` under the closed-object policy, and the JSON pointers of the
    places it closed."""
    legacy = isinstance(root, dict) and is_legacy(dialect_of(root.get("$schema")) or "")
    closing = "additionalProperties" if legacy else "unevaluatedProperties"
    targets: dict[int, Any] = {}
    seen: set[int] = set()
    stack: list[tuple[Any, bool]] = [(root, True)]
    while stack:
        schema, is_place = stack.pop()
        if not isinstance(schema, dict) or id(schema) in seen:
            continue
        seen.add(id(schema))
        if is_place:
            _close_place(root, schema, legacy, targets)
        stack.extend(_children(schema))
    if not targets:
        return root, []
    return _copy(root, targets, closing), _pointers(root, targets)


def _copy(root: Any, targets: dict[int, Any], closing: str) -> Any:
    """A copy of ``root`` (dicts and lists, iteratively) with ``closing: false`` added to each target."""
    made: dict[int, Any] = {}

    def shell(value: Any) -> Any:
        if isinstance(value, dict):
            copy = dict(value)
            if id(value) in targets:
                copy[closing] = False
        elif isinstance(value, list):
            copy = list(value)
        else:
            return value
        made[id(value)] = copy
        return copy

    top = shell(root)
    stack = [(root, top)]
    while stack:
        original, copy = stack.pop()
        entries = original.items() if isinstance(original, dict) else enumerate(original)
        for key, value in entries:
            if isinstance(value, (dict, list)):
                inner = made.get(id(value))
                if inner is None:
                    inner = shell(value)
                    stack.append((value, inner))
                copy[key] = inner
    return top


def _pointers(root: Any, targets: dict[int, Any]) -> list[str]:
    """The JSON pointers of the target schemas (the first path found to each), in document order."""
    found: dict[int, str] = {}
    stack: list[tuple[Any, str]] = [(root, "#")]
    seen: set[int] = set()
    while stack:
        value, pointer = stack.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        if id(value) in targets and id(value) not in found:
            found[id(value)] = pointer
        if isinstance(value, dict):
            for key in reversed(list(value)):
                if isinstance(value[key], (dict, list)):
                    stack.append((value[key], f"{pointer}/{str(key).replace('~', '~0').replace('/', '~1')}"))
        elif isinstance(value, list):
            for index in range(len(value) - 1, -1, -1):
                if isinstance(value[index], (dict, list)):
                    stack.append((value[index], f"{pointer}/{index}"))
    return list(found.values())


__all__ = ["close_objects"]
