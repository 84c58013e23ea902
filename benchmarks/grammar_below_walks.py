"""What the grammar masks' walks below end points are: an instrumented run, for finding work (not for speed).

Over the grammar cases of benchmarks/grammar_cases.py (teacher-forced on Llama 3, as grammar_digest.py), every
call of core/walk.py's ``_walk_below`` is classified by the branch it takes — the state offers a lexeme (a
cached walk below the node: hit or miss), it is split into ``alternatives`` (a node with more than ``_WIDE``
children), it is walked whole (the plain branch), or a number finishes — and the resumptions' memo
(``("resumed", id(node), full state key)``) is counted as hits and misses. The plain walks are timed per first
byte of the tokens below (each child walked apart), so the bytes whose subtrees cost most show. (JSON's
counterpart: benchmarks/below_walks.py.)

    python benchmarks/grammar_below_walks.py        # PYTHONPATH=/path/to/other/checkout for the other side
"""

from __future__ import annotations

import collections
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import maskbench  # noqa: E402
from grammar_cases import grammar_cases  # noqa: E402

from formatenforcer import GrammarParser, TokenEnforcer, Vocabulary, allocate_bitmask  # noqa: E402
from formatenforcer.core import walk  # noqa: E402
from formatenforcer.core.trie import IDS  # noqa: E402

counts: collections.Counter = collections.Counter()
plain_seconds: collections.Counter = collections.Counter()
_walk_below, _resume_groups = walk._walk_below, walk._resume_groups


def below(vocabulary: Vocabulary, node, state, lexemes: dict):  # type: ignore[no-untyped-def]
    kind = type(state).__name__
    lexeme = state.lexeme()
    ends = lexeme is not None and lexeme.inner.can_end()
    if ends and lexeme.finish is not None and walk._refuses(lexeme.inner, node):
        counts[f"{kind}: finish"] += 1
    elif lexeme is not None and not lexeme.inner.can_end():
        inner, horizon = lexeme.inner, vocabulary.longest_token
        shared = inner.shared_lexeme_key(horizon)
        cache = lexemes if shared is None else vocabulary.lexeme_cache
        key = ("below", id(node), inner.lexeme_key(horizon) if shared is None else shared, lexeme.checked_ends)
        hit = cache.get(key)
        counts[f"{kind}: lexeme, below-walk {'hit' if hit is not None and hit[0] is node else 'miss'}"] += 1
    elif walk._width(node) > walk._WIDE and state.alternatives() is not None:
        counts[f"{kind}: alternatives"] += 1
    else:
        counts[f"{kind}: plain walk"] += 1
        sub = walk._Walk(vocabulary)
        for byte, child in walk.trie_of(node).items():
            if byte != IDS:
                started = time.perf_counter()
                sub.walk({byte: child}, state, b"")
                plain_seconds[chr(byte) if 32 < byte < 127 else f"0x{byte:02x}"] += time.perf_counter() - started
        return sub.out, sub.masks
    return _walk_below(vocabulary, node, state, lexemes)


def resume(walker, lexeme, groups: list, memo: dict) -> None:  # type: ignore[no-untyped-def]
    for inner, _, merged in groups:
        outer = lexeme.resume(inner)
        if outer is not None:
            hit = memo.get(("resumed", id(merged), outer.key()))
            counts[f"resumed memo {'hit' if hit is not None and hit[0] is merged else 'miss'}"] += 1
    _resume_groups(walker, lexeme, groups, memo)


def main() -> None:
    walk._walk_below, walk._resume_groups = below, resume
    tokenizer = maskbench.llama3_tokenizer()
    vocabulary = Vocabulary.from_transformers(tokenizer)
    masks, cpu = 0, time.process_time()
    for case in grammar_cases():
        ids = tokenizer.encode(case["text"], add_special_tokens=False)
        matcher = TokenEnforcer(vocabulary, GrammarParser(case["lark"], "lark")).matcher()
        bitmask = allocate_bitmask(1, vocabulary.size)
        for token in [*ids, None]:
            matcher.fill_bitmask(bitmask, 0)
            masks += 1
            if token is None or not matcher.accept_token(token):
                break
    print(f"{masks} masks, loop {time.process_time() - cpu:.2f} s CPU (instrumented)")
    for name, count in sorted(counts.items()):
        print(f"{count:8d}  {name}")
    total = sum(plain_seconds.values())
    top = ", ".join(f"{byte!r} {seconds:.2f} s" for byte, seconds in plain_seconds.most_common(5))
    print(f"plain walks {total:.2f} s; by first byte below the node: {top}")


if __name__ == "__main__":
    main()
