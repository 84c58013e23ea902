"""How formatenforcer deals with Python's cycle collector (``gc``): the policy in one place.

- ``paused()``: no collection while the vocabulary index is built or loaded. Hundreds of thousands of
  small dicts and lists, none of them cyclic: young collections during the build only rescan them.
- ``freeze_existing()``: once the index is built, its ~130,000 dicts leave the collector's sight.

Masks and schema builds run with the collector as it is: pausing it there only defers its collections,
which then land together in the first allocation afterwards, often inside the next schema's first mask
(docs/performance.md has the measurement).

``FORMATENFORCER_GC_FREEZE=0`` leaves the collector entirely alone.
"""

from __future__ import annotations

import atexit
import gc
import os
from collections.abc import Iterator
from contextlib import contextmanager

_ENABLED = os.environ.get("FORMATENFORCER_GC_FREEZE", "1") != "0"
_FROZE = False


@contextmanager
def paused() -> Iterator[None]:
    """No cycle collection inside the block; only the outermost of nested pauses re-enables, and only if
    the collector was enabled before it."""
    paused_here = _ENABLED and gc.isenabled()
    if paused_here:
        gc.disable()
    try:
        yield
    finally:
        if paused_here:
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
