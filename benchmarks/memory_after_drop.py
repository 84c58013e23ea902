"""Where the memory goes once many live schemas are dropped (issue 18): keeps N distinct schemas alive (those
of memory_many_schemas.py, 4 masks each), drops them, trims the C heap, and prints the resident set size
(RSS) next to CPython's small-object allocator (pymalloc: arenas held and bytes of live blocks in them),
then again with every budgeted cache and module memo emptied. It also counts the 16 KiB pools that the
small objects made during the run and still alive sit in: each such pool keeps its whole arena (1 MiB)
from being returned to the system. Prints figures and asserts nothing.

    python benchmarks/memory_after_drop.py --n 1500
    PYTHONMALLOC=malloc python benchmarks/memory_after_drop.py --n 1500   # glibc malloc alone, no pymalloc
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import maskbench  # noqa: E402
from cache_inventory import caches, debugmallocstats  # noqa: E402
from memory_many_schemas import _malloc_trim, rss_mb, schemas, walk  # noqa: E402

from formatenforcer import Vocabulary  # noqa: E402

_POOL = 16 << 10  # pymalloc's pool (CPython 3.10+); arenas are 1 MiB
_SMALL = 512  # larger requests bypass pymalloc


def pymalloc() -> tuple[int, int]:
    """(arenas held, bytes of live blocks) from ``sys._debugmallocstats``; (-1, -1) without pymalloc."""
    text = debugmallocstats()

    def number(label: str) -> int:
        found = re.search(re.escape(label) + r"\s*=\s*([\d,]+)", text)
        return int(found.group(1).replace(",", "")) if found else -1

    return number("# arenas allocated current"), number("# bytes in allocated blocks")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=1500)
    parser.add_argument(
        "--warm",
        type=int,
        default=4,
        help="schemas walked before the baseline (4: one of each kind; the first compiled lexeme walk builds "
        "the vocabulary's flat trie, some 13 MB, once)",
    )
    args = parser.parse_args()
    tokenizer = maskbench.llama3_tokenizer()
    vocabulary = Vocabulary.from_transformers(tokenizer)
    for schema, instance in schemas(args.warm):  # one-time parts: compiled and flat tries, texts, modules
        walk(vocabulary, tokenizer, schema, instance, 4)
    gc.collect()
    _malloc_trim()
    base, (arenas0, live0) = rss_mb(), pymalloc()
    before = {id(o) for o in gc.get_objects()}

    def report(label: str) -> None:
        arenas, live = pymalloc()
        heap = ""
        if arenas >= 0:
            heap = f"; pymalloc {arenas} arenas ({arenas - arenas0:+d} MiB), live blocks {live / 2**20:.0f} MiB"
            heap += f" ({(live - live0) / 2**20:+.1f})"
        print(f"{label}: RSS {rss_mb():.0f} MB ({rss_mb() - base:+.0f}){heap}", flush=True)

    report(f"baseline (vocabulary loaded, {args.warm} schemas walked and dropped)")
    alive = [walk(vocabulary, tokenizer, schema, instance, 4) for schema, instance in schemas(args.n)]
    report(f"{args.n} schemas alive")
    alive.clear()
    gc.collect()
    report("all dropped, gc.collect() (no trim by the caller)")
    _malloc_trim()
    report("all dropped, gc.collect(), malloc_trim(0)")
    survivors = [o for o in gc.get_objects() if id(o) not in before and sys.getsizeof(o) <= _SMALL]
    pools = {id(o) // _POOL for o in survivors}
    print(f"  {len(survivors)} small tracked objects made during the run survive, in {len(pools)} pools "
          f"({len(pools) * _POOL / 2**20:.0f} MiB of 16 KiB pools)")  # fmt: skip
    del survivors
    vocabulary.cache_budget.clear()
    gc.collect()
    _malloc_trim()
    report("the vocabulary's budgeted caches emptied (cache_budget.clear()), trimmed")
    for name, value in caches(vocabulary).items():
        for held in value if isinstance(value, list) else [value]:
            if hasattr(held, "cache_clear"):
                held.cache_clear()
            elif isinstance(held, dict) and not name.startswith("Vocabulary"):
                held.clear()
    for module in [m for name, m in sys.modules.items() if name.startswith("formatenforcer") and m is not None]:
        for held in vars(module).values():  # the lru_caches the inventory does not list (ECMA parses, ...)
            if callable(getattr(held, "cache_clear", None)):
                held.cache_clear()
    gc.collect()
    _malloc_trim()
    report("every budgeted cache, module memo and lru_cache emptied, trimmed")
    survivors = [o for o in gc.get_objects() if id(o) not in before and sys.getsizeof(o) <= _SMALL]
    pools = {id(o) // _POOL for o in survivors}
    print(f"  {len(survivors)} small tracked objects made during the run survive, in {len(pools)} pools")
    if os.environ.get("SHOW_SURVIVORS"):
        import collections

        print(collections.Counter(type(o).__name__ for o in survivors).most_common(12))
        for o in [o for o in survivors if type(o) is dict][:: max(1, len(survivors) // 300)][:12]:
            owners = [type(r).__name__ for r in gc.get_referrers(o) if r is not survivors]
            print("   dict", list(o)[:4], "<-", owners[:4])


if __name__ == "__main__":
    main()
