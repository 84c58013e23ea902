"""Number enums side by side: 64 values (one union branch each, the largest that is not grouped), 65 and
2,000 values (one number node holding the set), on the Llama 3 vocabulary.

For each size and repetition a new enum (values shifted per repetition, so no cached walk of an earlier one
is reused) is built, then 10 of its values are teacher-forced one per matcher: the build time and the total
time of the masks (``fill_bitmask`` before every token and after the last) are recorded. Sizes alternate
within each repetition (the machine's speed drifts); medians are printed.

    python benchmarks/number_enums.py [--reps 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import maskbench  # noqa: E402

from formatenforcer import JsonSchemaParser, TokenEnforcer, Vocabulary, allocate_bitmask  # noqa: E402

SIZES = (64, 65, 2000)


def values_of(size: int, rep: int) -> list:
    """``size`` scattered values, integers and two-place decimals, negatives too (different per ``rep``)."""
    return [(i * 7919 + rep) % 100_003 - 50_000 if i % 2 else round(i * 1.37 - 40 + rep / 100, 2) for i in range(size)]


def run(vocabulary: Vocabulary, tokenizer, size: int, rep: int) -> tuple[float, float]:
    values = values_of(size, rep)
    start = time.perf_counter()
    enforcer = TokenEnforcer(vocabulary, JsonSchemaParser({"enum": values}))
    built = time.perf_counter() - start
    bitmask = allocate_bitmask(1, vocabulary.size)
    masks = 0.0
    for value in values[:: max(1, size // 10)][:10]:
        matcher = enforcer.matcher()
        for token in [*tokenizer.encode(json.dumps(value), add_special_tokens=False), None]:
            start = time.perf_counter()
            matcher.fill_bitmask(bitmask, 0)
            masks += time.perf_counter() - start
            if token is None:
                break
            assert matcher.accept_token(token), value
    return built, masks


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    tokenizer = maskbench.llama3_tokenizer()
    vocabulary = Vocabulary.from_transformers(tokenizer)
    results: dict[int, list[tuple[float, float]]] = {size: [] for size in SIZES}
    for rep in range(args.reps):
        order = SIZES if rep % 2 == 0 else tuple(reversed(SIZES))
        for size in order:
            results[size].append(run(vocabulary, tokenizer, size, rep))
    print(f"{'values':>7} {'build ms':>9} {'masks of 10 values ms':>22}")
    for size in SIZES:
        built = statistics.median(b for b, _ in results[size]) * 1000
        masks = statistics.median(m for _, m in results[size]) * 1000
        print(f"{size:>7} {built:>9.1f} {masks:>22.1f}")


if __name__ == "__main__":
    main()
