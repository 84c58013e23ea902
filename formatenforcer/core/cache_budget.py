"""A memory budget for the caches a Vocabulary shares between every parser enforced over it.

Why: the shared caches (lexeme walks, free-run tables of the whole vocabulary and of its subtrees, the texts
of subtrees, shared-children groups, explored lexeme automata, first-byte masks) are filled by whatever
schemas a long-running server meets, and nothing else ever frees them. A ``CacheBudget`` holds the
approximate bytes of every entry of every cache made from it (``BudgetedCache``) and, when their sum passes
its limit, evicts the least recently used entries across all of them until the sum is back under three
quarters of the limit (evicting in batches keeps the cost of finding the oldest entries rare).

Eviction never changes a mask: every entry is a pure function of its key (and of the vocabulary), so an
evicted one is recomputed identically when it is next needed. Callers hold their own reference to a value
they read, so evicting it while in use is harmless.

Sizes are approximations (``approx_bytes``): numpy arrays by ``nbytes``, containers by ``sys.getsizeof``
plus their contents, ids at 36 bytes each; the vocabulary's own trie nodes and parser states an entry refers
to are not counted (they live as long as the vocabulary or the parser).

Thread safety: inserts, removals and eviction take the budget's lock; a lookup reads the dict without it
(one ``dict.get``, atomic under the GIL) and stamps the entry's last use with a shared counter, so hits stay
as cheap as a plain dict's.
"""

from __future__ import annotations

import itertools
import os
import sys
import threading
import types
from collections.abc import Callable, Hashable, Iterator
from typing import Any

import numpy as np

__all__ = ["DEFAULT_CACHE_BYTES", "BudgetedCache", "CacheBudget", "approx_bytes", "default_cache_bytes"]

DEFAULT_CACHE_BYTES = 256 << 20
"""The default budget of a Vocabulary's shared caches (256 MiB)."""


def default_cache_bytes() -> int:
    """The budget of a Vocabulary made without ``cache_bytes``: ``FORMATENFORCER_CACHE_MB`` (MiB) when set,
    else ``DEFAULT_CACHE_BYTES``."""
    text = os.environ.get("FORMATENFORCER_CACHE_MB")
    if not text:
        return DEFAULT_CACHE_BYTES
    try:
        megabytes = float(text)
    except ValueError:
        raise ValueError(f"FORMATENFORCER_CACHE_MB must be a number of MiB, got {text!r}") from None
    if not megabytes >= 0 or megabytes == float("inf"):
        raise ValueError(f"FORMATENFORCER_CACHE_MB must be a non-negative number of MiB, got {text!r}")
    return int(megabytes * (1 << 20))


_LOW_WATER = 0.75
"""Eviction goes down to this share of the limit, so that it runs once per quarter of the budget filled."""
_ID_BYTES = 36
"""An int in a list: its pointer and the int object (ids above 256 are not shared)."""
_OBJECT_BYTES = 64
"""An object past the walk's limit, or one that holds its own budget (a table counted in its own cache)."""
_STATE_BYTES = 8192
STATE_BYTES = _STATE_BYTES
"""What another object an entry refers to counts for: mostly parser states with their parts (a lexeme walk's
end states). Calibrated with ``benchmarks/cache_inventory.py``, which walks every object the caches hold."""
_NOT_OWNED = frozenset({"Vocabulary", "FreeRunTable", "TokenTexts", "BudgetedCache", "CacheBudget"})
"""Classes an entry may refer to but never owns (the vocabulary; tables and texts counted in their caches)."""
_MISSING = object()
_SKIPPED = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType)


def approx_bytes(value: object) -> int:
    """The approximate bytes ``value`` holds: numpy arrays by ``nbytes`` (views: their header), containers
    with what they hold, the top-level object's attributes, and ``_STATE_BYTES`` for each other object it
    refers to. Not counted: plain dicts keyed by bytes inside an entry (the vocabulary's trie nodes), the
    vocabulary, and tables and texts below the entry's top level (each counted in its own cache)."""
    total, seen = 0, set()
    stack: list[tuple[object, bool]] = [(value, True)]
    while stack:
        obj, top = stack.pop()  # top: the entry itself or one of its attributes
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        kind = obj.__class__
        if kind is int or kind is bool or kind is float or obj is None:
            total += _ID_BYTES - 8
        elif kind is np.ndarray:
            total += 112 + (obj.nbytes if obj.base is None else 0)  # type: ignore[attr-defined]
        elif kind is bytes or kind is str:
            total += sys.getsizeof(obj)
        elif kind is list or kind is tuple or kind is set or kind is frozenset:
            total += sys.getsizeof(obj)
            if (kind is list or kind is tuple) and obj and obj[0].__class__ is int:  # type: ignore[index]  # ids
                total += (_ID_BYTES - 8) * len(obj)  # type: ignore[arg-type]
                continue
            stack.extend((item, False) for item in tuple(obj))  # type: ignore[arg-type]
        elif isinstance(obj, dict):
            if kind is dict and not top and obj and next(iter(obj)).__class__ is int:
                total += 8  # a vocabulary trie node: shared
                continue
            total += sys.getsizeof(obj)
            for key, item in tuple(obj.items()):  # (copied in one call: another thread may be filling it)
                stack.append((key, False))
                stack.append((item, False))
        elif top and obj is value:
            total += sys.getsizeof(obj)
            for name in _attributes(obj):
                stack.append((getattr(obj, name, None), True))
        elif kind.__name__ in _NOT_OWNED or isinstance(obj, _SKIPPED):
            total += 8
        else:
            total += _STATE_BYTES  # a parser state and its parts: not walked (too costly at every insert)
    return total


def _attributes(obj: object) -> Iterator[str]:
    names = getattr(obj, "__dict__", None)
    if names is not None:
        yield from tuple(names)
    for klass in type(obj).__mro__:
        slots = klass.__dict__.get("__slots__", ())
        yield from ((slots,) if isinstance(slots, str) else slots)


class CacheBudget:
    """Byte accounting and least-recently-used eviction across a set of caches (one budget per Vocabulary).

    ``limit``: the bytes the caches may hold together (None: ``default_cache_bytes()``); settable at any time (the
    next insert evicts down to it). 0 keeps nothing past the entry just made."""

    def __init__(self, limit: int | None = None) -> None:
        self._limit = default_cache_bytes() if limit is None else _checked_limit(limit)
        self.used = 0
        """Approximate bytes held by every cache of this budget."""
        self.evictions = 0
        """Entries evicted so far (for benchmarks and tests)."""
        self._caches: list[BudgetedCache] = []
        self._lock = threading.RLock()
        self._clock = itertools.count(1)

    @property
    def limit(self) -> int:
        return self._limit

    @limit.setter
    def limit(self, value: int) -> None:
        with self._lock:
            self._limit = _checked_limit(value)
            if self.used > self._limit:
                self._evict(None)

    def cache(self, name: str, sizer: Callable[[object], int] = approx_bytes, grows: bool = False) -> BudgetedCache:
        """A new cache whose entries count against this budget (``sizer`` gives an entry's bytes). ``grows``:
        its entries fill parts of themselves as they are used (a free-run table's masks by length), so they
        are measured again before each eviction."""
        made = BudgetedCache(self, name, sizer, grows)
        with self._lock:
            self._caches.append(made)
        return made

    def usage(self) -> dict[str, tuple[int, int]]:
        """Per cache name: (entries, approximate bytes, as of their insert or the last eviction)."""
        with self._lock:
            return {cache.name: (len(cache), cache.used) for cache in self._caches}

    def clear(self) -> None:
        """Empties every cache of this budget."""
        with self._lock:
            for cache in self._caches:
                cache.clear()

    def _evict(self, keep: BudgetedCache | None, kept_key: Hashable = None) -> None:
        """Drops the least recently used entries until the caches hold at most ``_LOW_WATER`` of the limit
        (call under the lock); the entry just made (``keep``, ``kept_key``) stays."""
        for cache in self._caches:
            if cache.grows:
                for entry in cache._data.values():
                    size = cache._sizer(entry[0])
                    cache.used += size - entry[1]
                    self.used += size - entry[1]
                    entry[1] = size
        entries = []
        for cache in self._caches:
            for key, entry in cache._data.items():
                if cache is not keep or key != kept_key:
                    entries.append((entry[2], key, cache))
        entries.sort(key=lambda item: item[0])
        target = int(self._limit * _LOW_WATER)
        for _, key, cache in entries:
            if self.used <= target:
                break
            entry = cache._data.pop(key, None)
            if entry is not None:
                cache.used -= entry[1]
                self.used -= entry[1]
                self.evictions += 1

    def __repr__(self) -> str:
        return f"CacheBudget(used={self.used}, limit={self._limit}, caches={len(self._caches)})"


def _checked_limit(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"cache budget must be a non-negative number of bytes, got {value!r}")
    return value


class BudgetedCache:
    """A dict-like cache (``get``, ``[]``, ``in``, ``len``, ``clear``, ``setdefault``) whose entries count
    against a ``CacheBudget`` and may be evicted by it at any insert, in this cache or another."""

    __slots__ = ("budget", "name", "used", "grows", "_data", "_sizer")

    def __init__(self, budget: CacheBudget, name: str, sizer: Callable[[object], int], grows: bool = False) -> None:
        self.budget = budget
        self.name = name
        self.grows = grows
        self.used = 0
        self._data: dict[Hashable, list] = {}
        """key -> [value, approximate bytes, last use]"""
        self._sizer = sizer

    def get(self, key: Hashable, default: Any = None) -> Any:
        entry = self._data.get(key)
        if entry is None:
            return default
        entry[2] = next(self.budget._clock)
        return entry[0]

    def __getitem__(self, key: Hashable) -> Any:
        found = self.get(key, _MISSING)
        if found is _MISSING:
            raise KeyError(key)
        return found

    def __contains__(self, key: Hashable) -> bool:
        return key in self._data

    def __iter__(self) -> Iterator[Hashable]:
        """The keys, as a snapshot (other threads may insert or evict meanwhile)."""
        return iter(list(self._data))

    def __len__(self) -> int:
        return len(self._data)

    def __setitem__(self, key: Hashable, value: Any) -> None:
        self.put(key, value)

    def put(self, key: Hashable, value: Any, size: int | None = None) -> None:
        """Stores ``value`` (``size`` bytes: by default the cache's sizer's estimate), evicting the least
        recently used entries of the budget if it is now over its limit."""
        size = self._sizer(value) if size is None else size
        budget = self.budget
        with budget._lock:
            old = self._data.get(key)
            if old is not None:
                self.used -= old[1]
                budget.used -= old[1]
            self._data[key] = [value, size, next(budget._clock)]
            self.used += size
            budget.used += size
            if budget.used > budget._limit:
                budget._evict(self, key)

    def setdefault(self, key: Hashable, value: Any, size: int | None = None) -> Any:
        """The value at ``key``, storing ``value`` there first when there is none."""
        with self.budget._lock:
            found = self.get(key, _MISSING)
            if found is not _MISSING:
                return found
            self.put(key, value, size)
            return value

    def pop(self, key: Hashable, default: Any = None) -> Any:
        with self.budget._lock:
            entry = self._data.pop(key, None)
            if entry is None:
                return default
            self.used -= entry[1]
            self.budget.used -= entry[1]
            return entry[0]

    def clear(self) -> None:
        with self.budget._lock:
            self.budget.used -= self.used
            self.used = 0
            self._data.clear()

    def __repr__(self) -> str:
        return f"BudgetedCache({self.name!r}, entries={len(self._data)}, bytes={self.used})"
