"""Interleaved A/B of two formatenforcer checkouts in one process: the base checkout's package is loaded under
another name (``fe_base``; the package imports itself only relatively), each side builds its own vocabulary,
and MaskBench's cases alternate between the two implementations case by case (which side goes first flips
every case), so the machine's drift — ±20-60% within minutes here — hits both alike. Times are CPU time of
this thread (accept + mask per token; schema to first mask per case), so a process competing for the other
core matters less. Every token must be accepted by both sides.

    git worktree add /tmp/base <rev> --detach
    python benchmarks/interleaved_ab.py /tmp/base                       # compact, two passes
    python benchmarks/interleaved_ab.py /tmp/base --passes 1 --styles compact,indent2
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import statistics
import sys
import time
from pathlib import Path
from types import ModuleType

sys.path.insert(0, str(Path(__file__).resolve().parent))

import maskbench  # noqa: E402
import numpy as np  # noqa: E402

import formatenforcer  # noqa: E402


def load_base(folder: str) -> ModuleType:
    """The package at ``folder/formatenforcer`` imported as ``fe_base``."""
    package = Path(folder) / "formatenforcer"
    if not (package / "__init__.py").exists():
        raise SystemExit(f"no formatenforcer package in {folder}")
    spec = importlib.util.spec_from_file_location("fe_base", package / "__init__.py",
                                                  submodule_search_locations=[str(package)])  # fmt: skip
    module = importlib.util.module_from_spec(spec)
    sys.modules["fe_base"] = module
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def run_case(library: ModuleType, vocabulary, schema: dict, sequences: list[list[int]]) -> tuple[float, list[float]]:  # noqa: ANN001
    """CPU µs from schema to first mask, and per token (accept + mask), one enforcer per sequence."""
    bitmask = np.full((1, (vocabulary.size + 31) // 32), -1, dtype=np.int32)
    clock = time.thread_time_ns
    start = clock()
    parser = library.JsonSchemaParser(schema)
    ttfm = -1.0
    per_token: list[float] = []
    for tokens in sequences:
        matcher = library.TokenEnforcer(vocabulary, parser).matcher()
        matcher.fill_bitmask(bitmask, 0)
        if ttfm < 0:
            ttfm = (clock() - start) / 1000
        for token in tokens:
            t0 = clock()
            accepted = matcher.accept_token(token)
            matcher.fill_bitmask(bitmask, 0)
            per_token.append((clock() - t0) / 1000)
            if not accepted:
                raise SystemExit(f"{library.__name__} refused token {token} of a valid instance")
    return ttfm, per_token


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base", help="a checkout (worktree) of the base revision")
    parser.add_argument("--passes", type=int, default=2, help="passes over the cases in this process")
    parser.add_argument("--styles", default="compact", help="compact, indent2 or both")
    args = parser.parse_args()
    sides = {"base": load_base(args.base), "new": formatenforcer}
    tokenizer = maskbench.llama3_tokenizer()
    cases = maskbench.load_cases()
    order = list(range(len(cases)))
    random.Random(20250401).shuffle(order)  # maskbench.run_engine's order
    styles = args.styles.split(",")
    sequences = {i: [tokenizer.encode(text, add_special_tokens=False)
                     for _, text in maskbench.serializations(cases[i]["instance"], styles)] for i in order}  # fmt: skip
    vocabularies = {name: lib.Vocabulary.from_transformers(tokenizer, cache_dir=False) for name, lib in sides.items()}
    for number in range(args.passes):
        results: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in sides}
        for position, index in enumerate(order):
            for name in ("base", "new") if position % 2 == 0 else ("new", "base"):
                ttfm, tbm = run_case(sides[name], vocabularies[name], cases[index]["schema"], sequences[index])
                results[name][0].append(ttfm)
                results[name][1].extend(tbm)
        parts = []
        for name, (ttfm, tbm) in results.items():
            ttfm, tbm = sorted(ttfm), sorted(tbm)
            parts.append(f"{name}: TTFM p50 {ttfm[len(ttfm) // 2]:.0f} µs, TBM mean {statistics.mean(tbm):.0f} "
                         f"p50 {tbm[len(tbm) // 2]:.0f} p99 {tbm[int(len(tbm) * 0.99)]:.0f} µs")  # fmt: skip
        ratio = statistics.mean(results["new"][1]) / statistics.mean(results["base"][1])
        print(f"pass {number + 1}: " + " | ".join(parts) + f" | TBM mean new/base x{ratio:.3f}", flush=True)


if __name__ == "__main__":
    main()
