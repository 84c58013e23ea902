"""How formatenforcer deals with Python's cycle collector (``gc``): every policy in one place.

Why it matters: building a schema and computing a mask allocate thousands of short-lived parser states, and
the long-lived caches (vocabulary tables, cached walks) hold tens of thousands of containers. Each young
collection triggered by those allocations, and each full collection that walks the caches, landed inside a
mask: on MaskBench the collector took ~10% of all mask time (1.3-1.5 s of ~14 s; docs/performance.md).

- ``paused()``: no collection while formatenforcer computes something whose allocations are freed by
  reference counting (states of a walk) or live on in caches. Collections resume afterwards, so the memory
  of any real garbage cycle is still reclaimed, just not in the middle of a mask. Nested uses are safe: only
  the outermost pause re-enables, and only if the collector was enabled before it. Across threads a pause
  may end while another thread is still working: that thread may then meet a collection, nothing worse.
- ``freeze_existing()``: after the vocabulary index is built, its ~130,000 dicts leave the collector's sight.

``FORMATENFORCER_GC_FREEZE=0`` opts out of both: the collector is then left entirely alone.
"""

from __future__ import annotations

import atexit
import gc
import os
from collections.abc import Iterator
from contextlib import contextmanager

_ENABLED = os.environ.get("FORMATENFORCER_GC_FREEZE", "1") != "0"
_FROZE = False


def pause() -> bool:
    """Disables the collector if it is enabled; returns whether this call did (pass it to ``resume``). For
    the mask path, where ``paused()``'s generator would cost ~3 µs per mask."""
    if _ENABLED and gc.isenabled():
        gc.disable()
        return True
    return False


def resume(paused_here: bool) -> None:
    """Re-enables the collector if the matching ``pause`` disabled it."""
    if paused_here:
        gc.enable()


@contextmanager
def paused() -> Iterator[None]:
    """No cycle collection inside the block (see the module docstring)."""
    paused_here = pause()
    try:
        yield
    finally:
        resume(paused_here)


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
