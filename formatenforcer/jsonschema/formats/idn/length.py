"""Octets of an ``idn-hostname`` label in the DNS: the length of its A-label (``xn--`` + RFC 3492 punycode).

The label automaton (formats/idn/hostname.py) must keep every label within 63 octets of A-label. The exact length comes
from running RFC 3492's encoder without writing the digits (``a_length``, ``a_length_appended``,
``a_lengths_with_basics``; tests compare them with Python's codec). While a label is *far* from the limit
(``far_from_limit``: its A-label plus any two more characters surely fits, by a bound with the most punycode
digits a delta can take), characters can be judged by class without computing any length.

That bound counts only characters. Longer labels use ``a_length_bound``: the label's own deltas, each at most
grown by what the unknown characters appended after it can add, and a shared budget for the unknown ones.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from functools import cache, lru_cache

from .a_labels import _adapt
from .tables import tables


def _digits(q: int, bias: int) -> int:
    """How many punycode digits the delta ``q`` takes after ``bias`` (RFC 3492 section 6.3): one more than
    the number of ``bias``'s thresholds at or below ``q`` (``_digit_steps``), found by bisection."""
    steps = _STEPS.get(bias)
    if steps is None:
        steps = _STEPS[bias] = _digit_steps(bias)
    above = bisect_right(steps, q)
    return above + 1 if above < len(steps) else _digits_by_loop(q, bias)


def _digits_by_loop(q: int, bias: int) -> int:
    """``_digits`` as the encoder's loop counts them."""
    count, k = 0, 36
    while True:
        count += 1
        t = 1 if k <= bias else 26 if k >= bias + 26 else k - bias
        if q < t:
            return count
        q = (q - t) // (36 - t)
        k += 36


_STEPS: dict[int, tuple[int, ...]] = {}


def _digit_steps(bias: int) -> tuple[int, ...]:
    """L_d for d = 0, 1, ...: the least delta written with more than d + 1 digits after ``bias``. The encoder
    writes a digit and stops when what is left, q_d, is below the threshold t_d; q_{d+1} = (q_d - t_d) //
    (36 - t_d), so q_{d+1} >= t_{d+1} exactly when q_d >= t_d + t_{d+1} * (36 - t_d), and by induction
    q >= L_d = t_0 + (36 - t_0) * (t_1 + (36 - t_1) * (...t_d)). (32 of them: a larger delta, past any a label
    of at most 1024 characters takes, is counted by the loop; tests compare the two.)"""
    out, total, weight, k = [], 0, 1, 36
    for _ in range(32):
        t = 1 if k <= bias else 26 if k >= bias + 26 else k - bias
        total += t * weight
        weight *= 36 - t
        k += 36
        out.append(total)
    return tuple(out)


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


_CHAIN = 128  # (bounds the recursion of _encoder_end)


@lru_cache(maxsize=4096)
def _encoder_end(label: str) -> tuple[int, int, int, int, int]:
    """RFC 3492's encoder state after ``label`` (not ASCII): (octets of its A-label, delta, n, bias, code
    points handled). When the highest code point occurs once (the label without it not ASCII, up to ``_CHAIN``
    characters), the encoder handles every other code point as it does in the label without it (it counts
    only smaller ones), so that state is read from the label without it and the highest one's delta added:
    the masks ask for many labels that are one seen before plus a character above its own (``label + c``,
    ``label + c + "a"`` for each of a class of candidates ``c``)."""
    if 1 < len(label) <= _CHAIN:
        top = max(label)
        cp = ord(top)
        if cp >= 128 and label.count(top) == 1:
            at = label.index(top)
            rest = label[:at] + label[at + 1 :]
            if not rest.isascii():
                out, delta, n, bias, handled = _encoder_end(rest)
                delta += (cp - n) * (handled + 1) + at  # every code point before it is smaller
                # then the ones after it, all smaller, and the step to cp + 1
                return (
                    out + _digits(delta, bias),
                    len(label) - at,
                    cp + 1,
                    _adapt(delta, handled + 1, False),
                    handled + 1,
                )
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
        return _appended_below(label, cp)
    delta += (cp - n) * (handled + 1) + len(label)
    return out + _digits(delta, bias)


def _basics_plan(label: str) -> tuple[int, list[tuple[int, list[int], int]]]:
    """(basic code points, for each non-basic code point in increasing order: (it, how many smaller code
    points lie before each of its occurrences, how many after the last)) of ``label``: what the encoder
    reads of its positions."""
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
    return basic, plan


@lru_cache(maxsize=256)
def _checkpoints(label: str) -> tuple:
    """What ``_appended_below`` reads of the (non-ASCII) ``label``: (basic code points, its non-basic code
    points in increasing order, the encoder's state (octets, delta, n, bias, handled) before each, their
    positions as ``_basics_plan`` gives them, every code point sorted)."""
    points = [ord(ch) for ch in label]
    basic, plan = _basics_plan(label)
    state = (4 + basic + (1 if basic else 0), 0, 128, 72, basic)
    states = []
    for entry in plan:
        states.append(state)
        state = _encoded(state, *entry, basic)
    return basic, [m for m, _, _ in plan], states, plan, sorted(points)


def _encoded(
    state: tuple[int, int, int, int, int], m: int, gaps: list[int], trailing: int, basic: int
) -> tuple[int, int, int, int, int]:
    """The encoder's state (octets, delta, n, bias, handled) once it has handled code point ``m``: its
    occurrences after ``gaps`` smaller code points each, and ``trailing`` more after the last."""
    out, delta, n, bias, handled = state
    delta += (m - n) * (handled + 1)
    for gap in gaps:
        delta += gap
        out += _digits(delta, bias)
        bias = _adapt(delta, handled + 1, handled == basic)
        delta = 0
        handled += 1
    return out, delta + trailing + 1, m + 1, bias, handled


def _appended_below(label: str, cp: int) -> int:
    """``a_length(label + chr(cp))`` for a non-basic ``cp`` at or below the label's highest code point: the
    encoder handles every smaller code point of the label as before (the new one comes after them all), so
    it resumes at the state before the first code point not below ``cp``; from there on each later one
    counts the new one after its last occurrence, and ``cp`` itself is inserted after everything smaller."""
    basic, ms, states, plan, ordered = _checkpoints(label)
    i = bisect_left(ms, cp)
    state = states[i]
    if ms[i] == cp:
        _, gaps, trailing = plan[i]
        entries = [(cp, [*gaps, trailing], 0)]
        i += 1
    else:
        entries = [(cp, [bisect_left(ordered, cp)], 0)]
    entries.extend((m, gaps, trailing + 1) for m, gaps, trailing in plan[i:])
    for m, gaps, trailing in entries:
        state = _encoded(state, m, gaps, trailing, basic)
    return state[0]


def a_lengths_with_basics(label: str, most: int, room: int | None = None) -> list[int]:
    """``a_length(label + "a" * k)`` for ``k`` in ``0..most`` (``label`` not ASCII): the label's positions
    are read once (for each non-basic code point, how many smaller code points lie before each of its
    occurrences and after the last), then each ``k`` only replays the deltas, with ``k`` more basic code
    points at the end (tests compare it with ``a_length``). With ``room``, stops after the first length
    past it."""
    basic, plan = _basics_plan(label)
    out = []
    steps_of, digits = _STEPS, _digits
    for k in range(most + 1):
        total = 4 + basic + k + (1 if basic + k else 0)
        n, delta, bias, handled = 128, 0, 72, basic + k
        for m, gaps, trailing in plan:
            delta += (m - n) * (handled + 1)
            for gap in gaps:
                delta += gap
                # _digits and _adapt written out (the replays of a near-limit label are most of its free run)
                steps = steps_of.get(bias)
                above = bisect_right(steps, delta) if steps is not None else 32
                total += above + 1 if above < 32 else digits(delta, bias)
                scaled = delta // 700 if handled == basic + k else delta // 2
                scaled += scaled // (handled + 1)
                bias = 0
                while scaled > 455:
                    scaled //= 35
                    bias += 36
                bias += (36 * scaled) // (scaled + 38)
                delta = 0
                handled += 1
            delta += trailing + k + 1
            n = m + 1
        out.append(total)
        if room is not None and total > room:
            break
    return out


# A sound bound on the A-label length of a known label followed by unknown characters (``a_length_bound``).
#
# RFC 3492 in the decoder's terms: the t-th inserted (non-basic) code point c_t goes to position p_t of an
# output already l_t = b + t - 1 long (b basic code points), and its delta is
#     delta_t = (c_t - c_{t-1}) * (l_t + 1) + p_t - p_{t-1} - 1        (c_0 = 128, p_0 = -1),
# the insertions taken by code point, then position. Append X (j characters) to a label L. Every character of X
# lies after every character of L, so an insertion of L keeps its position p_t, and its output is longer by
# s <= j (X's basic code points and X's insertions made before it). When its predecessor in the merged order
# is L's insertion t - 1 ("case A"), its delta is delta_t + g_t * s with g_t = c_t - c_{t-1}; when it is an
# insertion x of X ("case B": c_{t-1} <= c_x <= c_t, and x lies after the L character inserted at p_{t-1}), it
# is (c_t - c_x) * (l_t + s + 1) + p_t - p_x - 1, smaller. So every delta of L is at most
# hi_t = delta_t + g_t * j. Only an insertion with g_t > 0 can follow one of X (an X character with the same
# code point comes after it), and at most j do. The bias before a case A insertion comes from its
# predecessor's delta, within [delta_{t-1}, hi_{t-1}] (or [0, hi_{t-1}] after a case B one) and from a
# number of code points within [l_{t-1} + 1, l_{t-1} + 1 + j]; adapt grows with the delta and shrinks with
# the number of code points, so the bias lies between two adapt values and the digits are the most over that
# range. After an insertion of X the bias is unknown: the most digits over every bias.
# The deltas of X's own insertions: (c_x - c_pred) * (l + 1) + p_x - p_pred - 1 <= (gap + 1) * K with
# K = len(L) + j + 1. Those between L's insertions t - 1 and t (slot t) have gaps within g_t and make t a case
# B insertion; those after L's last insertion (the tail) have gaps adding up to at most the highest cap less
# L's highest code point. The most digits over every bias, D(q), is a step function with a concave majorant F
# (linear between the points where it steps), so by Jensen's inequality r insertions whose deltas add up to
# at most Q take at most r * F(Q / r) digits. The bound takes the worst split of X between the tail and the
# slots, or, if smaller, lets all of X share the budget of the highest code point less 128 (the gaps of the
# merged order add up to its last code point less 128) plus the extras of the j worst case B insertions.


@cache
def _thresholds() -> tuple[int, ...]:
    """T_d: the smallest delta that some bias writes with more than d digits (D(q) > d iff q >= T_d); their
    steps grow (tested), which makes the piecewise linear F through (T_{d}, d + 1) concave."""
    out = []
    for d in range(16):
        least = None
        for bias in range(400):
            total, weight, k = 0, 1, 36
            for _ in range(d):
                t = 1 if k <= bias else 26 if k >= bias + 26 else k - bias
                total += t * weight
                weight *= 36 - t
                k += 36
            least = total if least is None else min(least, total)
        out.append(least)
    return tuple(out)


@lru_cache(maxsize=65536)
def _most_digits_of(q: int, low: int = 0, high: int = 399) -> int:
    """The most digits the delta ``q`` takes with a bias in ``low..high`` (every bias: D(q), read from the
    thresholds)."""
    if low == 0 and high >= 399:
        return sum(1 for step in _thresholds() if step <= q)
    return max(_digits(q, bias) for bias in range(low, high + 1))


def _jensen_digits(count: int, total: int) -> int:
    """At most how many digits ``count`` deltas adding up to at most ``total`` take, whatever the biases:
    ``floor(count * F(total / count))`` with F the concave majorant of D (see above), in integers."""
    if count == 0:
        return 0
    steps = _thresholds()
    d = 1
    while d < len(steps) - 1 and steps[d] * count <= total:
        d += 1
    # F(q) = d + (q - T_{d-1}) / (T_d - T_{d-1}) on [T_{d-1}, T_d]
    low, high = steps[d - 1], steps[d]
    return count * d + (total - count * low) // (high - low)


@lru_cache(maxsize=65536)
def _insertions(label: str) -> tuple[int, tuple[tuple[int, int], ...]]:
    """(basic code points, ((g_t, delta_t), ...) for each insertion in the encoder's order) of ``label``."""
    points = [ord(ch) for ch in label]
    basic = sum(cp < 128 for cp in points)
    out = []
    n, delta, previous = 128, 0, 128
    handled = basic
    for m in sorted({cp for cp in points if cp >= 128}):
        delta += (m - n) * (handled + 1)
        for cp in points:
            if cp < m:
                delta += 1
            elif cp == m:
                out.append((m - previous, delta))
                previous = m
                delta = 0
                handled += 1
        delta += 1
        n = m + 1
    return basic, tuple(out)


@lru_cache(maxsize=65536)
def a_length_bound(label: str, caps: tuple[int, ...]) -> int:
    """An upper bound on ``a_length(label + x)`` for every ``x`` of at most ``len(caps)`` characters, none
    above ``max(caps)`` and the i-th (in any order) at most ``caps[i]``; the reasoning is in the comment above
    (tests compare it with ``a_length`` on random completions)."""
    j = len(caps)
    basic, steps = _insertions(label)
    size = 4 + basic + (1 if basic or j else 0)
    plain: list[int] = []  # digits of each insertion of the label in case A after case A
    after_x: list[int] = []  # in case A after case B
    unknown: list[int] = []  # in case B
    for t, (gap, delta) in enumerate(steps):
        high = delta + gap * j
        if t == 0:
            plain.append(_digits(high, 72))  # the first insertion of all: the initial bias
            after_x.append(0)
        else:
            before, before_high = steps[t - 1][1], steps[t - 1][1] + steps[t - 1][0] * j
            points, first = basic + t, t == 1
            plain.append(_most_digits_of(high, _adapt(before, points + j, first), _adapt(before_high, points, first)))
            after_x.append(_most_digits_of(high, _adapt(0, points + j, False), _adapt(before_high, points, False)))
        unknown.append(_most_digits_of(high) if gap > 0 else 0)
    if not j:
        return size + sum(plain)
    return size + sum(plain) + _unknown_part(label, caps, steps, plain, after_x, unknown)


def bound_fits(label: str, caps: tuple[int, ...], room: int) -> bool:
    """``a_length_bound(label, caps) <= room``, refusing at once when a cheap lower bound of it (the label's
    own A-label length and the least the unknown characters are charged) is already past ``room``."""
    if caps:
        floor = a_length(label) if not label.isascii() else 5 + len(label)
        width = len(label) + len(caps) + 1
        highest = max([*caps, *(ord(ch) for ch in label)])
        top = max(caps)
        tail_gap = max(0, top - max((ord(ch) for ch in label), default=128))
        each = sum(_most_digits_of((cap - 127) * width) for cap in caps)
        tail = _jensen_digits(len(caps), (tail_gap + len(caps)) * width)
        shared = _jensen_digits(len(caps), (highest - 128 + len(caps)) * width)
        if floor + min(each, tail, shared) > room:
            return False
    return a_length_bound(label, caps) <= room


def _unknown_part(
    label: str,
    caps: tuple[int, ...],
    steps: tuple[tuple[int, int], ...],
    plain: list[int],
    after_x: list[int],
    unknown: list[int],
) -> int:
    """The digits ``a_length_bound`` adds for the unknown characters: theirs and the extra ones of the
    label's case B insertions."""
    j = len(caps)
    width = len(label) + j + 1
    # the X insertions placed before insertion t of the label (a "slot") have gaps within g_t and make t a
    # case B insertion (its extra digits, and those of the next one); those after the last share the gap
    # from the label's highest code point to the highest cap
    slots = []
    for t, (gap, _) in enumerate(steps):
        if gap > 0:
            later = max(0, after_x[t + 1] - plain[t + 1]) if t + 1 < len(steps) else 0
            slots.append((max(0, unknown[t] - plain[t]) + later, _most_digits_of((gap + 1) * width)))
    firsts = sorted((extra + each for extra, each in slots), reverse=True)
    most_each = max((each for _, each in slots), default=0)
    top = max(caps)
    tail_gap = max(0, top - max((ord(ch) for ch in label), default=128))
    best = 0
    for tail in range(j + 1):
        inside = j - tail
        if inside and not slots:
            continue
        values = sorted(firsts[:inside] + [most_each] * inside, reverse=True)[:inside]
        best = max(best, _jensen_digits(tail, (tail_gap + tail) * width) + sum(values))
    # all of them sharing one budget, whatever the slots (the extras of at most j case B insertions)
    extras = sorted((extra for extra, _ in slots), reverse=True)[:j]
    highest = max(top, max((ord(ch) for ch in label), default=128))
    each = sum(_most_digits_of((cap - 127) * width) for cap in caps)
    shared = min(each, _jensen_digits(j, (highest - 128 + j) * width)) + sum(extras)
    return min(best, shared)
