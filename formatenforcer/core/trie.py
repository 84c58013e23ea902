"""The byte trie of a vocabulary: plain dicts ``{byte: child}``, the ids of the tokens ending at a node under the
key ``IDS``, and a leaf stored as its bare token id (see vocabulary.py for why this layout)."""

from __future__ import annotations

from collections.abc import Sequence

IDS = -1
"""The trie-node key under which the ids of the tokens ending at that node are stored."""

Trie = dict
Node = "dict | int"
"""A trie node: a dict, or a leaf's token id."""


def insert(trie: Trie, data: bytes, token_id: int) -> None:
    """Adds ``token_id`` under the path ``data`` (a new leaf is stored as the bare id)."""
    node = trie
    last = len(data) - 1
    for position, byte in enumerate(data):
        child = node.get(byte)
        if position == last and child is None:
            node[byte] = token_id
            return
        if child is None:
            child = node[byte] = {}
        elif child.__class__ is int:
            child = node[byte] = {IDS: child}
        node = child
    ids = node.get(IDS)
    if ids is None:
        node[IDS] = token_id
    else:
        node[IDS] = (*ids_at(ids), token_id)


def build(token_bytes: Sequence[bytes | None]) -> Trie:
    """The trie of these tokens (index = id; None or empty: left out), inserted in id order. The compiled
    core builds the same dicts, key order included (``_native.Trie.as_dicts``); this is the reference."""
    trie: Trie = {}
    for token_id, data in enumerate(token_bytes):
        if data:
            insert(trie, data, token_id)
    return trie


def as_dict(node: Trie | int) -> Trie:
    """``node`` as a dict (a leaf's id becomes ``{IDS: id}``), for code off the hot path."""
    return {IDS: node} if node.__class__ is int else node


def ids_at(value: int | tuple[int, ...]) -> tuple[int, ...]:
    """The ids stored under a node's ``IDS`` key: one id as a bare int (the common case), several as a
    tuple (tokens with the same bytes)."""
    return (value,) if value.__class__ is int else value


def subtree_entries(
    node: Trie, token_bytes: Sequence[bytes | None], limit: int | None = None
) -> list[tuple[int, bytes]] | None:
    """(token id, bytes below ``node``) for every token in the subtree of ``node``; None as soon as there
    are more than ``limit`` of them (a big subtree is read otherwise, see Vocabulary._subtree_source).

    Why depths and not paths: the bytes below a node at depth ``d`` are the token's last ``d`` bytes, so the
    visit carries one int per node instead of building a bytes path per node (building paths costs ~150 ms
    for the 58k-token subtree under the space byte)."""
    found: list[tuple[int, int]] = []
    add = found.append
    if node.__class__ is int:
        return [(node, b"")]  # type: ignore[list-item]
    stack: list[tuple[Trie, int]] = [(node, 0)]
    pop, push = stack.pop, stack.append
    while stack:
        if limit is not None and len(found) > limit:
            return None
        current, depth = pop()
        below = depth + 1
        for byte, child in current.items():
            if child.__class__ is int:
                add((child, depth if byte == IDS else below))
            elif byte == IDS:
                found.extend((token_id, depth) for token_id in child)
            else:
                push((child, below))
    return [(token_id, token_bytes[token_id][-depth:] if depth else b"") for token_id, depth in found]  # type: ignore[index]


def longest_match(trie: Trie, data: bytes) -> list[int]:
    """``data`` as token ids by longest match, left to right (the first id where several tokens have the
    same bytes); empty when some position starts no token."""
    out: list[int] = []
    start = 0
    while start < len(data):
        node: Trie | int | None = trie
        best, best_end = -1, start
        for end in range(start, len(data)):
            node = node.get(data[end]) if node.__class__ is dict else None  # type: ignore[union-attr]
            if node is None:
                break
            ids = node if node.__class__ is int else node.get(IDS)  # type: ignore[union-attr]
            if ids is not None:
                best, best_end = ids_at(ids)[0], end + 1
        if best < 0:
            return []
        out.append(best)
        start = best_end
    return out
