"""Free runs of the ``idn-hostname`` automaton (the ``Content.free`` promise, hostname.py) and their stand-ins.

A run is a class of characters that may come any number of times in a row up to a limit, so the token walk
can take a token made of them without stepping through each character. Three kinds:

- ASCII letters and digits in a left-to-right label: they all count the same in the A-label's length (basic
  code points) and follow the same rules there, so the state after ``n`` of them is the label with ``n``
  ``a``s, *blind* to NFC composition (no composing character may follow), allowed while that label stays
  viable (``ascii_room``).
- Mixed runs, far from the limit: ASCII letters and digits with every non-ASCII character each left-to-right
  label allows by class (``mixed_chars``); the state after one is a *vague* stand-in (``VAGUE``) whose label
  holds ``REP`` for the run, its length bounded from its known part (``ends_vague``, ``label_far``).
- LDH characters inside an ``xn--`` label while formats/idn/a_labels.py's witnesses fit (``a_label_run``).

Each stand-in accepts a subset of what the real state accepts (the FreeRun contract).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from functools import cache, lru_cache

from ....core.charset import EMPTY, CharSet
from ..content import FreeContent
from .a_labels import Budget, witness_fits
from .classes import KERAIA, MIDDLE_DOT, zwnj_pending
from .label import LABEL_MAX, NAME_MAX, WITNESSES, Domain, after_label, label_end, label_ends, viable
from .length import (
    a_length_bound,
    a_lengths_with_basics,
    basic_count,
    bound_fits,
    far_by_counts,
    far_from_limit,
    most_digits,
)
from .tables import tables

VAGUE = "vague"  # the blind flag of a stand-in after a mixed run (see mixed_run)
REP = "\u10d0"  # GEORGIAN LETTER AN: left-to-right, not joining, no kana or Han, composes with nothing
_RUN = CharSet.ranges(("a", "z"), ("0", "9"))
_RUN_CAPITALS = CharSet.ranges(("a", "z"), ("A", "Z"), ("0", "9"))
_A_LABEL_RUN = _RUN_CAPITALS | CharSet.of("-")
_LETTERS = CharSet.ranges(("a", "z"))
_RUN_CAP = 24
_MIXED_CAP = 32
_RUN_MIN = 4  # a shorter mixed run leaves out too many tokens (every longer run of its characters)
_WITNESS_CAP = max(map(ord, WITNESSES))


def known_part(label: str, vague: bool) -> tuple[str, int]:
    """(the characters of ``label`` known for what they are, how many follow them): in a stand-in after a
    mixed run, everything from the first ``REP`` on may be any character (a real ``REP`` before the run
    only makes that part longer, which is still sound)."""
    at = label.find(REP) if vague else -1
    return (label, 0) if at < 0 else (label[:at], len(label) - at)


@lru_cache(maxsize=65536)
def _fits_with(known: str, more: int, room: int) -> bool:
    """Whether ``known`` followed by any ``more`` characters and then a witness surely fits in ``room``
    octets of A-label (``a_length_bound``). Memoised: ``run_room`` asks it of every prefix of a label (its
    anchors), again for every label the walk extends by a character."""
    caps = (tables().max_code_point,) * more + (_WITNESS_CAP,)
    return bound_fits(known, caps, room)


def _room_after(known: str, room: int, least: int) -> int:
    """The most characters (up to ``2 * _MIXED_CAP``) that may follow ``known``, then a witness, surely
    within ``room`` octets, every count from ``least`` on checked; 0 when fewer than ``least`` may. (Counted
    up one by one: the bound is used where it is small, and the checks are memoised, so an anchor's room is
    found again from any ``least`` within it.)"""
    count = least - 1
    while count < 2 * _MIXED_CAP and _fits_with(known, count + 1, room):
        count += 1
    return count if count >= least else 0


@lru_cache(maxsize=65536)
def run_room(label: str, vague: bool, room: int) -> int:
    """How many characters of any kind surely fit after ``label`` (then a witness), by the bound on code
    points (``a_length_bound``), for mixed runs and for judging characters by class (``label_far``).

    A stand-in counts from its known part. A real label counts from an *anchor*: a prefix (of the last
    ``2 * _MIXED_CAP`` characters) which had room for ``_RUN_MIN`` characters or more: what is left of that
    room after the rest. So every state inside a mixed run, or after one and the characters a stand-in
    accepted after it (reached by reading a token one character at a time), still has room after the
    prefix where the run began, and is far whenever the stand-in was (its allowed characters hold what the
    stand-in allowed). Without the anchors such a state could be judged near the limit from its own code
    points and refuse the next character of a token the mask offered."""
    known, unknown = known_part(label, vague)
    if vague:
        return max(0, _room_after(known, room, unknown + 1) - unknown)
    best = 0
    for back in range(min(len(label), 2 * _MIXED_CAP)):
        anchor = label[: len(label) - back]
        best = max(best, _room_after(anchor, room, max(_RUN_MIN, back + 1)) - back)
    return best


def label_far(label: str, vague: bool, room: int) -> bool:
    """Whether the label (a stand-in's when ``vague``) is far from the limit, so the characters allowed after
    it can be judged by class: its A-label plus any one more character and then a witness surely fits in
    ``room`` octets. The bound by counts (``far_from_limit``, any two more characters) first: it is cheap.
    Then ``run_room``, on the label's own code points, which keeps longer labels far as long as a mixed run
    has room (a real label far without room for a run would have every token walked character by character,
    each new label computing its bound: slower than the near-limit masks it gets instead)."""
    if far_from_limit(label, room):
        return True
    return run_room(label, vague, room) >= 1


def free_run(state: tuple, nfc: bool, mixed_fits: Callable[[tuple], bool]) -> FreeContent | None:
    """The run offered at ``state`` (an ``IdnHostnameContent`` state), or None. ``mixed_fits(state)`` says
    whether every character of ``mixed_chars`` is allowed there (the automaton's own masks decide it)."""
    done, domain, label, blind = state
    room = min(LABEL_MAX, NAME_MAX - done)
    if not label:  # letters only: a digit first makes a label of another bidi kind
        chars = _LETTERS if viable("a", done, domain, nfc) else None
        limit = room
    elif label[-1] in (MIDDLE_DOT, KERAIA) or zwnj_pending(label):
        return None
    elif label.isascii():
        if label[:4].lower() == "xn--":
            return a_label_run(state)
        # once a capital is in, no non-ASCII character may follow: capitals change nothing more
        chars = _RUN if label.islower() or not any(c.isalpha() for c in label) else _RUN_CAPITALS
        limit = room - len(label) if viable(label + "a", done, domain, nfc) else 0
    elif unicodedata.bidirectional(label[0]) in ("R", "AL"):
        return None
    else:
        mixed = mixed_run(state, room, mixed_fits)
        if mixed is not None:
            return mixed
        if blind == VAGUE:
            chars, limit = _RUN, ascii_room(label, done, domain, nfc, room, far_only=True)
        else:
            chars, limit = _RUN, ascii_room(label, done, domain, nfc, room)
    if chars is None or limit <= 0:
        return None
    marker = VAGUE if blind == VAGUE else True
    return chars, limit, lambda n: state if n == 0 else (done, domain, label + "a" * n, marker)


def a_label_run(state: tuple) -> FreeContent | None:
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


def mixed_run(state: tuple, room: int, mixed_fits: Callable[[tuple], bool]) -> FreeContent | None:
    """Far from the limit in a left-to-right label: runs of ASCII letters and digits mixed with the
    non-ASCII characters every such label allows by class (``mixed_chars``), as long as the label stays
    far whatever they are (each counted as non-basic). The state after a run cannot know its A-label
    length: it is a stand-in (``VAGUE``) whose label holds ``REP`` for the run, its length bounded as the
    known part followed by that many unknown characters (``ends_vague``, ``label_far``), refusing everything
    but a dot, the end or a witness once not far;
    its summary is as strict as any real one's (left-to-right, not joining, no kana, blind to NFC
    composition), so it accepts a subset of what the real state accepts (the FreeRun contract)."""
    done, domain, label, blind = state
    basic = basic_count(label)
    other = len(label) - basic
    limit = 0
    while limit < _MIXED_CAP and far_by_counts(basic, other + limit, room):
        limit += 1
    if limit < _RUN_MIN:
        # by the label's own code points (run_room); a run shorter than _RUN_MIN is not offered, even where
        # what is left of an anchor's room is shorter: it would leave out every token with a longer run
        # (such as a 3-letter Greek token 24 letters into a label), which walking still finds
        limit = max(limit, min(_MIXED_CAP, run_room(label, blind == VAGUE, room)))
    if limit < _RUN_MIN or not mixed_fits(state):
        return None
    return mixed_chars(), limit, lambda n: state if n == 0 else (done, domain, label + REP * n, VAGUE)


@lru_cache(maxsize=65536)
def ascii_room(label: str, done: int, domain: Domain, nfc: bool, room: int, far_only: bool = False) -> int:
    """How many ASCII letters and digits may follow ``label`` (non-ASCII, left-to-right or neutral) in a row:
    all of them count as basic code points, so the label with ``n`` of them has the A-label length of the
    label with ``n`` ``a``s. While the far bound allows 16 or more, that bound; else the exact A-label
    lengths up to ``_RUN_CAP`` (longer runs are left out of the mask, an approximation), counted up while
    the label could end after each one (so no run dead-ends; the rules other than the length are the same
    after every ``a``)."""
    basic = basic_count(label)
    limit = 0
    while far_by_counts(basic + limit + 1, len(label) - basic, room):
        limit += 1
    if limit >= 16 or far_only or label_ends(label + "a", done, domain, nfc) is None:
        return limit
    # not monotone: one more basic code point can shorten the punycode digits (the bias moves), so every
    # length is checked in turn and the run stops at the first that does not fit
    lengths = a_lengths_with_basics(label, min(room - len(label), _RUN_CAP), room)
    while limit + 1 < len(lengths) and lengths[limit + 1] <= room:
        limit += 1
    return limit


@cache
def mixed_chars() -> CharSet:
    """ASCII lowercase letters and digits, and the non-ASCII characters any left-to-right label far from the
    limit allows by class: PVALID, bidi L, no mark, no combining class, none that may compose with what
    precedes (NFC quick check Maybe), none with a rule of its own."""
    t = tables()
    out = t.bidi.get("L", EMPTY) & t.allowed
    out = out - t.special - t.marks - t.composing - t.ccc_below(256)
    return out | _RUN


def ends_vague(label: str, done: int, domain: Domain, nfc: bool) -> tuple[int, Domain] | None:
    """``label_ends`` for a stand-in label (see ``mixed_run``): the rules read on its text, the length taken
    as the smaller of two bounds no label it stands for exceeds: the generic one (``xn--``, the basic
    characters and their delimiter, the most digits per other character) and ``a_length_bound`` of its known
    part followed by as many unknown characters as the rest."""
    end = label_end(label, nfc)
    if end is None:
        return None
    basic = basic_count(label)
    octets = 5 + basic + (len(label) - basic) * most_digits(len(label))
    if octets > min(LABEL_MAX, NAME_MAX - done):
        known, unknown = known_part(label, True)
        octets = min(octets, a_length_bound(known, (tables().max_code_point,) * unknown))
    if octets > LABEL_MAX or done + octets > NAME_MAX:
        return None
    after = after_label(domain, end[1], end[2])
    return None if after is None else (octets, after)
