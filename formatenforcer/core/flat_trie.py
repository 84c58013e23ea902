"""The vocabulary's byte trie as flat arrays (CSR), built once per Vocabulary and walked by the compiled core.

Layout (``_native.Trie``, each array an immutable ``bytes`` that C and Python share; ``arrays`` gives numpy
views): nodes numbered in preorder with the root 0; node ``n``'s edges are ``edge_start[n]:edge_start[n+1]``
with their bytes (``edge_byte``, sorted) and child nodes (``edge_child``); the ids of the tokens ending at
node ``n`` are ``tok_ids[tok_start[n]:tok_start[n+1]]``, in node order, so the tokens of the subtree of ``n``
(the nodes ``n:subtree_end[n]``) are one range of ``tok_ids``.

Why built from the token bytes and not from the dict trie: sorting the tokens' bytes gives the trie's preorder
directly, so the C build is one sort and one pass (tens of milliseconds for 128k tokens) where visiting the
dict trie from Python costs a Python step per node. Both hold the same paths: tests/test_native_walk.py checks
it on the real tokenizers.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

import numpy as np

from . import backend

_TRIES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def build_flat_trie(token_bytes: list[bytes | None], size: int) -> Any:
    """The ``_native.Trie`` of these tokens (None or empty: left out), ids below ``size``."""
    native = backend.native
    if native is None:
        raise RuntimeError("the compiled core is not available (see formatenforcer.core_backend())")
    filled = [data or b"" for data in token_bytes]
    offsets = np.zeros(len(filled) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, filled), dtype=np.int64, count=len(filled)), out=offsets[1:])
    blob = b"".join(filled)
    return native.Trie.from_tokens(blob, offsets, size)


def flat_trie(vocabulary: Any) -> Any:
    """The flat trie of a Vocabulary, built at the first call and kept as long as the vocabulary lives."""
    trie = _TRIES.get(vocabulary)
    if trie is None:
        with _LOCK:
            trie = _TRIES.get(vocabulary)
            if trie is None:
                trie = _TRIES[vocabulary] = build_flat_trie(vocabulary.token_bytes, vocabulary.size)
    return trie


_PARTS = ("edge_start", "edge_byte", "edge_child", "tok_start", "tok_ids", "subtree_end")


def parts_of(trie: Any) -> tuple[bytes, ...]:
    """The six arrays of a flat trie as bytes, for the vocabulary's disk cache (``from_parts`` reads them)."""
    return tuple(getattr(trie, name) for name in _PARTS)


def from_parts(parts: Any, size: int) -> Any | None:
    """The ``_native.Trie`` of six cached arrays (``parts_of``), validated by the extension as any other;
    None when the compiled core is not built or the arrays are not a valid trie (a damaged cache entry).
    (With the compiled walk switched off, the dict trie of the Python walk is still made from it.)"""
    native = backend.native
    if native is None or not isinstance(parts, tuple) or len(parts) != len(_PARTS):
        return None
    try:
        return native.Trie(**dict(zip(_PARTS, parts)), vocab_size=size)
    except (TypeError, ValueError):
        return None


def adopt(vocabulary: Any, trie: Any) -> None:
    """Makes ``trie`` the flat trie of ``vocabulary`` (read from its disk cache entry), unless it has one."""
    with _LOCK:
        _TRIES.setdefault(vocabulary, trie)


def arrays(trie: Any) -> dict[str, np.ndarray]:
    """Read-only numpy views of a flat trie's arrays (no copy)."""
    return {
        "edge_start": np.frombuffer(trie.edge_start, dtype=np.int32),
        "edge_byte": np.frombuffer(trie.edge_byte, dtype=np.uint8),
        "edge_child": np.frombuffer(trie.edge_child, dtype=np.int32),
        "tok_start": np.frombuffer(trie.tok_start, dtype=np.int32),
        "tok_ids": np.frombuffer(trie.tok_ids, dtype=np.int32),
        "subtree_end": np.frombuffer(trie.subtree_end, dtype=np.int32),
    }
