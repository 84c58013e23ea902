"""A digest of every grammar mask over MaskBench's grammar cases: a speed change that keeps it keeps the masks.

Each case of benchmarks/grammar_cases.py (Lark text) is teacher-forced on the Llama 3 tokenizer and every
mask (the bitmask row before each token and after the last) is hashed, per case and in total; the time of
the whole loop and the cycle collector's work during it (collections per generation and their time, from
``gc.callbacks``) are printed after. Run it on two checkouts and compare the digests.

    python benchmarks/grammar_digest.py            # PYTHONPATH=/path/to/other/checkout for the other side

For instruction counts (callgrind; they do not move with the machine's load), ``--callgrind`` switches
callgrind's instrumentation on for the loop alone (``callgrind_control -i on``), so the setup runs at
valgrind's uninstrumented speed and the count is the loop's:

    PY=$(python -c 'import sys; print(sys.executable)')
    valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=/tmp/cg.grammar \
        $PY benchmarks/grammar_digest.py --callgrind
    grep -h Collected /tmp/cg.grammar

``--prebuilt`` builds the 16 grammar objects before the loop (lark's loader, the terminals' automata, the
Earley tables; the process's first grammar also builds lark's own grammar parser; then ``gc.freeze()``),
so the loop's time and count are the masks' own work (what MaskBench's TBM measures); without it the builds
are in the loop.
"""

from __future__ import annotations

import gc
import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import maskbench  # noqa: E402
from grammar_cases import grammar_cases  # noqa: E402
from mask_digest import digest_masks  # noqa: E402

from formatenforcer import GrammarParser, TokenEnforcer, Vocabulary  # noqa: E402


class _CollectorClock:
    """Counts the cycle collector's collections per generation and adds up their time."""

    def __init__(self) -> None:
        self.counts = [0, 0, 0]
        self.seconds = [0.0, 0.0, 0.0]
        self._started = 0.0

    def __call__(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.counts[info["generation"]] += 1
            self.seconds[info["generation"]] += time.perf_counter() - self._started


def _instrumentation(switch: str) -> None:
    """Switches callgrind's instrumentation of this process on or off (run under ``valgrind --tool=callgrind
    --instr-atstart=no``)."""
    subprocess.run(["callgrind_control", "-i", switch, str(os.getpid())], check=True, capture_output=True)


def main() -> None:
    tokenizer = maskbench.llama3_tokenizer()
    vocabulary = Vocabulary.from_transformers(tokenizer)
    instrument = "--callgrind" in sys.argv[1:]
    cases = grammar_cases()
    prebuilt = None
    if "--prebuilt" in sys.argv[1:]:
        prebuilt = [GrammarParser(case["lark"], "lark") for case in cases]
        gc.freeze()  # (the held parsers' objects are not the loop's for the collector to visit)
    if instrument:
        _instrumentation("on")
    total = hashlib.sha256()
    count = 0
    clock = _CollectorClock()
    gc.callbacks.append(clock)
    started, cpu = time.perf_counter(), time.process_time()
    for number, case in enumerate(cases):
        digest = hashlib.sha256()
        ids = tokenizer.encode(case["text"], add_special_tokens=False)
        parser = GrammarParser(case["lark"], "lark") if prebuilt is None else prebuilt[number]
        matcher = TokenEnforcer(vocabulary, parser).matcher()
        count += digest_masks(matcher, ids, vocabulary.size, digest)
        print(case["name"], digest.hexdigest()[:16])
        total.update(digest.digest())
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    if instrument:
        _instrumentation("off")
    gc.callbacks.remove(clock)
    print("TOTAL", count, total.hexdigest())
    collections = ", ".join(f"gen{g} {n} ({s:.2f} s)" for g, (n, s) in enumerate(zip(clock.counts, clock.seconds)))
    print(f"loop: {wall:.2f} s wall, {cpu:.2f} s CPU; collections: {collections}; tracked now {len(gc.get_objects())}")


if __name__ == "__main__":
    main()
