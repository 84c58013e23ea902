"""``format`` values as regular expressions over the decoded string (enforced as assertions).

Each pattern is written for both interegular (the enforcing DFA) and Python's ``re`` (enum filtering), so it
uses only plain classes, groups and counted repetition. Known approximations, listed in the coverage doc:
leap seconds are accepted at any time of day; ``hostname`` does not cap the total length at 253.
"""

from __future__ import annotations

_D2 = r"[0-9]{2}"
_YEAR = r"[0-9]{4}"
_MONTH_DAY = (
    r"(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])"
    r"|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)"
    r"|02-(?:0[1-9]|1[0-9]|2[0-8]))"
)
_LEAP_YEAR = r"(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:0[48]|[2468][048]|[13579][26])00|0000)"
_DATE = rf"(?:{_YEAR}-{_MONTH_DAY}|{_LEAP_YEAR}-02-29)"
_OFFSET = r"(?:[Zz]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])"
_TIME = rf"(?:[01][0-9]|2[0-3]):[0-5][0-9]:(?:[0-5][0-9]|60)(?:\.[0-9]+)?{_OFFSET}"
# RFC 3339 appendix A: units are contiguous (no years-then-days without months), weeks stand alone
_TIME_PART = r"(?:[0-9]+H(?:[0-9]+M(?:[0-9]+S)?)?|[0-9]+M(?:[0-9]+S)?|[0-9]+S)"
_DATE_PART = r"(?:[0-9]+Y(?:[0-9]+M(?:[0-9]+D)?)?|[0-9]+M(?:[0-9]+D)?|[0-9]+D)"
_DURATION = rf"P(?:[0-9]+W|{_DATE_PART}(?:T{_TIME_PART})?|T{_TIME_PART})"
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOSTNAME = rf"{_LABEL}(?:\.{_LABEL})*"
_ATOM = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
_QUOTED = r'"(?:[^"\\\r\n]|\\[ -~])*"'
_HEX = "[0-9a-fA-F]"
_UUID = rf"{_HEX}{{8}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{12}}"
_URI_CHAR = r"(?:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})"
_URI = rf"[A-Za-z][A-Za-z0-9+.\-]*:{_URI_CHAR}*"
_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])"
_IPV4 = rf"{_OCTET}(?:\.{_OCTET}){{3}}"
_H16 = rf"{_HEX}{{1,4}}"
_LS32 = rf"(?:{_H16}:{_H16}|{_IPV4})"
_EMAIL_DOMAIN = "(?:" + _HOSTNAME + r"|\[" + _IPV4 + r"\])"  # an IPv6 literal makes the DFA too big


def _ipv6() -> str:
    # RFC 3986 IPv6address: n explicit groups after "::", at most 7 - n before it
    forms = [rf"(?:{_H16}:){{6}}{_LS32}", rf"::(?:{_H16}:){{5}}{_LS32}"]
    for after in range(4, -1, -1):
        before = 4 - after
        tail = rf"(?:{_H16}:){{{after}}}{_LS32}" if after else _LS32
        head = rf"(?:(?:{_H16}:){{0,{before}}}{_H16})?" if before else rf"(?:{_H16})?"
        forms.append(rf"{head}::{tail}")
    forms.append(rf"(?:(?:{_H16}:){{0,5}}{_H16})?::{_H16}")
    forms.append(rf"(?:(?:{_H16}:){{0,6}}{_H16})?::")
    return "(?:" + "|".join(forms) + ")"


_EMAIL = rf"(?:{_ATOM}(?:\.{_ATOM})*|{_QUOTED})@{_EMAIL_DOMAIN}"

FORMAT_PATTERNS: dict[str, str] = {
    "date-time": rf"{_DATE}[Tt]{_TIME}",
    "date": _DATE,
    "time": _TIME,
    "duration": _DURATION,
    "email": _EMAIL,
    "uuid": _UUID,
    "uri": _URI,
    "ipv4": _IPV4,
    "ipv6": _ipv6(),
    "hostname": _HOSTNAME,
}
"""Full-match patterns of the decoded string, one per supported format."""
