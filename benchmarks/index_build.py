"""The Llama 3 vocabulary index: its build from the tokenizer (cold, no disk cache), its load from the disk
cache, and the resident memory it adds, each in fresh processes (medians of ``--runs``).

MaskBench reports the same three figures from its worker; this script isolates them, so a change to the index
can be compared run against run (the CPU time of the call too: steadier than wall time on shared cores). The
cold build includes what the compiled walk needs from the index (the token bytes and the flat trie); the dict
trie of the Python walk is made at its first use (``Vocabulary.trie``; see index_memory.py for when). Wall
times drift on shared cores: compare two checkouts alternately (``PYTHONPATH=<checkout>``).

    python benchmarks/index_build.py
    PYTHONPATH=/path/to/other/checkout python benchmarks/index_build.py --runs 7
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

_CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import maskbench
from formatenforcer import Vocabulary
from formatenforcer.core import backend, flat_trie

def resident():
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * 4096 / 2**20

tokenizer = maskbench.llama3_tokenizer()
cache = sys.argv[2]
before = resident()
start, cpu = time.perf_counter(), time.process_time()
vocabulary = Vocabulary.from_transformers(tokenizer, cache_dir=False if cache == "-" else cache)
if backend.active():
    flat_trie.flat_trie(vocabulary)  # (built with the index, or read from the cache: a no-op then)
print(json.dumps({"seconds": time.perf_counter() - start, "cpu": time.process_time() - cpu,
                  "megabytes": resident() - before}))
"""


def _run(cache: str) -> dict:
    here = str(Path(__file__).resolve().parent)
    # (run from a neutral folder: ``python -c`` puts the working folder first on the path, ahead of PYTHONPATH)
    out = subprocess.run([sys.executable, "-c", _CHILD, here, cache], capture_output=True, text=True, check=True,
                         cwd=tempfile.gettempdir())  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        _run(folder)  # writes the cache entry
        cold = [_run("-") for _ in range(args.runs)]
        cached = [_run(folder) for _ in range(args.runs)]
    for name, runs in (("cold", cold), ("cached", cached)):
        times = [1000 * r["seconds"] for r in runs]
        shown = ", ".join(f"{t:.0f}" for t in times)
        cpu = statistics.median(1000 * r["cpu"] for r in runs)
        print(f"{name:6s} {statistics.median(times):.0f} ms, CPU {cpu:.0f} ms  (runs: {shown})")
    print(f"memory {statistics.median(r['megabytes'] for r in cold):.1f} MB resident added by the cold build")


if __name__ == "__main__":
    main()
