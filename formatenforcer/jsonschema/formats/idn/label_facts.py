"""What IDNA2008's whole-label checks read of a label's characters, kept per label and extended one character
at a time.

Why: a mask inside a non-ASCII label near the length limit asks whether ``label + w`` may end for every
candidate character and witness (formats/idn/label.py's ``viable``), each a label seen before plus one or two
characters. The checks ``idna.check_label`` makes that scan the whole label (each character's class, the bidi
rule of RFC 5893, the CONTEXTO rules that look at every character: katakana middle dot, the two kinds of
Arabic-Indic digits) are left-to-right scans, so their state after a label is memoised and extended by one
character: O(1) per candidate instead of O(length). The rules that look at a character's neighbours only
(CONTEXTJ, middle dot, keraia, geresh) are still idna's own functions, at the positions recorded here.

tests/test_idn_label_facts.py compares every answer with idna's functions on random labels.
"""

from __future__ import annotations

import unicodedata
from typing import NamedTuple

from idna.idnadata import codepoint_classes
from idna.intranges import intranges_contain

from ....core.cache_release import register_memo
from .tables import tables

MAX_INPUT = 1024
"""idna refuses longer labels in every check (its ``_max_input_length``)."""
KATAKANA_DOT = "\u30fb"
_RTL = frozenset(("R", "AL", "AN"))
_RTL_FIRST = frozenset(("R", "AL"))
_RTL_ALLOWED = frozenset(("R", "AL", "AN", "EN", "ES", "CS", "ET", "ON", "BN", "NSM"))  # RFC 5893 rule 2
_RTL_ENDING = frozenset(("R", "AL", "EN", "AN"))  # rule 3
_NUMERIC = frozenset(("EN", "AN"))  # rule 4
_LTR_ALLOWED = frozenset(("L", "EN", "ES", "CS", "ET", "ON", "BN", "NSM"))  # rule 5
_LTR_ENDING = frozenset(("L", "EN"))  # rule 6
_LDH = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")


class Facts(NamedTuple):
    """What the whole-label checks need of a (nonempty) label."""

    chars_ok: bool
    """Every character is a lowercase LDH one or a non-ASCII one IDNA2008 allows (PVALID/CONTEXTJ/CONTEXTO)."""
    contexts: tuple[int, ...]
    """Positions of the characters with a rule of their own (``tables().special``)."""
    kana_han: bool
    """A Hiragana, Katakana or Han character other than the katakana middle dot (RFC 5892 A.7)."""
    arabic_indic: bool
    """An ARABIC-INDIC DIGIT (U+0660..U+0669; A.8 refuses them with A.9's digits)."""
    extended_digits: bool
    """An EXTENDED ARABIC-INDIC DIGIT (U+06F0..U+06F9)."""
    unknown: bool
    """A character without a bidi class (idna's bidi check refuses the label)."""
    rtl: bool
    """A character of bidi class R, AL or AN: the bidi rule applies."""
    first: str
    """The bidi class of the first character: R/AL make a right-to-left label, L a left-to-right one."""
    bidi_broken: bool
    """Rule 2 or 4 (right-to-left) or rule 5 (left-to-right) broken by some character."""
    valid_ending: bool
    """The last character that is not NSM ends the label as rule 3 or 6 requires."""
    number_type: str | None
    """The first of EN/AN met in a right-to-left label (rule 4: the other may not follow)."""


def _extend(facts: Facts | None, pos: int, ch: str) -> Facts:
    """The facts of a label whose last character is ``ch``, at ``pos`` (``facts`` are those of the
    characters before it; None when there are none)."""
    t = tables()
    if ch.isascii():
        ok = ch in _LDH
        special = False
    else:
        ok = ch in t.allowed
        special = ok and ch in t.special
    cp = ord(ch)
    kana = cp >= 0x80 and ch != KATAKANA_DOT and ch in t.kana_han  # (no ASCII character is in those scripts)
    direction = unicodedata.bidirectional(ch)
    if facts is None:
        first = direction
        chars_ok, contexts, kana_han, arabic, extended = True, (), False, False, False
        unknown, rtl, broken, ending, number = False, False, False, False, None
    else:
        first = facts.first
        chars_ok, contexts, kana_han = facts.chars_ok, facts.contexts, facts.kana_han
        arabic, extended, unknown, rtl = facts.arabic_indic, facts.extended_digits, facts.unknown, facts.rtl
        broken, ending, number = facts.bidi_broken, facts.valid_ending, facts.number_type
    if first in _RTL_FIRST:  # idna's second scan, in the mode the first character sets
        if direction not in _RTL_ALLOWED:
            broken = True
        if direction in _RTL_ENDING:
            ending = True
        elif direction != "NSM":
            ending = False
        if direction in _NUMERIC:
            if not number:
                number = direction
            elif number != direction:
                broken = True
    else:
        if direction not in _LTR_ALLOWED:
            broken = True
        if direction in _LTR_ENDING:
            ending = True
        elif direction != "NSM":
            ending = False
    return Facts(
        chars_ok and ok,
        (*contexts, pos) if special else contexts,
        kana_han or kana,
        arabic or 0x660 <= cp <= 0x669,
        extended or 0x6F0 <= cp <= 0x6F9,
        unknown or direction == "",
        rtl or direction in _RTL,
        first,
        broken,
        ending,
        number,
    )


_FACTS: dict[str, Facts] = {}
register_memo(_FACTS.clear)  # emptied when a burst of enforcers ends (core/cache_release.py)
_FACTS_MAX = 1 << 16
_BACK = 8  # how many characters back a memoised prefix is looked for before scanning from the start


def label_facts(label: str) -> Facts:
    """The facts of ``label`` (nonempty), from the longest memoised prefix at most ``_BACK`` characters
    shorter (the walk asks for labels one or two characters longer than one it asked for), else from the
    start."""
    hit = _FACTS.get(label)
    if hit is not None:
        return hit
    facts, start = None, 0
    for cut in range(len(label) - 1, max(0, len(label) - 1 - _BACK), -1):
        facts = _FACTS.get(label[:cut])
        if facts is not None:
            start = cut
            break
    for end in range(start, len(label)):
        facts = _extend(facts, end, label[end])
    if len(_FACTS) >= _FACTS_MAX:
        _FACTS.clear()
    _FACTS[label] = facts  # type: ignore[assignment]
    return facts  # type: ignore[return-value]


def contexts_ok(label: str, facts: Facts) -> bool:
    """The rules of the CONTEXTJ/CONTEXTO characters of ``label`` (RFC 5892 appendix A), as idna's
    ``valid_contextj``/``valid_contexto`` judge them; the whole-label ones read from ``facts``."""
    from idna.core import valid_contextj, valid_contexto

    for pos in facts.contexts:
        ch = label[pos]
        cp = ord(ch)
        if intranges_contain(cp, codepoint_classes["CONTEXTJ"]):
            try:
                if not valid_contextj(label, pos):
                    return False
            except ValueError:
                return False
        elif intranges_contain(cp, codepoint_classes["CONTEXTO"]):
            if ch == KATAKANA_DOT:
                if not facts.kana_han:
                    return False
            elif 0x660 <= cp <= 0x669:
                if facts.extended_digits:
                    return False
            elif 0x6F0 <= cp <= 0x6F9:
                if facts.arabic_indic:
                    return False
            elif not valid_contexto(label, pos):
                return False
    return True


def bidi_ok(facts: Facts, check_ltr: bool) -> bool:
    """``idna.core.check_bidi(label, check_ltr)`` read from the label's facts: True, or False where it raises."""
    if facts.unknown:
        return False
    if not facts.rtl and not check_ltr:
        return True
    if facts.first not in _RTL_FIRST and facts.first != "L":
        return False  # rule 1
    return not facts.bidi_broken and facts.valid_ending
