"""First walks of bounded numbers, with the int path of ``number_bounds.feasible`` and with the Fraction
reference alone, side by side in one process (Llama 3 vocabulary).

Each trial builds a new schema ``{"a": <number>}``, reads ``{"a":`` and times the mask there: the walk of the
value start before the number (whitespace, sign, digits), which the vocabulary's lexeme cache keeps per
bound set. Every trial moves the maximum by one so that no trial finds another's walk cached. The
reference side makes ``NumberContext`` build no int set (``_integer_set`` answers None), so every question
goes to ``_fraction_feasible``. Sides alternate trial by trial; best and median of the trials. Then the cost
of one question alone: ``feasible`` and ``_fraction_feasible`` on the prefixes 1 to 999 of each integer
bound set, best of five.

    python benchmarks/number_walks.py [--trials 7]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import timeit
from fractions import Fraction
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import maskbench  # noqa: E402

from formatenforcer import JsonSchemaParser, TokenEnforcer, Vocabulary  # noqa: E402
from formatenforcer.jsonschema.schema import number_bounds  # noqa: E402
from formatenforcer.jsonschema.schema.ir import Number  # noqa: E402

BOUNDS = [
    ("integer", 1024, 49151),
    ("integer", 60, 86400),
    ("integer", 100, 599),
    ("integer", 0, 100),
    ("integer", -720, 840),
    ("number", -180, 180),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=7)
    args = parser.parse_args()
    tokenizer = maskbench.llama3_tokenizer()
    vocabulary = Vocabulary.from_transformers(tokenizer)
    prefix = tokenizer.encode('{"a":', add_special_tokens=False)
    integer_set = number_bounds._integer_set
    shift = 0

    def first_walk(kind: str, low: int, high: int, reference: bool) -> float:
        nonlocal shift
        shift += 1
        number_bounds._integer_set = (lambda bounds: None) if reference else integer_set
        try:
            schema = {"type": "object", "properties": {"a": {"type": kind, "minimum": low, "maximum": high + shift}}}
            matcher = TokenEnforcer(vocabulary, JsonSchemaParser(schema)).matcher()
            for token in prefix:
                matcher.accept_token(token)
            start = time.process_time()
            matcher.mask()
            return time.process_time() - start
        finally:
            number_bounds._integer_set = integer_set

    first_walk("integer", 0, 10, False)  # imports and first-use tables, untimed
    print(f"{'schema':<26} {'int path best/median':>22} {'Fraction best/median':>22}")
    for kind, low, high in BOUNDS:
        fast, slow = [], []
        for _ in range(args.trials):
            fast.append(first_walk(kind, low, high, False))
            slow.append(first_walk(kind, low, high, True))
        label = f"{kind} [{low}, {high}]"
        print(f"{label:<26} {min(fast) * 1e3:>9.2f} / {statistics.median(fast) * 1e3:>6.2f} ms"
              f" {min(slow) * 1e3:>9.2f} / {statistics.median(slow) * 1e3:>6.2f} ms")  # fmt: skip
    print(f"\n{'feasible, per question':<26} {'int path':>10} {'Fraction':>10}")
    prefixes = [str(n) for n in range(1, 1000)]
    for kind, low, high in BOUNDS:
        if kind != "integer":
            continue
        ctx = number_bounds.NumberContext(Number(True, Fraction(low), False, Fraction(high), False))
        costs = []
        for ask in (number_bounds.feasible, number_bounds._fraction_feasible):
            run = lambda ask=ask, ctx=ctx: [ask(ctx, False, p, None) for p in prefixes]  # noqa: E731
            best = min(timeit.repeat(run, number=5, repeat=5))
            costs.append(best / 5 / len(prefixes))
        label = f"{kind} [{low}, {high}]"
        print(f"{label:<26} {costs[0] * 1e6:>7.2f} µs {costs[1] * 1e6:>7.2f} µs")


if __name__ == "__main__":
    main()
