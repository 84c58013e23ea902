"""``format`` values as string content automata: dates and times, URIs and addresses, hostnames and IDNA,
``format: regex``, and the content automata they are built on (``formats/content.py``)."""

from ..ecma.parse import is_valid
from .patterns import FORMAT_MAX_LENGTH, FORMATS, format_matches

KNOWN_FORMATS: frozenset[str] = frozenset((*FORMATS, "regex", "idn-hostname", "idn-email"))
"""Format names enforced: patterns.py's (patterns and table-built automata), "regex" (ECMA-262 syntax,
regex_syntax.py), and the IDNA2008 ones (content automata of their own: idn.py, idn_email.py)."""


def matches(name: str, text: str) -> bool:
    """Whether ``text`` is a valid value of format ``name`` (its length cap aside)."""
    return is_valid(text) if name == "regex" else format_matches(name, text)


__all__ = ["FORMAT_MAX_LENGTH", "KNOWN_FORMATS", "matches"]
