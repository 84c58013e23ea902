"""``idn-email`` (RFC 6531): a local part of RFC 5321's Dot-string or Quoted-string forms where any non-ASCII
character counts as text (``atext =/ UTF8-non-ascii``, ``qtextSMTP =/ UTF8-non-ascii``), at most 64 octets
(RFC 5321 section 4.5.3.1.1, UTF-8), then ``@`` and an ``idn-hostname`` domain (formats/idn/hostname.py). The domain is
not required to be in NFC (the test suite counts ``cafe\\u0301.com`` as valid: RFC 6531 leaves the mapping of
a domain to its U-labels to the resolver). Address literals (``[...]``) are not generated (refused).
"""

from __future__ import annotations

from collections.abc import Hashable

from ....core.charset import CharSet
from ..content import Content, FreeContent
from .hostname import IdnHostnameContent

LOCAL_MAX = 64
_ATEXT_ASCII = CharSet.of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+/=?^_`{|}~-")
_QTEXT_ASCII = CharSet([(32, 33), (35, 91), (93, 126)])
_PAIR = CharSet([(32, 126)])
_BY_OCTETS = (CharSet(), CharSet([(0x80, 0x7FF)]), CharSet([(0x80, 0xD7FF), (0xE000, 0xFFFF)]),
              CharSet([(0x80, 0xD7FF), (0xE000, 0x10FFFF)]))  # fmt: skip
"""Non-ASCII characters of at most 1, 2, 3, 4 UTF-8 octets (surrogates are not characters)."""

# local-part kinds: 0 nothing yet, 1 after atext, 2 after a dot, 3 inside quotes, 4 after a backslash there,
# 5 after the closing quote. NEED: octets still needed before "@" may come.
_NEED = (1, 0, 1, 1, 2, 0)


def _octets(ch: str) -> int:
    return len(ch.encode("utf-8", "surrogatepass"))


def _local_step(kind: int, ch: str) -> int | None:
    if kind in (0, 1, 2) and (ch in _ATEXT_ASCII or (ord(ch) >= 0x80 and ch in _BY_OCTETS[3])):
        return 1
    if kind == 0 and ch == '"':
        return 3
    if kind == 1 and ch == ".":
        return 2
    if kind == 3:
        if ch == "\\":
            return 4
        if ch == '"':
            return 5
        if ch in _QTEXT_ASCII or (ord(ch) >= 0x80 and ch in _BY_OCTETS[3]):
            return 3
    if kind == 4 and ch in _PAIR:
        return 3
    return None


class IdnEmailContent(Content):
    """State: ("l", kind, octets) in the local part, ("d", domain state) after the ``@``."""

    __slots__ = ("domain", "_memo")

    def __init__(self) -> None:
        self.domain = IdnHostnameContent(nfc=False)
        self._memo: dict[Hashable, CharSet] = {}

    def start(self) -> tuple:
        return ("l", 0, 0)

    def value_ident(self) -> Hashable:
        return ("idn-email",)

    def step(self, state: tuple, ch: str) -> tuple | None:
        if state[0] == "d":
            after = self.domain.step(state[1], ch)
            return None if after is None else ("d", after)
        _, kind, used = state
        if ch == "@" and kind in (1, 5):
            return ("d", self.domain.start())
        nxt = _local_step(kind, ch)
        if nxt is None:
            return None
        used += _octets(ch)
        return ("l", nxt, used) if used + _NEED[nxt] <= LOCAL_MAX else None

    def accepting(self, state: tuple) -> bool:
        return state[0] == "d" and self.domain.accepting(state[1])

    def allowed(self, state: tuple) -> CharSet:
        if state[0] == "d":
            return self.domain.allowed(state[1])
        hit = self._memo.get(state)
        if hit is None:
            hit = self._memo[state] = self._local_allowed(state)
        return hit

    def _local_allowed(self, state: tuple) -> CharSet:
        _, kind, used = state
        room = LOCAL_MAX - used
        out = CharSet.of("@") if kind in (1, 5) else CharSet()
        # a text character leads to kind 1 or 3, each needing one more octet at most (the closing quote)
        need = 0 if kind in (0, 1, 2) else 1
        budget = room - need
        if budget >= 1:
            if kind in (0, 1, 2):
                out = out | _ATEXT_ASCII | _BY_OCTETS[min(budget, 4) - 1]
            elif kind == 3:
                out = out | _QTEXT_ASCII | _BY_OCTETS[min(budget, 4) - 1]
            else:
                out = out | _PAIR
        if kind == 0 and room >= 2:
            out = out | CharSet.of('"')
        if kind == 1 and room >= 2:
            out = out | CharSet.of(".")
        if kind == 3:
            if room >= 1:
                out = out | CharSet.of('"')
            if room >= 3:
                out = out | CharSet.of("\\")
        return out

    def charset_key(self, state: tuple) -> Hashable:
        return ("d", self.domain.charset_key(state[1])) if state[0] == "d" else state

    def free(self, state: tuple) -> FreeContent | None:
        """Inside a dot-atom, ASCII atext runs while the 64 octets last (one octet each); in the domain,
        the domain's own runs."""
        if state[0] == "d":
            run = self.domain.free(state[1])
            if run is None:
                return None
            chars, limit, after = run
            return chars, limit, lambda n: ("d", after(n))
        if state[1] not in (1, 2):
            return None
        room = LOCAL_MAX - state[2]
        if room < 1:
            return None
        used = state[2]
        return _ATEXT_ASCII, room, lambda n: state if n == 0 else ("l", 1, used + n)


def idn_email_ok(text: str) -> bool:
    """Whether ``text`` is a valid idn-email (the automaton's language)."""
    content = IdnEmailContent()
    state = content.start()
    for ch in text:
        state = content.step(state, ch)
        if state is None:
            return False
    return content.accepting(state)
