"""``idn-hostname`` (RFC 5890-5893, IDNA2008): the content automaton over labels of raw Unicode (U-labels),
LDH labels and A-labels.

The pieces live apart: the rules of a whole label and name, and the witnesses that say whether a label being
written can still end (formats/idn/label.py); the A-label length arithmetic and the far bound
(formats/idn/length.py); the characters allowed by class (formats/idn/classes.py); the free runs and their
stand-ins (formats/idn/runs.py). This module puts them together.

A character may come next only when the label can still end validly after it (``viable``: at once, or after
one witness character), so a state reached through allowed characters always has a way on: no dead end.
Most characters are judged by class (``generic``). That is exact while the A-label of the label plus any one
more character and a witness is sure to fit (``label_far``: a bound by counts, then one on the label's own code
points, formats/idn/length.py). Nearer the limit, only characters in the 64-code-point
blocks of the label's own non-ASCII characters (and the witnesses) are offered, each checked exactly; other
valid labels are refused there (documented in docs/json-schema.md).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Hashable
from functools import lru_cache

from ....core.charset import EMPTY, CharSet
from ..content import Content, FreeContent
from .classes import (
    KERAIA,
    MIDDLE_DOT,
    backward_ok,
    composing_cut,
    ends_by_class,
    generic_set,
    refused_at,
    summary,
    union_of,
    zwnj_pending,
)
from .label import ASCII_CANDIDATES, LABEL_MAX, NAME_MAX, WITNESSES, Domain, ascii_shape, label_ends, viable
from .length import a_length_appended, bound_fits
from .runs import VAGUE, ends_vague, free_run, label_far, mixed_chars
from .tables import DOTS, tables

_MISSING = object()


@lru_cache(maxsize=4096)
def _near_candidates(generic: CharSet, blocks: frozenset[int]) -> tuple[str, ...]:
    """The characters of ``generic`` in the 64-code-point ``blocks`` and the non-ASCII witnesses (the ones
    checked one by one near the length limit; few distinct arguments recur, and the intersection walks
    every interval of ``generic``)."""
    near = generic & CharSet([(b << 6, (b << 6) + 63) for b in blocks] + [(ord(w), ord(w)) for w in WITNESSES[2:]])
    return tuple(near.chars())


_DIGIT_RUNS = ((0x660, 0x669), (0x6F0, 0x6F9))  # ARABIC-INDIC and EXTENDED ARABIC-INDIC DIGITs


def _digits_viable(label: str, done: int, domain: Domain, nfc: bool, exact: CharSet) -> str:
    """The Arabic-Indic digits of ``exact`` known to be viable after ``label`` from one check per run: when
    a whole run lies above every code point of the label and the label may end after its last digit, it
    may end after each of them. The digits of a run are alike for every rule (one bidi class, one CONTEXTO
    rule each, starters that compose with nothing and have no decomposition), and a character above every
    code point of a label is its last insertion in the A-label, whose delta, at a bias the label alone
    sets, grows with the code point (so do its digits): the length is largest for the last digit."""
    if not label:
        return ""
    top = ord(max(label))
    out = ""
    for first, last in _DIGIT_RUNS:
        if (
            top < first
            and exact.contains_interval(first, last)
            and backward_ok(label, chr(last))
            and label_ends(label + chr(last), done, domain, nfc) is not None
        ):
            out += "".join(map(chr, range(first, last + 1)))
    return out


class IdnHostnameContent(Content):
    """Content automaton of ``idn-hostname`` (and of ``idn-email``'s domain, with ``nfc=False``). State:
    (octets of the finished labels and their dots, Domain, the current label as written, blind) where blind
    says the label's last starter stands for any ASCII letter or digit (after a free run, which writes its
    characters as ``a``: the same length and rules, but NFC composition with what follows is unknown, so no
    composing character may follow), or is ``VAGUE`` after a mixed run (formats/idn/runs.py)."""

    __slots__ = ("nfc", "_memo", "_free_memo", "_mixed_ok")

    def __init__(self, nfc: bool = True) -> None:
        self.nfc = nfc
        self._memo: dict[Hashable, CharSet] = {}
        self._free_memo: dict[Hashable, FreeContent | None] = {}
        self._mixed_ok: dict[Hashable, bool] = {}

    def start(self) -> tuple[int, Domain, str, bool]:
        return (0, (False, False), "", False)

    def value_ident(self) -> Hashable:
        return ("idn-hostname", self.nfc)

    def step(self, state: tuple, ch: str) -> tuple | None:
        done, domain, label, blind = state
        vague = blind == VAGUE
        if ch in DOTS:
            if not label:
                return None
            ends = (ends_vague if vague else label_ends)(label, done, domain, self.nfc)
            if ends is None or done + ends[0] + 2 > NAME_MAX:
                return None  # no room for one more character after the dot
            return (done + ends[0] + 1, ends[1], "", False)
        t = tables()
        if blind and ch in t.composing:
            return None
        text = label + ch
        if vague and not self._far(state):
            # a stand-in past the far bound: only a dot, the end, or a witness that lets the label end
            if ch in WITNESSES and ends_vague(text, done, domain, self.nfc) is not None:
                return (done, domain, text, VAGUE)
            return None
        after = (done, domain, text, VAGUE if vague else blind and bool(unicodedata.combining(ch)))
        if not text.isascii() and self._far(state):
            return after if ch in self.allowed(state) else None  # decided by class (see _allowed)
        return after if viable(text, done, domain, self.nfc) else None

    def _far(self, state: tuple) -> bool:
        done, _, label, blind = state
        return label_far(label, blind == VAGUE, min(LABEL_MAX, NAME_MAX - done))

    def accepting(self, state: tuple) -> bool:
        done, domain, label, blind = state
        ends = ends_vague if blind == VAGUE else label_ends
        return bool(label) and ends(label, done, domain, self.nfc) is not None

    def charset_key(self, state: tuple) -> Hashable:
        done, domain, label, blind = state
        if label and (not label.isascii() or label.islower() and label[:4] != "xn--") and self._far(state):
            # ASCII labels apart: capitals are allowed there and nowhere else
            return ("far", domain, summary(label), blind, label.isascii())
        if len(label) >= 4 and label.isascii() and label.lower() != label and label[:4].lower() != "xn--":
            # a capital in: only ASCII characters and dots may follow, judged by the LDH rules, which read
            # the label's length and shape only (the walk meets many such labels, one per token)
            return ("ascii", done, domain, len(label), ascii_shape(label), blind == VAGUE)
        return state

    def allowed(self, state: tuple) -> CharSet:
        key = self.charset_key(state)
        hit = self._memo.get(key)
        if hit is None:
            if len(self._memo) > 50000:
                self._memo.clear()
            hit = self._memo[key] = self._allowed(state)
        return hit

    def _ok(self, state: tuple, ch: str) -> bool:
        return self.step(state, ch) is not None

    def _allowed(self, state: tuple) -> CharSet:
        done, domain, label, blind = state
        chars = [ch for ch in DOTS if label and self._ok(state, ch)]
        if blind == VAGUE and not self._far(state):
            return CharSet.of(chars + [w for w in WITNESSES if self._ok(state, w)])
        if not label or label.isascii():
            chars.extend(ch for ch in ASCII_CANDIDATES if self._ok(state, ch))
        else:
            letters = "l" if label.endswith(MIDDLE_DOT) else "abcdefghijklmnopqrstuvwxyz"
            if viable(label + letters[0], done, domain, self.nfc):
                chars.extend(letters)
            if viable(label + "0", done, domain, self.nfc):
                chars.extend("0123456789")
            if viable(label + "-", done, domain, self.nfc):
                chars.append("-")
        ascii_part = "".join(chars)
        if label.isascii() and (label[:4].lower() == "xn--" or label.lower() != label):
            return CharSet.of(ascii_part)
        if label.endswith(MIDDLE_DOT):
            return CharSet.of(ascii_part)
        t = tables()
        generic = self._generic(label, domain)
        exact = t.special
        if label.endswith(KERAIA):
            generic, exact = generic & t.greek, EMPTY
        elif zwnj_pending(label):
            generic, exact = generic & t.zwnj_follow, exact & t.zwnj_follow
        if label and (self.nfc or blind):
            starter = max(i for i, ch in enumerate(label) if i == 0 or not unicodedata.combining(ch))
            refused = None if blind else refused_at(label, starter)
            generic = composing_cut(generic, refused)
        sure = _digits_viable(label, done, domain, self.nfc, exact)
        picked = tuple(
            c for c in exact.chars() if c in sure or backward_ok(label, c) and viable(label + c, done, domain, self.nfc)
        )
        room = min(LABEL_MAX, NAME_MAX - done)
        if self._far(state):
            return union_of(ascii_part, generic, picked)
        candidates = _near_candidates(generic, frozenset(ord(ch) >> 6 for ch in label if not ch.isascii()))
        # one bound for them all: when any one of them surely fits, no A-label length is computed per character
        fits = bool(candidates) and bound_fits(label, (max(map(ord, candidates)),), room)
        picked += tuple(c for c in candidates if self._near_ok(state, c, room, fits))
        return CharSet.of(ascii_part + "".join(picked))

    def _generic(self, label: str, domain: Domain) -> CharSet:
        """The non-ASCII characters without a rule of their own that may follow ``label`` by class."""
        nfc_ccc = unicodedata.combining(label[-1]) if label and self.nfc else 0
        if not label:
            return generic_set(("", domain), nfc_ccc)
        first, numbers = summary(label)[:2]
        return generic_set((first, numbers if first in ("R", "AL") else None), nfc_ccc)

    def _near_ok(self, state: tuple, ch: str, room: int, fits: bool) -> bool:
        """A character the class rules allow after the label, near the length limit: the A-label with it
        must fit (known when ``fits``), and when the label cannot end right after it (a witness is needed),
        the exact check."""
        done, domain, label, _ = state
        text = label + ch
        if not fits and a_length_appended(label, ch) > room:
            return False
        return ends_by_class(text, domain) or viable(text, done, domain, self.nfc)

    def free(self, state: tuple) -> FreeContent | None:
        """The free run at ``state`` (formats/idn/runs.py), memoised per state."""
        hit = self._free_memo.get(state, _MISSING)
        if hit is _MISSING:
            if len(self._free_memo) > 50000:
                self._free_memo.clear()
            hit = self._free_memo[state] = free_run(state, self.nfc, self._mixed_fits)
        return hit  # type: ignore[return-value]

    def _mixed_fits(self, state: tuple) -> bool:
        """Whether every character of a mixed run is allowed at ``state`` (memoised per mask key)."""
        key = self.charset_key(state)
        fits = self._mixed_ok.get(key)
        if fits is None:
            fits = self._mixed_ok[key] = not (mixed_chars() - self.allowed(state))
        return fits
