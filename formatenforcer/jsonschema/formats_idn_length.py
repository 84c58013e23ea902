"""Octets of an ``idn-hostname`` label in the DNS: the length of its A-label (``xn--`` + RFC 3492 punycode).

The label automaton (formats_idn.py) must keep every label within 63 octets of A-label. The exact length comes
from running RFC 3492's encoder without writing the digits (``a_length``, ``a_length_appended``,
``a_lengths_with_basics``; tests compare them with Python's codec). While a label is *far* from the limit
(``far_from_limit``: its A-label plus any two more characters surely fits, by a bound with the most punycode
digits a delta can take), characters can be judged by class without computing any length.
"""

from __future__ import annotations

from functools import lru_cache

from .formats_idn_tables import tables
from .formats_idna import _adapt


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
def most_digits(length: int) -> int:
    """The most digits one delta of a label of at most ``length`` characters can take, whatever the bias
    (a delta is below (highest code point + 1) * (length + 1) + (length + 1) ** 2)."""
    biggest = (tables().max_code_point + 1) * (length + 1) + (length + 1) ** 2
    return max(_digits(biggest, bias) for bias in range(0, 400))


def far_from_limit(label: str, room: int) -> bool:
    """Whether the A-label of ``label`` plus any two more characters surely fits in ``room`` octets:
    ``xn--``, the basic characters and their delimiter, at most ``most_digits`` per other character."""
    basic = basic_count(label)
    return far_by_counts(basic, len(label) - basic, room)


@lru_cache(maxsize=65536)
def basic_count(label: str) -> int:
    """How many basic (ASCII) code points ``label`` holds."""
    return sum(ch.isascii() for ch in label)


@lru_cache(maxsize=65536)
def far_by_counts(basic: int, other: int, room: int) -> bool:
    """``far_from_limit`` for a label of ``basic`` basic and ``other`` other code points."""
    return 5 + basic + 2 + (other + 2) * most_digits(basic + other + 2) <= room


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
