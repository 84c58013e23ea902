"""Memory of many distinct schemas in one process (issue 18): builds N distinct schemas on the Llama 3
vocabulary, takes a few masks of each (teacher-forced into a valid instance), and prints the resident set
size (RSS) at the start, every N/10 schemas, with all of them alive, and after they are dropped.

    python benchmarks/memory_many_schemas.py            # N = 10,000
    python benchmarks/memory_many_schemas.py --n 1000

A quarter of the schemas are the benchmark cases' schemas, each copy with its own title (its own parser
and caches, the same language); the rest are small integer, pattern and object schemas with distinct
bounds, patterns and names.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import maskbench  # noqa: E402

from formatenforcer import JsonSchemaParser, TokenEnforcer, Vocabulary  # noqa: E402


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def schemas(n: int):  # noqa: ANN201
    """``n`` distinct (schema, instance) pairs."""
    cases = maskbench.load_cases()
    for i in range(n):
        kind = i % 4
        if kind == 0:
            case = cases[(i // 4) % len(cases)]
            schema = {**case["schema"], "title": f"copy {i}"}  # a distinct schema, the case's language
            yield schema, case["instance"]
        elif kind == 1:
            yield {"type": "integer", "minimum": i, "maximum": i + 1000}, i + 7
        elif kind == 2:
            yield {"type": "string", "pattern": f"^k{i}-[a-z]+$"}, f"k{i}-abc"
        else:
            yield (
                {"type": "object", "properties": {f"p{i}": {"type": "number"}}, "required": [f"p{i}"]},
                {f"p{i}": 1.5},
            )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--masks", type=int, default=4, help="masks per schema (start and after each token)")
    args = parser.parse_args()
    tokenizer = maskbench.llama3_tokenizer()
    vocabulary = Vocabulary.from_transformers(tokenizer)
    gc.collect()
    base = rss_mb()
    print(f"baseline (tokenizer and vocabulary loaded): {base:.0f} MB", flush=True)
    alive = []
    start = time.perf_counter()
    for i, (schema, instance) in enumerate(schemas(args.n)):
        parser_ = JsonSchemaParser(schema)
        enforcer = TokenEnforcer(vocabulary, parser_)
        position = enforcer.start
        ids = tokenizer.encode(json.dumps(instance), add_special_tokens=False)
        for token in ids[: args.masks - 1]:
            enforcer.mask(position)
            position = enforcer.step(position, token)
        enforcer.mask(position)
        alive.append((parser_, enforcer))
        if (i + 1) % max(1, args.n // 10) == 0:
            took = time.perf_counter() - start
            print(f"{i + 1} schemas alive: {rss_mb():.0f} MB ({took:.0f} s)", flush=True)
    peak = rss_mb()
    alive.clear()
    gc.collect()
    after = rss_mb()
    print(f"all {args.n} alive: {peak:.0f} MB (+{peak - base:.0f}); dropped: {after:.0f} MB (+{after - base:.0f})")
    # glibc keeps freed small blocks in its heap: the resident size only falls once the heap is trimmed
    trimmed = _malloc_trim()
    if trimmed:
        print(f"dropped, heap trimmed (malloc_trim): {rss_mb():.0f} MB (+{rss_mb() - base:.0f})")


def _malloc_trim() -> bool:
    """Returns the C heap's free pages to the system (glibc's ``malloc_trim``); False where there is none."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
        return bool(libc is not None and libc.malloc_trim(0) is not None)
    except (OSError, AttributeError):
        return False


if __name__ == "__main__":
    main()
