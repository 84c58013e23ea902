"""How formatenforcer deals with Python's cycle collector (``gc``): every policy in one place.

Why it matters: building a schema and computing a mask allocate thousands of short-lived parser states, and
the long-lived caches (vocabulary tables, cached walks) hold tens of thousands of containers. Each young
collection triggered by those allocations, and each full collection that walks the caches, landed inside a
mask: on MaskBench the collector took ~10% of all mask time (1.3-1.5 s of ~14 s; docs/performance.md).

- ``paused()``: no collection while formatenforcer computes something whose allocations are freed by
  reference counting (states of a walk) or live on in caches. Collections resume afterwards, so the memory
  of any real garbage cycle is still reclaimed, just not in the middle of a mask. Nested and concurrent uses
  are safe: only the outermost pause re-enables, and only if the collector was enabled before it.
- ``freeze_existing()``: after the vocabulary index is built, its ~130,000 dicts leave the collector's sight.

``FORMATENFORCER_GC_FREEZE=0`` opts out of both: the collector is then left entirely alone.
"""

from __future__ import annotations

import atexit
import gc
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_ENABLED = os.environ.get("FORMATENFORCER_GC_FREEZE", "1") != "0"
_LOCK = threading.Lock()
_DEPTH = 0
_RESUME = False
_FROZE = False


@contextmanager
def paused() -> Iterator[None]:
    """No cycle collection inside the block (see the module docstring)."""
    global _DEPTH, _RESUME
    if not _ENABLED:
        yield
        return
    with _LOCK:
        if _DEPTH == 0:
            _RESUME = gc.isenabled()
            gc.disable()
        _DEPTH += 1
    try:
        yield
    finally:
        with _LOCK:
            _DEPTH -= 1
            if _DEPTH == 0 and _RESUME:
                gc.enable()


def freeze_existing() -> None:
    """Moves every object alive now out of the cycle collector's sight (``gc.freeze``).

    The trie is ~130,000 nested dicts that live as long as the process and never form cycles, yet each full
    collection walked them all: 150-200 ms on this machine, a pause that landed inside random masks. Frozen
    objects are still freed by reference counting; only a reference cycle that already exists at this moment
    would never be reclaimed. vLLM freezes its heap after start-up for the same reason."""
    global _FROZE
    if _ENABLED:
        gc.freeze()
        if not _FROZE:  # shutdown collects as usual (extension modules report "leaks" of frozen objects)
            atexit.register(gc.unfreeze)
            _FROZE = True
