"""Filling the bitmask rows of many sequences at once: what a serving engine does between two forward passes.

``fill_bitmasks(matchers, bitmask, rows)`` writes each matcher's mask into its row. The masks come from the
matchers' enforcers, whose caches are shared and thread-safe, so the rows are independent: rows whose mask
is already known are written at once, and when several rows need a new mask those are computed on a small
thread pool. The compiled walks (core/_native.c) release the GIL, so they overlap; the Python walk holds it,
so the pool cannot make those rows faster than one after another, only no slower.

``FORMATENFORCER_THREADS`` sets the pool's size (default: the machine's cores, at most 8); 1 computes every
row on the calling thread.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from .bitmask import write_row
from .matcher import Matcher

_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def pool_size() -> int:
    """The number of threads ``fill_bitmasks`` computes new masks on (``FORMATENFORCER_THREADS``, else the
    machine's cores, at most 8)."""
    raw = os.environ.get("FORMATENFORCER_THREADS")
    if raw:
        try:
            return max(1, int(raw))
        except ValueError:
            pass
    return max(1, min(8, os.cpu_count() or 1))


def _forget_pool() -> None:
    """In a forked child the parent's pool threads do not exist: a new pool is made on first use."""
    global _POOL
    _POOL = None


os.register_at_fork(after_in_child=_forget_pool)


def _pool() -> ThreadPoolExecutor:
    global _POOL
    if _POOL is None:
        with _POOL_LOCK:
            if _POOL is None:
                _POOL = ThreadPoolExecutor(max_workers=pool_size(), thread_name_prefix="formatenforcer-mask")
    return _POOL


def fill_bitmasks(matchers: Sequence[Matcher], bitmask: Any, rows: Sequence[int] | None = None) -> None:
    """Writes ``matchers[i]``'s allowed-token mask into ``bitmask[rows[i]]`` (``rows`` defaults to 0, 1, ...).

    ``bitmask``: an int32 numpy array or torch tensor of shape ``(batch, ceil(vocab / 32))``. Raises
    ValueError when ``rows`` and ``matchers`` differ in length or a row is outside the bitmask. The rows are
    exactly what each matcher's own ``fill_bitmask`` writes, whichever thread computed them."""
    if rows is None:
        rows = range(len(matchers))
    if len(rows) != len(matchers):
        raise ValueError(f"fill_bitmasks: {len(matchers)} matchers but {len(rows)} rows")
    height = bitmask.shape[0]
    for row in rows:
        if not 0 <= row < height:
            raise ValueError(f"fill_bitmasks: row {row} is outside the bitmask's {height} rows")
    new = [(matcher, row) for matcher, row in zip(matchers, rows) if not matcher.has_mask()]
    if len(new) > 1 and pool_size() > 1:
        # the new masks on the pool (each matcher keeps its own on its position); then every row in order
        for _ in _pool().map(Matcher.mask, [matcher for matcher, _ in new]):
            pass
    for matcher, row in zip(matchers, rows):
        write_row(bitmask, row, matcher.mask())
