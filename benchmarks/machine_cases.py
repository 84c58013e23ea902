"""CPU per token of MaskBench's strict compact pass over chosen cases, for comparing two builds on them alone.

``benchmarks/machine_split.py`` measures the whole pass by coverage; a change that moves a few cases onto the
machine shows more plainly on those cases. This script teacher-forces the named cases as the strict pass does
(``maskbench.force_pass``: a new enforcer per schema, first mask, then accept + mask per token), after the
same pass over the first ``--warm`` other cases (the process's shared caches warm, as in the full pass), and
prints their CPU per token. Run it once per build, in a fresh process each time:

    python benchmarks/machine_cases.py invoice price_quote mixed_enum_values

For a noise-free figure, count instructions with and without the chosen cases' pass (``--setup-only``) and
take the difference:

    valgrind --tool=callgrind --callgrind-out-file=/dev/null python benchmarks/machine_cases.py invoice ...
    valgrind --tool=callgrind --callgrind-out-file=/dev/null python benchmarks/machine_cases.py --setup-only invoice ...
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import maskbench  # noqa: E402

from formatenforcer import Vocabulary  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="+", help="MaskBench case names")
    parser.add_argument("--warm", type=int, default=5, help="other cases passed first (default 5)")
    parser.add_argument("--setup-only", action="store_true", help="everything but the chosen cases' pass")
    args = parser.parse_args()
    tokenizer = maskbench.llama3_tokenizer()
    vocabulary = Vocabulary.from_transformers(tokenizer)
    cases = [case for case in maskbench.load_cases() if "schema" in case]
    names = [cases[index]["name"] for index in maskbench.run_order(len(cases))]
    work = maskbench.compact_pass(tokenizer)
    missing = set(args.names) - set(names)
    if missing:
        raise SystemExit(f"no such case: {', '.join(sorted(missing))}")
    chosen = [item for name, item in zip(names, work) if name in args.names]
    others = [item for name, item in zip(names, work) if name not in args.names][: args.warm]
    maskbench.force_pass(vocabulary, others)
    if args.setup_only:
        return
    start = time.process_time()
    maskbench.force_pass(vocabulary, chosen)
    cpu = time.process_time() - start
    tokens = sum(len(ids) for _, ids in chosen)
    print(f"{len(chosen)} cases {tokens} tokens {cpu:.4f} CPU-s {cpu / tokens * 1e6:.1f} µs/token")


if __name__ == "__main__":
    main()
