"""The schema build half of the time to first mask: every MaskBench case's schema built once, in MaskBench's
order, in one process, as MaskBench's strict pass builds them (each schema new to the process; the regex
automata's disk cache as it is). TTFM is this build plus the first mask; at the median the build is about
two thirds of it.

    python benchmarks/schema_builds.py            # wall time per build: p50, mean, p90, max (µs)

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

from formatenforcer import JsonSchemaParser  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--setup-only", action="store_true", help="import and load the cases, build nothing")
    args = parser.parse_args()
    cases = [case for case in maskbench.load_cases() if "schema" in case]
    schemas = [cases[i]["schema"] for i in maskbench.run_order(len(cases))]
    JsonSchemaParser({"type": "object", "properties": {"warm": {"type": "string"}}})  # lazy imports, once
    if args.setup_only:
        return
    times = []
    for schema in schemas:
        start = time.perf_counter_ns()
        JsonSchemaParser(schema)
        times.append((time.perf_counter_ns() - start) / 1000)
    times.sort()
    pick = lambda q: times[min(len(times) - 1, int(q * len(times)))]  # noqa: E731
    print(f"{len(times)} schemas, build µs: p50 {pick(0.5):.0f}, mean {statistics.mean(times):.0f}, "
          f"p90 {pick(0.9):.0f}, max {times[-1]:.0f}")  # fmt: skip


if __name__ == "__main__":
    main()
