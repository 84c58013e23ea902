"""Batch MaskBench: B sequences, each with its own schema from benchmarks/cases/, teacher-forced in lockstep.

At every step each running sequence gets its row of one B-row bitmask filled, then accepts its next token
(its case's compact JSON, tokenized by Llama 3, then end of sequence). The time of a step is the wall time
to fill the whole bitmask and accept the B tokens: what a serving engine spends on the CPU between two
forward passes. Each engine runs in a fresh process per batch size, on the cases every engine compiles,
with its own batch entry point where it has one (llguidance's ``fill_next_token_bitmask_par``, xgrammar's
``BatchGrammarMatcher``, formatenforcer's ``fill_bitmasks``).

    python benchmarks/batchbench.py                         # B = 1, 8, 32, 128; three engines
    python benchmarks/batchbench.py --sizes 8,32 --engines formatenforcer,llguidance

``--transformers`` measures formatenforcer's transformers ``LogitsProcessor`` instead: per case, one fresh
processor (its own parser object, so its masks start unknown) is called as ``generate`` calls it, with B rows
of the case's instance serialized B ways (separators and indentation, each checked against the format; too
few valid ways repeat, as beams in one place do), padded with end of sequence once finished. Each call's wall
and CPU time (``time.process_time``: every thread of the process) is a step; each ``FORMATENFORCER_THREADS``
setting runs in a fresh process, alternated ``--rounds`` times.

    python benchmarks/batchbench.py --transformers --sizes 8 --threads 1,2 --rounds 2
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from maskbench import llama3_tokenizer, load_cases  # noqa: E402

ENGINES = ("formatenforcer", "llguidance", "xgrammar")


class Batch:
    """One engine's B sequences: ``fill(rows)`` fills the bitmask rows of the running sequences (``rows``:
    (sequence index, row) pairs), ``accept(i, token)`` advances sequence ``i``."""

    def fill(self, rows: list[tuple[int, int]]) -> None:
        raise NotImplementedError

    def accept(self, index: int, token: int) -> bool:
        raise NotImplementedError


def formatenforcer_batch(tokenizer: Any, schemas: list[dict], size: int) -> tuple[Batch, int]:
    import formatenforcer
    from formatenforcer import JsonSchemaParser, TokenEnforcer, Vocabulary, allocate_bitmask

    vocabulary = Vocabulary.from_transformers(tokenizer)
    matchers = [TokenEnforcer(vocabulary, JsonSchemaParser(schema)).matcher() for schema in schemas]
    bitmask = allocate_bitmask(size, vocabulary.size)
    batch_fill = getattr(formatenforcer, "fill_bitmasks", None)

    class FeBatch(Batch):
        def fill(self, rows: list[tuple[int, int]]) -> None:
            if batch_fill is not None:
                batch_fill([matchers[i] for i, _ in rows], bitmask, [row for _, row in rows])
            else:
                for i, row in rows:
                    matchers[i].fill_bitmask(bitmask, row)

        def accept(self, index: int, token: int) -> bool:
            return matchers[index].accept_token(token)

    return FeBatch(), vocabulary.eos_token_ids[0]


def llguidance_batch(tokenizer: Any, schemas: list[dict], size: int) -> tuple[Batch, int]:
    import llguidance
    import llguidance.hf
    import llguidance.numpy

    info = llguidance.hf.from_tokenizer(tokenizer)
    matchers = [llguidance.LLMatcher(info, llguidance.LLMatcher.grammar_from_json_schema(s), log_level=0)
                for s in schemas]  # fmt: skip
    bitmask = llguidance.numpy.allocate_token_bitmask(size, info.vocab_size)
    executor = llguidance.LLExecutor()
    fill = llguidance.numpy.fill_next_token_bitmask_par

    class LlgBatch(Batch):
        def fill(self, rows: list[tuple[int, int]]) -> None:
            fill(executor, [(matchers[i], row) for i, row in rows], bitmask)

        def accept(self, index: int, token: int) -> bool:
            return matchers[index].consume_token(token)

    return LlgBatch(), info.eos_token


def xgrammar_batch(tokenizer: Any, schemas: list[dict], size: int) -> tuple[Batch, int]:
    import xgrammar

    info = xgrammar.TokenizerInfo.from_huggingface(tokenizer, vocab_size=len(tokenizer))
    compiler = xgrammar.GrammarCompiler(info, max_threads=1, cache_enabled=False)
    matchers = [
        xgrammar.GrammarMatcher(compiler.compile_json_schema(json.dumps(s), any_whitespace=True, strict_mode=False))
        for s in schemas
    ]
    bitmask = xgrammar.allocate_token_bitmask(size, info.vocab_size)
    batcher = xgrammar.BatchGrammarMatcher()

    class XgrBatch(Batch):
        def fill(self, rows: list[tuple[int, int]]) -> None:
            batcher.batch_fill_next_token_bitmask([matchers[i] for i, _ in rows], bitmask, [row for _, row in rows])

        def accept(self, index: int, token: int) -> bool:
            return matchers[index].accept_token(token)

    return XgrBatch(), info.stop_token_ids[0]


BUILDERS = {"formatenforcer": formatenforcer_batch, "llguidance": llguidance_batch, "xgrammar": xgrammar_batch}


def compiles(engine: str, schema: dict) -> bool:
    """Whether ``engine`` accepts ``schema`` (cases one engine refuses are left out for all)."""
    try:
        if engine == "llguidance":
            import llguidance

            grammar = llguidance.LLMatcher.grammar_from_json_schema(schema)
            return not llguidance.LLMatcher.validate_grammar(grammar)
        if engine == "xgrammar":
            import xgrammar

            xgrammar.Grammar.from_json_schema(json.dumps(schema), any_whitespace=True, strict_mode=False)
            return True
        from formatenforcer import JsonSchemaParser

        JsonSchemaParser(schema)
        return True
    except Exception:
        return False


def worker(engine: str, size: int, names: list[str]) -> dict[str, Any]:
    """One engine, one batch size, in this (fresh) process."""
    tokenizer = llama3_tokenizer()
    by_name = {case["name"]: case for case in load_cases()}
    chosen = [by_name[names[i % len(names)]] for i in range(size)]
    t0 = time.perf_counter()
    batch, eos = BUILDERS[engine](tokenizer, [case["schema"] for case in chosen], size)
    setup_s = time.perf_counter() - t0
    streams = [tokenizer.encode(json.dumps(c["instance"], ensure_ascii=False), add_special_tokens=False) + [eos]
               for c in chosen]  # fmt: skip
    running = set(range(size))
    steps: list[float] = []
    rejected = 0
    t = 0
    while running:
        rows = [(i, slot) for slot, i in enumerate(sorted(running))]
        start = time.perf_counter()
        batch.fill(rows)
        for i, _ in rows:
            if not batch.accept(i, streams[i][t]):
                rejected += 1
                running.discard(i)
        steps.append(time.perf_counter() - start)
        t += 1
        running = {i for i in running if t < len(streams[i])}
    return {"engine": engine, "size": size, "setup_s": setup_s, "steps": steps, "rejected": rejected}


def _serializations(tokenizer: Any, instance: Any, matcher_of: Any, eos: int, count: int) -> list[list[int]]:
    """``count`` token streams of ``instance`` (ending with ``eos``) that the format accepts, each serialized
    differently where the format allows it."""
    streams: list[list[int]] = []
    for indent in (None, 1):
        for items in (",", ", "):
            for keys in (":", ": "):
                text = json.dumps(instance, ensure_ascii=False, indent=indent, separators=(items, keys))
                ids = tokenizer.encode(text, add_special_tokens=False) + [eos]
                if ids not in streams and matcher_of().accept_tokens(ids):
                    streams.append(ids)
    if not streams:
        return []
    return [streams[i % len(streams)] for i in range(count)]


def transformers_worker(size: int, names: list[str]) -> dict[str, Any]:
    """formatenforcer's transformers LogitsProcessor over every case, B rows a step, in this process."""
    import torch

    from formatenforcer import JsonSchemaParser, TokenEnforcer, Vocabulary
    from formatenforcer.integrations.transformers import FormatEnforcerLogitsProcessor

    torch.set_num_threads(1)
    tokenizer = llama3_tokenizer()
    vocabulary = Vocabulary.from_transformers(tokenizer)
    eos = vocabulary.eos_token_ids[0]
    prompt = tokenizer.encode("JSON:", add_special_tokens=False)
    by_name = {case["name"]: case for case in load_cases()}
    wall: list[float] = []
    cpu: list[float] = []
    distinct: list[int] = []
    for name in names:
        case = by_name[name]
        checker = JsonSchemaParser(case["schema"])
        streams = _serializations(tokenizer, case["instance"], TokenEnforcer(vocabulary, checker).matcher, eos, size)
        if not streams:
            continue
        distinct.append(len({tuple(s) for s in streams}))
        processor = FormatEnforcerLogitsProcessor(tokenizer, JsonSchemaParser(case["schema"]), vocabulary=vocabulary)
        length = max(map(len, streams))
        rows = [stream + [eos] * (length - len(stream)) for stream in streams]
        scores = torch.zeros(size, vocabulary.size)
        for t in range(length):
            input_ids = torch.tensor([prompt + row[:t] for row in rows])
            cpu_start, wall_start = time.process_time(), time.perf_counter()
            processor(input_ids, scores)
            wall.append(time.perf_counter() - wall_start)
            cpu.append(time.process_time() - cpu_start)
    return {"size": size, "wall": wall, "cpu": cpu, "cases": len(distinct), "distinct": distinct}


def transformers_main(sizes: list[int], threads: list[str], rounds: int) -> None:
    import os

    names = [c["name"] for c in load_cases() if compiles("formatenforcer", c["schema"])]
    print("| B | FORMATENFORCER_THREADS | round | cases | distinct rows (mean) | steps | wall mean | CPU mean | "
          "wall total | CPU total |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|")
    for size in sizes:
        for round_ in range(1, rounds + 1):
            for setting in threads:
                code = (f"import sys, json; sys.path.insert(0, {str(Path(__file__).parent)!r}); import batchbench; "
                        f"print(json.dumps(batchbench.transformers_worker({size}, {names!r})))")  # fmt: skip
                env = dict(os.environ, FORMATENFORCER_THREADS=setting, OMP_NUM_THREADS="1")
                out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
                if out.returncode != 0:
                    raise SystemExit(f"transformers B={size} threads={setting} failed:\n{out.stderr[-2000:]}")
                r = json.loads(out.stdout.strip().splitlines()[-1])
                wall, cpu = r["wall"], r["cpu"]
                cells = [size, setting, round_, r["cases"], f"{statistics.fmean(r['distinct']):.1f}", len(wall),
                         f"{statistics.fmean(wall) * 1e3:.2f} ms", f"{statistics.fmean(cpu) * 1e3:.2f} ms",
                         f"{sum(wall):.2f} s", f"{sum(cpu):.2f} s"]  # fmt: skip
                print("| " + " | ".join(str(c) for c in cells) + " |")
                sys.stdout.flush()


def run(engine: str, size: int, names: list[str]) -> dict[str, Any]:
    code = (f"import sys, json; sys.path.insert(0, {str(Path(__file__).parent)!r}); import batchbench; "
            f"print(json.dumps(batchbench.worker({engine!r}, {size}, {names!r})))")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"{engine} B={size} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1,8,32,128")
    parser.add_argument("--engines", default=",".join(ENGINES))
    parser.add_argument("--transformers", action="store_true", help="the transformers LogitsProcessor (above)")
    parser.add_argument("--threads", default="1,2", help="FORMATENFORCER_THREADS settings (--transformers)")
    parser.add_argument("--rounds", type=int, default=1, help="alternations of the settings (--transformers)")
    args = parser.parse_args()
    if args.transformers:
        transformers_main([int(s) for s in args.sizes.split(",")], args.threads.split(","), args.rounds)
        return
    engines = args.engines.split(",")
    sizes = [int(s) for s in args.sizes.split(",")]
    cases = load_cases()
    names = [c["name"] for c in cases if all(compiles(e, c["schema"]) for e in engines)]
    print(f"{len(names)} of {len(cases)} cases compiled by every engine ({', '.join(engines)})\n")
    print("| B | engine | step mean | p50 | p99 | mean / B | mean vs llguidance | rejected |")
    print("|---|---|---|---|---|---|---|---|")
    for size in sizes:
        results = {engine: run(engine, size, names) for engine in engines}
        base = statistics.fmean(results["llguidance"]["steps"]) if "llguidance" in results else None
        for engine, r in results.items():
            steps = r["steps"]
            mean = statistics.fmean(steps)
            ratio = f"{mean / base:.2f}x" if base else "-"
            p50, p99 = percentile(steps, 0.5) * 1e3, percentile(steps, 0.99) * 1e3
            per = mean / size * 1e6
            cells = [f"{mean * 1e3:.2f} ms", f"{p50:.2f} ms", f"{p99:.2f} ms", f"{per:.0f} µs", ratio, r["rejected"]]
            print(f"| {size} | {engine} | " + " | ".join(str(c) for c in cells) + " |")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
