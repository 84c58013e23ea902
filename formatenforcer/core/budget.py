"""Budgets: how a setting in seconds or megabytes is read (a mask's ``EnforcerConfig.mask_seconds`` and
``mask_megabytes``, a build's ``JsonConfig.build_seconds`` and ``build_megabytes``, ``GrammarParser``'s and
``RegexParser``'s), and the process's resident memory that a memory budget is measured against."""

from __future__ import annotations

import os
import time


def checked_seconds(value: object, setting: str) -> float | None:
    """``value`` as a budget in seconds: None (no limit) or a positive, finite number. TypeError or
    ValueError naming ``setting`` otherwise (a bool is not a number of seconds)."""
    return _checked(value, setting, "seconds")


def checked_megabytes(value: object, setting: str) -> float | None:
    """``value`` as a memory budget in megabytes (MiB): None (no limit) or a positive, finite number.
    TypeError or ValueError naming ``setting`` otherwise."""
    return _checked(value, setting, "megabytes")


def _checked(value: object, setting: str, unit: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{setting} must be a number of {unit} or None, not {type(value).__name__}: {value!r}")
    if not 0 < value < float("inf"):
        raise ValueError(f"{setting} must be a positive, finite number of {unit} or None, not {value}")
    return float(value)


_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_STATM: list = [None, None]
"""(process id, file descriptor of its ``/proc/<pid>/statm``): kept open, as reading it again costs ~1.5 µs
where opening it costs ~15; opened anew in a forked child (``/proc/self`` was resolved at the open)."""


def resident_bytes() -> int | None:
    """The process's resident memory in bytes now (``/proc/self/statm``), or None where the system does not
    tell it (then a memory budget is not enforced)."""
    pid = os.getpid()
    try:
        if _STATM[0] != pid:
            _STATM[:] = [pid, os.open(f"/proc/{pid}/statm", os.O_RDONLY)]
        return int(os.pread(_STATM[1], 128, 0).split()[1]) * _PAGE
    except (OSError, ValueError, IndexError, AttributeError):
        return None


MEMORY_READ_SECONDS = 0.001
"""How often a memory budget reads the resident size, at most: its budget is polled at every step of a build
or every trie node of a walk, and a read costs ~2 µs."""


class MemoryCap:
    """A memory budget: the resident size the process may grow by (``growth`` bytes) from a starting size,
    read at most once every ``MEMORY_READ_SECONDS``. ``start``: the size it is measured from, or None to take
    the first read (no earlier than ``first_read``, a ``time.monotonic()`` instant) as the start, so that work
    ending sooner (most masks take microseconds) never pays for a read. It is a guard, not an account:
    memory the process freed earlier is grown into unseen, and other threads' growth counts too. Where the
    system does not tell the resident size, it is never exceeded."""

    __slots__ = ("growth", "cap", "next_read", "over")

    def __init__(self, growth: int, start: int | None = None, first_read: float = 0.0) -> None:
        self.growth = growth
        self.cap = None if start is None else start + growth
        self.next_read = first_read
        self.over = False

    def exceeded(self, now: float | None = None) -> bool:
        """Whether the process has grown past the budget (read now if the last read is old enough; once
        over, always over). ``now``: ``time.monotonic()``, if the caller has it."""
        if not self.over:
            if now is None:
                now = time.monotonic()
            if now >= self.next_read:
                self.next_read = now + MEMORY_READ_SECONDS
                size = resident_bytes()
                if size is not None:
                    if self.cap is None:
                        self.cap = size + self.growth
                    else:
                        self.over = size > self.cap
        return self.over
