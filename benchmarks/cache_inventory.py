"""Inventory of the caches that outlive a parser (issue 18): builds N distinct schemas on the Llama 3
vocabulary (the schemas of memory_many_schemas.py, 4 masks each), drops them, and prints each cache held by
the Vocabulary or at module level with its entries and approximate bytes (a walk of the objects it alone
holds, numpy arrays by ``nbytes``; the vocabulary's own trie and token texts are not counted).

    python benchmarks/cache_inventory.py --n 1000
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import types
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import maskbench  # noqa: E402
from memory_many_schemas import _malloc_trim, rss_mb, schemas  # noqa: E402

from formatenforcer import JsonSchemaParser, TokenEnforcer, Vocabulary  # noqa: E402
from formatenforcer.core.cache_budget import BudgetedCache  # noqa: E402

_SKIP = (type, types.ModuleType, types.FunctionType)


def deep_size(root: object, seen: set[int]) -> int:
    """Bytes of the objects reachable from ``root`` and not yet in ``seen`` (which it extends)."""
    total, stack = 0, [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, _SKIP):
            continue
        seen.add(id(obj))
        if isinstance(obj, np.ndarray):
            total += obj.nbytes + 112 if obj.base is None else 112
            continue
        total += sys.getsizeof(obj)
        stack.extend(gc.get_referents(obj))
    return total


def debugmallocstats() -> str:
    """The text ``sys._debugmallocstats()`` writes to the process's stderr (file descriptor 2), captured."""
    import os
    import tempfile

    with tempfile.TemporaryFile(mode="w+") as out:
        saved = os.dup(2)
        os.dup2(out.fileno(), 2)
        try:
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        out.seek(0)
        return out.read()


def pymalloc_arenas() -> str:
    """CPython's small-object allocator: arenas held (each 1 MiB on 3.13, 256 KiB before) and their use."""
    text = debugmallocstats()
    held = [line for line in text.splitlines() if "arenas allocated current" in line or "Total" in line]
    return "; ".join(" ".join(line.split()) for line in held)


def caches(vocabulary: Vocabulary) -> dict[str, object]:
    """Every cache that outlives its parser, by name."""
    from formatenforcer.core import automaton, charset, flat_trie, lexeme_automaton, walk
    from formatenforcer.jsonschema import compile as js_compile
    from formatenforcer.jsonschema import strings
    from formatenforcer.jsonschema.ecma import translate
    from formatenforcer.jsonschema.formats import content
    from formatenforcer.jsonschema.schema import number_bounds
    from formatenforcer.parsers import choice, dfa_ops, regex

    found: dict[str, object] = {}
    for name, value in vars(vocabulary).items():
        if isinstance(value, BudgetedCache):  # what it holds, and the budget's estimate of it
            found[f"Vocabulary.{name}"] = ({key: entry[0] for key, entry in value._data.items()}, value.used)
        elif isinstance(value, dict) and name != "trie":
            found[f"Vocabulary.{name}"] = value
    found.update(
        {
            "Vocabulary._texts (one per vocabulary)": vocabulary._texts,
            "lexeme_automaton._NODES": lexeme_automaton._NODES.get(vocabulary),
            "automaton._EXPORTS": dict(automaton._EXPORTS),
            "flat_trie._TRIES": flat_trie._TRIES.get(vocabulary),
            "walk._SHARED_BYTES": walk._SHARED_BYTES,
            "charset._OF_MEMO": charset._OF_MEMO,
            "choice._MEMO": choice._MEMO,
            "dfa_ops._CACHE": dfa_ops._CACHE,
            "regex._CACHE": regex._CACHE,
            "translate._CHECKED": translate._CHECKED,
            "content._SATISFIABLE": content._SATISFIABLE,
            "content._CLASS_POINTS": content._CLASS_POINTS,
            "strings._BODY_SETS": strings._BODY_SETS,
            "compile._LITERAL_TRIES": js_compile._LITERAL_TRIES,
        }
    )
    found["number_bounds lru_cache"] = [f for f in vars(number_bounds).values() if hasattr(f, "cache_info")]
    from formatenforcer.jsonschema.ecma import parse as ecma_parse

    ecma = [*vars(ecma_parse).values(), *vars(translate).values()]
    found["ecma parse/translate lru_cache"] = [f for f in ecma if hasattr(f, "cache_info")]
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--keep", action="store_true", help="keep every schema alive until the end, then drop")
    args = parser.parse_args()
    tokenizer = maskbench.llama3_tokenizer()
    vocabulary = Vocabulary.from_transformers(tokenizer)
    gc.collect()
    base = rss_mb()
    baseline: set[int] = set()
    deep_size((vocabulary.trie, vocabulary.token_bytes, vocabulary.eos_mask), baseline)
    alive = []
    for schema, instance in schemas(args.n):
        enforcer = TokenEnforcer(vocabulary, JsonSchemaParser(schema))
        if args.keep:
            alive.append(enforcer)
        position = enforcer.start
        for token in tokenizer.encode(json.dumps(instance), add_special_tokens=False)[:3]:
            enforcer.mask(position)
            position = enforcer.step(position, token)
        enforcer.mask(position)
    if args.keep:
        print(f"{args.n} schemas alive: RSS +{rss_mb() - base:.0f} MB over the loaded vocabulary")
    del enforcer, position, alive
    gc.collect()
    print(f"{args.n} schemas built and dropped: RSS +{rss_mb() - base:.0f} MB over the loaded vocabulary")
    if _malloc_trim():
        print(f"heap trimmed (malloc_trim): RSS +{rss_mb() - base:.0f} MB; {pymalloc_arenas()}")
    print("| cache | entries | MB held (object walk) | MB by the budget's estimate |\n|---|---|---|---|")
    rows = []
    for name, value in caches(vocabulary).items():
        if value is None:
            continue
        estimate = "-"
        if name.startswith("Vocabulary.") and isinstance(value, tuple):
            value, used = value
            estimate = f"{used / 1e6:.1f}"
        size = deep_size(value, set(baseline))
        entries = len(value) if hasattr(value, "__len__") else 1
        if name.endswith("lru_cache"):
            entries = sum(f.cache_info().currsize for f in value)  # type: ignore[attr-defined]
        rows.append((size, name, entries, estimate))
    for size, name, entries, estimate in sorted(rows, reverse=True):
        print(f"| {name} | {entries} | {size / 1e6:.1f} | {estimate} |")


if __name__ == "__main__":
    main()
