"""Memory of many distinct schemas in one process (issue 18): builds N distinct schemas on the Llama 3
vocabulary, takes a few masks of each (teacher-forced into a valid instance), and prints the resident set
size (RSS) and the vocabulary's cache budget use at the start and every N/10 schemas: first with each schema
dropped once its masks are taken (``stream``: a server meeting new schemas), then with all N alive at once
and after they are dropped (``keep``). Prints figures and asserts nothing.

    python benchmarks/memory_many_schemas.py                    # N = 10,000, both modes
    python benchmarks/memory_many_schemas.py --n 1000 --mode keep --budget-mb 64
    python benchmarks/memory_many_schemas.py --mode overlap     # at most 2 alive, each made before the last goes
    python benchmarks/memory_many_schemas.py --mode overlap --retired 0   # no sweep by retirements (as before)

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
from collections import deque
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


def steps(vocabulary: Vocabulary, tokenizer, schema: object, instance: object, masks: int):  # noqa: ANN001, ANN201
    """A generator that makes a parser and enforcer for ``schema`` and yields it after each of ``masks``
    masks taken along ``instance``."""
    enforcer = TokenEnforcer(vocabulary, JsonSchemaParser(schema))
    position = enforcer.start
    ids = tokenizer.encode(json.dumps(instance), add_special_tokens=False)
    for token in [*ids[: masks - 1], None]:
        enforcer.mask(position)
        yield enforcer
        if token is None:
            return
        position = enforcer.step(position, token)


def walk(vocabulary: Vocabulary, tokenizer, schema: object, instance: object, masks: int) -> TokenEnforcer:  # noqa: ANN001
    """A parser and enforcer for ``schema``, with ``masks`` masks taken along ``instance``."""
    enforcer = TokenEnforcer(vocabulary, JsonSchemaParser(schema))
    position = enforcer.start
    ids = tokenizer.encode(json.dumps(instance), add_special_tokens=False)
    for token in ids[: masks - 1]:
        enforcer.mask(position)
        position = enforcer.step(position, token)
    enforcer.mask(position)
    return enforcer


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--masks", type=int, default=4, help="masks per schema (start and after each token)")
    parser.add_argument(
        "--mode",
        choices=("stream", "keep", "both", "overlap"),
        default="both",
        help="stream: each schema dropped after its masks; keep: all alive, then dropped (both: stream, then "
        "keep); overlap: each schema's enforcer made and its first half of masks taken before the previous "
        "one takes the rest of its masks and is dropped (at most two alive)",
    )
    parser.add_argument("--budget-mb", type=float, default=None, help="the vocabulary's cache budget (MiB)")
    parser.add_argument(
        "--retired",
        type=int,
        default=None,
        help="a sweep every this many dropped enforcers (cache_release.RETIRED; 0: never, as before it existed)",
    )
    args = parser.parse_args()
    if args.retired is not None:
        from formatenforcer.core import cache_release

        cache_release.RETIRED = args.retired if args.retired > 0 else 1 << 62
    tokenizer = maskbench.llama3_tokenizer()
    cache_bytes = None if args.budget_mb is None else int(args.budget_mb * (1 << 20))
    vocabulary = Vocabulary.from_transformers(tokenizer, cache_bytes=cache_bytes)
    budget = vocabulary.cache_budget
    gc.collect()
    _malloc_trim()
    base = rss_mb()
    print(f"baseline (tokenizer and vocabulary loaded): {base:.0f} MB; cache budget {budget.limit / 2**20:.0f} MiB")
    step = max(1, args.n // 10)
    first = next(iter(schemas(1)))
    walk(vocabulary, tokenizer, *first, args.masks)  # one-time parts: the compiled trie, the texts, modules
    gc.collect()
    _malloc_trim()
    print(f"warm (one schema made and dropped): {rss_mb():.0f} MB (+{rss_mb() - base:.0f})")

    def report(label: str) -> None:
        print(
            f"{label}: {rss_mb():.0f} MB (+{rss_mb() - base:.0f}); caches {budget.used / 2**20:.0f} MiB, "
            f"{budget.evictions} evicted",
            flush=True,
        )

    if args.mode in ("stream", "both"):
        start, peak = time.perf_counter(), 0.0
        for i, (schema, instance) in enumerate(schemas(args.n)):
            walk(vocabulary, tokenizer, schema, instance, args.masks)
            peak = max(peak, rss_mb())
            if (i + 1) % step == 0:
                report(f"stream: {i + 1} schemas made and dropped ({time.perf_counter() - start:.0f} s)")
        gc.collect()
        print(f"stream: peak {peak:.0f} MB (+{peak - base:.0f})")
        if _malloc_trim():
            report("stream: heap trimmed (malloc_trim)")
    if args.mode == "overlap":
        overlap(vocabulary, tokenizer, args.n, args.masks, step, report, base)
    if args.mode in ("keep", "both"):
        alive = []
        start = time.perf_counter()
        for i, (schema, instance) in enumerate(schemas(args.n)):
            alive.append(walk(vocabulary, tokenizer, schema, instance, args.masks))
            if (i + 1) % step == 0:
                report(f"keep: {i + 1} schemas alive ({time.perf_counter() - start:.0f} s)")
        alive.clear()
        gc.collect()
        report(f"keep: all {args.n} dropped")
        # glibc keeps freed small blocks in its heap: the resident size only falls once the heap is trimmed
        if _malloc_trim():
            report("keep: dropped, heap trimmed (malloc_trim)")
    for name, (entries, used) in budget.usage().items():
        print(f"  {name}: {entries} entries, {used / 2**20:.1f} MiB")


def overlap(vocabulary: Vocabulary, tokenizer, n: int, masks: int, step: int, report, base: float) -> None:  # noqa: ANN001
    """``n`` enforcers whose lifetimes overlap in pairs: each is made and takes its first half of masks while
    the previous one is alive; then the previous one takes the rest of its masks and is dropped."""
    from formatenforcer.core import cache_release

    start, peak, sweeps0 = time.perf_counter(), 0.0, cache_release.sweeps()
    previous = None
    for i, (schema, instance) in enumerate(schemas(n)):
        current = steps(vocabulary, tokenizer, schema, instance, masks)
        for _ in range(max(1, masks // 2)):
            next(current, None)
        deque(previous or (), maxlen=0)  # its last masks; then it goes (the generator returns)
        previous = current
        peak = max(peak, rss_mb())
        if (i + 1) % step == 0:
            report(
                f"overlap: {i + 1} schemas made and dropped, {cache_release.live_count()} alive, "
                f"{cache_release.sweeps() - sweeps0} sweeps ({time.perf_counter() - start:.1f} s)"
            )
    deque(previous or (), maxlen=0)
    del previous, current
    gc.collect()
    print(f"overlap: peak {peak:.0f} MB (+{peak - base:.0f})")
    report(f"overlap: all dropped, gc.collect(), {cache_release.sweeps() - sweeps0} sweeps (no trim by the caller)")
    if _malloc_trim():
        report("overlap: heap trimmed (malloc_trim)")


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
