"""Which JSON Schema dialect a resource is written in, and what that changes when reading it.

Each schema resource may name its dialect with ``$schema`` (a document's root, or a subschema with its own
``$id``); a resource without one is read in the dialect of the resource around it (a supplied document
without one, in the root's). So a draft-07 document ``$ref``'d from a 2020-12 root is read as draft-07:

- drafts 4, 6 and 7 ("legacy"): ``$ref`` replaces its siblings (``$id`` included), draft-04's ``id``
  names a resource;
- a dialect does not have the keywords later drafts introduced (``prefixItems`` in a 2019-09 resource,
  ``dependentRequired`` or ``unevaluatedProperties`` in a draft-07 one): they are unknown there, so
  annotations that constrain nothing.

Keywords that later drafts *dropped* (array-form ``items`` with ``additionalItems``, ``dependencies``,
``definitions``) are read in every dialect, as before: a 2020-12 schema using them gets what its author
meant. A resource with no ``$schema`` anywhere above it (dialect ``""``) is read with every keyword.
"""

from __future__ import annotations

from typing import Any

_AFTER_7 = frozenset(
    {"prefixItems", "dependentRequired", "dependentSchemas", "unevaluatedProperties", "unevaluatedItems",
     "minContains", "maxContains", "$anchor", "$dynamicRef", "$dynamicAnchor", "$recursiveRef", "$recursiveAnchor"}
)  # fmt: skip

_UNKNOWN: dict[str, frozenset[str]] = {
    "draft4": _AFTER_7 | {"if", "then", "else", "const", "contains", "propertyNames"},
    "draft6": _AFTER_7 | {"if", "then", "else"},
    "draft7": _AFTER_7,
    "2019-09": frozenset({"prefixItems", "$dynamicRef", "$dynamicAnchor"}),
    "2020-12": frozenset(),
    "": frozenset(),
}

_MARKERS = (("draft-03", "draft4"), ("draft-04", "draft4"), ("draft-06", "draft6"), ("draft-07", "draft7"),
            ("draft/2019-09", "2019-09"), ("draft/2020-12", "2020-12"))  # fmt: skip


def dialect_of(uri: Any) -> str | None:
    """The dialect a ``$schema`` value names (json-schema.org's metaschema URIs), None for any other value
    (a custom metaschema: the surrounding dialect applies)."""
    if not isinstance(uri, str):
        return None
    for marker, dialect in _MARKERS:
        if f"json-schema.org/{marker}" in uri:
            return dialect
    return None


def unknown_keywords(dialect: str) -> frozenset[str]:
    """Keywords that ``dialect`` does not have (introduced by later drafts): read as annotations there."""
    return _UNKNOWN[dialect]


def is_legacy(dialect: str) -> bool:
    """Drafts 4-7: ``$ref`` replaces its siblings; draft-04's ``id`` is an identifier."""
    return dialect in ("draft4", "draft6", "draft7")


__all__ = ["dialect_of", "is_legacy", "unknown_keywords"]
