"""The time and memory budget of one format's build: limits for everything a parser's constructor does.

Each automaton a build makes already stops at its own limit (``regex.COMPILE_SECONDS``), and is refused at
its keyword. A format with many of them (thousands of patterns, say) could still hold the building thread
for minutes, and one automaton whose states blow up (a subset construction, a product) can take gigabytes
before its time runs out; ``build_budget`` bounds the whole. It sets this thread's build deadline and memory
limit (the ones the automaton builders poll, ``fsm_crawl.deadline`` and ``fsm_crawl.memory_limit``: an
automaton's own time limit is cut to what is left of the budget), and the builder's loops call
``over_budget`` between their steps, which raises ``BuildTimeoutError`` or ``BuildMemoryError``.

The memory budget is the growth of the process's resident memory while the build runs (read at most once a
millisecond), so what other threads allocate meanwhile counts too: it is a guard against a format whose
build explodes, set well above what real formats need (tens of megabytes at most).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from ..core.errors import BuildMemoryError, BuildTimeoutError, FormatError
from . import fsm_crawl

_local = threading.local()
_UNSET = object()


@contextmanager
def build_budget(
    seconds: float | None, setting: str, megabytes: float | None = None, memory_setting: str = ""
) -> Iterator[None]:
    """Within this block this thread's builds stop after ``seconds`` or once the process has grown by
    ``megabytes`` (MiB; None: no limit of that kind); ``setting`` and ``memory_setting`` name where each
    budget is set, for the error message."""
    if seconds is None and megabytes is None:
        yield
        return
    previous = getattr(_local, "budget", None)
    _local.budget = (seconds, setting, megabytes, memory_setting)
    # the limits set and put back in place, as ``fsm_crawl.deadline`` and ``memory_limit`` do (their work
    # without two nested context managers around every schema's build)
    end = memory = _UNSET
    try:
        if seconds is not None:
            end = fsm_crawl.set_deadline(seconds)
        if megabytes is not None:
            memory = fsm_crawl.set_memory_limit(megabytes)
        try:
            yield
        except fsm_crawl.CrawlTimeout:
            # interegular stopped outside an automaton build of ours (lark's grammar loader checks its
            # terminals with it): the budget is the reason (read while its limits are still set)
            if not fsm_crawl.expired():
                raise
            raise _error(seconds, setting, megabytes, memory_setting) from None
    finally:
        if memory is not _UNSET:
            fsm_crawl.restore_memory_limit(memory)  # type: ignore[arg-type]
        if end is not _UNSET:
            fsm_crawl.restore_deadline(end)  # type: ignore[arg-type]
        _local.budget = previous


def over_budget() -> None:
    """Raises ``BuildMemoryError`` or ``BuildTimeoutError`` when this thread's build budget has run out
    (nothing outside a budget)."""
    budget = getattr(_local, "budget", None)
    if budget is not None and fsm_crawl.expired():
        raise _error(*budget)


def _error(seconds: float | None, setting: str, megabytes: float | None, memory_setting: str) -> FormatError:
    if megabytes is not None and fsm_crawl.over_memory():
        return BuildMemoryError(
            f"the format needed more than its memory budget of {megabytes:g} MB to build ({memory_setting})"
        )
    if seconds is None:  # (an enclosing block's deadline)
        return BuildTimeoutError("the format did not finish building within the time budget of the build around it")
    return BuildTimeoutError(f"the format did not finish building within its budget of {seconds:g} s ({setting})")
