"""The rules of a whole ``idn-hostname`` label and name, and whether a label being written can still end.

A label is judged by ``label_end`` when it ends: ASCII labels by the LDH rules (an ``xn--`` one as an A-label,
formats/idn/a_labels.py), others by the ``idna`` package's own checks (code point classes, CONTEXTJ/CONTEXTO rules, no
leading mark, hyphen rules, the bidi rule, NFC unless told otherwise), with a length limit of 63 octets on its
A-label form (formats/idn/length.py) and 253 octets for the name. Across labels, RFC 5893's rule for a domain
holding a right-to-left label: then every label must satisfy the bidi rule (``after_label``).

``viable`` says whether a label being written can still end validly: at once, or after one more *witness*
character (``WITNESSES``: ``a`` after a hyphen, ``l`` after a middle dot, Greek after a keraia, kana after a
katakana middle dot, a right-to-left letter to end a right-to-left label, a dual-joining letter after a zero
width non-joiner). The set of completions tried (the empty one and single characters) is closed under
suffixes, so a state reached through characters it allowed always has a way on: no dead end.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from .a_labels import Budget, can_complete, decoding, valid_a_label_text
from .label_facts import KATAKANA_DOT, MAX_INPUT, bidi_ok, contexts_ok, label_facts
from .length import a_length
from .tables import DOTS

NAME_MAX = 253
LABEL_MAX = 63
WITNESSES = ("a", "l", "\u03b1", "\u3041", "\u05d0", "\u0628", "\u1820")
ASCII_CANDIDATES = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-"
_ASCII_CANDIDATE_SET = frozenset(ASCII_CANDIDATES)  # (a label's characters checked in one C loop)
_LDH_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9-]*[a-z0-9])?")
_CAPITAL = re.compile("[A-Z]")

# A domain state: (an RTL label seen, some label fails the bidi rule)
Domain = tuple[bool, bool]


def _u_rules_ok(label: str, nfc: bool) -> bool:
    """IDNA2008's rules for a U-label, as ``idna.check_label`` judges them (NFC optional; the code point
    classes from formats/idn/tables.py, which hold the same ranges; the whole-label scans read from the
    label's memoised facts, formats/idn/label_facts.py)."""
    if nfc and not unicodedata.is_normalized("NFC", label):
        return False
    if len(label) > MAX_INPUT:
        return False  # every idna check refuses it
    facts = label_facts(label)
    if not facts.chars_ok:
        return False
    if label[2:4] == "--" or label[0] == "-" or label[-1] == "-":
        return False  # idna.core.check_hyphen_ok
    if unicodedata.category(label[0])[0] == "M":
        return False  # idna.core.check_initial_combiner
    return contexts_ok(label, facts) and bidi_ok(facts, False)


def _bidi_facts(u_label: str) -> tuple[bool, bool]:
    """(holds an RTL character, satisfies the bidi rule as a label of a bidi domain must)."""
    if not u_label:
        return False, False
    facts = label_facts(u_label)
    return facts.rtl, bidi_ok(facts, True)


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
    if not _u_rules_ok(label, nfc):  # (a capital is no lowercase LDH character: refused there)
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


def label_ends(label: str, done: int, domain: Domain, nfc: bool) -> tuple[int, Domain] | None:
    """(octets, domain state after it) if ``label`` may end here, ``done`` octets into the name."""
    end = label_end(label, nfc)
    if end is None or done + end[0] > NAME_MAX:
        return None
    after = after_label(domain, end[1], end[2])
    return None if after is None else (end[0], after)


@lru_cache(maxsize=65536)
def viable(label: str, done: int, domain: Domain, nfc: bool) -> bool:
    """Whether ``label`` (nonempty) can still become a label that may end: at once, or after one witness
    (A-labels: formats/idn/a_labels.py's witnesses; not begun in a domain already holding an RTL label, where those
    witnesses are not sure to satisfy the bidi rule)."""
    if label.isascii():
        low = label.lower()
        if low.startswith("xn--"):
            return not domain[0] and can_complete(low[4:], Budget(done + 4, 0, NAME_MAX))
        if low[0] == "-" or low[2:4] == "--" or not _ASCII_CANDIDATE_SET.issuperset(label):
            return False
        if domain[0] and not low[0].isalpha():
            return False  # a digit first fails the bidi rule a bidi domain requires
        room = min(LABEL_MAX, NAME_MAX - done)
        return len(label) <= room and (low[-1] != "-" or len(label) + 1 <= room)
    if _CAPITAL.search(label):
        return False
    return any(label_ends(label + w, done, domain, nfc) is not None for w in _endings(label))


_LEFT_TO_RIGHT_ENDINGS = ("", *(w for w in WITNESSES if unicodedata.bidirectional(w) not in ("R", "AL")))
_RIGHT_TO_LEFT_ENDINGS = ("", *(w for w in WITNESSES if unicodedata.bidirectional(w) != "L"))


def _endings(label: str) -> tuple[str, ...]:
    """The endings of ``("", *WITNESSES)`` after which the non-ASCII ``label`` may pass the rules; every other
    one surely fails them (``label_end`` is None), so ``viable`` does not ask: a right-to-left witness breaks
    the bidi rule after a first character that is not R or AL (RFC 5893 rules 1 and 5), a left-to-right one
    after one that is (rule 2); after a Greek keraia only a Greek character and after a middle dot only ``l``
    may come (RFC 5892 A.4, A.3); a katakana middle dot needs a Hiragana, Katakana or Han character (A.7)."""
    last = label[-1]
    if last == "\u0375":
        return ("\u03b1",)
    if last == "\u00b7":
        return ("l",)
    if KATAKANA_DOT in label and not label_facts(label).kana_han:
        return ("\u3041",)
    if unicodedata.bidirectional(label[0]) in ("R", "AL"):
        return _RIGHT_TO_LEFT_ENDINGS
    return _LEFT_TO_RIGHT_ENDINGS


def ascii_shape(label: str) -> tuple[bool, ...]:
    """What ``viable`` and ``label_end`` read of an ASCII ``label`` of 4 or more characters that is no
    ``xn--`` label, beyond its length, for it and for it followed by one ASCII character: a leading hyphen,
    a leading letter, ``--`` in positions 3-4, the LDH syntax of the lowercased label, characters that are
    all ASCII candidates. Labels of one shape and length take the same ASCII characters and dots after
    them."""
    low = label.lower()
    return (
        low[0] == "-",
        low[0].isalpha(),
        low[2:4] == "--",
        _LDH_LABEL.fullmatch(low) is not None,
        _ASCII_CANDIDATE_SET.issuperset(label),
    )


def idn_hostname_ok(text: str, nfc: bool = True) -> bool:
    """Whether ``text`` is a valid idn-hostname (the automaton's language, judged directly)."""
    done, domain = 0, (False, False)
    labels = re.split(f"[{DOTS}]", text)
    for label in labels:
        ends = label_ends(label, done, domain, nfc)
        if ends is None:
            return False
        done, domain = done + ends[0] + 1, ends[1]
    return done - 1 <= NAME_MAX
