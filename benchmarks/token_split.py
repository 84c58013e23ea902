"""A cold MaskBench pass split into its two halves per token: accepting the token, and the next mask.

MaskBench's TBM is accept + mask. Its median is set by the ordinary token (a string's body, a key, the
punctuation after a value), not by the first walks that make its mean, so the split says which half a
change of the per-token overhead moves. Every case's compact instance is teacher-forced through a new
schema (MaskBench's strict layout) on the Llama 3 vocabulary, in one process; percentiles of each half and
of their sum, in microseconds. Wall times on this shared machine drift, so compare two checkouts by running
them alternately (``PYTHONPATH=<checkout>``), several times each. Times are wall times, as MaskBench's: under
load a token that waits for a core shows in the tail (mean, p99), while the median barely moves.

    python benchmarks/token_split.py
    PYTHONPATH=/path/to/other/checkout python benchmarks/token_split.py
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import maskbench  # noqa: E402

from formatenforcer import JsonSchemaParser, TokenEnforcer, Vocabulary, allocate_bitmask  # noqa: E402


def _row(name: str, values: list[float]) -> str:
    ordered = sorted(values)

    def at(q: float) -> float:
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    return (
        f"| {name} | {statistics.mean(values):.1f} | {at(0.25):.1f} | {at(0.5):.1f} | {at(0.75):.1f} "
        f"| {at(0.9):.1f} | {at(0.99):.1f} |"
    )


def main() -> None:
    tokenizer = maskbench.llama3_tokenizer()
    vocabulary = Vocabulary.from_transformers(tokenizer)
    bitmask = allocate_bitmask(1, vocabulary.size)
    clock = time.perf_counter_ns
    accept: list[float] = []
    mask: list[float] = []
    for case in maskbench.load_cases(None):
        if "schema" not in case:
            continue
        text = json.dumps(case["instance"], separators=(",", ":"), ensure_ascii=False)
        ids = tokenizer.encode(text, add_special_tokens=False)
        try:
            matcher = TokenEnforcer(vocabulary, JsonSchemaParser(case["schema"])).matcher()
        except Exception:  # noqa: BLE001 - a refused schema is MaskBench's business, not this split's
            continue
        matcher.fill_bitmask(bitmask, 0)
        for token in ids:
            t0 = clock()
            if not matcher.accept_token(token):
                raise SystemExit(f"a valid token was refused in {case.get('name')}: {token}")
            t1 = clock()
            matcher.fill_bitmask(bitmask, 0)
            t2 = clock()
            accept.append((t1 - t0) / 1000)
            mask.append((t2 - t1) / 1000)
    total = [a + m for a, m in zip(accept, mask)]
    print(f"{len(total)} tokens (µs)\n")
    print("| half | mean | p25 | p50 | p75 | p90 | p99 |\n|---|---|---|---|---|---|---|")
    print(_row("accept", accept))
    print(_row("mask", mask))
    print(_row("accept + mask", total))


if __name__ == "__main__":
    main()
