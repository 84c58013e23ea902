"""The memory of the Llama 3 vocabulary index, and what a first mask and 100 tokens add, in fresh processes.

For the cold build (no disk cache) and the load from the disk cache, medians of ``--runs`` fresh processes:

- **RSS**: the resident size the index adds once the tokenizer is loaded (MaskBench's "index RSS" column and
  ``index_build.py``'s figure). It counts pages first touched, so memory the tokenizer's load freed and the
  index reuses is not in it: it moves with what ran before;
- **heap**: the Python objects the index keeps (``tracemalloc`` after the call, in a process of its own: it
  slows the build), plus the C arrays the flat trie computes at load (its subtree summaries, which
  ``tracemalloc`` does not see: 25 bytes a node and 4 a token). Stable from run to run;
- **first mask + 100 tokens**, for a case the JSON machine covers and one it does not: the resident size
  added since before the index (schema compiled, first mask, then up to 100 tokens accepted and masked), and
  whether the dict trie of the Python walk was made.

``--census``: in one process, which of MaskBench's compact cases make the dict trie within a first mask and
100 tokens (each case on a new Vocabulary of the same token bytes sharing one flat trie, so that no case sees
another's dict trie or caches).

    python benchmarks/index_memory.py
    PYTHONPATH=/path/to/other/checkout python benchmarks/index_memory.py --runs 5
    python benchmarks/index_memory.py --census
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

CASES = ("order_with_shipping", "user_profile")
"""A case the machine covers (a string body, an enum, nested objects), and one it does not."""

_CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import maskbench
from formatenforcer import JsonSchemaParser, TokenEnforcer, Vocabulary, allocate_bitmask

def resident():
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * 4096 / 1e6

tokenizer = maskbench.llama3_tokenizer()
cache, what = sys.argv[2], sys.argv[3]
folder = False if cache == "-" else cache
if what == "heap":
    import gc, tracemalloc
    from formatenforcer.core import flat_trie
    tracemalloc.start()
    vocabulary = Vocabulary.from_transformers(tokenizer, cache_dir=folder)
    trie = flat_trie.flat_trie(vocabulary)  # (built with the index, or read from the cache: a no-op then)
    gc.collect()
    heap = tracemalloc.get_traced_memory()[0]
    summaries = 25 * trie.nodes + len(trie.tok_ids)
    print(json.dumps({"heap": heap / 1e6, "c_arrays": summaries / 1e6}))
    raise SystemExit
before = resident()
vocabulary = Vocabulary.from_transformers(tokenizer, cache_dir=folder)
index = resident() - before
out = {"rss": index}
if what != "index":
    case = next(c for c in maskbench.load_cases() if c["name"] == what)
    text = json.dumps(case["instance"], separators=(",", ":"), ensure_ascii=False)
    matcher = TokenEnforcer(vocabulary, JsonSchemaParser(case["schema"])).matcher()
    bitmask = allocate_bitmask(1, vocabulary.size)
    matcher.fill_bitmask(bitmask, 0)
    for token in tokenizer.encode(text, add_special_tokens=False)[:100]:
        matcher.accept_token(token)
        matcher.fill_bitmask(bitmask, 0)
    out["after"] = resident() - before
    out["dict_trie"] = getattr(vocabulary, "_trie", True) is not None
print(json.dumps(out))
"""


def _run(cache: str, what: str) -> dict:
    here = str(Path(__file__).resolve().parent)
    # (run from a neutral folder: ``python -c`` puts the working folder first on the path, ahead of PYTHONPATH)
    out = subprocess.run([sys.executable, "-c", _CHILD, here, cache, what], capture_output=True, text=True,
                         check=True, cwd=tempfile.gettempdir())  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


def _median(runs: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def census() -> None:
    """Prints how many compact cases make the dict trie within a first mask and 100 tokens, and which."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import maskbench

    from formatenforcer import JsonSchemaParser, TokenEnforcer, Vocabulary, allocate_bitmask
    from formatenforcer.core import backend, flat_trie

    tokenizer = maskbench.llama3_tokenizer()
    like = Vocabulary.from_transformers(tokenizer, cache_dir=False)
    shared = flat_trie.flat_trie(like)
    bitmask = allocate_bitmask(1, like.size)
    cases = [case for case in maskbench.load_cases() if "schema" in case]
    made = []
    for case in cases:
        vocabulary = Vocabulary(like.token_bytes, like.eos_token_ids, size=like.size)
        vocabulary.encode, vocabulary.pre_tokens = like.encode, like.pre_tokens
        flat_trie.adopt(vocabulary, shared)
        text = json.dumps(case["instance"], separators=(",", ":"), ensure_ascii=False)
        matcher = TokenEnforcer(vocabulary, JsonSchemaParser(case["schema"])).matcher()
        matcher.fill_bitmask(bitmask, 0)
        for token in tokenizer.encode(text, add_special_tokens=False)[:100]:
            matcher.accept_token(token)
            matcher.fill_bitmask(bitmask, 0)
        if getattr(vocabulary, "_trie", True) is not None:
            made.append(case["name"])
    print(f"machine {'on' if backend.machine_active() else 'off'}: {len(made)} of {len(cases)} cases make the dict "
          f"trie within a first mask and 100 tokens: {', '.join(made)}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--census", action="store_true", help="which cases make the dict trie (one process)")
    args = parser.parse_args()
    if args.census:
        census()
        return
    with tempfile.TemporaryDirectory() as folder:
        _run(folder, "index")  # writes the cache entry
        for label, cache in (("cold", "-"), ("cached", folder)):
            rss = [_run(cache, "index") for _ in range(args.runs)]
            heap = [_run(cache, "heap") for _ in range(args.runs)]
            print(f"{label:6s} index: RSS +{_median(rss, 'rss'):.1f} MB, heap {_median(heap, 'heap'):.1f} MB "
                  f"+ C arrays {_median(heap, 'c_arrays'):.1f} MB")  # fmt: skip
            for name in CASES:
                runs = [_run(cache, name) for _ in range(args.runs)]
                made = f"{sum(r['dict_trie'] for r in runs)}/{len(runs)}"
                print(f"{label:6s} {name}: first mask + 100 tokens RSS +{_median(runs, 'after'):.1f} MB "
                      f"(index alone +{_median(runs, 'rss'):.1f} MB); dict trie made in {made} runs")  # fmt: skip


if __name__ == "__main__":
    main()
