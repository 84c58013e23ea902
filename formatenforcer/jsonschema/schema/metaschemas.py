"""The JSON Schema metaschemas as default documents for their well-known URIs.

A ``$ref`` to ``https://json-schema.org/draft/2020-12/schema`` (or a draft's vocabulary metaschemas, or
``http://json-schema.org/draft-07/schema``) is common: it constrains a value to be a schema. formatenforcer
never fetches documents, so these are read from the installed ``jsonschema-specifications`` package (the
metaschemas json-schema.org publishes, as data) when it is importable. A document passed in ``resources=``
under the same URI takes precedence. Without the package such a ``$ref`` is unsupported, and the error says
how to supply it (``missing_hint``).
"""

from __future__ import annotations

from typing import Any

WELL_KNOWN_PREFIXES = ("https://json-schema.org/draft/", "http://json-schema.org/draft-")
"""URIs under which json-schema.org publishes its metaschemas."""


def is_metaschema_uri(uri: str) -> bool:
    """Whether ``uri`` (without fragment) is one of json-schema.org's metaschema URIs."""
    return uri.startswith(WELL_KNOWN_PREFIXES)


def metaschema(uri: str) -> Any | None:
    """The metaschema published at ``uri`` (a dict), or None when ``jsonschema-specifications`` is not
    installed or does not hold that URI."""
    if not is_metaschema_uri(uri):
        return None
    try:
        from jsonschema_specifications import REGISTRY
    except ImportError:
        return None
    try:
        return REGISTRY.contents(uri)
    except LookupError:
        return None


def missing_hint(uri: str) -> str:
    """What to do about a ``$ref`` to ``uri`` that could not be resolved (for the error message)."""
    if not is_metaschema_uri(uri):
        return "a document not supplied in resources= (never fetched)"
    return ("a JSON Schema metaschema: install jsonschema-specifications (read at run time, never fetched) or "
            "pass the metaschema in resources= under that URI")  # fmt: skip


__all__ = ["WELL_KNOWN_PREFIXES", "is_metaschema_uri", "metaschema", "missing_hint"]
