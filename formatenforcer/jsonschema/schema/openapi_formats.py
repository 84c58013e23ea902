"""``format`` names whose meaning is not an automaton of the format layer: OpenAPI's aliases and formats that
constrain nothing in JSON text, and its number formats (read by the normalizer as bounds). Pure data, so the
schema stage can read it without importing the format grammars."""

from __future__ import annotations

from .format_checks import format_checks

FORMAT_ALIASES: dict[str, str] = {"url": "uri"}
"""Format names that mean another one exactly (``url``, common in OpenAPI documents, is a URI)."""

ANY_STRING_FORMATS = frozenset({"binary", "password"})
"""OpenAPI string formats that constrain nothing in JSON text: ``binary`` (any octets, as a string) and
``password`` (a hint to hide the input)."""

NUMBER_FORMATS: dict[str, tuple[int, int] | None] = {
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "float": None,
    "double": None,
}
"""OpenAPI number formats: ``int32``/``int64`` make a number an integer in the signed range of that width;
``float``/``double`` allow any JSON number (their precision is the reader's business, not the text's).
They apply to numbers only, as every format applies to the instances of its own type."""


def format_known(name: str) -> bool:
    """Whether formatenforcer knows what format ``name`` means (asserted, or known to constrain nothing)."""
    name = FORMAT_ALIASES.get(name, name)
    return name in format_checks().names or name in ANY_STRING_FORMATS or name in NUMBER_FORMATS
