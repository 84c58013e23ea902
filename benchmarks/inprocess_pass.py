"""One MaskBench pass for formatenforcer alone, in this process: the same cases, the same shuffled order and
the same ``run_case`` as maskbench.py, with none of its subprocess and peer machinery. For A/B comparisons of
a change: run it from two checkouts back to back, several times, alternating (this machine's speed drifts by
±20% within an hour, so only paired differences mean anything).

    python benchmarks/inprocess_pass.py
    (cd /tmp/base && PYTHONPATH=$PWD python benchmarks/inprocess_pass.py)     # the other side of the pair
"""

from __future__ import annotations

import random
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import maskbench  # noqa: E402


def main() -> None:
    cases = maskbench.load_cases()
    tokenizer = maskbench.llama3_tokenizer()
    engine = maskbench.FormatEnforcerEngine()
    engine.setup(tokenizer)
    order = list(range(len(cases)))
    random.Random(20250401).shuffle(order)  # maskbench.run_engine's order
    ttfm: list[float] = []
    tbm: list[float] = []
    for index in order:
        case = cases[index]
        texts = [(style, tokenizer.encode(text, add_special_tokens=False))
                 for style, text in maskbench.serializations(case["instance"], ["compact", "indent2"])]  # fmt: skip
        for style, result in maskbench.run_case(engine, case["schema"], texts).items():
            if "ttfm_us" in result:
                ttfm.append(result["ttfm_us"])
            tbm.extend(result.get("tbm_us", []))
            if result.get("status") != "ok":
                print(f"{case['name']}/{style}: {result.get('status')} {result.get('error', '')}")
    ttfm.sort()
    tbm.sort()

    def pick(values: list[float], q: float) -> float:
        return values[min(len(values) - 1, int(len(values) * q))]

    print(f"TTFM p50 {pick(ttfm, .5):.0f} µs, p99 {pick(ttfm, .99):.0f} µs | "
          f"TBM mean {statistics.mean(tbm):.0f} µs, p50 {pick(tbm, .5):.0f}, p90 {pick(tbm, .9):.0f}, "
          f"p99 {pick(tbm, .99):.0f}, max {tbm[-1]:.0f} µs")  # fmt: skip


if __name__ == "__main__":
    main()
