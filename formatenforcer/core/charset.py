"""Sets of characters as sorted code-point intervals, with the UTF-8 queries the token walk needs.

A parser answers "which characters may come next" with a ``CharSet``. Sets are often huge ("any character
but a quote, a backslash or a control character"), so they are stored as sorted, disjoint, inclusive
code-point intervals: membership is a binary search, and "could a character starting with these UTF-8 bytes
be allowed" (needed when a token ends in the middle of a character) is an interval intersection.
ASCII membership, the hot path of every walk, is a precomputed 128-entry table.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable

from .cache_release import register_memo

MAX_CODE_POINT = 0x10FFFF
_SURROGATES = (0xD800, 0xDFFF)


def _normalize(intervals: Iterable[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    """Sort, merge and clip intervals; surrogate code points are never characters."""
    clipped: list[tuple[int, int]] = []
    for lo, hi in intervals:
        lo, hi = max(lo, 0), min(hi, MAX_CODE_POINT)
        if lo > hi:
            continue
        # remove the surrogate block, which cannot appear in valid UTF-8 text
        if lo <= _SURROGATES[1] and hi >= _SURROGATES[0]:
            if lo < _SURROGATES[0]:
                clipped.append((lo, _SURROGATES[0] - 1))
            if hi > _SURROGATES[1]:
                clipped.append((_SURROGATES[1] + 1, hi))
        else:
            clipped.append((lo, hi))
    clipped.sort()
    return _merge_sorted(clipped)


def _merge_sorted(intervals: Iterable[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    """Merges sorted, clipped, surrogate-free intervals that overlap or touch."""
    merged: list[tuple[int, int]] = []
    for lo, hi in intervals:
        if merged and lo <= merged[-1][1] + 1:
            if hi > merged[-1][1]:
                merged[-1] = (merged[-1][0], hi)
        else:
            merged.append((lo, hi))
    return tuple(merged)


def utf8_prefix_interval(prefix: bytes) -> tuple[int, int] | None:
    """The code points whose UTF-8 encoding starts with ``prefix`` (an incomplete character), or None."""
    lead = prefix[0]
    n = len(prefix)
    if 0xC2 <= lead <= 0xDF:
        size, value, floor = 2, lead & 0x1F, 0x80
    elif 0xE0 <= lead <= 0xEF:
        size, value, floor = 3, lead & 0x0F, 0x800
    elif 0xF0 <= lead <= 0xF4:
        size, value, floor = 4, lead & 0x07, 0x10000
    else:
        return None
    if n >= size:
        return None
    for byte in prefix[1:]:
        if not 0x80 <= byte <= 0xBF:
            return None
        value = (value << 6) | (byte & 0x3F)
    free_bits = 6 * (size - n)
    lo = max(value << free_bits, floor)
    hi = min(((value + 1) << free_bits) - 1, MAX_CODE_POINT)
    if size == 3:
        # a 3-byte prefix that only covers surrogates is not valid UTF-8
        if lo >= _SURROGATES[0] and hi <= _SURROGATES[1]:
            return None
    return (lo, hi) if lo <= hi else None


def utf8_length(lead: int) -> int:
    """How many bytes the UTF-8 character starting with ``lead`` has (0 if ``lead`` cannot start one)."""
    if lead < 0x80:
        return 1
    if 0xC2 <= lead <= 0xDF:
        return 2
    if 0xE0 <= lead <= 0xEF:
        return 3
    if 0xF0 <= lead <= 0xF4:
        return 4
    return 0


_OF_MEMO: dict[object, CharSet] = {}
register_memo(_OF_MEMO.clear)  # emptied when a burst of enforcers ends (core/cache_release.py)
_OF_MEMO_SIZE = 8192

_NARROW = 24
"""At most this many ASCII characters (and nothing else) make a set ``narrow``."""


class CharSet:
    """An immutable set of characters. Build with ``of``, ``ranges``, ``ANY`` and the set operators."""

    __slots__ = ("intervals", "ascii", "_starts", "_hash", "_prefix_cache", "_complement", "_narrow")

    def __init__(self, intervals: Iterable[tuple[int, int]] = ()) -> None:
        self._fill(_normalize(intervals))

    def _fill(self, intervals: tuple[tuple[int, int], ...]) -> None:
        """Sets the fields from intervals that are already normalized (sorted, disjoint, not adjacent, clipped,
        surrogate-free): the set operators produce such intervals and skip ``_normalize``."""
        self.intervals = intervals
        self._starts = [lo for lo, _ in intervals]
        table = bytearray(128)
        for lo, hi in intervals:
            if lo >= 128:
                break
            top = min(hi, 127) + 1
            table[lo:top] = b"\x01" * (top - lo)
        self.ascii = bytes(table)
        self._hash = hash(intervals)
        self._prefix_cache: dict[bytes, bool] = {}
        self._complement: CharSet | None = None
        self._narrow: tuple[int, ...] | None | bool = False  # not computed yet

    @property
    def narrow(self) -> tuple[int, ...] | None:
        """The set's characters as byte values when it holds only a few ASCII characters (``,`` ``}`` and
        whitespace after a value), else None: a walk then looks those bytes up in a wide trie node
        instead of testing each of its ~250 children (computed at first use)."""
        narrow = self._narrow
        if narrow is False:
            intervals = self.intervals
            if (not intervals or intervals[-1][1] < 128) and self.ascii.count(1) <= _NARROW:
                narrow = _members(self.ascii)
            else:
                narrow = None
            self._narrow = narrow
        return narrow  # type: ignore[return-value]

    @classmethod
    def _normalized(cls, intervals: tuple[tuple[int, int], ...]) -> CharSet:
        """A CharSet of intervals known to be normalized (see ``_fill``)."""
        made = cls.__new__(cls)
        made._fill(intervals)
        return made

    @classmethod
    def of(cls, chars: Iterable[str]) -> CharSet:
        """The set of the given characters. Memoised by the characters as given: parsers ask for the same
        small sets at every trie node they walk (a key's next letters, a few structural characters), and a
        set's construction costs more than the walk step that wants it."""
        key = chars if chars.__class__ is str else tuple(chars)
        made = _OF_MEMO.get(key)
        if made is None:
            points = [(p, p) for p in sorted({ord(c) for c in key})]
            if any(_SURROGATES[0] <= p <= _SURROGATES[1] for p, _ in points):
                made = cls(points)  # a lone surrogate in a Python string: dropped by _normalize
            else:
                made = cls._normalized(_merge_sorted(points))
            if len(key) <= 64:  # small sets recur; a long list of characters is rare and would hold memory
                if len(_OF_MEMO) >= _OF_MEMO_SIZE:
                    _OF_MEMO.clear()  # rare: rebuilt on demand
                _OF_MEMO[key] = made
        return made

    @classmethod
    def ranges(cls, *pairs: tuple[str, str]) -> CharSet:
        """The set of the characters in the given inclusive ranges, e.g. ``ranges(('0', '9'))``."""
        return cls((ord(a), ord(b)) for a, b in pairs)

    def __contains__(self, ch: str) -> bool:
        cp = ord(ch)
        if cp < 128:
            return self.ascii[cp] == 1
        i = bisect_right(self._starts, cp) - 1
        return i >= 0 and cp <= self.intervals[i][1]

    def contains_interval(self, lo: int, hi: int) -> bool:
        """Whether every character with a code point in ``[lo, hi]`` is in the set."""
        i = bisect_right(self._starts, lo) - 1
        return i >= 0 and self.intervals[i][1] >= hi

    def intersects_interval(self, lo: int, hi: int) -> bool:
        """Whether any character with a code point in ``[lo, hi]`` is in the set."""
        i = bisect_right(self._starts, hi) - 1
        return i >= 0 and self.intervals[i][1] >= lo

    def allows_utf8_prefix(self, prefix: bytes) -> bool:
        """Whether some character of the set has a UTF-8 encoding that starts with ``prefix``."""
        cached = self._prefix_cache.get(prefix)
        if cached is None:
            interval = utf8_prefix_interval(prefix)
            cached = interval is not None and self.intersects_interval(*interval)
            if len(self._prefix_cache) < 4096:
                self._prefix_cache[prefix] = cached
        return cached

    def __or__(self, other: CharSet) -> CharSet:
        a, b = self.intervals, other.intervals
        if not b or a == b:
            return self
        if not a:
            return other
        merged = _merge_sorted(sorted(a + b))  # both are normalized: no clipping to do
        return self if merged == a else CharSet._normalized(merged)

    def complement(self) -> CharSet:
        """Every character not in this set (computed once per set: patterns complement the same classes)."""
        done = self._complement
        if done is None:
            gaps: list[tuple[int, int]] = []
            previous = -1
            low, high = _SURROGATES
            for lo, hi in (*self.intervals, (MAX_CODE_POINT + 1, MAX_CODE_POINT + 1)):
                if lo > previous + 1:
                    start, end = previous + 1, lo - 1
                    if start <= high and end >= low:  # the gap spans (part of) the surrogate block
                        if start < low:
                            gaps.append((start, low - 1))
                        if end > high:
                            gaps.append((high + 1, end))
                    else:
                        gaps.append((start, end))
                previous = hi
            done = self._complement = CharSet._normalized(tuple(gaps))
        return done

    def __sub__(self, other: CharSet) -> CharSet:
        if not other.intervals or not self.intervals:
            return self
        return self & other.complement()

    def __and__(self, other: CharSet) -> CharSet:
        a, b = self.intervals, other.intervals
        if a == b:
            return self
        out: list[tuple[int, int]] = []
        i = j = 0
        len_a, len_b = len(a), len(b)
        while i < len_a and j < len_b:
            a_lo, a_hi = a[i]
            b_lo, b_hi = b[j]
            lo = a_lo if a_lo > b_lo else b_lo
            if a_hi < b_hi:
                if lo <= a_hi:
                    out.append((lo, a_hi))
                i += 1
            else:
                if lo <= b_hi:
                    out.append((lo, b_hi))
                j += 1
        # pieces of two normalized sets are sorted, disjoint and never adjacent (two adjacent characters in
        # both sets would lie in one interval of each, hence in one piece)
        if out == list(a):
            return self
        return CharSet._normalized(tuple(out))

    def __bool__(self) -> bool:
        return bool(self.intervals)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CharSet) and self.intervals == other.intervals

    def __hash__(self) -> int:
        return self._hash

    def size(self) -> int:
        """How many characters the set holds."""
        return sum(hi - lo + 1 for lo, hi in self.intervals)

    def chars(self, limit: int = 1 << 16) -> list[str]:
        """The characters of a small set, in code-point order (at most ``limit``)."""
        out: list[str] = []
        for lo, hi in self.intervals:
            for cp in range(lo, hi + 1):
                if len(out) >= limit:
                    return out
                out.append(chr(cp))
        return out

    def __repr__(self) -> str:
        def show(cp: int) -> str:
            return repr(chr(cp))[1:-1]

        parts = [show(lo) if lo == hi else f"{show(lo)}-{show(hi)}" for lo, hi in self.intervals[:12]]
        more = "..." if len(self.intervals) > 12 else ""
        return f"CharSet[{''.join(parts)}{more}]"


EMPTY = CharSet()
ANY = CharSet([(0, MAX_CODE_POINT)])


def union_memo(memo: dict, parts: tuple) -> CharSet:
    """The union of CharSets ``parts``, memoised in ``memo`` (a container context's: the same few unions
    recur at every step, and building a CharSet is the expensive part of a step)."""
    if len(parts) == 1:
        return parts[0]
    hit = memo.get(parts)
    if hit is None:
        hit = memo[parts] = shared_union(parts)
        if len(memo) > 4096:
            memo.clear()
    return hit


def shared_union(parts: tuple[CharSet, ...]) -> CharSet:
    """The union of CharSets ``parts`` from the process's memo, by value: the same unions recur in every
    schema (whitespace with a quote or a brace, after a key or a value), and each schema's states ask anew."""
    hit = _UNIONS.get(parts)
    if hit is None:
        intervals = [iv for part in parts for iv in part.intervals]
        hit = CharSet(intervals) if intervals else EMPTY
        if len(_UNIONS) >= _UNIONS_KEPT:
            _UNIONS.clear()  # rare: rebuilt on demand
        _UNIONS[parts] = hit
    return hit


_UNIONS: dict[tuple, CharSet] = {}
register_memo(_UNIONS.clear)  # emptied when a burst of enforcers ends (core/cache_release.py)
_UNIONS_KEPT = 4096


def _members(table: bytes) -> tuple[int, ...]:
    """The bytes an ASCII table (1 where allowed) allows (apart from ``CharSet.narrow``, a property read at
    every trie node: a generator there would make its ``self`` a cell at every read)."""
    found: list[int] = []
    byte = table.find(1)
    while byte >= 0:  # one C search per allowed byte (a narrow set has at most a few dozen), not 128 tests
        found.append(byte)
        byte = table.find(1, byte + 1)
    return tuple(found)
