"""The time budget of one format's build: a deadline for everything a parser's constructor does.

Each automaton a build makes already stops at its own limit (``regex.COMPILE_SECONDS``), and is refused at
its keyword. A format with many of them (thousands of patterns, say) could still hold the building thread
for minutes; ``build_budget`` bounds the whole. It sets this thread's build deadline (the one the automaton
builders read, ``fsm_crawl.deadline``: an automaton's own limit is cut to what is left of the budget), and
the builder's loops call ``out_of_time`` between their steps, which raises ``BuildTimeoutError``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from ..core.errors import BuildTimeoutError
from . import fsm_crawl

_local = threading.local()


@contextmanager
def build_budget(seconds: float | None, setting: str) -> Iterator[None]:
    """Within this block this thread's builds stop after ``seconds`` (None: no budget); ``setting`` names
    where the budget is set, for the error message."""
    if seconds is None:
        yield
        return
    previous = getattr(_local, "budget", None)
    _local.budget = (seconds, setting)
    try:
        with fsm_crawl.deadline(seconds):
            yield
    except fsm_crawl.CrawlTimeout:
        # interegular stopped by the deadline outside an automaton build of ours (lark's grammar loader
        # checks its terminals with it): the budget is the reason
        raise _error(seconds, setting) from None
    finally:
        _local.budget = previous


def out_of_time() -> None:
    """Raises ``BuildTimeoutError`` when this thread's build budget has run out (nothing outside a budget)."""
    budget = getattr(_local, "budget", None)
    if budget is not None and fsm_crawl.expired():
        raise _error(*budget)


def _error(seconds: float, setting: str) -> BuildTimeoutError:
    return BuildTimeoutError(f"the format did not finish building within its budget of {seconds:g} s ({setting})")
