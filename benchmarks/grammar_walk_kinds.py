"""Which walks a grammar mask is made of: compiled (C) terminal walks, Python trie walks and the glue around them.

An instrumented run of the grammar digest's loop (benchmarks/grammar_digest.py: every grammar mask of
MaskBench's grammar cases, teacher-forced on Llama 3, the 16 grammar objects built before the loop). Every
call of the walk's pieces is counted and timed (CPU, each piece's own time, without the pieces it calls):
``compiled_below`` (a terminal's automaton walked in C, from the root or below a lexeme's end points; the
calls it answers with None are states with no automaton, such as a ``%json`` value's strings), each Python
trie walk by the walker and the state it starts from (``full`` for a full grammar state, ``lexeme`` for an
inner state walked alone, with its class and, for grammar states, how many lexemes are in progress and how
many Earley sets a new lexeme may start at), Earley scans, the rest of ``_walk_below`` (resumptions, cache
look-ups, splits), and what is left in the mask (``mask``: the enforcer, top-level lexeme results, packing).
The timing adds overhead to every counted call, so read the shares, not the totals.

    python benchmarks/grammar_walk_kinds.py        # PYTHONPATH=/path/to/other/checkout for the other side
"""

from __future__ import annotations

import collections
import gc
import hashlib
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import maskbench  # noqa: E402
from grammar_cases import grammar_cases  # noqa: E402
from mask_digest import digest_masks  # noqa: E402

from formatenforcer import GrammarParser, TokenEnforcer, Vocabulary  # noqa: E402
from formatenforcer.core import walk  # noqa: E402
from formatenforcer.grammar import earley  # noqa: E402
from formatenforcer.grammar.parser import GrammarState  # noqa: E402

seconds: collections.Counter = collections.Counter()
calls: collections.Counter = collections.Counter()
stack = ["mask"]
clock = [0.0]


def _enter(kind: str) -> None:
    now = time.process_time()
    seconds[stack[-1]] += now - clock[0]
    clock[0] = now
    stack.append(kind)
    calls[kind] += 1


def _leave() -> None:
    now = time.process_time()
    seconds[stack[-1]] += now - clock[0]
    clock[0] = now
    stack.pop()


def _timed(kind: str, function):  # type: ignore[no-untyped-def]
    def timed(*args):  # type: ignore[no-untyped-def]
        _enter(kind)
        try:
            return function(*args)
        finally:
            _leave()

    return timed


def _walk_kind(walker: walk._Walk, state: object) -> str:
    side = "lexeme" if isinstance(walker, walk._LexemeWalk) else "full"
    name = type(state).__name__
    if isinstance(state, GrammarState):
        name += f", {len(state._active)} in progress, {len(state._fresh)} fresh"
    return f"Python walk: {side} {name}"


def main() -> None:
    tokenizer = maskbench.llama3_tokenizer()
    vocabulary = Vocabulary.from_transformers(tokenizer)
    cases = grammar_cases()
    parsers = [GrammarParser(case["lark"], "lark") for case in cases]
    gc.freeze()
    plain_walk = walk._Walk.walk
    unanswered = [0]

    def walk_timed(self, node, state, pending):  # type: ignore[no-untyped-def]
        if stack[-1].startswith("Python walk"):  # (a walk's own recursion is its own time)
            return plain_walk(self, node, state, pending)
        _enter(_walk_kind(self, state))
        try:
            return plain_walk(self, node, state, pending)
        finally:
            _leave()

    below = walk.compiled_below

    def compiled_timed(*args):  # type: ignore[no-untyped-def]
        _enter("C: compiled_below (a terminal's automaton)")
        try:
            found = below(*args)
            unanswered[0] += found is None
            return found
        finally:
            _leave()

    walk._Walk.walk = walk_timed  # type: ignore[method-assign]
    walk.compiled_below = compiled_timed
    walk._walk_below = _timed("_walk_below glue (resumptions, look-ups, splits)", walk._walk_below)
    earley.EarleySet.scan = _timed("Earley scans", earley.EarleySet.scan)  # type: ignore[method-assign]
    masks = 0
    started = clock[0] = time.process_time()
    for case, parser in zip(cases, parsers):
        ids = tokenizer.encode(case["text"], add_special_tokens=False)
        masks += digest_masks(TokenEnforcer(vocabulary, parser).matcher(), ids, vocabulary.size, hashlib.sha256())
    _leave()
    total = time.process_time() - started
    print(f"{masks} masks, {total:.2f} s CPU (instrumented)")
    for kind, spent in seconds.most_common():
        print(f"{spent / total:6.1%} {spent:7.3f} s {calls[kind]:7d}  {kind}")
    print(f"compiled_below answered None (no automaton): {unanswered[0]}")


if __name__ == "__main__":
    main()
