"""Filling the bitmask rows of many sequences at once: what a serving engine does between two forward passes.

``fill_bitmasks(matchers, bitmask, rows)`` writes each matcher's mask into its row. The masks come from the
matchers' enforcers, whose caches are shared and thread-safe, so the rows are independent: rows whose mask
is already known are written at once, and when several rows need a new mask those are computed on a small
thread pool. The compiled walks (core/_native.c) release the GIL, so they overlap; the Python walk holds it,
so the pool cannot make those rows faster than one after another, only no slower.

``fill_position_bitmasks(enforcer, positions, bitmask, rows)`` does the same for positions of one enforcer
(``TokenEnforcer.position_after``), for adapters that key each row by its generated ids rather than keep a
matcher per sequence (the transformers ``LogitsProcessor``: beams are reordered and dropped between steps).

``FORMATENFORCER_THREADS`` sets the pool's size (default: the machine's cores, at most 8); 1 computes every
row on the calling thread.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import numpy as np

from .bitmask import write_row
from .matcher import Matcher, Stepper, log_fallback
from .position import Position

_T = TypeVar("_T")
_R = TypeVar("_R")

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


def _checked_rows(count: int, bitmask: Any, rows: Sequence[int] | None, name: str, what: str) -> Sequence[int]:
    if rows is None:
        rows = range(count)
    if len(rows) != count:
        raise ValueError(f"{name}: {count} {what} but {len(rows)} rows")
    height = bitmask.shape[0]
    for row in rows:
        if not 0 <= row < height:
            raise ValueError(f"{name}: row {row} is outside the bitmask's {height} rows")
    return rows


def _compute_new(compute: Callable[[_T], _R], new: list[_T]) -> list[_R]:
    """``compute`` of each item whose mask is new, in order: on the pool when there are several and the pool
    has more than one thread, else one after another on this thread."""
    if len(new) > 1 and pool_size() > 1:
        return list(_pool().map(compute, new))
    return [compute(item) for item in new]


def fill_bitmasks(matchers: Sequence[Matcher], bitmask: Any, rows: Sequence[int] | None = None) -> None:
    """Writes ``matchers[i]``'s allowed-token mask into ``bitmask[rows[i]]`` (``rows`` defaults to 0, 1, ...).

    ``bitmask``: an int32 numpy array or torch tensor of shape ``(batch, ceil(vocab / 32))``. Raises
    ValueError when ``rows`` and ``matchers`` differ in length or a row is outside the bitmask. The rows are
    exactly what each matcher's own ``fill_bitmask`` writes, whichever thread computed them."""
    rows = _checked_rows(len(matchers), bitmask, rows, "fill_bitmasks", "matchers")
    # the new masks on the pool (each matcher keeps its own on its position); then every row in order
    _compute_new(Matcher.mask, [matcher for matcher in matchers if not matcher.has_mask()])
    for matcher, row in zip(matchers, rows):
        write_row(bitmask, row, matcher.mask())


def fill_position_bitmasks(
    enforcer: Stepper, positions: Sequence[Position | None], bitmask: Any, rows: Sequence[int] | None = None
) -> None:
    """Writes ``enforcer.mask(positions[i])`` into ``bitmask[rows[i]]`` (``rows`` defaults to 0, 1, ...); a
    None position (generated ids the format refused: ``position_after`` returned None) gets end-of-sequence
    alone.

    The same rows as writing each mask in turn, bit for bit: the masks not yet known are computed on the pool,
    each distinct position once (beams often share one). An internal error while computing a mask (a bug in a
    parser, a custom ``CharacterParser`` that raises) is logged and its row gets end-of-sequence alone, as
    ``TokenEnforcer.allowed_tokens`` answers, so no exception reaches the engine's loop. Raises ValueError
    when ``rows`` and ``positions`` differ in length or a row is outside the bitmask."""
    rows = _checked_rows(len(positions), bitmask, rows, "fill_position_bitmasks", "positions")
    new: dict[int, Position] = {}
    for position in positions:
        if position is not None and position.mask is None and not position.finished:
            new.setdefault(id(position), position)
    computed = dict(zip(new, _compute_new(lambda position: _mask_or_none(enforcer, position), list(new.values()))))
    eos = enforcer.vocabulary.eos_mask
    for position, row in zip(positions, rows):
        if position is None:
            mask = eos
        else:
            mask = computed[id(position)] if id(position) in computed else enforcer.mask(position)
        write_row(bitmask, row, eos if mask is None else mask)


def _mask_or_none(enforcer: Stepper, position: Position) -> np.ndarray | None:
    try:
        return enforcer.mask(position)
    except Exception as error:  # noqa: BLE001 - never into the engine's loop (see fill_position_bitmasks)
        log_fallback(error)
        return None
