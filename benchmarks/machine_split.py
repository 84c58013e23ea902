"""What the compiled JSON machine covers of MaskBench's strict compact pass, and what a token costs on each side.

The machine (core/_machine.c, jsonschema/machine_program.py) runs the schemas its program covers; the others
stay on the Python parsers. This script sorts MaskBench's 76 cases by whether the machine covers them (with
the first reason a case is not covered), then teacher-forces each group as the strict pass does (a new schema
each time, first mask, then accept + mask per token, one process) and prints the CPU per token of each group.
Run it twice to compare with the machine off:

    python benchmarks/machine_split.py
    FORMATENFORCER_NO_MACHINE=1 python benchmarks/machine_split.py
"""

from __future__ import annotations

import collections
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import maskbench  # noqa: E402

from formatenforcer import JsonSchemaParser, Vocabulary  # noqa: E402
from formatenforcer.core import backend  # noqa: E402
from formatenforcer.jsonschema import machine_program  # noqa: E402


def _reason(parser: JsonSchemaParser) -> str:
    """Why the machine does not cover the schema ("covered" when it does)."""
    try:
        builder = machine_program._Builder(parser.compiler, parser._root)  # noqa: SLF001
        builder.finish(builder.node(parser._root))  # noqa: SLF001
    except machine_program.NotCovered as error:
        return str(error)
    return "covered"


def _cpu_per_token(vocabulary: Vocabulary, work: list[tuple[dict, list[int]]]) -> tuple[float, int]:
    """CPU seconds of the strict pass over ``work`` (maskbench.force_pass), and its tokens."""
    start = time.process_time()
    maskbench.force_pass(vocabulary, work)
    return time.process_time() - start, sum(len(ids) for _, ids in work)


def main() -> None:
    tokenizer = maskbench.llama3_tokenizer()
    vocabulary = Vocabulary.from_transformers(tokenizer)
    work = maskbench.compact_pass(tokenizer)
    reasons: collections.Counter = collections.Counter()
    groups: dict[str, list] = {"covered": [], "not covered": []}
    for schema, ids in work:
        reason = _reason(JsonSchemaParser(schema))
        reasons[reason] += 1
        groups["covered" if reason == "covered" else "not covered"].append((schema, ids))
    print(f"machine {'on' if backend.machine_active() else 'off'}; cases by coverage:")
    for reason, count in reasons.most_common():
        print(f"  {count:3d}  {reason}")
    total_cpu, total_tokens = 0.0, 0
    for name, group in groups.items():
        cpu, tokens = _cpu_per_token(vocabulary, group)
        total_cpu += cpu
        total_tokens += tokens
        per = cpu / max(tokens, 1) * 1e6
        print(f"{name:12s} {len(group):3d} cases {tokens:5d} tokens {cpu:.3f} CPU-s {per:7.1f} µs/token")
    print(f"{'all':12s} {len(work):3d} cases {total_tokens:5d} tokens {total_cpu:.3f} CPU-s "
          f"{total_cpu / total_tokens * 1e6:7.1f} µs/token")  # fmt: skip


if __name__ == "__main__":
    main()
