"""A faster, interruptible stand-in for ``interegular.fsm.crawl``, the loop behind every automaton operation.

interegular builds each automaton (concatenation, union, repetition, the subset construction) by crawling
the states a ``follow`` function reaches, and looks each new state up with ``list.index``: quadratic in the
number of states. The email and URI formats (450 states) spent most of their 0.8-0.9 s there. This version
numbers the states in the same breadth-first order (so the automata are identical) with a dict look-up, and
checks a per-thread deadline as it goes, so a hostile pattern is stopped without ``sys.settrace`` (which
made every compile about six times slower).

It replaces the module global once, at first use (``install``); with no deadline set it behaves exactly as
the original for any other user of interegular in the process.
"""

from __future__ import annotations

import ctypes
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import interegular.fsm as _fsm

from ..core.budget import MEMORY_READ_SECONDS, MemoryCap, resident_bytes

ORIGINAL_CRAWL = _fsm.crawl
"""interegular's own crawl, kept for comparison (tests/test_fsm_crawl.py)."""

_local = threading.local()
_installed = False
_lock = threading.Lock()


class CrawlTimeout(Exception):
    """Raised inside interegular when the current thread's deadline has passed."""


def _hashable(state):  # noqa: ANN001, ANN202
    """A hashable stand-in equal exactly when the states are equal (interegular's product automata use
    dicts {machine: substate} as states)."""
    if isinstance(state, dict):
        return ("dict", frozenset(state.items()))
    if isinstance(state, set):
        return frozenset(state)
    return state


def _crawl(alphabet, initial, final: Callable, follow: Callable):  # noqa: ANN001, ANN202 - interegular's types
    limited = getattr(_local, "end", None) is not None or getattr(_local, "memory", None) is not None
    states = [initial]
    index: dict | None = {}
    try:
        index[_hashable(initial)] = 0
    except TypeError:  # states that cannot be hashed at all: the original linear search
        index = None
    finals = set()
    transitions: dict[int, dict] = {}
    oblivion = _fsm.OblivionError
    symbols = list(alphabet.by_transition)
    i = 0
    while i < len(states):
        if limited and not i & 63 and expired():
            raise CrawlTimeout
        state = states[i]
        if final(state):
            finals.add(i)
        row = transitions[i] = {}
        for symbol in symbols:
            try:
                nxt = follow(state, symbol)
            except oblivion:
                continue
            if index is not None:
                key = _hashable(nxt)
                j = index.get(key)
                if j is None:
                    j = index[key] = len(states)
                    states.append(nxt)
            else:
                try:
                    j = states.index(nxt)
                except ValueError:
                    j = len(states)
                    states.append(nxt)
            row[symbol] = j
        i += 1
    return _fsm.FSM(
        alphabet=alphabet, states=range(len(states)), initial=0, finals=finals, map=transitions,
        __no_validation__=True,
    )  # fmt: skip


def install() -> None:
    """Puts the faster crawl in place of interegular's (once per process)."""
    global _installed
    if _installed:
        return
    with _lock:
        if not _installed:
            _fsm.crawl = _crawl
            _installed = True


def expired() -> bool:
    """Whether this thread's current ``deadline`` has passed or its ``memory_limit`` has been exceeded (for
    builders other than interegular's)."""
    end = getattr(_local, "end", None)
    memory = getattr(_local, "memory", None)
    if end is None and memory is None:
        return False
    now = time.monotonic()  # (one clock read for both limits)
    if end is not None and now > end:
        return True
    return memory is not None and memory.exceeded(now)


def over_memory() -> bool:
    """Whether this thread's current ``memory_limit`` has been exceeded (what ``expired`` reported, if so)."""
    memory = getattr(_local, "memory", None)
    return memory is not None and memory.over


@contextmanager
def memory_limit(megabytes: float | None) -> Iterator[None]:
    """Within this block, automaton construction on this thread raises CrawlTimeout once the process's
    resident memory has grown by more than ``megabytes`` (MiB) since the block began, or past the limit of
    an enclosing block if that is lower (None: no limit of its own). Where the system does not tell the
    resident size, there is no limit."""
    previous = set_memory_limit(megabytes)
    try:
        yield
    finally:
        _local.memory = previous


def set_memory_limit(megabytes: float | None) -> MemoryCap | None:
    """What ``memory_limit`` does on entry; returns the limit to put back on exit (``_local.memory``)."""
    install()
    previous = getattr(_local, "memory", None)
    start = resident_bytes() if megabytes is not None else None
    if start is not None:
        # (the next read a millisecond after this one, as every read: not at the build's first poll)
        growth = int(megabytes * 2**20)  # type: ignore[operator]
        memory = MemoryCap(growth, start, time.monotonic() + MEMORY_READ_SECONDS)
        if previous is not None and previous.cap <= memory.cap:
            memory = previous
        _local.memory = memory
    return previous


def restore_memory_limit(previous: MemoryCap | None) -> None:
    """What ``memory_limit`` does on exit, given what ``set_memory_limit`` returned."""
    _local.memory = previous


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Within this block, automaton construction on this thread raises CrawlTimeout after ``seconds``, or at
    the deadline of an enclosing block if that comes first (a whole format's build budget bounds every
    automaton it builds)."""
    previous = set_deadline(seconds)
    try:
        yield
    finally:
        _local.end = previous


def set_deadline(seconds: float) -> float | None:
    """What ``deadline`` does on entry; returns the deadline to put back on exit (``restore_deadline``)."""
    install()
    previous = getattr(_local, "end", None)
    end = time.monotonic() + seconds
    _local.end = end if previous is None else min(end, previous)
    return previous


def restore_deadline(previous: float | None) -> None:
    """What ``deadline`` does on exit, given what ``set_deadline`` returned."""
    _local.end = previous


_REFIRE = 0.05
"""Seconds between raising a timeout again while the block has not ended (see ``interruptible``)."""

_hook_lock = threading.Lock()
_hook = {"users": 0, "previous": None}


def _drop_own_timeouts(unraisable) -> None:  # noqa: ANN001
    """``sys.unraisablehook`` while a guarded block runs: the timer's ``CrawlTimeout``, swallowed inside a
    finaliser or a garbage-collector callback, is raised again by the timer, and the build is refused with a
    ``RegexError`` anyway; printed, it would put an "Exception ignored" traceback in a server's log. Every
    other unraisable exception goes to the hook that was in place."""
    if unraisable.exc_type is CrawlTimeout:
        return
    (_hook["previous"] or sys.__unraisablehook__)(unraisable)


@contextmanager
def _quiet_timeouts() -> Iterator[None]:
    """Installs ``_drop_own_timeouts`` while any thread is inside a guarded block (counted: the first in
    installs it, the last out puts the previous hook back, unless someone replaced it meanwhile)."""
    with _hook_lock:
        if _hook["users"] == 0:
            _hook["previous"] = sys.unraisablehook
            sys.unraisablehook = _drop_own_timeouts
        _hook["users"] += 1
    try:
        yield
    finally:
        with _hook_lock:
            _hook["users"] -= 1
            if _hook["users"] == 0:
                if sys.unraisablehook is _drop_own_timeouts:
                    sys.unraisablehook = _hook["previous"]
                _hook["previous"] = None


@contextmanager
def interruptible() -> Iterator[None]:
    """Within this block the current ``deadline`` also stops pure-Python work that never reaches ``crawl``:
    interegular's alphabet and character-class work, which on wide classes (``[Ā-耀]``, tens of thousands of
    characters each) can run for minutes before a single state is crawled. A timer thread raises
    ``CrawlTimeout`` in this thread when the deadline passes (``PyThreadState_SetAsyncExc``: the interpreter
    delivers it at its next check, within a few bytecodes), so the code inside runs at full speed; again every
    50 ms until the block ends, because an exception raised inside a garbage-collector callback or a
    finaliser is swallowed there. A timeout that fires as the block ends is withdrawn, never delivered after
    it. Without CPython's C API (PyPy) the
    block runs unguarded and only ``crawl`` checks the deadline."""
    end = getattr(_local, "end", None)
    api = getattr(ctypes, "pythonapi", None)
    if end is None or api is None:
        yield
        return
    target = ctypes.c_ulong(threading.get_ident())
    lock = threading.Lock()
    state: dict = {"done": False, "fired": False, "timer": None}

    def arm(delay: float) -> None:
        timer = threading.Timer(delay, fire)
        timer.daemon = True
        state["timer"] = timer
        timer.start()

    def fire() -> None:
        with lock:
            if not state["done"]:
                state["fired"] = True
                api.PyThreadState_SetAsyncExc(target, ctypes.py_object(CrawlTimeout))
                # raised inside a garbage-collector callback or a finaliser, the exception is swallowed
                # ("Exception ignored in ..."): raised again until the block has ended
                arm(_REFIRE)

    if time.monotonic() >= end:
        raise CrawlTimeout  # (nothing to arm: a timer at once could land before the block is entered)
    with _quiet_timeouts():
        try:
            arm(max(0.0, end - time.monotonic()))  # (inside the try: a timeout landing here still ends it)
            yield
        finally:
            # first, with no call before it (the interpreter delivers an asynchronous exception at calls and
            # jumps): should one land in this block, no timer fires again after it
            state["done"] = True
            with lock:
                state["done"] = True
                if state["timer"] is not None:
                    state["timer"].cancel()
            if state["fired"]:
                api.PyThreadState_SetAsyncExc(target, None)  # withdraw it if not delivered yet
