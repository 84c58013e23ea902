"""Character classes of IDNA2008 U-labels as ``CharSet``s, built once per process from the ``idna`` package's
tables and Python's ``unicodedata`` (the same sources ``idna.check_label`` reads, so the sets agree with it).

The content automaton of ``idn-hostname`` (formats/idn/hostname.py) answers "which characters may come next" for a whole
class at a time: most characters differ only by bidi class, by being a mark, and by their canonical combining
class, so the allowed set is a few set operations on these classes (formats/idn/classes.py). The characters
whose effect depends on more (the CONTEXTJ/CONTEXTO ones, and the ones that can compose with a preceding
character under NFC) are listed apart (``SPECIAL``, ``COMPOSING``) and checked one by one.
"""

from __future__ import annotations

import unicodedata
from functools import cache

from idna.idnadata import codepoint_classes, joining_types, scripts

from ....core.charset import CharSet

DOTS = "\u002e\u3002\uff0e\uff61"
"""Label separators (RFC 3490 section 3.1): full stop, ideographic, fullwidth and halfwidth ideographic."""

RTL = ("R", "AL", "AN")
LTR_OK = ("L", "EN", "ES", "CS", "ET", "ON", "BN", "NSM")  # RFC 5893 rule 5
RTL_OK = ("R", "AL", "AN", "EN", "ES", "CS", "ET", "ON", "BN", "NSM")  # rule 2


def _ranges(table: tuple[int, ...]) -> list[tuple[int, int]]:
    """idna's packed ranges ((start << 32) | end, end exclusive) as inclusive intervals."""
    return [(value >> 32, (value & 0xFFFFFFFF) - 1) for value in table]


class Tables:
    """The classes, each a CharSet of non-ASCII characters IDNA2008 allows (PVALID, CONTEXTJ, CONTEXTO)."""

    def __init__(self) -> None:
        allowed: list[tuple[int, int]] = []
        for name in ("PVALID", "CONTEXTJ", "CONTEXTO"):
            allowed.extend(_ranges(codepoint_classes[name]))
        by_bidi: dict[str, list[tuple[int, int]]] = {}
        by_ccc: dict[int, list[tuple[int, int]]] = {}
        marks: list[tuple[int, int]] = []
        for lo, hi in allowed:
            for cp in range(max(lo, 0x80), hi + 1):
                ch = chr(cp)
                bidi = unicodedata.bidirectional(ch)
                if not bidi:
                    continue  # unknown to this Python's Unicode tables: idna refuses it
                by_bidi.setdefault(bidi, []).append((cp, cp))
                ccc = unicodedata.combining(ch)
                if ccc:
                    by_ccc.setdefault(ccc, []).append((cp, cp))
                if unicodedata.category(ch)[0] == "M":
                    marks.append((cp, cp))
        self.bidi = {name: CharSet(v) for name, v in by_bidi.items()}
        self.allowed = CharSet(allowed).__and__(CharSet([(0x80, 0x10FFFF)])) & _union(self.bidi.values())
        self.ccc = {value: CharSet(v) for value, v in by_ccc.items()}
        self.marks = CharSet(marks)
        self.rtl = self._of_bidi(RTL)
        self.ltr_ok = self._of_bidi(LTR_OK)
        self.rtl_ok = self._of_bidi(RTL_OK)
        self.first_in_bidi_domain = self._of_bidi(("L", "R", "AL"))
        self.special = CharSet.of("\u200c\u200d\u00b7\u0375\u05f3\u05f4\u30fb") | CharSet(
            [(0x660, 0x669), (0x6F0, 0x6F9)]
        )
        firsts, seconds = composition_pairs()
        self.composing = seconds & self.allowed
        self.firsts = firsts
        self.greek = CharSet(_ranges(scripts["Greek"])) & self.allowed
        self.hebrew = CharSet(_ranges(scripts["Hebrew"]))
        self.kana_han = _union(CharSet(_ranges(scripts[n])) for n in ("Hiragana", "Katakana", "Han"))
        joining: dict[str, list[tuple[int, int]]] = {}
        for kind, table in joining_types.items():
            joining[kind] = _ranges(table)
        self.joining = {kind: CharSet(v) for kind, v in joining.items()}
        self.zwnj_follow = (self.joining.get("T", CharSet()) | self.joining.get("R", CharSet())
                            | self.joining.get("D", CharSet())) & self.allowed  # fmt: skip
        self.max_code_point = self.allowed.intervals[-1][1]

    def _of_bidi(self, names: tuple[str, ...]) -> CharSet:
        return _union(self.bidi[n] for n in names if n in self.bidi)

    @cache  # noqa: B019 - one Tables object per process
    def ccc_below(self, value: int) -> CharSet:
        """Characters with a nonzero combining class below ``value``: NFC refuses them after a mark of class
        ``value`` (canonical ordering)."""
        return _union(s for c, s in self.ccc.items() if 0 < c < value)


def _union(sets) -> CharSet:  # type: ignore[no-untyped-def]
    out = CharSet()
    for s in sets:
        out = out | s
    return out


def composition_pairs() -> tuple[CharSet, CharSet]:
    """(firsts, seconds) of canonical compositions. A second (NFC quick check "Maybe") may compose with what
    precedes it, so whether appending one keeps a string in NFC is checked one by one; a first is a starter
    such a second can compose with (supersets both: every two-character canonical decomposition, Hangul)."""
    seconds: set[int] = set(range(0x1161, 0x1176)) | set(range(0x11A8, 0x11C3))  # Hangul V and T jamo
    firsts: set[int] = set(range(0x1100, 0x1113)) | set(range(0xAC00, 0xD7A4))  # Hangul L jamo, syllables
    for cp in range(0, 0x30000):
        decomposition = unicodedata.decomposition(chr(cp))
        if decomposition and not decomposition.startswith("<"):
            parts = decomposition.split()
            if len(parts) == 2:
                firsts.add(int(parts[0], 16))
                seconds.add(int(parts[1], 16))
    return CharSet((cp, cp) for cp in firsts), CharSet((cp, cp) for cp in seconds)


@cache
def tables() -> Tables:
    """The classes, built on first use (about a second: every allowed code point is looked up)."""
    return Tables()
