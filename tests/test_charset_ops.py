"""CharSet's set operators build their results without re-normalizing (and complements are kept per set):
checked against the normalizing constructor and against plain Python sets of code points on random sets."""

from __future__ import annotations

import random

from formatenforcer.core.charset import ANY, EMPTY, MAX_CODE_POINT, CharSet

_SURROGATES = range(0xD800, 0xE000)
_EDGES = [0, 1, 9, 10, 31, 32, 126, 127, 128, 255, 0x7FF, 0x800, 0xD7FF, 0xD800, 0xDFFF, 0xE000, 0xFFFF,
          0x10000, MAX_CODE_POINT - 1, MAX_CODE_POINT]  # fmt: skip


def _random_set(rng: random.Random) -> CharSet:
    pairs = []
    for _ in range(rng.randint(0, 6)):
        lo = rng.choice(_EDGES) if rng.random() < 0.5 else rng.randint(0, 300)
        hi = lo + rng.choice([0, 1, 2, 50, 0x1000, MAX_CODE_POINT])
        pairs.append((lo, min(hi, MAX_CODE_POINT)))
    return CharSet(pairs)


def _points(chars: CharSet, sample: list[int]) -> set[int]:
    return {cp for cp in sample if chr(cp) in chars} if sample else set()


def _same_as_normalized(chars: CharSet) -> None:
    rebuilt = CharSet(chars.intervals)
    assert chars.intervals == rebuilt.intervals
    assert chars.ascii == rebuilt.ascii
    assert hash(chars) == hash(rebuilt) and chars == rebuilt


def test_operators_match_point_sets() -> None:
    rng = random.Random(7)
    near = (e + d for e in _EDGES for d in (-1, 1) if 0 <= e + d <= MAX_CODE_POINT)
    sample = sorted({*range(0, 400), *_EDGES, *near})
    sample = [cp for cp in sample if cp not in _SURROGATES]
    universe = set(sample)
    for _ in range(400):
        a, b = _random_set(rng), _random_set(rng)
        pa, pb = _points(a, sample), _points(b, sample)
        for result, expected in ((a & b, pa & pb), (a - b, pa - pb), (a | b, pa | pb), (a.complement(), universe - pa)):
            _same_as_normalized(result)
            assert _points(result, sample) == expected
            assert all(not (lo <= 0xDFFF and hi >= 0xD800) for lo, hi in result.intervals)
        assert a.complement().complement() == a


def test_edge_sets() -> None:
    assert ANY.complement() == EMPTY and EMPTY.complement() == ANY
    assert ANY - ANY == EMPTY and ANY & EMPTY == EMPTY and EMPTY - ANY == EMPTY
    assert (ANY - CharSet.of("a")).complement() == CharSet.of("a")
    assert "\ud7ff" in ANY.complement().complement() and "\ue000" in ANY


def test_of_matches_the_normalizing_constructor() -> None:
    """``CharSet.of`` merges runs itself and is memoised by its argument: the same sets as the constructor,
    whatever the order, repeats, runs or lone surrogates of the characters."""
    rng = random.Random(11)
    for _ in range(300):
        points = [rng.choice([rng.randint(0, 200), rng.choice(_EDGES), rng.randint(0xD7F0, 0xE010)])
                  for _ in range(rng.randint(0, 12))]  # fmt: skip
        chars = [chr(p) for p in points]
        expected = CharSet((p, p) for p in points)
        for given in (chars, "".join(chars), tuple(reversed(chars)), iter(chars)):
            made = CharSet.of(given)
            _same_as_normalized(made)
            assert made == expected
    assert CharSet.of("abc") is CharSet.of("abc")
