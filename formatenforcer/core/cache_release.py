"""Frees the shared caches' entries that only dropped parsers used: when a burst of live parsers ends, and
every ``RETIRED`` dropped parsers.

Why: the caches a Vocabulary shares between parsers (``cache_budget.py``) and the module-level memos (regex
automata, ECMA pattern parses, charsets, ...) are bounded, but a process that kept thousands of parsers alive
fills them with entries made one or a few at a time among those parsers' own short-lived objects. When the
parsers go, the entries stay, and each keeps its whole 1 MiB arena of CPython's small-object allocator from
being returned to the system: at 10,000 live schemas, 62 MiB of cache entries pinned some 550 MiB.

How: every ``TokenEnforcer`` is tracked here with its birth, a stamp of the clock its vocabulary's caches
stamp each entry's last use with (``CLOCK``). An entry last used before the oldest live enforcer was born
has been used by dropped enforcers only. Sweeps come two ways:

- The end of a burst: when the number of live enforcers falls to a quarter of its recent high, after a high
  of at least ``BURST`` (and again at each further quarter, down to none, while no new one is made), every
  budget drops those entries, every registered module memo and ``lru_cache`` of the package is emptied, and
  the C heap is trimmed (glibc keeps freed pages otherwise).
- Retirements: whenever ``RETIRED`` enforcers have been dropped since the last sweep, however many are alive.
  Enforcers whose lives overlap (a server with one or two requests always in flight, each new one made before
  the last one goes) never end a burst; without this, their dropped schemas' entries stayed until the budget
  evicted them, and after the last one went. Such a sweep keeps, besides what live enforcers used, the
  entries used since the ``RECENT``-th latest enforcer was born (those of the schemas a server meets all the
  time, costly to rebuild), leaves the module memos (bounded by their entry counts; emptying them every
  ``RETIRED`` enforcers cost 20-50% more time on 3,000 distinct schemas) and trims the heap.

Entries that live enforcers use stay (used since their birth), and their masks are their parsers' own
(``enforcer.py``), never swept.

Dropping an entry never changes a mask: entries and memos are pure functions of their keys, recomputed
identically when next needed (``python benchmarks/mask_digest.py``).

Thread safety: the sweep runs in the finalizer of the enforcer whose release triggers it, in whatever thread
and at whatever point the collector frees it. A budget whose lock is held at that moment (by this thread or
another) is swept at its next insert instead (``CacheBudget.drop_unused_since``); memos are emptied by their
own clearing function, which must be safe to call at any point (a plain ``dict.clear``, an ``lru_cache``'s
``cache_clear``, or one that skips the clearing when its lock is taken).
"""

from __future__ import annotations

import gc
import itertools
import sys
import weakref
from collections import deque
from collections.abc import Callable
from typing import Any

__all__ = ["BURST", "CLOCK", "RECENT", "RETIRED", "live_count", "register_budget", "register_memo", "sweeps", "track"]

CLOCK = itertools.count(1)
"""The stamps of the budgets' entries (their last use) and of enforcers' births, from one counter."""
BURST = 64
"""Live enforcers a burst must reach before its end frees what only its dropped enforcers used."""

RETIRED = 256
"""Enforcers dropped since the last sweep that make the next one, however many are alive: the dropped
schemas' entries a process keeps between sweeps (at most a few tens of MB; ``docs/performance.md``)."""
RECENT = 64
"""The latest enforcers whose entries a sweep made by ``RETIRED`` keeps, live or not."""

_live: dict[int, int] = {}  # enforcer token -> birth stamp
_tokens = itertools.count()
_recent: deque[int] = deque(maxlen=RECENT)  # the births of the latest enforcers
_budgets: weakref.WeakSet[Any] = weakref.WeakSet()
_memos: list[Callable[[], object]] = []
_state: dict[str, Any] = {"high": 0, "draining": False, "sweeps": 0, "retired": 0, "cut": 0}
_MISSING = object()


def register_budget(budget: Any) -> None:
    """Sweeps include ``budget`` (a ``CacheBudget``) from now on, for as long as it lives."""
    _budgets.add(budget)


def register_memo(clear: Callable[[], object]) -> Callable[[], object]:
    """Sweeps call ``clear`` (it empties a module-level memo; safe to call at any point, in any thread)."""
    _memos.append(clear)
    return clear


def track(owner: object) -> None:
    """Counts ``owner`` (an enforcer) as live until it is collected."""
    token = next(_tokens)
    _live[token] = birth = next(CLOCK)
    _recent.append(birth)
    live = len(_live)
    _state["draining"] = False
    if live > _state["high"]:
        _state["high"] = live
    weakref.finalize(owner, _released, token).atexit = False  # (no sweeps while the interpreter exits)


def live_count() -> int:
    """Enforcers alive now (for tests and benchmarks)."""
    return len(_live)


def sweeps() -> int:
    """Sweeps made so far (for tests and benchmarks)."""
    return _state["sweeps"]


def _released(token: int) -> None:
    _live.pop(token, None)
    live = len(_live)
    high = _state["high"]
    _state["retired"] += 1
    if (high >= BURST or _state["draining"]) and live <= high // 4:
        _state["high"] = live
        _state["draining"] = live > 0
        sweep()
    elif _state["retired"] >= RETIRED:
        sweep(keep_recent=True)


def sweep(keep_recent: bool = False) -> None:
    """Drops, from every budget, the entries last used before the oldest live enforcer was born (all of them
    when none is alive), empties every registered module memo and ``lru_cache``, and trims the heap.
    ``keep_recent`` (a sweep made by ``RETIRED``): keeps too the entries used since the birth of the
    ``RECENT``-th latest enforcer (the schemas a server meets all the time), and leaves the memos; it is
    skipped when its cut-off is no later than the last sweep's (nothing left to drop)."""
    births = _live.copy().values()  # (one C call: another thread or a finalizer may change _live)
    if not births:
        _live.clear()  # gives back the table the burst grew (a dict keeps it when emptied one key at a time)
    oldest = min(births) if births else next(CLOCK)
    if keep_recent and _recent:
        oldest = min(oldest, _recent[0])
        if oldest <= _state["cut"]:  # nothing new to drop (a burst draining: its oldest still lives)
            _state["retired"] = 0
            return
    _state["cut"] = oldest
    _state["sweeps"] += 1
    _state["retired"] = 0
    for budget in list(_budgets):
        budget.drop_unused_since(oldest)
    if not keep_recent:
        for clear in tuple(_memos):
            clear()
        _clear_lru_caches()
    _trim_heap()
    _state["trim_after_collection"] = True  # the dropped parsers' cycles go at the next full collection


def _after_collection(phase: str, info: dict[str, int]) -> None:
    """(A ``gc`` callback.) Trims the heap again after the first full collection that follows a sweep."""
    if phase == "stop" and info.get("generation") == 2 and _state.get("trim_after_collection"):
        _state["trim_after_collection"] = False
        _trim_heap()


gc.callbacks.append(_after_collection)


def _trim_heap() -> None:
    """Returns the C heap's free pages to the system (glibc's ``malloc_trim``), where there is one: the
    dropped enforcers' masks were freed into the heap, and glibc gives back only its top on its own."""
    trim = _state.get("trim", _MISSING)
    if trim is _MISSING:
        trim = None
        if sys.platform.startswith("linux"):
            try:
                import ctypes

                trim = ctypes.CDLL(None).malloc_trim  # absent outside glibc (musl): AttributeError
                trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
            except (OSError, AttributeError):
                trim = None
        _state["trim"] = trim
    if trim is not None:
        trim(0)


def _clear_lru_caches() -> None:
    """Empties the ``functools.lru_cache`` memos of formatenforcer's modules (ECMA pattern parses and
    translations, number bounds, IDN tables, ...), but those of one entry (a table made once, such as the
    Unicode categories, which take a second to rebuild)."""
    for name, module in list(sys.modules.items()):
        if module is None or not name.startswith("formatenforcer"):
            continue
        for value in list(vars(module).values()):
            parameters = getattr(value, "cache_parameters", None)
            if parameters is not None and callable(parameters) and parameters().get("maxsize") != 1:
                value.cache_clear()
