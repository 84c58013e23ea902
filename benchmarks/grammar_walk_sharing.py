"""How far the grammar masks' walks below trie nodes could be shared: an instrumented run, for finding work.

Over the grammar cases of benchmarks/grammar_cases.py (teacher-forced on Llama 3, as grammar_digest.py), every
call of core/walk.py's ``_walk_below`` is recorded with the trie node, the state's key (what the walks are
memoised by today), the tokens it found (hashed) and two coarser signatures of the grammar state: at depth 1
the expected terminals (and whether the text may end) of the Earley sets a new lexeme may start at — the fresh
sets and the set after each lexeme in progress — with each lexeme's terminal and automaton state; at depth 2
the same plus, per such set, the expected terminals of the set after each terminal it expects. It prints how
many distinct (node, key), (node, tokens found) and (node, signature) pairs there are, and how many signature
groups hold walks with different results (a key coarser than the state is exact only where that is none),
besides the CPU time the depth-2 signatures took to compute (they scan every expected terminal).

    python benchmarks/grammar_walk_sharing.py        # PYTHONPATH=/path/to/other/checkout for the other side
"""

from __future__ import annotations

import collections
import hashlib
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import maskbench  # noqa: E402
from grammar_cases import grammar_cases  # noqa: E402

from formatenforcer import GrammarParser, TokenEnforcer, Vocabulary, allocate_bitmask  # noqa: E402
from formatenforcer.core import walk  # noqa: E402
from formatenforcer.core.run_tables import pack_rows  # noqa: E402

_walk_below = walk._walk_below
calls: list[tuple] = []
held: list[object] = []  # every node walked below stays alive, so ids are not reused
signature_seconds = 0.0


def _sets(state) -> tuple[frozenset, frozenset] | None:  # type: ignore[no-untyped-def]
    """(lexemes in progress as (terminal, automaton state, set after), fresh sets), or None (not a grammar
    state: the end of the text)."""
    active = getattr(state, "_active", None)
    if active is None:
        return None
    return frozenset((lexer, q, s.scan(lexer)) for s, lexer, q in active), frozenset(state._fresh)


def _depth1(earley_set) -> tuple:  # type: ignore[no-untyped-def]
    return earley_set.expected, earley_set.accepting


def _depth2(earley_set) -> tuple:  # type: ignore[no-untyped-def]
    after = tuple(earley_set.scan(lexer).expected for lexer in earley_set.expected)
    return earley_set.expected, earley_set.accepting, after


def _signature(sets: tuple[frozenset, frozenset] | None, of) -> tuple | None:  # type: ignore[no-untyped-def]
    if sets is None:
        return None
    active, fresh = sets
    return frozenset((lexer, q, of(s)) for lexer, q, s in active), frozenset(of(s) for s in fresh)


def below(vocabulary: Vocabulary, node, state, lexemes: dict):  # type: ignore[no-untyped-def]
    global signature_seconds
    sets = _sets(state)
    first = _signature(sets, _depth1)
    started = time.process_time()
    second = _signature(sets, _depth2)
    signature_seconds += time.process_time() - started
    out, masks = _walk_below(vocabulary, node, state, lexemes)
    found = hashlib.blake2b(pack_rows(list(out), list(masks), vocabulary.size)[0].tobytes(), digest_size=12).digest()
    held.append(node)
    calls.append((id(node), state.key(), found, first, second))
    return out, masks


def _conflicts(index: int) -> tuple[int, int]:
    groups: dict[tuple, set] = collections.defaultdict(set)
    for call in calls:
        groups[(call[0], call[index])].add(call[2])
    return len(groups), sum(1 for found in groups.values() if len(found) > 1)


def main() -> None:
    walk._walk_below = below
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
    print(f"{masks} masks, {len(calls)} walks below nodes, loop {time.process_time() - cpu:.2f} s CPU (instrumented)")
    print(f"distinct (node, key): {len({(call[0], call[1]) for call in calls})}")
    print(f"distinct (node, tokens found): {len({(call[0], call[2]) for call in calls})}")
    for label, index in (("depth-1 signature", 3), ("depth-2 signature", 4)):
        groups, conflicting = _conflicts(index)
        print(f"distinct (node, {label}): {groups}, of which with different results: {conflicting}")
    print(f"depth-2 signatures computed in {signature_seconds:.2f} s CPU")


if __name__ == "__main__":
    main()
