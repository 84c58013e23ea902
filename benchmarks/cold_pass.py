"""One cold pass over MaskBench's cases, for instruction counts: the figure that does not drift.

Wall and CPU times on this machine's shared cores drift by tens of percent within minutes, and the
interleaved A/B (interleaved_ab.py) reads ~x1.07 in its first pass even when both sides run the same code.
Instruction counts under callgrind do not move with the load. This script does what MaskBench's strict
pass does (the cases in MaskBench's order, compact JSON, each schema new, accept + mask per token on the
Llama 3 vocabulary, in one process) and nothing else; ``--setup-only`` stops after loading the tokenizer,
the vocabulary and the cases, so the pass's own count is the difference of two runs:

    PY=$(python -c 'import sys; print(sys.executable)')   # the interpreter itself, not a pyenv shim
    valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.pass $PY benchmarks/cold_pass.py
    valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.setup $PY benchmarks/cold_pass.py --setup-only
    grep -h Collected /tmp/cg.pass /tmp/cg.setup      # (or callgrind_annotate: the per-function split)

Each run takes ~10-15 minutes under callgrind. Compare two checkouts with PYTHONPATH=<checkout>.
``--accept-only`` steps every token and computes no mask: the accept half of the per-token cost on its own
(a few minutes under callgrind; the masks' walks fill some memos the steps then read, so the count is a bit
above the accept half of a whole pass).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import maskbench  # noqa: E402

from formatenforcer import JsonSchemaParser, TokenEnforcer, Vocabulary, allocate_bitmask  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--setup-only", action="store_true", help="load everything, run no case")
    parser.add_argument("--accept-only", action="store_true", help="step every token, compute no mask")
    args = parser.parse_args()
    tokenizer = maskbench.llama3_tokenizer()
    vocabulary = Vocabulary.from_transformers(tokenizer)
    work = maskbench.compact_pass(tokenizer)
    if args.setup_only:
        return
    bitmask = allocate_bitmask(1, vocabulary.size)
    tokens = 0
    for schema, ids in work:
        matcher = TokenEnforcer(vocabulary, JsonSchemaParser(schema)).matcher()
        masks = not args.accept_only
        if masks:
            matcher.fill_bitmask(bitmask, 0)
        for token in ids:
            if not matcher.accept_token(token):
                raise SystemExit(f"a valid token was refused: {token}")
            if masks:
                matcher.fill_bitmask(bitmask, 0)
            tokens += 1
    print(f"{len(work)} cases, {tokens} tokens")


if __name__ == "__main__":
    main()
