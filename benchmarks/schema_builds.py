"""The time to first mask, part by part: every MaskBench case's schema built once, in MaskBench's order, in one
process, as MaskBench's strict pass builds them (each schema new to the process; the regex automata's disk
cache as it is). TTFM is this build plus the matcher and its first mask.

    python benchmarks/schema_builds.py               # wall time per build: p50, mean, p90, max (µs)
    python benchmarks/schema_builds.py --first-mask  # and per matcher + first mask (Llama 3), and their sum

Wall times drift on shared cores; for a figure that does not, count instructions, the build loop's own
count being the difference of two runs (each ~1 minute under callgrind):

    PY=$(python -c 'import sys; print(sys.executable)')
    valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.builds $PY benchmarks/schema_builds.py
    valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.setup $PY benchmarks/schema_builds.py --setup-only
    grep -h Collected /tmp/cg.builds /tmp/cg.setup

Compare two checkouts with PYTHONPATH=<checkout>, run from a folder outside both.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import maskbench  # noqa: E402

from formatenforcer import JsonSchemaParser, TokenEnforcer, Vocabulary, allocate_bitmask  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--setup-only", action="store_true", help="import and load the cases, build nothing")
    parser.add_argument(
        "--first-mask",
        action="store_true",
        help="also make each schema's matcher and fill its first mask (Llama 3; with --setup-only: the "
        "vocabulary and one warm-up mask, so that the difference of two runs is the first masks' own work)",
    )
    args = parser.parse_args()
    cases = [case for case in maskbench.load_cases() if "schema" in case]
    schemas = [cases[i]["schema"] for i in maskbench.run_order(len(cases))]
    warm = JsonSchemaParser({"type": "object", "properties": {"warm": {"type": "string"}}})  # lazy imports
    vocabulary = bitmask = None
    if args.first_mask:
        vocabulary = Vocabulary.from_transformers(maskbench.llama3_tokenizer())
        bitmask = allocate_bitmask(1, vocabulary.size)
        TokenEnforcer(vocabulary, warm).matcher().fill_bitmask(bitmask, 0)  # the vocabulary's tables, once
    if args.setup_only:
        return
    builds, firsts, totals = [], [], []
    for schema in schemas:
        start = time.perf_counter_ns()
        built = JsonSchemaParser(schema)
        built_at = time.perf_counter_ns()
        builds.append((built_at - start) / 1000)
        if vocabulary is not None:
            matcher = TokenEnforcer(vocabulary, built).matcher()
            matcher.fill_bitmask(bitmask, 0)
            firsts.append((time.perf_counter_ns() - built_at) / 1000)
            totals.append(builds[-1] + firsts[-1])
            del matcher, built  # dropped outside the timed parts
    for label, times in (("build", builds), ("matcher + first mask", firsts), ("TTFM", totals)):
        if times:
            times.sort()
            pick = lambda q: times[min(len(times) - 1, int(q * len(times)))]  # noqa: E731, B023
            print(f"{len(times)} schemas, {label} µs: p50 {pick(0.5):.0f}, mean {statistics.mean(times):.0f}, "
                  f"p90 {pick(0.9):.0f}, max {times[-1]:.0f}")  # fmt: skip


if __name__ == "__main__":
    main()
