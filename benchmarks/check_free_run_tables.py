"""Checks the vectorized free-run tables against a token-by-token reference build, and times both.

The reference is the plain definition: for each token, split its bytes into complete characters and a
trailing incomplete one, count the leading characters in the class; a token made only of class characters
(and an incomplete character the class can complete) goes to the "runs" masks by length, any other token
into the exit trie of its run length, keyed by the bytes after the run.

    python benchmarks/check_free_run_tables.py            # Llama 3 vocabulary, several classes
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from formatenforcer import CharSet, Vocabulary  # noqa: E402
from formatenforcer.core.charset import ANY, utf8_length  # noqa: E402
from formatenforcer.core.run_tables import pack_ids, split_complete  # noqa: E402
from formatenforcer.core.trie import IDS, as_dict, ids_at  # noqa: E402


def reference(entries: list[tuple[int, bytes]], chars: CharSet, size: int) -> tuple[list[np.ndarray], set]:
    """(cumulative run masks by length, set of (run, bytes after the run, id) exits)."""
    by_length: dict[int, list[int]] = {}
    exits: set[tuple[int, bytes, int]] = set()
    for token_id, data in entries:
        if not data or utf8_length(data[0]) == 0:
            continue
        text, tail = split_complete(data)
        if not text and tail == data and len(data) >= utf8_length(data[0]):
            continue  # invalid UTF-8 inside: no walk accepts it (tables may or may not list it)
        run = 0
        for ch in text:
            if ch not in chars:
                break
            run += 1
        if run == len(text) and (not tail or chars.allows_utf8_prefix(tail)):
            by_length.setdefault(run + (1 if tail else 0), []).append(token_id)
        else:
            exits.add((run, text[run:].encode("utf-8") + tail, token_id))
    masks, cumulative = [], []
    for length in range(max(by_length, default=0) + 1):
        cumulative.extend(by_length.get(length, ()))
        masks.append(pack_ids(cumulative, size))
    return masks, exits


def walkable(data: bytes | None) -> bool:
    if not data or utf8_length(data[0]) == 0:
        return False
    text, tail = split_complete(data)
    return bool(text) or tail != data or len(data) < utf8_length(data[0])


def flatten(exits: dict) -> set[tuple[int, bytes, int]]:
    out: set[tuple[int, bytes, int]] = set()
    for run, trie in exits.items():
        stack = [(trie, b"")]
        while stack:
            node, path = stack.pop()
            for key, child in as_dict(node).items():
                if key == IDS:
                    out.update((run, path, token_id) for token_id in ids_at(child))
                else:
                    stack.append((child, path + bytes((key,))))
    return out


def main() -> int:
    from maskbench import llama3_tokenizer

    vocabulary = Vocabulary.from_transformers(llama3_tokenizer())
    entries = list(enumerate(vocabulary.token_bytes))
    json_chars = ANY - CharSet([(0x22, 0x22), (0x5C, 0x5C), (0, 0x1F)])
    classes = {
        "JSON string": json_chars,
        "digits": CharSet.ranges(("0", "9")),
        "email local part": CharSet.of("abcdefghijklmnopqrstuvwxyz0123456789._%+-"),
        "any": ANY,
        "latin + accents": CharSet.ranges(("a", "z"), ("à", "ÿ")),
        "CJK + a-z": CharSet.ranges(("一", "鿿"), ("a", "z")),
        "one char": CharSet.of("x"),
        "empty": CharSet(),
    }
    failures = 0
    for name, chars in classes.items():
        t0 = time.perf_counter()
        masks, exits = reference(entries, chars, vocabulary.size)
        slow = time.perf_counter() - t0
        t0 = time.perf_counter()
        table = vocabulary.free_run_table(chars)
        fast = time.perf_counter() - t0
        same = (
            len(masks) == table.longest_run + 1
            and all(np.array_equal(a, table.runs_upto(k)) for k, a in enumerate(masks))
            and {e for e in flatten(table.all_exits()) if walkable(vocabulary.token_bytes[e[2]])} == exits
        )
        failures += not same
        print(
            f"{name:18s} reference {slow:6.2f} s  vectorized {fast * 1000:7.1f} ms  {'same' if same else 'DIFFERENT'}"
        )
    print("all tables identical" if not failures else f"{failures} table(s) differ")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
