"""``idn-hostname`` (RFC 5890-5893, IDNA2008): labels of raw Unicode (U-labels), LDH labels and A-labels.

A label is judged by ``label_end`` when it ends: ASCII labels by the LDH rules (an ``xn--`` one as an A-label,
formats_idna.py), others by the ``idna`` package's own checks (code point classes, CONTEXTJ/CONTEXTO rules, no
leading mark, hyphen rules, the bidi rule, NFC unless told otherwise), with a length limit of 63 octets on its
A-label form (``xn--`` + punycode) and 253 octets for the name. Across labels, RFC 5893's rule for a domain
holding a right-to-left label: then every label must satisfy the bidi rule (the state remembers whether an RTL
label has been seen and whether some label failed the rule).

A character may come next only when the label can still end validly after it: at once, or after one more
*witness* character (``WITNESSES``: ``a`` after a hyphen, ``l`` after a middle dot, Greek after a keraia, kana
after a katakana middle dot, a right-to-left letter to end a right-to-left label, a dual-joining letter after a
zero width non-joiner). The set of completions tried (the empty one and single characters) is closed under
suffixes, so a state reached through allowed characters always has a way on: no dead end.

Most characters are judged by class (``generic``): bidi class, mark or not, combining class. That is exact while
the A-label of the label plus any two more characters is sure to fit (``far``: a bound with the most punycode
digits a delta can take). Nearer the limit, only characters in the 64-code-point blocks of the label's own
non-ASCII characters (and the witnesses) are offered, each checked exactly; other valid labels are refused there
(documented in docs/json-schema.md).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Hashable
from functools import cache, lru_cache

import idna
from idna.core import check_bidi, check_hyphen_ok, check_initial_combiner, valid_contextj, valid_contexto
from idna.idnadata import codepoint_classes
from idna.intranges import intranges_contain

from ..charset import EMPTY, CharSet
from .content import Content, FreeContent
from .formats_idn_tables import DOTS, RTL, tables
from .formats_idna import Budget, _adapt, can_complete, decoding, valid_a_label_text, witness_fits

NAME_MAX = 253
LABEL_MAX = 63
WITNESSES = ("a", "l", "\u03b1", "\u3041", "\u05d0", "\u0628", "\u1820")
_LDH_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9-]*[a-z0-9])?")
_ASCII_CANDIDATES = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-"
_RUN = CharSet.ranges(("a", "z"), ("0", "9"))
_RUN_CAPITALS = CharSet.ranges(("a", "z"), ("A", "Z"), ("0", "9"))
_A_LABEL_RUN = _RUN_CAPITALS | CharSet.of("-")
_LETTERS = CharSet.ranges(("a", "z"))
_MISSING = object()
_RUN_CAP = 24
_MIXED_CAP = 32
_VAGUE = "vague"  # the blind flag of a stand-in after a mixed run (see IdnHostnameContent._mixed_run)
_REP = "\u10d0"  # GEORGIAN LETTER AN: left-to-right, not joining, no kana or Han, composes with nothing
_ZWNJ, _KERAIA, _MIDDLE_DOT, _KATAKANA_DOT = "\u200c", "\u0375", "\u00b7", "\u30fb"

# A domain state: (an RTL label seen, some label fails the bidi rule)
Domain = tuple[bool, bool]


def _digits(q: int, bias: int) -> int:
    """How many punycode digits the delta ``q`` takes after ``bias`` (RFC 3492 section 6.3)."""
    count, k = 0, 36
    while True:
        count += 1
        t = 1 if k <= bias else 26 if k >= bias + 26 else k - bias
        if q < t:
            return count
        q = (q - t) // (36 - t)
        k += 36


@lru_cache(maxsize=128)
def _most_digits(length: int) -> int:
    """The most digits one delta of a label of at most ``length`` characters can take, whatever the bias
    (a delta is below (highest code point + 1) * (length + 1) + (length + 1) ** 2)."""
    biggest = (tables().max_code_point + 1) * (length + 1) + (length + 1) ** 2
    return max(_digits(biggest, bias) for bias in range(0, 400))


def far_from_limit(label: str, room: int) -> bool:
    """Whether the A-label of ``label`` plus any two more characters surely fits in ``room`` octets:
    ``xn--``, the basic characters and their delimiter, at most ``_most_digits`` per other character."""
    basic = _basic_count(label)
    return _far(basic, len(label) - basic, room)


@lru_cache(maxsize=65536)
def _basic_count(label: str) -> int:
    return sum(ch.isascii() for ch in label)


@lru_cache(maxsize=65536)
def _far(basic: int, other: int, room: int) -> bool:
    return 5 + basic + 2 + (other + 2) * _most_digits(basic + other + 2) <= room


def a_length(label: str) -> int:
    """Octets of the label in the DNS: itself when ASCII, else its A-label (``xn--`` + punycode), counted by
    running RFC 3492's encoder without writing the digits (tests compare it with Python's codec)."""
    if label.isascii():
        return len(label)
    return _encoder_end(label)[0]


@lru_cache(maxsize=4096)
def _encoder_end(label: str) -> tuple[int, int, int, int, int]:
    """RFC 3492's encoder state after ``label`` (not ASCII): (octets of its A-label, delta, n, bias, code
    points handled)."""
    points = [ord(ch) for ch in label]
    basic = sum(cp < 128 for cp in points)
    out = 4 + basic + (1 if basic else 0)
    n, delta, bias, handled = 128, 0, 72, basic
    for m in sorted({cp for cp in points if cp >= 128}):
        delta += (m - n) * (handled + 1)
        for cp in points:
            if cp < m:
                delta += 1
            elif cp == m:
                out += _digits(delta, bias)
                bias = _adapt(delta, handled + 1, handled == basic)
                delta = 0
                handled += 1
        delta += 1
        n = m + 1
    return out, delta, n, bias, handled


def a_length_appended(label: str, ch: str) -> int:
    """``a_length(label + ch)``; when ``ch`` is above every code point of the (non-ASCII) label, the encoder
    only goes on from where the label left it: every earlier delta is unchanged, and ``ch``'s delta adds
    its distance times the handled count plus every earlier position (tests compare it with ``a_length``)."""
    if label.isascii() or ch.isascii():
        return a_length(label + ch)
    out, delta, n, bias, handled = _encoder_end(label)
    cp = ord(ch)
    if cp < n:
        return a_length(label + ch)
    delta += (cp - n) * (handled + 1) + len(label)
    return out + _digits(delta, bias)


def a_lengths_with_basics(label: str, most: int, room: int | None = None) -> list[int]:
    """``a_length(label + "a" * k)`` for ``k`` in ``0..most`` (``label`` not ASCII): the label's positions
    are read once (for each non-basic code point, how many smaller code points lie before each of its
    occurrences and after the last), then each ``k`` only replays the deltas, with ``k`` more basic code
    points at the end (tests compare it with ``a_length``). With ``room``, stops after the first length
    past it."""
    points = [ord(ch) for ch in label]
    basic = sum(cp < 128 for cp in points)
    plan = []
    for m in sorted({cp for cp in points if cp >= 128}):
        gaps, count = [], 0
        for cp in points:
            if cp < m:
                count += 1
            elif cp == m:
                gaps.append(count)
                count = 0
        plan.append((m, gaps, count))
    out = []
    for k in range(most + 1):
        total = 4 + basic + k + (1 if basic + k else 0)
        n, delta, bias, handled = 128, 0, 72, basic + k
        for m, gaps, trailing in plan:
            delta += (m - n) * (handled + 1)
            for gap in gaps:
                delta += gap
                total += _digits(delta, bias)
                bias = _adapt(delta, handled + 1, handled == basic + k)
                delta = 0
                handled += 1
            delta += trailing + k + 1
            n = m + 1
        out.append(total)
        if room is not None and total > room:
            break
    return out


def _backward_ok(label: str, ch: str) -> bool:
    """What a CONTEXTJ/CONTEXTO character needs of the characters before it (RFC 5892 appendix A): a cheap
    necessary test, so the exact check runs only for the ones that may pass."""
    last = label[-1:] or " "
    if ch == "\u200d":
        return unicodedata.combining(last) == 9
    if ch == _ZWNJ:
        return bool(label) and (unicodedata.combining(last) == 9 or any(
            c not in tables().joining.get("T", EMPTY) for c in label))
    if ch == _MIDDLE_DOT:
        return last == "l"
    if ch in "\u05f3\u05f4":
        return last in tables().hebrew
    if "\u0660" <= ch <= "\u0669":  # AN: only in a right-to-left label (RFC 5893 rules 1 and 5)
        return bool(label) and unicodedata.bidirectional(label[0]) in ("R", "AL") and not any(
            "\u06f0" <= c <= "\u06f9" for c in label)
    if "\u06f0" <= ch <= "\u06f9":
        return not any("\u0660" <= c <= "\u0669" for c in label)
    return True


def _u_rules_ok(label: str, nfc: bool) -> bool:
    """IDNA2008's rules for a U-label, read with ``idna``'s own checks (as idna.check_label, NFC optional;
    the code point classes from formats_idn_tables.py, which hold the same ranges)."""
    if nfc and not unicodedata.is_normalized("NFC", label):
        return False
    t = tables()
    try:
        check_hyphen_ok(label)
        check_initial_combiner(label)
        for pos, ch in enumerate(label):
            if ch.isascii():
                if not ("a" <= ch <= "z" or "0" <= ch <= "9" or ch == "-"):
                    return False
            elif ch not in t.allowed:
                return False
            elif ch in t.special:
                cp = ord(ch)
                if intranges_contain(cp, codepoint_classes["CONTEXTJ"]):
                    if not valid_contextj(label, pos):
                        return False
                elif intranges_contain(cp, codepoint_classes["CONTEXTO"]) and not valid_contexto(label, pos):
                    return False
        check_bidi(label)
    except (idna.IDNAError, ValueError):
        return False
    return True


def _bidi_facts(u_label: str) -> tuple[bool, bool]:
    """(holds an RTL character, satisfies the bidi rule as a label of a bidi domain must)."""
    is_rtl = any(unicodedata.bidirectional(ch) in RTL for ch in u_label)
    try:
        ok = check_bidi(u_label, check_ltr=True)
    except (idna.IDNAError, ValueError):
        ok = False
    return is_rtl, ok


@lru_cache(maxsize=65536)
def label_end(label: str, nfc: bool) -> tuple[int, bool, bool] | None:
    """(octets, is RTL, satisfies the bidi rule) of a complete label, or None when it is not valid."""
    if not label:
        return None
    if label.isascii():
        low = label.lower()
        if low.startswith("xn--"):
            text = low[4:]
            if not valid_a_label_text(text):
                return None
            state = decoding(text)
            return (len(label), *_bidi_facts("".join(map(chr, state[0]))))  # type: ignore[index]
        if len(label) > LABEL_MAX or _LDH_LABEL.fullmatch(low) is None or low[2:4] == "--":
            return None
        return len(label), False, low[0].isalpha()
    if any("A" <= ch <= "Z" for ch in label) or not _u_rules_ok(label, nfc):
        return None
    octets = a_length(label)
    return None if octets > LABEL_MAX else (octets, *_bidi_facts(label))


def after_label(domain: Domain, is_rtl: bool, bidi_ok: bool) -> Domain | None:
    """The domain state after a label (RFC 5893 section 2: in a domain with an RTL label, every label must
    satisfy the bidi rule), or None when that label breaks it."""
    seen, failed = domain
    if is_rtl and failed:
        return None
    seen = seen or is_rtl
    if seen and not bidi_ok:
        return None
    return seen, failed or not bidi_ok


def _ends(label: str, done: int, domain: Domain, nfc: bool) -> tuple[int, Domain] | None:
    """(octets, domain state after it) if ``label`` may end here, ``done`` octets into the name."""
    end = label_end(label, nfc)
    if end is None or done + end[0] > NAME_MAX:
        return None
    after = after_label(domain, end[1], end[2])
    return None if after is None else (end[0], after)


@lru_cache(maxsize=65536)
def viable(label: str, done: int, domain: Domain, nfc: bool) -> bool:
    """Whether ``label`` (nonempty) can still become a label that may end: at once, or after one witness
    (A-labels: formats_idna.py's witnesses; not begun in a domain already holding an RTL label, where those
    witnesses are not sure to satisfy the bidi rule)."""
    if label.isascii():
        low = label.lower()
        if low.startswith("xn--"):
            return not domain[0] and can_complete(low[4:], Budget(done + 4, 0, NAME_MAX))
        if low[0] == "-" or low[2:4] == "--" or not all(ch in _ASCII_CANDIDATES for ch in label):
            return False
        if domain[0] and not low[0].isalpha():
            return False  # a digit first fails the bidi rule a bidi domain requires
        room = min(LABEL_MAX, NAME_MAX - done)
        return len(label) <= room and (low[-1] != "-" or len(label) + 1 <= room)
    if any("A" <= ch <= "Z" for ch in label):
        return False
    return any(_ends(label + w, done, domain, nfc) is not None for w in ("", *WITNESSES))


def _ends_by_class(text: str, domain: Domain) -> bool:
    """Whether ``text``, whose last character the class rules allowed, may end as far as the rules that
    look ahead go (no pending katakana middle dot or non-joiner, a bidi-valid ending where one is needed);
    False only means "ask the exact check"."""
    if _KATAKANA_DOT in text and not any(ch in tables().kana_han for ch in text if ch != _KATAKANA_DOT):
        return False
    if _zwnj_pending(text):
        return False
    first = unicodedata.bidirectional(text[0])
    if first in ("R", "AL"):
        return unicodedata.bidirectional(text[-1]) in ("R", "AL", "EN", "AN")
    if first == "L" and domain[0]:
        return unicodedata.bidirectional(text[-1]) in ("L", "EN")
    return True


def _zwnj_pending(label: str) -> bool:
    """A zero width non-joiner not after a virama, followed so far by transparent characters only: the next
    other character must join to the right (RFC 5892 appendix A.1)."""
    at = label.rfind(_ZWNJ)
    if at < 0 or (at > 0 and unicodedata.combining(label[at - 1]) == 9):
        return False
    transparent = tables().joining.get("T", EMPTY)
    return all(ch in transparent for ch in label[at + 1 :])


@lru_cache(maxsize=65536)
def _summary(label: str) -> tuple:
    """What the characters allowed after ``label`` (nonempty, lowercase when ASCII) depend on while it is far
    from the length limit (``far_from_limit``): a key under which their set is computed once. The last
    starter and what follows it count only when a later character could compose with it under NFC."""
    t = tables()
    first = unicodedata.bidirectional(label[0])
    numbers = frozenset(b for b in map(unicodedata.bidirectional, label) if b in ("EN", "AN"))
    starter = max(i for i, ch in enumerate(label) if i == 0 or not unicodedata.combining(ch))
    last = label[-1]
    kind = ("virama" if unicodedata.combining(last) == 9 else last if last in "l-\u00b7\u0375"
            else "hebrew" if last in t.hebrew else "")  # fmt: skip
    return (
        first if first in ("L", "R", "AL") else "N",
        numbers,
        _refused_at(label, starter),
        kind,
        unicodedata.combining(last),
        # the xn-- prefix begun; a hyphen in position 3 (no hyphen may follow)
        label if label in ("x", "xn", "xn-") else len(label) == 3 and last == "-",
        any("\u0660" <= c <= "\u0669" for c in label),
        any("\u06f0" <= c <= "\u06f9" for c in label),
        _KATAKANA_DOT in label and not any(c in t.kana_han for c in label if c != _KATAKANA_DOT),
        _zwnj_pending(label),
        _joins_left(label),
        next((b for b in map(unicodedata.bidirectional, reversed(label)) if b != "NSM"), None),  # bidi ending
    )


def _joins_left(label: str) -> bool:
    """Whether a zero width non-joiner appended now would have a left-joining character before it (skipping
    transparent ones): the first half of RFC 5892 appendix A.1's regular expression."""
    joining = tables().joining
    for ch in reversed(label):
        if ch in joining.get("T", EMPTY):
            continue
        return ch in joining.get("L", EMPTY) or ch in joining.get("D", EMPTY)
    return False


class IdnHostnameContent(Content):
    """Content automaton of ``idn-hostname`` (and of ``idn-email``'s domain, with ``nfc=False``). State:
    (octets of the finished labels and their dots, Domain, the current label as written, blind) where blind
    says the label's last starter stands for any ASCII letter or digit (after a free run, which writes its
    characters as ``a``: the same length and rules, but NFC composition with what follows is unknown, so no
    composing character may follow)."""

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
        vague = blind == _VAGUE
        if ch in DOTS:
            if not label:
                return None
            ends = (_ends_vague if vague else _ends)(label, done, domain, self.nfc)
            if ends is None or done + ends[0] + 2 > NAME_MAX:
                return None  # no room for one more character after the dot
            return (done + ends[0] + 1, ends[1], "", False)
        t = tables()
        if blind and ch in t.composing:
            return None
        text = label + ch
        if vague and not self._far(state):
            # a stand-in past the far bound: only a dot, the end, or a witness that lets the label end
            if ch in WITNESSES and _ends_vague(text, done, domain, self.nfc) is not None:
                return (done, domain, text, _VAGUE)
            return None
        after = (done, domain, text, _VAGUE if vague else blind and bool(unicodedata.combining(ch)))
        if not text.isascii() and self._far(state):
            return after if ch in self.allowed(state) else None  # decided by class (see _allowed)
        return after if viable(text, done, domain, self.nfc) else None

    def _far(self, state: tuple) -> bool:
        done, _, label, _ = state
        return far_from_limit(label, min(LABEL_MAX, NAME_MAX - done))

    def accepting(self, state: tuple) -> bool:
        done, domain, label, blind = state
        ends = _ends_vague if blind == _VAGUE else _ends
        return bool(label) and ends(label, done, domain, self.nfc) is not None

    def charset_key(self, state: tuple) -> Hashable:
        done, domain, label, blind = state
        if label and (not label.isascii() or label.islower() and label[:4] != "xn--") and self._far(state):
            # ASCII labels apart: capitals are allowed there and nowhere else
            return ("far", domain, _summary(label), blind, label.isascii())
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
        if blind == _VAGUE and not self._far(state):
            return CharSet.of(chars + [w for w in WITNESSES if self._ok(state, w)])
        if not label or label.isascii():
            chars.extend(ch for ch in _ASCII_CANDIDATES if self._ok(state, ch))
        else:
            letters = "l" if label.endswith(_MIDDLE_DOT) else "abcdefghijklmnopqrstuvwxyz"
            if viable(label + letters[0], done, domain, self.nfc):
                chars.extend(letters)
            if viable(label + "0", done, domain, self.nfc):
                chars.extend("0123456789")
            if viable(label + "-", done, domain, self.nfc):
                chars.append("-")
        ascii_part = "".join(chars)
        if label.isascii() and (label[:4].lower() == "xn--" or label.lower() != label):
            return CharSet.of(ascii_part)
        if label.endswith(_MIDDLE_DOT):
            return CharSet.of(ascii_part)
        t = tables()
        generic = self._generic(label, domain)
        exact = t.special
        if label.endswith(_KERAIA):
            generic, exact = generic & t.greek, EMPTY
        elif _zwnj_pending(label):
            generic, exact = generic & t.zwnj_follow, exact & t.zwnj_follow
        if label and (self.nfc or blind):
            starter = max(i for i, ch in enumerate(label) if i == 0 or not unicodedata.combining(ch))
            refused = None if blind else _refused_at(label, starter)
            generic = _composing_cut(generic, refused)
        picked = tuple(
            c for c in exact.chars() if _backward_ok(label, c) and viable(label + c, done, domain, self.nfc)
        )
        room = min(LABEL_MAX, NAME_MAX - done)
        if far_from_limit(label, room):
            return _union_of(ascii_part, generic, picked)
        blocks = {ord(ch) >> 6 for ch in label if not ch.isascii()}
        near = generic & CharSet([(b << 6, (b << 6) + 63) for b in blocks] + [(ord(w), ord(w)) for w in WITNESSES[2:]])
        picked += tuple(c for c in near.chars() if self._near_ok(state, c, room))
        return CharSet.of(ascii_part + "".join(picked))

    def _generic(self, label: str, domain: Domain) -> CharSet:
        """The non-ASCII characters without a rule of their own that may follow ``label`` by class."""
        nfc_ccc = unicodedata.combining(label[-1]) if label and self.nfc else 0
        if not label:
            return _generic_set(("", domain), nfc_ccc)
        first, numbers = _summary(label)[:2]
        return _generic_set((first, numbers if first in ("R", "AL") else None), nfc_ccc)

    def _near_ok(self, state: tuple, ch: str, room: int) -> bool:
        """A character the class rules allow after the label, near the length limit: the A-label with it
        must fit, and when the label cannot end right after it (a witness is needed), the exact check."""
        done, domain, label, _ = state
        text = label + ch
        if a_length_appended(label, ch) > room:
            return False
        return _ends_by_class(text, domain) or viable(text, done, domain, self.nfc)

    def free(self, state: tuple) -> FreeContent | None:
        """Runs of ASCII lowercase letters and digits inside a left-to-right (or neutral) label: they all
        count the same in the A-label's length (basic code points) and follow the same rules there, so the
        state after ``n`` of them is the label with ``n`` ``a``s, blind to NFC composition (see the class
        notes), allowed while that label stays viable."""
        hit = self._free_memo.get(state, _MISSING)
        if hit is _MISSING:
            if len(self._free_memo) > 50000:
                self._free_memo.clear()
            hit = self._free_memo[state] = self._free(state)
        return hit  # type: ignore[return-value]

    def _free(self, state: tuple) -> FreeContent | None:
        done, domain, label, blind = state
        room = min(LABEL_MAX, NAME_MAX - done)
        if not label:  # letters only: a digit first makes a label of another bidi kind
            chars = _LETTERS if viable("a", done, domain, self.nfc) else None
            limit = room
        elif label[-1] in (_MIDDLE_DOT, _KERAIA) or _zwnj_pending(label):
            return None
        elif label.isascii():
            if label[:4].lower() == "xn--":
                return self._a_label_run(state)
            # once a capital is in, no non-ASCII character may follow: capitals change nothing more
            chars = _RUN if label.islower() or not any(c.isalpha() for c in label) else _RUN_CAPITALS
            limit = room - len(label) if viable(label + "a", done, domain, self.nfc) else 0
        elif unicodedata.bidirectional(label[0]) in ("R", "AL"):
            return None
        else:
            mixed = self._mixed_run(state, room)
            if mixed is not None:
                return mixed
            if blind == _VAGUE:
                chars, limit = _RUN, _ascii_room(label, done, domain, self.nfc, room, far_only=True)
            else:
                chars, limit = _RUN, _ascii_room(label, done, domain, self.nfc, room)
        if chars is None or limit <= 0:
            return None
        marker = _VAGUE if blind == _VAGUE else True
        return chars, limit, lambda n: state if n == 0 else (done, domain, label + "a" * n, marker)

    def _a_label_run(self, state: tuple) -> FreeContent | None:
        """Inside an ``xn--`` label, while the witness of any text of the length reached fits (formats_idna),
        every LDH character is allowed whatever it spells, so they run; the state after the run inside a
        token is a stand-in of the same length whose text (``?``) is no A-label: it refuses ending the label,
        so a token such as ``ab.`` is left out of that mask (``ab`` and then ``.`` are still offered)."""
        done, domain, label, _ = state
        if domain[0]:
            return None
        length = len(label) - 4
        budget = Budget(done + 4, 0, NAME_MAX)
        room = 0
        while witness_fits(length + room + 1, budget):
            room += 1
        if room == 0:
            return None
        return _A_LABEL_RUN, room, lambda n: state if n == 0 else (done, domain, "xn--" + "?" * (length + n), True)

    def _mixed_run(self, state: tuple, room: int) -> FreeContent | None:
        """Far from the limit in a left-to-right label: runs of ASCII letters and digits mixed with the
        non-ASCII characters every such label allows by class (``_mixed_chars``), as long as the label stays
        far whatever they are (each counted as non-basic). The state after a run cannot know its A-label
        length: it is a stand-in (``_VAGUE``) whose label holds ``_REP`` for the run, judged by the generic
        length bound (``_ends_vague``) and refusing everything but a dot or the end once past the far bound;
        its summary is as strict as any real one's (left-to-right, not joining, no kana, blind to NFC
        composition), so it accepts a subset of what the real state accepts (the FreeRun contract)."""
        done, domain, label, _ = state
        basic = _basic_count(label)
        other = len(label) - basic
        limit = 0
        while limit < _MIXED_CAP and _far(basic, other + limit, room):
            limit += 1
        if limit < 4:
            return None
        chars = _mixed_chars()
        key = self.charset_key(state)
        fits = self._mixed_ok.get(key)
        if fits is None:
            fits = self._mixed_ok[key] = not (chars - self.allowed(state))
        if not fits:
            return None
        return chars, limit, lambda n: state if n == 0 else (done, domain, label + _REP * n, _VAGUE)


@lru_cache(maxsize=65536)
def _ascii_room(label: str, done: int, domain: Domain, nfc: bool, room: int, far_only: bool = False) -> int:
    """How many ASCII letters and digits may follow ``label`` (non-ASCII, left-to-right or neutral) in a row:
    all of them count as basic code points, so the label with ``n`` of them has the A-label length of the
    label with ``n`` ``a``s. While the far bound allows 16 or more, that bound; else the exact A-label
    lengths up to ``_RUN_CAP`` (longer runs are left out of the mask, an approximation), counted up while
    the label could end after each one (so no run dead-ends; the rules other than the length are the same
    after every ``a``)."""
    basic = _basic_count(label)
    limit = 0
    while _far(basic + limit + 1, len(label) - basic, room):
        limit += 1
    if limit >= 16 or far_only or _ends(label + "a", done, domain, nfc) is None:
        return limit
    # not monotone: one more basic code point can shorten the punycode digits (the bias moves), so every
    # length is checked in turn and the run stops at the first that does not fit
    lengths = a_lengths_with_basics(label, min(room - len(label), _RUN_CAP), room)
    while limit + 1 < len(lengths) and lengths[limit + 1] <= room:
        limit += 1
    return limit


@cache
def _mixed_chars() -> CharSet:
    """ASCII lowercase letters and digits, and the non-ASCII characters any left-to-right label far from the
    limit allows by class: PVALID, bidi L, no mark, no combining class, none that may compose with what
    precedes (NFC quick check Maybe), none with a rule of its own."""
    t = tables()
    out = t.bidi.get("L", EMPTY) & t.allowed
    out = out - t.special - t.marks - t.composing - t.ccc_below(256)
    return out | _RUN


def _ends_vague(label: str, done: int, domain: Domain, nfc: bool) -> tuple[int, Domain] | None:
    """``_ends`` for a stand-in label (see ``_mixed_run``): the rules read on its text, the length taken as
    the generic bound (``xn--``, the basic characters and their delimiter, the most digits per other
    character), which no label with as many basic and other characters exceeds."""
    end = label_end(label, nfc)
    if end is None:
        return None
    basic = _basic_count(label)
    octets = 5 + basic + (len(label) - basic) * _most_digits(len(label))
    if octets > LABEL_MAX or done + octets > NAME_MAX:
        return None
    after = after_label(domain, end[1], end[2])
    return None if after is None else (octets, after)


@lru_cache(maxsize=256)
def _generic_set(key: tuple, nfc_ccc: int) -> CharSet:
    t = tables()
    out = t.allowed - t.special
    if key[0] == "":
        seen, failed = key[1]
        out = out - t.marks - t.bidi.get("AN", EMPTY)  # AN first: an RTL label not starting with R/AL
        if seen:
            out = out & t.first_in_bidi_domain
        if failed:
            out = out - t.rtl
    elif key[0] == "L" or key[0] == "N":
        out = out - t.rtl
    else:
        out = out & t.rtl_ok
        if "EN" in key[1]:
            out = out - t.bidi.get("AN", EMPTY)
        if "AN" in key[1]:
            out = out - t.bidi.get("EN", EMPTY)
    if nfc_ccc:
        out = out - t.ccc_below(nfc_ccc)
    return out


def _refused_at(label: str, starter: int) -> frozenset[str]:
    """``_refused_after`` the label's last starter (at ``starter``); none after a lone starter that
    composes with nothing (most characters)."""
    if starter == len(label) - 1 and label[starter] not in tables().firsts:
        return frozenset()
    return _refused_after(label[starter:])


@lru_cache(maxsize=65536)
def _refused_after(tail: str) -> frozenset[str]:
    """The composing characters (NFC quick check "Maybe") that may not follow ``tail`` (a starter and the
    marks after it) in NFC text: they would compose with it or be reordered. Few distinct values, so the
    allowed sets keyed by them are shared by many starters."""
    return frozenset(c for c in tables().composing.chars() if not unicodedata.is_normalized("NFC", tail + c))


@lru_cache(maxsize=4096)
def _composing_cut(generic: CharSet, refused: frozenset[str] | None) -> CharSet:
    """``generic`` without its composing characters (None: after a blind run, where what they would
    compose with is unknown), or without the ``refused`` ones only."""
    composing = generic & tables().composing
    if not composing:
        return generic
    if refused is None:
        return generic - composing
    cut = composing & CharSet.of(refused)
    return generic - cut if cut else generic


@lru_cache(maxsize=4096)
def _union_of(ascii_part: str, generic: CharSet, picked: tuple[str, ...]) -> CharSet:
    return generic | CharSet.of(ascii_part + "".join(picked))


def idn_hostname_ok(text: str, nfc: bool = True) -> bool:
    """Whether ``text`` is a valid idn-hostname (the automaton's language, judged directly)."""
    done, domain = 0, (False, False)
    labels = re.split(f"[{DOTS}]", text)
    for label in labels:
        ends = _ends(label, done, domain, nfc)
        if ends is None:
            return False
        done, domain = done + ends[0] + 1, ends[1]
    return done - 1 <= NAME_MAX
