"""``format`` values as regular expressions over the decoded string (enforced as assertions).

Each pattern is written from its RFC for both interegular (the enforcing DFA) and Python's ``re`` (enum
filtering), so it uses only plain classes, groups and counted repetition. Where the exact language would
make the automaton too large or too slow to build, the pattern departs from the RFC in a documented way;
docs/json-schema.md (Formats) lists every such case with each pattern's DFA size and compile time.
``time`` and ``date-time`` are exact but not written as patterns: a leap second's offset depends on the local
hour and minute, so their automata are written out state by state (formats/time.py, ``TABLE_FORMATS``).

- ``hostname``: its 253-character total, and ``email``'s 254 (RFC 5321's 256-octet path less the angle
  brackets), are length limits (``FORMAT_MAX_LENGTH``) enforced beside the DFA. Its ``xn--`` labels are
  checked as A-labels by formats/idn/a_labels.py beside the DFA (not when combined with a pattern: wider there).
- ``iri``/``iri-reference`` (wider): private-use, tag and plane-final code points are not excluded.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable
from functools import cache, lru_cache
from pathlib import Path

from ...parsers.regex import CompiledRegex, _from_disk, _to_disk, compile_regex
from .idn.a_labels import hostname_labels_ok
from .idn.email import idn_email_ok
from .idn.label import idn_hostname_ok
from .time import date_time_dfa, dfa_fullmatch, time_dfa
from .uri import IPV4, IPV6, JSON_POINTER, RELATIVE_JSON_POINTER, URI_TEMPLATE, uri_patterns

_YEAR = r"[0-9]{4}"
_MONTH_DAY = (
    r"(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])"
    r"|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)"
    r"|02-(?:0[1-9]|1[0-9]|2[0-8]))"
)
_LEAP_YEAR = r"(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:0[48]|[2468][048]|[13579][26])00|0000)"
_DATE = rf"(?:{_YEAR}-{_MONTH_DAY}|{_LEAP_YEAR}-02-29)"
# RFC 3339 appendix A: units are contiguous (no years-then-days without months), weeks stand alone
_TIME_PART = r"(?:[0-9]+H(?:[0-9]+M(?:[0-9]+S)?)?|[0-9]+M(?:[0-9]+S)?|[0-9]+S)"
_DATE_PART = r"(?:[0-9]+Y(?:[0-9]+M(?:[0-9]+D)?)?|[0-9]+M(?:[0-9]+D)?|[0-9]+D)"
_DURATION = rf"P(?:[0-9]+W|{_DATE_PART}(?:T{_TIME_PART})?|T{_TIME_PART})"
# RFC 1123 section 2.1: letters, digits, hyphens; 1-63 characters; no hyphen first or last
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOSTNAME = rf"{_LABEL}(?:\.{_LABEL})*"
# RFC 5321 section 4.1.2: Dot-string or Quoted-string (printable ASCII, backslash quoting printable ASCII)
_ATOM = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
_QUOTED = r'"(?:[ !#-\[\]-~]|\\[ -~])*"'
_LOCAL = rf"(?:{_ATOM}(?:\.{_ATOM})*|{_QUOTED})"
# RFC 5321 section 4.1.2 Domain: sub-domain = Let-dig [Ldh-str], no per-label length in its ABNF (DNS's 63 is
# not applied: counting it here doubled the compile time). Section 4.1.3 address literals (the
# General-address-literal form is not accepted). One top-level branch per domain form: a nested domain group
# takes about 1.5 times as long to compile.
_SUB_DOMAIN = r"[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_DOMAIN = rf"{_SUB_DOMAIN}(?:\.{_SUB_DOMAIN})*"
_EMAIL = rf"(?:{_LOCAL}@{_DOMAIN}|{_LOCAL}@\[{IPV4}\]|{_LOCAL}@\[IPv6:{IPV6}\])"
_HEX = "[0-9a-fA-F]"
_UUID = rf"{_HEX}{{8}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{12}}"
_URI, _URI_REFERENCE = uri_patterns(iri=False)
_IRI, _IRI_REFERENCE = uri_patterns(iri=True)

# RFC 4648 section 4: the base64 alphabet in groups of four, the last group padded with "=" (OpenAPI's "byte")
_BASE64 = r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?"

FORMAT_PATTERNS: dict[str, str] = {
    "byte": _BASE64,
    "date": _DATE,
    "duration": _DURATION,
    "email": _EMAIL,
    "uuid": _UUID,
    "uri": _URI,
    "uri-reference": _URI_REFERENCE,
    "iri": _IRI,
    "iri-reference": _IRI_REFERENCE,
    "uri-template": URI_TEMPLATE,
    "json-pointer": JSON_POINTER,
    "relative-json-pointer": RELATIVE_JSON_POINTER,
    "ipv4": IPV4,
    "ipv6": IPV6,
    "hostname": _HOSTNAME,
}
"""Full-match patterns of the decoded string, one per supported format but those in ``TABLE_FORMATS``."""

TABLE_FORMATS: dict[str, Callable[[], CompiledRegex]] = {
    "time": time_dfa,
    "date-time": lambda: date_time_dfa(_DATE),
}
"""Formats whose automaton is built from a table (formats/time.py): RFC 3339's leap-second rule."""

FORMATS: tuple[str, ...] = (*FORMAT_PATTERNS, *TABLE_FORMATS)
"""Every supported format name."""


def format_automaton(name: str) -> str | CompiledRegex:
    """What enforces format ``name``: its pattern, or its table-built automaton (``dfa_ops.combine`` takes
    either)."""
    return FORMAT_PATTERNS[name] if name not in TABLE_FORMATS else _tabled(name)


@cache
def _tabled(name: str) -> CompiledRegex:
    """A table-built format automaton, loaded when first stepped (``_LazyTabled``)."""
    return _LazyTabled(name)


class _LazyTabled(CompiledRegex):
    """``time``/``date-time``: ~11,000 states, 0.3 s to write out and ~6 ms to read back from the on-disk
    automaton cache. A schema that names the format but whose first mask never reaches such a string should
    not pay that in its time to first mask, so the tables are read at the first attribute that needs them.
    Only ``pattern`` and ``ident`` (the cache key: it holds a digest of formats/time.py, so a change to the
    tables is never served from a stale file) exist before that."""

    def __init__(self, name: str) -> None:  # noqa: D107 - CompiledRegex's own __init__ is not wanted here
        self.pattern = self.ident = f"\x00format:{name}:{_tables_digest()}"
        self._table_name = name

    def __getattr__(self, attribute: str):  # noqa: ANN204 - whatever CompiledRegex holds
        if attribute.startswith("__") or "transitions" in self.__dict__:
            raise AttributeError(attribute)
        compiled = _from_disk(self.pattern)
        if compiled is None:
            compiled = CompiledRegex(self.pattern, parts=TABLE_FORMATS[self._table_name]().parts())
            _to_disk(compiled)
        self.__dict__.update({k: v for k, v in vars(compiled).items() if k not in ("pattern", "ident")})
        return getattr(self, attribute)


@cache
def _tables_digest() -> str:
    import hashlib

    from . import time as formats_time

    return hashlib.sha256(Path(formats_time.__file__).read_bytes()).hexdigest()[:16]


@lru_cache(maxsize=64)
def _pattern(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def format_matches(name: str, text: str) -> bool:
    """Whether ``text`` is a valid ``name`` (its length cap aside): filters ``enum``/``const`` values."""
    if name in IDN_FORMATS:
        return IDN_FORMATS[name](text)
    if name in TABLE_FORMATS:
        return dfa_fullmatch(_tabled(name), text)
    if _pattern(FORMAT_PATTERNS[name]).fullmatch(text) is None:
        return False
    return name != "hostname" or hostname_labels_ok(text)


IDN_FORMATS: dict[str, Callable[[str], bool]] = {"idn-hostname": idn_hostname_ok, "idn-email": idn_email_ok}
"""Formats enforced by content automata of their own (formats/idn/hostname.py, formats/idn/email.py), not by a DFA: they
take no ``pattern``, other format, ``not`` or length limit on the same string."""

FORMAT_MAX_LENGTH: dict[str, int] = {"hostname": 253, "email": 254}  # RFC 1123 + 1035; RFC 5321 4.5.3.1.3
"""Length limits (characters) a format adds to its pattern: kept out of the DFA, where a total-length count
times the per-label count would multiply the states."""

UNSUPPORTED_FORMATS: dict[str, str] = {}
"""Standard formats that are refused (UnsupportedSchemaError), with the reason; any other name is unknown.
(None left: ``idn-hostname``/``idn-email`` are content automata of their own, formats/idn/hostname.py.)"""


def precompile_formats(names: Iterable[str] | None = None) -> dict[str, float]:
    """Builds the automata of the given formats (default: all) into the per-process regex cache, so the first
    schema that uses one does not pay for it (uri/iri/email take from 0.5 s up to about 2 s, see
    docs/json-schema.md). Returns the seconds spent per format (about 0 for one already built)."""
    spent: dict[str, float] = {}
    for name in FORMATS if names is None else names:
        start = time.perf_counter()
        automaton = format_automaton(name)
        if isinstance(automaton, str):
            compile_regex(automaton)
        else:
            automaton.transitions  # noqa: B018 - a table-built automaton is read at first use (_LazyTabled)
        spent[name] = time.perf_counter() - start
    return spent
