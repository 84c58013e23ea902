"""Where MaskBench's strict compact pass spends its time, case by case: the CPU time of each case's masks and
accepts (in MaskBench's order, each schema new, one vocabulary for the process, as the strict pass runs
them), the costliest cases, how much of the mask time the masks over a few milliseconds take, and the masks
right after each case's first ``{"`` (the first key of an object: its key tables are built there).

    python benchmarks/case_costs.py              # the costliest cases and the share of the slow masks
    python benchmarks/case_costs.py --top 20 --slow-ms 1

CPU times (``time.thread_time``) of one process: compare shares, or two checkouts side by side
(``PYTHONPATH=<checkout>``), never figures of runs minutes apart on these shared cores.
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
    parser.add_argument("--top", type=int, default=10, help="how many of the costliest cases to list")
    parser.add_argument("--slow-ms", type=float, default=3.0, help="masks over this many ms count as slow")
    args = parser.parse_args()
    tokenizer = maskbench.llama3_tokenizer()
    vocabulary = Vocabulary.from_transformers(tokenizer)
    cases = [case for case in maskbench.load_cases() if "schema" in case]
    names = [cases[index]["name"] for index in maskbench.run_order(len(cases))]
    work = maskbench.compact_pass(tokenizer)
    bitmask = allocate_bitmask(1, vocabulary.size)
    per_case: list[tuple[float, str, int]] = []
    masks: list[float] = []
    first_keys: list[float] = []
    for name, (schema, ids) in zip(names, work):
        matcher = TokenEnforcer(vocabulary, JsonSchemaParser(schema)).matcher()
        matcher.fill_bitmask(bitmask, 0)
        spent = 0.0
        for index, token in enumerate(ids):
            start = time.thread_time()
            matcher.accept_token(token)
            accepted = time.thread_time()
            matcher.fill_bitmask(bitmask, 0)
            done = time.thread_time()
            spent += done - start
            masks.append(done - accepted)
            if index == 0 and tokenizer.decode([token]) == '{"':
                first_keys.append(done - accepted)
        per_case.append((spent, name, len(ids)))
    total = sum(spent for spent, _, _ in per_case)
    print(f"{len(work)} cases, {sum(n for _, _, n in per_case)} tokens: {total:.3f} s CPU (accept + mask)")
    for spent, name, tokens in sorted(per_case, reverse=True)[: args.top]:
        print(f"  {spent * 1e3:8.1f} ms  {100 * spent / total:5.1f}%  {tokens:4} tokens  {name}")
    slow = [m for m in masks if m * 1e3 > args.slow_ms]
    share = 100 * sum(slow) / sum(masks)
    print(
        f"masks over {args.slow_ms:g} ms: {len(slow)} of {len(masks)}, {sum(slow) * 1e3:.1f} of "
        f"{sum(masks) * 1e3:.1f} ms ({share:.0f}% of the mask time)"
    )
    if first_keys:
        print(
            f"masks after a case's first '{{\"': {len(first_keys)}, {sum(first_keys) * 1e3:.1f} ms in all, "
            f"p50 {statistics.median(first_keys) * 1e3:.2f} ms, max {max(first_keys) * 1e3:.2f} ms"
        )


if __name__ == "__main__":
    main()
