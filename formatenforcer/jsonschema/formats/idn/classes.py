"""Which non-ASCII characters may follow an ``idn-hostname`` label, judged by class rather than one by one.

Most characters differ only by bidi class, by being a mark, and by their canonical combining class, so while
the label is far from the length limit (formats/idn/length.py) the characters allowed after it depend only on
a few facts about it (``summary``) and are a few set operations on formats/idn/tables.py's classes
(``generic_set``, less the composing characters NFC refuses after its last starter: ``composing_cut``). The
characters with rules of their own (CONTEXTJ/CONTEXTO) are picked apart: ``backward_ok`` is a cheap
necessary test of what they need before them, so the exact check runs only for the ones that may pass.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

from ....core.charset import EMPTY, CharSet
from .label import Domain
from .tables import tables

ZWNJ, KERAIA, MIDDLE_DOT, KATAKANA_DOT = "\u200c", "\u0375", "\u00b7", "\u30fb"


def backward_ok(label: str, ch: str) -> bool:
    """What a CONTEXTJ/CONTEXTO character needs of the characters before it (RFC 5892 appendix A): a cheap
    necessary test, so the exact check runs only for the ones that may pass."""
    last = label[-1:] or " "
    if ch == "\u200d":
        return unicodedata.combining(last) == 9
    if ch == ZWNJ:
        return bool(label) and (
            unicodedata.combining(last) == 9 or any(c not in tables().joining.get("T", EMPTY) for c in label)
        )
    if ch == MIDDLE_DOT:
        return last == "l"
    if ch in "\u05f3\u05f4":
        return last in tables().hebrew
    if "\u0660" <= ch <= "\u0669":  # AN: only in a right-to-left label (RFC 5893 rules 1 and 5)
        return (
            bool(label)
            and unicodedata.bidirectional(label[0]) in ("R", "AL")
            and not any("\u06f0" <= c <= "\u06f9" for c in label)
        )
    if "\u06f0" <= ch <= "\u06f9":
        return not any("\u0660" <= c <= "\u0669" for c in label)
    return True


def ends_by_class(text: str, domain: Domain) -> bool:
    """Whether ``text``, whose last character the class rules allowed, may end as far as the rules that
    look ahead go (no pending katakana middle dot or non-joiner, a bidi-valid ending where one is needed);
    False only means "ask the exact check"."""
    if KATAKANA_DOT in text and not any(ch in tables().kana_han for ch in text if ch != KATAKANA_DOT):
        return False
    if zwnj_pending(text):
        return False
    first = unicodedata.bidirectional(text[0])
    if first in ("R", "AL"):
        return unicodedata.bidirectional(text[-1]) in ("R", "AL", "EN", "AN")
    if first == "L" and domain[0]:
        return unicodedata.bidirectional(text[-1]) in ("L", "EN")
    return True


def zwnj_pending(label: str) -> bool:
    """A zero width non-joiner not after a virama, followed so far by transparent characters only: the next
    other character must join to the right (RFC 5892 appendix A.1)."""
    at = label.rfind(ZWNJ)
    if at < 0 or (at > 0 and unicodedata.combining(label[at - 1]) == 9):
        return False
    transparent = tables().joining.get("T", EMPTY)
    return all(ch in transparent for ch in label[at + 1 :])


@lru_cache(maxsize=65536)
def summary(label: str) -> tuple:
    """What the characters allowed after ``label`` (nonempty, lowercase when ASCII) depend on while it is far
    from the length limit (formats_idn_runs.label_far): a key under which their set is computed once. The last
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
        refused_at(label, starter),
        kind,
        unicodedata.combining(last),
        # the xn-- prefix begun; a hyphen in position 3 (no hyphen may follow)
        label if label in ("x", "xn", "xn-") else len(label) == 3 and last == "-",
        any("\u0660" <= c <= "\u0669" for c in label),
        any("\u06f0" <= c <= "\u06f9" for c in label),
        KATAKANA_DOT in label and not any(c in t.kana_han for c in label if c != KATAKANA_DOT),
        zwnj_pending(label),
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


@lru_cache(maxsize=256)
def generic_set(key: tuple, nfc_ccc: int) -> CharSet:
    """The non-ASCII characters without a rule of their own allowed by class: ``key`` is ``("", domain)`` at
    a label's start, else (first bidi class, the numbers seen in a right-to-left label or None); none with a
    nonzero combining class below ``nfc_ccc`` (NFC order)."""
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


def refused_at(label: str, starter: int) -> frozenset[str]:
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
def composing_cut(generic: CharSet, refused: frozenset[str] | None) -> CharSet:
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
def union_of(ascii_part: str, generic: CharSet, picked: tuple[str, ...]) -> CharSet:
    """``generic`` with the ASCII and one-by-one ``picked`` characters (cached: the same few sets recur)."""
    return generic | CharSet.of(ascii_part + "".join(picked))
