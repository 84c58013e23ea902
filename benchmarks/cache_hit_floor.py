"""The cost of a token when nothing is new: each MaskBench case's compact tokens are forced twice through one
TokenEnforcer, and the second pass (accept + cached mask + bitmask fill, every mask a cache hit) is timed
against the first. This floor is what a per-token figure cannot go below without a faster accept or fill;
everything above it is first visits of parser states.

    python benchmarks/cache_hit_floor.py
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import maskbench  # noqa: E402
import numpy as np  # noqa: E402

from formatenforcer import JsonSchemaParser, TokenEnforcer, Vocabulary  # noqa: E402


def main() -> None:
    tokenizer = maskbench.llama3_tokenizer()
    vocabulary = Vocabulary.from_transformers(tokenizer)
    bitmask = np.full((1, (vocabulary.size + 31) // 32), -1, dtype=np.int32)
    first: list[float] = []
    again: list[float] = []
    for case in maskbench.load_cases():
        text = maskbench.serializations(case["instance"], ["compact"])[0][1]
        tokens = tokenizer.encode(text, add_special_tokens=False)
        enforcer = TokenEnforcer(vocabulary, JsonSchemaParser(case["schema"]))
        for out in (first, again):
            matcher = enforcer.matcher()
            matcher.fill_bitmask(bitmask, 0)
            for token in tokens:
                t0 = time.perf_counter_ns()
                matcher.accept_token(token)
                matcher.fill_bitmask(bitmask, 0)
                out.append((time.perf_counter_ns() - t0) / 1000)
    for name, values in (("first pass (new schema)", first), ("second pass (cache hits)", again)):
        values.sort()
        n = len(values)
        print(f"{name}: {n} tokens, mean {statistics.mean(values):.1f} µs, p50 {values[n // 2]:.1f}, "
              f"p90 {values[int(n * 0.9)]:.1f}, p99 {values[int(n * 0.99)]:.1f}")  # fmt: skip


if __name__ == "__main__":
    main()
