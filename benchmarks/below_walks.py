"""How the walks below lexeme end points start, over MaskBench's cases teacher-forced (compact, Llama 3): from a
lexeme of their own (a cached, shared walk) or from the full state stepped character by character.

    python benchmarks/below_walks.py            # PYTHONPATH=/other/checkout for another side

Each call of ``walk._walk_below`` is classed by the state's lexeme: ``lexeme <inner>`` (walked alone and
cached), ``finished <inner>`` (a value that ended hands over to its container's lexeme) or ``full state``.
"""

from __future__ import annotations

import collections
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import maskbench  # noqa: E402

import formatenforcer.core.walk as walk  # noqa: E402
from formatenforcer import JsonSchemaParser, TokenEnforcer, Vocabulary  # noqa: E402


def main() -> None:
    kinds: collections.Counter = collections.Counter()
    original = walk._walk_below
    refuses = getattr(walk, "_refuses", None)

    def counted(vocabulary, node, state, lexemes):  # noqa: ANN001, ANN202
        lexeme = state.lexeme()
        if lexeme is None:
            kinds["full state"] += 1
        elif not lexeme.inner.can_end():
            kinds[f"lexeme {type(lexeme.inner).__name__}"] += 1
        elif getattr(lexeme, "finish", None) is not None and refuses is not None and refuses(lexeme.inner, node):
            kinds[f"finished {type(lexeme.inner).__name__}"] += 1
        else:
            kinds["full state"] += 1
        return original(vocabulary, node, state, lexemes)

    walk._walk_below = counted
    tokenizer = maskbench.llama3_tokenizer()
    vocabulary = Vocabulary.from_transformers(tokenizer)
    for case in maskbench.load_cases():
        text = json.dumps(case["instance"], separators=(",", ":"), ensure_ascii=False)
        matcher = TokenEnforcer(vocabulary, JsonSchemaParser(case["schema"])).matcher()
        for token in tokenizer.encode(text, add_special_tokens=False):
            matcher.mask()
            if not matcher.accept_token(token):
                raise SystemExit(f"token {token} of a valid instance refused")
    total = sum(kinds.values())
    for kind, count in kinds.most_common():
        print(f"{count:7d}  {count / total:6.1%}  {kind}")
    print(f"{total:7d}  walks below end points")
    cache = vocabulary.lexeme_cache
    print(f"the vocabulary's shared lexeme cache: {len(cache)} entries, {cache.used / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
