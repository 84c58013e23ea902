"""A one-line progress indication for the command line's long one-time work (model load, vocabulary index).

Why a spinner and not a bar: the slow steps (GGUF de-quantization inside transformers, the vocabulary walk)
report no fraction done through any public hook, so an honest indication is "still working, N s so far".
It writes to stderr only when stderr is a terminal, so piped or captured output (CI, tests, ``> out.json``)
stays exactly the result. Cost: one daemon thread waking 8 times a second while a step runs.
"""

from __future__ import annotations

import sys
import threading
import time
from types import TracebackType
from typing import TextIO

_FRAMES = "|/-\\"


class Progress:
    """``with Progress("Loading model"):`` shows ``Loading model | 3 s`` and then ``Loading model: 4.1 s``.

    ``enabled`` defaults to whether ``stream`` (stderr) is a terminal; ``done_message`` replaces the timing
    in the final line (e.g. ``"cached"``)."""

    def __init__(self, label: str, *, stream: TextIO | None = None, enabled: bool | None = None) -> None:
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = _is_terminal(self.stream) if enabled is None else enabled
        self.done_message: str | None = None
        self.elapsed = 0.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._start = 0.0

    def __enter__(self) -> Progress:
        self._start = time.perf_counter()
        if self.enabled:
            self._thread = threading.Thread(target=self._spin, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.elapsed = time.perf_counter() - self._start
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            outcome = "failed" if kind is not None else (self.done_message or f"{self.elapsed:.1f} s")
            self.stream.write(f"\r\033[K{self.label}: {outcome}\n")
            self.stream.flush()

    def seconds(self) -> float:
        """Seconds since the step started (while it runs) or its duration (after)."""
        return self.elapsed or time.perf_counter() - self._start

    def _spin(self) -> None:
        frame = 0
        while not self._stop.wait(0.125):
            seconds = time.perf_counter() - self._start
            self.stream.write(f"\r\033[K{self.label} {_FRAMES[frame % len(_FRAMES)]} {seconds:.0f} s")
            self.stream.flush()
            frame += 1


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # closed or replaced streams
        return False
