"""Budgets: how a setting in seconds or megabytes is read (a mask's ``EnforcerConfig.mask_seconds``, a
build's ``JsonConfig.build_seconds`` and ``build_megabytes``, ``GrammarParser``'s and ``RegexParser``'s), and
the process's resident memory that a memory budget is measured against."""

from __future__ import annotations

import os


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
