"""Where formatenforcer's per-token time goes, token by token: teacher-forces MaskBench's cases through one
TokenEnforcer per case (Llama 3 tokenizer, the worker's vocabulary shared across cases as in a server), and
prints the distribution of mask + accept CPU time, the slowest cases and the slowest tokens with the text
around them. A profiling aid for developers; the engine comparison is maskbench.py.

    python benchmarks/slowest_tokens.py                              # every case, compact and indent=2
    python benchmarks/slowest_tokens.py --cases invoice,resume --styles compact --top 20
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import maskbench  # noqa: E402

from formatenforcer import FormatEnforcerError, JsonSchemaParser, TokenEnforcer, Vocabulary  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", help="comma-separated case names (default: all)")
    parser.add_argument("--styles", default="compact,indent2", help="compact, indent2 or both")
    parser.add_argument("--top", type=int, default=30, help="how many slowest tokens to list")
    parser.add_argument("--limit", type=float, default=30.0, help="CPU seconds per case and layout")
    args = parser.parse_args()
    tokenizer = maskbench.llama3_tokenizer()
    vocabulary = Vocabulary.from_transformers(tokenizer)
    samples: list[tuple[float, str, str]] = []
    totals: list[tuple[float, str, int]] = []
    for case in maskbench.load_cases(args.cases.split(",") if args.cases else None):
        for style, text in maskbench.serializations(case["instance"], args.styles.split(",")):
            ids = tokenizer.encode(text, add_special_tokens=False)
            label = f"{case['name']}/{style}"
            try:
                matcher = TokenEnforcer(vocabulary, JsonSchemaParser(case["schema"])).matcher()
            except FormatEnforcerError as error:
                print(f"{label}: not compiled: {str(error)[:100]}")
                continue
            matcher.mask()
            spent = 0.0
            for i, token in enumerate(ids):
                start = time.process_time()
                accepted = matcher.accept_token(token)
                matcher.mask()
                took = time.process_time() - start
                spent += took
                context = (
                    f"{tokenizer.decode(ids[max(0, i - 4) : i + 1])!r} -> {tokenizer.decode(ids[i + 1 : i + 3])!r}"
                )
                samples.append((took, label, context))
                if not accepted:
                    print(f"{label}: token #{i} REFUSED")
                    break
                if spent > args.limit:
                    print(f"{label}: stopped at the {args.limit:g} s limit")
                    break
            totals.append((spent, label, len(ids)))
    times = sorted(took for took, _, _ in samples)
    n = len(times)
    if not n:
        return
    pick = lambda q: times[min(n - 1, int(n * q))] * 1e3  # noqa: E731
    print(f"\n{n} tokens, CPU ms per token: mean {sum(times) / n * 1e3:.3f}, p50 {pick(0.5):.3f}, "
          f"p90 {pick(0.9):.3f}, p99 {pick(0.99):.3f}, max {times[-1] * 1e3:.1f}")  # fmt: skip
    print("\nslowest cases (CPU s, tokens):")
    for spent, label, count in sorted(totals, reverse=True)[:10]:
        print(f"  {spent:7.2f} s  {label} ({count})")
    print("\nslowest tokens:")
    for took, label, context in sorted(samples, reverse=True)[: args.top]:
        print(f"  {took * 1e3:8.1f} ms  {label}  {context}")


if __name__ == "__main__":
    main()
