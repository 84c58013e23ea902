"""A-labels (``xn--...``) of ``hostname``: punycode decoded as the label is written, IDNA2008 at its end.

RFC 5890-5892 make an ``xn--`` label valid only when its punycode (RFC 3492) decodes to a U-label that IDNA2008
allows (code points PVALID or satisfying their CONTEXTJ/CONTEXTO rule, no leading combining mark, no ``--`` in
positions 3-4, the bidi rule, NFC) and whose canonical encoding is the label itself (RFC 5891 section 5.3).
That whole-label test (``valid_a_label_text``: this module's punycode decoder, then the ``idna`` package's
``check_label``; tests compare it with ``idna.ulabel``) decides whether the label may *end*.

What must also hold is that every character offered can still be completed into a valid label within the
63-character label limit and the string's length limits. The argument: whatever the text after ``xn--`` is
(``P``, letters, digits and hyphens), a hyphen makes all of it the basic part, and then deltas inserting
``à`` (U+00E0) around it give a valid U-label: ``ààà`` + ``P`` + ``à`` always passes (it starts and ends
with a letter, its positions 3-4 hold no ``--``, ``à`` has no contextual or bidi rule), often a shorter choice
does. So a character is allowed when such a *witness* ``P + "-" + deltas`` fits; near the limits, when the
witness of some earlier prefix still continues the text. The set of completions tried is closed under
prefixes (a witness found for ``P`` is still found for each longer prefix of it), so a state reached through
allowed characters always has a way on: no dead end. Near the limits other valid A-labels are refused
(documented in docs/json-schema.md).
"""

from __future__ import annotations

from collections.abc import Hashable
from functools import lru_cache

import idna
from idna.core import intranges_contain
from idna.idnadata import codepoint_classes

from ....core.charset import CharSet
from ..content import Content, FreeContent, RegexContent

_BASE, _TMIN, _TMAX, _SKEW, _DAMP = 36, 1, 26, 38, 700  # RFC 3492 section 5
_LABEL_MAX = 63
_PREFIX = "xn--"
_ALLOWED_CLASSES = [codepoint_classes[name] for name in ("PVALID", "CONTEXTJ", "CONTEXTO")]
_LDH = "abcdefghijklmnopqrstuvwxyz0123456789-"
_WITNESS_SHAPES = ((1, 0), (0, 1), (1, 1), (2, 1), (3, 1))  # (à before, à after) the basic part
_FILLER = "\u00e0"
_STAND_IN = "xn--?"


def _adapt(delta: int, points: int, first: bool) -> int:
    delta = delta // _DAMP if first else delta // 2
    delta += delta // points
    k = 0
    while delta > ((_BASE - _TMIN) * _TMAX) // 2:
        delta //= _BASE - _TMIN
        k += _BASE
    return k + ((_BASE - _TMIN + 1) * delta) // (delta + _SKEW)


def _digit(ch: str) -> int:
    return ord(ch) - 97 if ch >= "a" else ord(ch) - 22  # a-z: 0-25, 0-9: 26-35


# A decoding state: (output code points, n, i, bias, varint) with varint = (old_i, w, k) while a delta is
# being read, or None (the text may end here). ERROR: no continuation without another hyphen can be valid
# (a code point IDNA2008 never allows was inserted, or the code point would pass U+10FFFF).
Decoding = tuple[tuple[int, ...], int, int, int, "tuple[int, int, int] | None"]
ERROR = None


@lru_cache(maxsize=65536)
def decoding(text: str) -> Decoding | None:
    """The punycode decoding of ``text`` (lowercase, after ``xn--``) read with its last hyphen as the
    delimiter, built from the decoding of ``text[:-1]`` (memoised: a label is decoded once per character)."""
    if not text:
        return ((), 128, 0, 72, None)
    last = text[-1]
    if last == "-":
        return (tuple(map(ord, text[:-1])), 128, 0, 72, None)
    before = decoding(text[:-1])
    if before is ERROR:
        return ERROR
    out, n, i, bias, varint = before
    old_i, w, k = (i, 1, _BASE) if varint is None else varint
    i += _digit(last) * w
    t = _TMIN if k <= bias else _TMAX if k >= bias + _TMAX else k - bias
    if n + i // (len(out) + 1) > 0x10FFFF:
        return ERROR  # i only grows while this delta is read
    if _digit(last) >= t:
        return (out, n, i, bias, (old_i, w * (_BASE - t), k + _BASE))
    size = len(out) + 1
    bias = _adapt(i - old_i, size, old_i == 0)
    n += i // size
    i %= size
    if not any(intranges_contain(n, ranges) for ranges in _ALLOWED_CLASSES):
        return ERROR  # later deltas only insert: this code point stays in the label
    return (out[:i] + (n,) + out[i:], n, i + 1, bias, None)


@lru_cache(maxsize=65536)
def valid_a_label_text(text: str) -> bool:
    """Whether ``xn--`` + ``text`` (lowercase) is a valid A-label (RFC 5891 section 5.3-5.4)."""
    state = decoding(text)
    if state is ERROR or state[4] is not None or not text or text.endswith("-"):
        return False
    out = state[0]
    if out[0] == 45 or out[-1] == 45 or out[2:4] == (45, 45) or all(c < 128 for c in out):
        return False  # hyphen rules, or no non-ASCII character: cheap tests before the full one
    if text.rfind("-") == 0:
        return False  # an empty basic part is written without a delimiter: "-abc" is not canonical
    # The RFC 3492 decoder above only yields canonical spellings otherwise (deltas come in increasing code
    # point and position order, each number has one spelling), so RFC 5891 section 5.3's re-encoding test
    # is not repeated; tests compare this function with idna.ulabel on random labels.
    try:
        idna.check_label("".join(map(chr, out)))
    except (idna.IDNAError, UnicodeError, ValueError):
        return False
    return True


def hostname_labels_ok(text: str) -> bool:
    """Every ``xn--`` label of a hostname is a valid A-label (the rest is the hostname pattern's job)."""
    return all(valid_a_label_text(label[4:].lower()) for label in text.split(".") if label[:4].lower() == _PREFIX)


def _suffixes() -> dict[tuple[int, tuple[int, int]], str]:
    """The deltas of each witness shape per basic-part length. They depend on positions and lengths only
    (every basic code point is below U+0080), so one encoding per (length, shape) serves every text."""
    table = {}
    for length in range(_LABEL_MAX - len(_PREFIX) + 1):
        for before, after in _WITNESS_SHAPES:
            encoded = (_FILLER * before + "a" * length + _FILLER * after).encode("punycode").decode("ascii")
            table[(length, (before, after))] = encoded[length + (1 if length else 0) :]
    return table


_SUFFIXES = _suffixes()
WITNESS_EXTRA = max(len(suffix) for suffix in _SUFFIXES.values()) + 1


@lru_cache(maxsize=65536)
def witness(text: str) -> str | None:
    """The shortest ``text + "-" + deltas`` inserting ``à`` around ``text`` (the basic part) that is a valid
    A-label. Such a U-label (``à`` and lowercase letters, digits, hyphens) can only break the hyphen rules, so
    those are all that is checked here; the tests check the witnesses against ``idna.ulabel``."""
    if len(text) > _LABEL_MAX - len(_PREFIX):
        return None
    best = None
    for before, after in _WITNESS_SHAPES:
        u_label = _FILLER * before + text + _FILLER * after
        if u_label[0] == "-" or u_label[-1] == "-" or u_label[2:4] == "--":
            continue
        suffix = _SUFFIXES[(len(text), (before, after))]
        if best is None or len(suffix) < len(best):
            best = suffix
    return None if best is None else (text + "-" if text else "") + best


class Budget:
    """Where a label's text (after ``xn--``) may end: ``start`` characters precede it in the string, the
    string holds ``low`` to ``high`` characters, and more labels (``.a`` and longer) may follow."""

    __slots__ = ("start", "low", "high")

    def __init__(self, start: int, low: int, high: int | None) -> None:
        self.start, self.low, self.high = start, low, high

    def fits(self, length: int) -> bool:
        return self.fits_all(length, length)

    def fits_all(self, shortest: int, longest: int) -> bool:
        """Whether the label's text may end after each of ``shortest``..``longest`` characters: within the
        label limit and ``high``, and not in ``[high - 1, low - 1]`` (too short, with no room for ``.a``)."""
        if len(_PREFIX) + longest > _LABEL_MAX:
            return False
        if self.high is None:
            return True
        first, last = self.start + shortest, self.start + longest
        return last <= self.high and (last < self.high - 1 or first > self.low - 1)

    def longest(self) -> int:
        limit = _LABEL_MAX - len(_PREFIX)
        return limit if self.high is None else min(limit, self.high - self.start)


def witness_fits(length: int, budget: Budget) -> bool:
    """Whether the witness of any text of ``length`` characters fits (it adds 1 to WITNESS_EXTRA)."""
    return budget.fits_all(length + 1, length + WITNESS_EXTRA)


def can_complete(text: str, budget: Budget) -> bool:
    """Whether ``xn--`` + ``text`` can still become a valid A-label within ``budget``, judged on a set of
    completions closed under prefixes (see the module notes): the witness of ``text`` or of an earlier
    prefix that ``text`` continues. (Accepting any text that is itself a valid label as well would admit more
    near the limits, but costs a full label check per character at every trie node there.) The witness of
    ``text`` always exists (tested), so with room for it nothing is computed."""
    if witness_fits(len(text), budget):
        return True
    # a witness of a shorter prefix Q is Q + "-" + deltas (or deltas alone for Q = ""), at most
    # WITNESS_EXTRA characters longer than Q
    for cut in range(len(text), max(len(text) - WITNESS_EXTRA, 0) - 1, -1):
        if 0 < cut < len(text) and text[cut] != "-":
            continue
        found = witness(text[:cut])
        if found is not None and found.startswith(text) and budget.fits(len(found)):
            return True
    return False


def _next_characters(text: str, budget: Budget) -> str:
    """The LDH characters ``c`` with ``can_complete(text + c, budget)``, found at once: the own witness of
    ``text + c`` depends on ``c`` only through whether it is a hyphen, and an earlier prefix's witness names
    its one next character."""
    out = set()
    for probe in "a-":
        found = witness(text + probe)
        if found is not None and budget.fits(len(found)):
            out.update(_LDH[:-1] if probe == "a" else "-")
    for cut in range(len(text), max(len(text) + 1 - WITNESS_EXTRA, 0) - 1, -1):
        if 0 < cut < len(text) and text[cut] != "-":
            continue
        found = witness(text[:cut])
        if found is not None and len(found) > len(text) and found.startswith(text) and budget.fits(len(found)):
            out.add(found[len(text)])
    return "".join(sorted(out))


class HostnameContent(Content):
    """The hostname pattern's automaton (with its length limits) plus the A-label rule. State:
    (regex state, label) where label is the current label's text while it may still be or become an A-label
    (lowercase: ``""``, ``"x"``, ``"xn"``, ``"xn-"``, or ``"xn--..."``), None once it cannot, or
    ``("xn--?", length)`` in the stand-in states ``free`` hands out."""

    __slots__ = ("regex",)

    def __init__(self, regex: RegexContent) -> None:
        self.regex = regex

    def start(self) -> tuple[Hashable, str | None]:
        return (self.regex.start(), "")

    def _next_label(self, label: str | None, ch: str) -> str | None:
        if label is None:
            return None
        text = label + ch.lower()
        return text if text.startswith(_PREFIX) or _PREFIX.startswith(text) else None

    def _budget(self, regex_state: Hashable, label: str) -> Budget:
        count = regex_state[1]  # type: ignore[index]
        return Budget(count - (len(label) - len(_PREFIX)), self.regex.low, self.regex.high)

    def step(self, state: tuple, ch: str) -> tuple | None:
        regex_state, label = state
        after = self.regex.step(regex_state, ch)
        if after is None:
            return None
        if isinstance(label, tuple):  # a stand-in (see free): LDH characters while any witness fits
            length = label[1]
            budget = Budget(after[1] - length - 1, self.regex.low, self.regex.high)
            if ch == "." or not witness_fits(length + 1, budget):
                return None
            return (after, (_STAND_IN, length + 1))
        if ch == ".":
            if label is not None and label.startswith(_PREFIX) and not valid_a_label_text(label[4:]):
                return None
            return (after, "")
        nxt = self._next_label(label, ch)
        if nxt is not None and nxt.startswith(_PREFIX) and not can_complete(nxt[4:], self._budget(after, nxt)):
            return None
        return (after, nxt)

    def _refused(self, state: tuple) -> tuple[str, ...]:
        """The characters the regex allows here that the A-label rule refuses (most often none)."""
        regex_state, label = state
        if isinstance(label, tuple):
            length = label[1]
            if witness_fits(length + 1, Budget(regex_state[1] - length, self.regex.low, self.regex.high)):
                return (".",)
            return tuple(".ABCDEFGHIJKLMNOPQRSTUVWXYZ" + _LDH)
        if label is None or not (label.startswith(_PREFIX) or label == "xn-"):
            return ()
        base = self.regex.allowed(regex_state)
        if label == "xn-":
            return ("-",) if "-" in base and self.step(state, "-") is None else ()
        text = label[4:]
        refused = [] if "." not in base or valid_a_label_text(text) else ["."]
        budget = self._budget(regex_state, label)
        if not witness_fits(len(text) + 1, budget):
            ok = _next_characters(text, budget)
            for ch in _LDH:
                if ch in base and ch not in ok:
                    refused.extend((ch, ch.upper()) if ch.isalpha() else (ch,))
        return tuple(refused)

    def charset_key(self, state: tuple) -> Hashable:
        return (state[0], self._refused(state))

    def allowed(self, state: tuple) -> CharSet:
        base = self.regex.allowed(state[0])
        refused = self._refused(state)
        return base - CharSet.of(refused) if refused else base

    def accepting(self, state: tuple) -> bool:
        regex_state, label = state
        if not self.regex.accepting(regex_state) or isinstance(label, tuple):
            return False
        return label is None or not label.startswith(_PREFIX) or valid_a_label_text(label[4:])

    def value_ident(self) -> Hashable:
        return ("hostname-idna", self.regex.value_ident())

    def far_state(self, state: tuple, horizon: int) -> Hashable | None:
        regex_state, label = state
        if label is not None:
            return None
        far = self.regex.far_state(regex_state, horizon + WITNESS_EXTRA + 4)
        return None if far is None else (far, None)

    def free(self, state: tuple) -> FreeContent | None:
        """Plain labels: the regex's run. Inside an A-label, while witnesses fit, any LDH characters are
        allowed whatever they spell, so the regex's run is offered up to that room, and what follows the run
        inside a token is checked from a stand-in that knows the label's length but not its text: it refuses
        ending the label (which depends on the text), so a token such as ``ab.`` is left out of that mask
        (FreeRun allows a stand-in to accept less); ``ab`` and then ``.`` are still offered."""
        regex_state, label = state
        if label is not None and not (isinstance(label, str) and label.startswith(_PREFIX)):
            return None
        run = self.regex.free(regex_state)
        if run is None or "." in run[0]:
            return None
        chars, limit, after = run
        if label is None:
            return chars, limit, lambda n: (after(n), None)
        length = len(label) - len(_PREFIX)
        budget = self._budget(regex_state, label)
        room = 0
        while (limit is None or room < limit) and witness_fits(length + room + 1, budget):
            room += 1
        if room == 0:
            return None
        return chars, room, lambda n: state if n == 0 else (after(n), (_STAND_IN, length + n))

    def first_char_split(self, state: tuple) -> tuple[Hashable, bytes] | None:
        """At a label's start only ``x``/``X`` can begin an A-label: every other first character leads
        where the plain-label twin leads."""
        regex_state, label = state
        if label != "":
            return None
        return (regex_state, None), b"xX"
