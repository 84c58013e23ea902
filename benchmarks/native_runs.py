"""The compiled walk of a state with a wide free run, with the run's row and without it, side by side.

A state that loops over a class holding every non-ASCII character (``.*``, ``[^\\n]{3,20}``, inside a JSON
string) hands C the vocabulary's precomputed row of the tokens made of that class (core/compiled_walk.py,
``native_run``); C starts from it and walks only where a token may leave the run. For each pattern, the
states reached breadth first that have such a run are masked by ``walk_mask`` both ways in one process (the
best of five calls each, alternating; the masks are checked equal), Llama 3 tokenizer.

    python benchmarks/native_runs.py                      # the table (µs per mask, medians over states)
    python benchmarks/native_runs.py --workload run       # only the masks with the row, for callgrind:
    valgrind --tool=callgrind --toggle-collect=walk_mask --callgrind-out-file=/tmp/cg.run \\
        python benchmarks/native_runs.py --workload run   # (and --workload plain: the same without it)
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

from formatenforcer import Vocabulary  # noqa: E402
from formatenforcer.core import backend  # noqa: E402
from formatenforcer.core.automaton import native_automaton  # noqa: E402
from formatenforcer.core.compiled_walk import native_run  # noqa: E402
from formatenforcer.core.flat_trie import flat_trie  # noqa: E402

PATTERNS = [
    r".*",
    r"[^\n]*",
    r'"[^"\\]*"',
    r"[^\n]{3,20}",
    r"(yes|no)\n.{0,12}",
    r"(Answer|Reason): [^\n]{1,80}\n",
    r".{0,50}\n",
    r"[^@]+@[^@]+",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", choices=["run", "plain"], help="only the masks one way (for callgrind)")
    args = parser.parse_args()
    if backend.native is None:
        sys.exit("the compiled core is not available (formatenforcer.core_backend() == 'python')")
    import maskbench
    from native_regex import states_of

    vocabulary = Vocabulary.from_transformers(maskbench.llama3_tokenizer())
    trie = flat_trie(vocabulary)
    work = []
    for pattern in PATTERNS:
        for state in states_of(pattern):
            dfa, number = state.automaton_state()
            automaton = native_automaton(dfa)
            run = native_run(vocabulary, state) if automaton.wide_run(number) else None
            if run is not None:  # (as compiled_walk.compiled_mask hands it over)
                work.append((pattern, automaton, number, run))
    out = np.empty((vocabulary.size + 31) // 32, dtype=np.int32)
    other = out.copy()
    if args.workload:
        for _, automaton, number, run in work:
            for _ in range(5):
                backend.native.walk_mask(
                    trie, automaton, number, b"", False, out, run if args.workload == "run" else None
                )
        return
    print(f"{'pattern':36} {'states':>6} {'with the row':>13} {'without':>9} {'ratio':>6}")
    for pattern in PATTERNS:
        rows = [(automaton, number, run) for p, automaton, number, run in work if p == pattern]
        with_row, without = [], []
        for automaton, number, run in rows:
            times: dict[bool, list[int]] = {True: [], False: []}
            for _ in range(5):
                for use in (True, False):
                    t0 = time.perf_counter_ns()
                    backend.native.walk_mask(
                        trie, automaton, number, b"", False, out if use else other, run if use else None
                    )
                    times[use].append(time.perf_counter_ns() - t0)
            assert np.array_equal(out, other), pattern
            with_row.append(min(times[True]) / 1000)
            without.append(min(times[False]) / 1000)
        if rows:
            a, b = statistics.median(with_row), statistics.median(without)
            print(f"{pattern[:36]:36} {len(rows):6} {a:11.1f}µs {b:7.1f}µs {b / a:5.1f}x")


if __name__ == "__main__":
    main()
