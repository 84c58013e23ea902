"""Address formats as regular expressions, written from their RFCs: IPv4/IPv6 (RFC 3986 section 3.2.2),
``uri``/``uri-reference`` (RFC 3986), ``iri``/``iri-reference`` (RFC 3987), ``uri-template`` (RFC 6570).

Patterns avoid large positive Unicode classes (interegular expands them character by character): the
non-ASCII characters an IRI may hold are written as a negated class. What that class lets through beyond
RFC 3987's ``ucschar`` is listed in docs/json-schema.md (formats section).
"""

from __future__ import annotations

_HEX = "[0-9A-Fa-f]"
_H16 = rf"{_HEX}{{1,4}}"
_DEC_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])"
IPV4 = rf"{_DEC_OCTET}(?:\.{_DEC_OCTET}){{3}}"

# IRI: non-ASCII allowed except C1 controls and the BMP non-characters/specials (U+FDD0-FDEF, U+FFF0-FFFF)
_NON_ASCII_EXCLUDED = "\x80-\x9f\ufdd0-\ufdef\ufff0-\uffff"
_ASCII = [chr(c) for c in range(128)]
_CLASS_ESCAPES = set("\\]^-[")


def _render(chars: list[str]) -> str:
    """Class body for a set of characters: runs of consecutive code points as ranges."""
    codes = sorted(ord(c) for c in chars)
    runs: list[tuple[int, int]] = []
    for code in codes:
        if runs and runs[-1][1] == code - 1:
            runs[-1] = (runs[-1][0], code)
        else:
            runs.append((code, code))

    def one(code: int) -> str:
        ch = chr(code)
        return "\\" + ch if ch in _CLASS_ESCAPES else ch

    return "".join(one(a) if a == b else one(a) + ("-" if b > a + 1 else "") + one(b) for a, b in runs)


def char_class(allowed_ascii: str, non_ascii: bool) -> str:
    """``[...]`` of the given ASCII characters; with ``non_ascii``, also every non-ASCII character but the
    excluded ones (written as a negated class so the automaton's alphabet stays small)."""
    if not non_ascii:
        return "[" + _render(list(set(allowed_ascii))) + "]"
    refused = [c for c in _ASCII if c not in allowed_ascii]
    return "[^" + _render(refused) + _NON_ASCII_EXCLUDED + "]"


def _ipv6() -> str:
    """RFC 3986 IPv6address: the seven forms ending in ls32 share one ls32 (two pieces, or an IPv4 address),
    then the two forms ending in "::" or "::" h16. Sharing the tail keeps interegular's construction (and
    the automaton) smallest among the equivalent spellings tried."""
    h = _H16
    before_ls32 = [rf"(?:{h}:){{6}}", rf"::(?:{h}:){{5}}"]
    for after in range(4, -1, -1):  # [ *(4 - after)(h16 ":") h16 ] "::" after(h16 ":")
        head = rf"(?:(?:{h}:){{0,{4 - after}}}{h})?"
        before_ls32.append(rf"{head}::" + (rf"(?:{h}:){{{after}}}" if after else ""))
    return (
        rf"(?:(?:{'|'.join(before_ls32)})(?:{h}:{h}|{IPV4})"
        rf"|(?:(?:{h}:){{0,5}}{h})?::{h}|(?:(?:{h}:){{0,6}}{h})?::)"
    )


IPV6 = _ipv6()

_UNRESERVED = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
_SUB_DELIMS = "!$&'()*+,;="
_PCT = f"%{_HEX}{{2}}"


def uri_patterns(iri: bool) -> tuple[str, str]:
    """(absolute, reference) patterns: RFC 3986 ``URI`` and ``URI-reference``, or with ``iri`` RFC 3987's
    ``IRI`` and ``IRI-reference`` (the same grammar with non-ASCII characters allowed where ``iunreserved``
    is, and ``iprivate`` in the query)."""

    def chars(extra: str) -> str:
        return f"(?:{char_class(_UNRESERVED + extra, iri)}|{_PCT})"

    pchar = chars(_SUB_DELIMS + ":@")
    segment, segment_nz = f"{pchar}*", f"{pchar}+"
    segment_nz_nc = f"{chars(_SUB_DELIMS + '@')}+"
    userinfo = f"{chars(_SUB_DELIMS + ':')}*"
    reg_name = f"{chars(_SUB_DELIMS)}*"
    ip_future = rf"[vV]{_HEX}+\.{char_class(_UNRESERVED + _SUB_DELIMS + ':', False)}+"
    path_abempty = f"(?:/{segment})*"
    path_absolute = f"/(?:{segment_nz}(?:/{segment})*)?"
    path_rootless = f"{segment_nz}(?:/{segment})*"
    path_noscheme = f"{segment_nz_nc}(?:/{segment})*"
    tail = rf"(?:\?{chars(_SUB_DELIMS + ':@/?')}*)?(?:#{chars(_SUB_DELIMS + ':@/?')}*)?"
    scheme = r"[A-Za-z][A-Za-z0-9+.\-]*"
    port = "(?::[0-9]*)?"
    # authority = [ userinfo "@" ] host [ ":" port ]; host = IP-literal / IPv4address / reg-name, and an
    # IPv4address is also a reg-name. The IPv6 literal is its own top-level branch (with the whole tail):
    # nested inside host it would be re-crawled by every enclosing operator, doubling the compile time.
    ipv6_net_path = rf"//(?:{userinfo}@)?\[{IPV6}\]{port}{path_abempty}{tail}"
    net_path = rf"//(?:{userinfo}@)?(?:\[{ip_future}\]|{reg_name}){port}{path_abempty}"
    # path-absolute / path-rootless / path-empty in one: an optional "/", then segment-nz *( "/" segment )
    hier_absolute = f"{scheme}:(?:{net_path}|/?(?:{path_rootless})?){tail}"
    absolute = f"(?:{scheme}:{ipv6_net_path}|{hier_absolute})"
    relative = f"(?:{net_path}|{path_absolute}|{path_noscheme})?{tail}"
    return absolute, f"(?:(?:{scheme}:)?{ipv6_net_path}|{hier_absolute}|{relative})"


def _uri_template() -> str:
    """RFC 6570 section 2: literals and level-4 expressions. Literals also allow the apostrophe (a
    sub-delim; RFC 6570 erratum, and the JSON-Schema-Test-Suite counts it valid); the reserved operators
    ``= , ! @ |`` are refused (no level defines them)."""
    literal_ascii = "".join(chr(c) for c in range(0x21, 0x7F) if chr(c) not in '"%<>\\^`{|}')
    literal = f"(?:{char_class(literal_ascii, True)}|{_PCT})"
    varchar = f"(?:[A-Za-z0-9_]|{_PCT})"
    varname = rf"{varchar}(?:\.?{varchar})*"
    varspec = rf"{varname}(?::[1-9][0-9]{{0,3}}|\*)?"
    expression = rf"\{{[+#./;?&]?{varspec}(?:,{varspec})*\}}"
    return f"(?:{literal}|{expression})*"


URI_TEMPLATE = _uri_template()
JSON_POINTER = "(?:/(?:[^/~]|~[01])*)*"
RELATIVE_JSON_POINTER = f"(?:0|[1-9][0-9]*)(?:#|{JSON_POINTER})"
