"""The accept half of a teacher-forced pass, alone: every MaskBench case's compact tokens accepted through a
new schema's matcher on the Llama 3 vocabulary, in MaskBench's order, with no mask computed (accepting needs
none). For instruction counts of what ``Matcher.accept_token`` costs; the pass's own count is the difference
of two runs (each ~1-2 minutes under callgrind):

    PY=$(python -c 'import sys; print(sys.executable)')
    valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.accept $PY benchmarks/accept_pass.py
    valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.setup $PY benchmarks/accept_pass.py --setup-only

Compare two checkouts with PYTHONPATH=<checkout>, run from a folder outside both.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import maskbench  # noqa: E402

from formatenforcer import JsonSchemaParser, TokenEnforcer, Vocabulary  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--setup-only", action="store_true", help="load and build everything, accept nothing")
    args = parser.parse_args()
    tokenizer = maskbench.llama3_tokenizer()
    vocabulary = Vocabulary.from_transformers(tokenizer)
    work = [(JsonSchemaParser(schema), ids) for schema, ids in maskbench.compact_pass(tokenizer)]
    if args.setup_only:
        return
    tokens = 0
    for schema, ids in work:
        matcher = TokenEnforcer(vocabulary, schema).matcher()
        for token in ids:
            if not matcher.accept_token(token):
                raise SystemExit(f"a valid token was refused: {token}")
            tokens += 1
    print(f"{len(work)} cases, {tokens} tokens accepted")


if __name__ == "__main__":
    main()
