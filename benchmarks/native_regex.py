"""Per-mask time of the compiled walk against the Python walk, for regex states on Llama 3.

For each pattern, the states reached breadth first (up to 40 per pattern) are each masked three ways, every
call uncached at the mask level (``walk.allowed_mask`` directly, no TokenEnforcer cache):
  - compiled: the C walk over the flat trie;
  - python, first visit: the Python walk the first time it meets the state (it builds the vocabulary's
    free-run tables it needs on the way, as a new format does);
  - python, warm: the same call again (tables built).
It also reports the flat trie's build time and size. The masks are checked equal on the way.

    python benchmarks/native_regex.py                 # the table
    python benchmarks/native_regex.py --workload      # only the compiled masks, for an instruction count:
    valgrind --tool=callgrind --toggle-collect=walk_mask --callgrind-out-file=/tmp/cg.out \\
        python benchmarks/native_regex.py --workload && callgrind_annotate /tmp/cg.out | head -20
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

from formatenforcer import RegexParser, Vocabulary  # noqa: E402
from formatenforcer.core import backend  # noqa: E402
from formatenforcer.core.flat_trie import build_flat_trie, flat_trie  # noqa: E402
from formatenforcer.core.walk import allowed_mask  # noqa: E402

PATTERNS = [
    r"\d{4}-\d{2}-\d{2}",
    r"\(\d{3}\) \d{3}-\d{4}",
    r"[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}",
    r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?",
    r"(red|green|blue|rouge|grün)",
    r"[A-Z][a-zà-ÿ]+( [A-Z][a-zà-ÿ]+)*",
    r"[😀-🙏]+ ?[a-z]*",
    r"[一-龥]{1,4}",
    r"(yes|no)\n.{0,12}",
    r"[^\n]{3,20}",
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
    r"[A-Za-z ,.'!?]{1,200}",
    r"(Answer|Reason): [^\n]{1,80}\n",
]


def states_of(pattern: str, limit: int = 40) -> list[RegexParser]:
    start = RegexParser(pattern)
    seen = {start.key(): start}
    todo = [start]
    while todo and len(seen) < limit:
        state = todo.pop(0)
        for lo, hi in state.allowed_characters().intervals:
            for cp in sorted({lo, hi, (lo + hi) // 2}):
                if 0xD800 <= cp <= 0xDFFF:
                    continue
                nxt = state.add_character(chr(cp))
                if nxt is not None and nxt.key() not in seen and len(seen) < limit:
                    seen[nxt.key()] = nxt
                    todo.append(nxt)
    return list(seen.values())


def timed(vocabulary: Vocabulary, state: RegexParser, compiled: bool) -> tuple[float, np.ndarray]:
    backend.use_compiled(compiled)
    t0 = time.perf_counter_ns()
    mask = allowed_mask(vocabulary, state, b"", False)
    return (time.perf_counter_ns() - t0) / 1000, mask


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", action="store_true", help="only the compiled masks (for callgrind)")
    args = parser.parse_args()
    if args.workload:  # under valgrind everything runs ~50x slower: no compile time limit
        import formatenforcer.parsers.regex

        formatenforcer.parsers.regex.COMPILE_SECONDS = 3600.0
    if backend.native is None:
        sys.exit("the compiled core is not available (formatenforcer.core_backend() == 'python')")
    import maskbench

    vocabulary = Vocabulary.from_transformers(maskbench.llama3_tokenizer())
    trie = flat_trie(vocabulary)
    all_states = [(pattern, states_of(pattern)) for pattern in PATTERNS]
    if args.workload:
        out = np.empty((vocabulary.size + 31) // 32, dtype=np.int32)
        from formatenforcer.core.automaton import native_automaton

        for _, states in all_states:
            for state in states:
                dfa, number = state.automaton_state()
                backend.native.walk_mask(trie, native_automaton(dfa), number, b"", False, out)
        return
    builds = []
    for _ in range(3):
        t0 = time.perf_counter()
        build_flat_trie(vocabulary.token_bytes, vocabulary.size)
        builds.append(time.perf_counter() - t0)
    size = sum(len(getattr(trie, name)) for name in
               ("edge_start", "edge_byte", "edge_child", "tok_start", "tok_ids", "subtree_end"))  # fmt: skip
    print(f"flat trie (Llama 3, {vocabulary.size} tokens): {trie.nodes} nodes, build {min(builds) * 1000:.0f} ms "
          f"(best of 3), {size / 2**20:.1f} MB")  # fmt: skip
    print(f"{'pattern':44} {'states':>6} {'compiled':>9} {'py first':>9} {'py warm':>9} {'warm/compiled':>13}")
    totals: dict[str, list[float]] = {"compiled": [], "first": [], "warm": []}
    for pattern, states in all_states:
        rows: dict[str, list[float]] = {"compiled": [], "first": [], "warm": []}
        for state in states:
            first, python = timed(vocabulary, state, False)
            warm, _ = timed(vocabulary, state, False)
            timed(vocabulary, state, True)  # the automaton's export, once per pattern
            fast, mask = timed(vocabulary, state, True)
            assert np.array_equal(mask, python), (pattern, state)
            rows["compiled"].append(fast)
            rows["first"].append(first)
            rows["warm"].append(warm)
        for key, values in rows.items():
            totals[key].extend(values)
        med = {key: statistics.median(values) for key, values in rows.items()}
        print(f"{pattern[:44]:44} {len(states):6} {med['compiled']:8.1f}µ {med['first']:8.1f}µ {med['warm']:8.1f}µ "
              f"{med['warm'] / med['compiled']:12.1f}x")  # fmt: skip
    for label, pick in (("median", statistics.median), ("mean", statistics.mean)):
        c, f, w = (pick(totals[key]) for key in ("compiled", "first", "warm"))
        print(f"all states, {label}: compiled {c:.1f} µs, python first visit {f:.1f} µs ({f / c:.1f}x), "
              f"python warm {w:.1f} µs ({w / c:.1f}x)")  # fmt: skip


if __name__ == "__main__":
    main()
