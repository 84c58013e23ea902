"""Filling the bitmask rows of many sequences at once: what a serving engine does between two forward passes.

``fill_bitmasks(matchers, bitmask, rows)`` writes each matcher's mask into its row. The masks come from the
matchers' enforcers, whose caches are shared and thread-safe, so the rows are independent; this function is
the one place that decides how they are computed for a batch (in order, one after the other, on the
Python walk, which holds the GIL).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .matcher import Matcher


def fill_bitmasks(matchers: Sequence[Matcher], bitmask: Any, rows: Sequence[int] | None = None) -> None:
    """Writes ``matchers[i]``'s allowed-token mask into ``bitmask[rows[i]]`` (``rows`` defaults to 0, 1, ...).

    ``bitmask``: an int32 numpy array or torch tensor of shape ``(batch, ceil(vocab / 32))``. Raises
    ValueError when ``rows`` and ``matchers`` differ in length or a row is outside the bitmask."""
    if rows is None:
        rows = range(len(matchers))
    if len(rows) != len(matchers):
        raise ValueError(f"fill_bitmasks: {len(matchers)} matchers but {len(rows)} rows")
    height = bitmask.shape[0]
    for row in rows:
        if not 0 <= row < height:
            raise ValueError(f"fill_bitmasks: row {row} is outside the bitmask's {height} rows")
    for matcher, row in zip(matchers, rows):
        matcher.fill_bitmask(bitmask, row)
