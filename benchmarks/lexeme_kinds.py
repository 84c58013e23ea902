"""Where the first walks of MaskBench go, by lexeme kind: every case's compact instance teacher-forced through
one TokenEnforcer per case (Llama 3 tokenizer, one vocabulary for the process, as in a server), with the CPU
time of each lexeme walk (``walk.lexeme_result``) added up by the kind of its inner state: the content of a
string (pattern, lengths, key, enum), a number, a spaced value start (by the kind of value it starts).
``--python-lexemes`` keeps every lexeme on the Python walk, so two runs show what the compiled lexeme walk
(core/lexeme_automaton.py) changes.

    python benchmarks/lexeme_kinds.py
    python benchmarks/lexeme_kinds.py --python-lexemes
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import maskbench  # noqa: E402

from formatenforcer import JsonSchemaParser, TokenEnforcer, Vocabulary  # noqa: E402
from formatenforcer.core import walk  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python-lexemes", action="store_true", help="keep every lexeme on the Python walk")
    args = parser.parse_args()
    if args.python_lexemes:
        walk.compiled_lexeme = lambda *args: None  # type: ignore[assignment]
    spent: collections.Counter = collections.Counter()
    count: collections.Counter = collections.Counter()
    lexeme_result = walk.lexeme_result

    def timed(vocabulary, inner, checked=False, first=None):  # type: ignore[no-untyped-def]
        start = time.process_time()
        result = lexeme_result(vocabulary, inner, checked, first)
        content = getattr(inner, "_content", None)
        kind = type(inner if content is None else content).__name__
        value = getattr(inner, "_start", None)  # a value start: by the kind of value it starts
        if value is not None:
            kind += f"({type(value).__name__})"
        spent[kind] += time.process_time() - start
        count[kind] += 1
        return result

    walk.lexeme_result = timed  # type: ignore[assignment]
    tokenizer = maskbench.llama3_tokenizer()
    vocabulary = Vocabulary.from_transformers(tokenizer)
    total, tokens = 0.0, 0
    for case in maskbench.load_cases(None):
        for _, text in maskbench.serializations(case["instance"], ["compact"]):
            ids = tokenizer.encode(text, add_special_tokens=False)
            try:
                matcher = TokenEnforcer(vocabulary, JsonSchemaParser(case["schema"])).matcher()
            except Exception:  # noqa: BLE001 - a refused schema is MaskBench's business, not this profile's
                continue
            start = time.process_time()
            matcher.mask()
            for token in ids:
                if not matcher.accept_token(token):
                    break
                matcher.mask()
            total += time.process_time() - start
            tokens += len(ids)
    print(f"{tokens} tokens, {total:.2f} s CPU, mean {total / tokens * 1e6:.0f} µs per token (accept + mask)")
    print(f"{'kind':<34} {'walks':>6} {'CPU s':>7}")
    for kind, seconds in spent.most_common():
        print(f"{kind:<34} {count[kind]:>6} {seconds:>7.3f}")


if __name__ == "__main__":
    main()
