"""The vocabulary index: the exact bytes each token adds to the output, in a byte trie, built once per tokenizer.

Why bytes and not characters: byte-level BPE vocabularies (GPT-2, Llama 3, Qwen) and byte-fallback
SentencePiece vocabularies (Llama 2) hold tokens that are only part of a UTF-8 character. Keying the trie by
bytes lets an emoji split over three tokens be generated wherever the format allows the emoji: the walk
carries the incomplete character's bytes along and checks them against the allowed characters as a prefix.

Layout: each trie node is a dict ``{byte: child}``; the key ``-1`` holds the ids of the tokens that end at
that node. Special tokens and tokens that add no text are left out of the trie, so they are never allowed;
the end-of-sequence ids are handled by the enforcer (allowed exactly when the format may end).

Free-run tables: for a character class C (say "any character allowed raw inside a JSON string"), the
tokens made only of C characters, grouped by length, and the remaining tokens re-indexed by what follows
their longest C prefix. The enforcer answers a state that loops over C from these tables (see enforcer.py).
Each table is built lazily, once per vocabulary and class, in one pass over the vocabulary.
"""

from __future__ import annotations

import gc
import os
import threading
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from .charset import CharSet, utf8_length
from .errors import VocabularyError

IDS = -1
"""The trie-node key under which the ids of the tokens ending at that node are stored."""

Trie = dict


def insert(trie: Trie, data: bytes, token_id: int) -> None:
    """Adds ``token_id`` under the path ``data``."""
    node = trie
    for byte in data:
        child = node.get(byte)
        if child is None:
            child = node[byte] = {}
        node = child
    ids = node.get(IDS)
    if ids is None:
        node[IDS] = [token_id]
    else:
        ids.append(token_id)


def pack_ids(ids: Iterable[int], size: int) -> np.ndarray:
    """A packed bitmask row (int32 words, bit ``i % 32`` of word ``i // 32``) with the given ids set."""
    flags = np.zeros(((size + 31) // 32) * 32, dtype=np.bool_)
    index = np.fromiter(ids, dtype=np.int64)
    if index.size:
        flags[index] = True
    return np.packbits(flags, bitorder="little").view(np.int32)


class FreeRunTable:
    """Tokens sorted by how they behave in a state that loops over the character class ``chars``.

    ``entries`` are (token id, bytes still to read); ``bucketed`` keeps one mask per run length (so a
    ``maxLength`` can be honoured exactly) instead of a single mask for runs of any length."""

    def __init__(self, entries: Iterable[tuple[int, bytes]], chars: CharSet, size: int, bucketed: bool = True):
        by_length: dict[int, list[int]] = {}
        self.exits: dict[int, Trie] = {}
        self.bucketed = bucketed
        for token_id, data in entries:
            if not data or utf8_length(data[0]) == 0:
                continue  # never allowed, or starts inside a character: only the full walk handles those
            text, tail = _split_complete(data)
            run = 0
            for ch in text:
                if ch not in chars:
                    break
                run += 1
            if run == len(text) and (not tail or chars.allows_utf8_prefix(tail)):
                by_length.setdefault(run + (1 if tail else 0), []).append(token_id)
                continue
            rest = text[run:].encode("utf-8") + tail
            insert(self.exits.setdefault(run, {}), rest, token_id)
        self.longest_run = max(by_length, default=0)
        self._upto: list[np.ndarray] = []
        if bucketed:
            cumulative: list[int] = []
            for length in range(self.longest_run + 1):
                cumulative.extend(by_length.get(length, ()))
                self._upto.append(pack_ids(cumulative, size))
        else:
            self._upto.append(pack_ids((i for ids in by_length.values() for i in ids), size))
        for row in self._upto:
            row.flags.writeable = False

    def runs_upto(self, max_length: int | None) -> np.ndarray | None:
        """Packed mask of the tokens made of at most ``max_length`` class characters (None: any length);
        None when this table is not bucketed and a limit is asked for."""
        if max_length is None or max_length >= self.longest_run:
            return self._upto[-1]
        if not self.bucketed:
            return None
        return self._upto[max(max_length, 0)]


def _subtree_entries(node: Trie) -> list[tuple[int, bytes]]:
    """(token id, bytes below ``node``) for every token in the subtree of ``node``."""
    out: list[tuple[int, bytes]] = []
    stack: list[tuple[Trie, bytes]] = [(node, b"")]
    while stack:
        current, path = stack.pop()
        for byte, child in current.items():
            if byte == IDS:
                out.extend((token_id, path) for token_id in child)
            else:
                stack.append((child, path + bytes((byte,))))
    return out


def _split_complete(data: bytes) -> tuple[str, bytes]:
    """Splits token bytes into the complete characters and a trailing incomplete character (if any)."""
    try:
        return data.decode("utf-8"), b""
    except UnicodeDecodeError:
        pass
    for cut in range(1, 4):
        head, tail = data[:-cut], data[-cut:]
        try:
            text = head.decode("utf-8")
        except UnicodeDecodeError:
            continue
        if utf8_length(tail[0]) > len(tail):
            return text, tail
    # invalid UTF-8 inside the token: keep it walkable by the byte walk only
    return "", data


class Vocabulary:
    """Per-tokenizer, read-only index of token texts. Build with ``from_tokens`` or ``from_transformers``."""

    def __init__(
        self,
        token_bytes: Sequence[bytes | None],
        eos_token_ids: Iterable[int],
        *,
        size: int | None = None,
        strip_leading_space: bool = False,
        name: str = "",
        trie: Trie | None = None,
    ) -> None:
        self.token_bytes: list[bytes | None] = [t if t else None for t in token_bytes]
        self.size = max(size or 0, len(self.token_bytes))
        self.eos_token_ids = tuple(sorted({int(i) for i in eos_token_ids}))
        for eos in self.eos_token_ids:
            if not 0 <= eos < self.size:
                raise VocabularyError(f"end-of-sequence id {eos} is outside the vocabulary of {self.size} tokens")
            if eos < len(self.token_bytes):
                self.token_bytes[eos] = None  # EOS adds no text; the enforcer allows it on its own terms
        self.strip_leading_space = strip_leading_space
        self.name = name
        if trie is not None:  # restored from the on-disk cache, built from these very token bytes
            self.trie = trie
        else:
            self.trie = self._build_trie()
        self.eos_mask = pack_ids(self.eos_token_ids, self.size)
        self.eos_mask.flags.writeable = False
        self._tables: dict[CharSet, FreeRunTable] = {}
        self._subtables: dict[tuple[int, CharSet], FreeRunTable] = {}
        self._lock = threading.Lock()

    def _build_trie(self) -> Trie:
        trie: Trie = {}
        # Hundreds of thousands of small dicts, none cyclic: pausing the cycle collector halves the build time.
        paused = gc.isenabled()
        gc.disable()
        try:
            for token_id, data in enumerate(self.token_bytes):
                if data is not None:
                    insert(trie, data, token_id)
        finally:
            if paused:
                gc.enable()
        return trie

    @classmethod
    def from_tokens(
        cls,
        tokens: Sequence[str | bytes | None],
        eos_token_ids: Iterable[int] = (),
        *,
        size: int | None = None,
        strip_leading_space: bool = False,
    ) -> Vocabulary:
        """A vocabulary from plain token texts (index = id). ``str`` is UTF-8 encoded; ``bytes`` taken as is;
        None or empty marks a token that is never allowed (special tokens other than EOS)."""
        data: list[bytes | None] = []
        for i, token in enumerate(tokens):
            if token is None or isinstance(token, bytes):
                data.append(token)
            elif isinstance(token, str):
                data.append(token.encode("utf-8"))
            else:
                raise VocabularyError(f"token #{i} is {type(token).__name__}; expected str, bytes or None")
        return cls(data, eos_token_ids, size=size, strip_leading_space=strip_leading_space)

    @classmethod
    def from_transformers(
        cls,
        tokenizer: Any,
        eos_token_ids: Iterable[int] | None = None,
        *,
        size: int | None = None,
        cache_dir: str | os.PathLike | None | bool = True,
    ) -> Vocabulary:
        """The vocabulary index of a transformers tokenizer (slow or fast), memoised per tokenizer object.

        ``cache_dir``: where the index is cached on disk (True: ``~/.cache/formatenforcer``; False/None: no
        disk cache), so a restarted process reloads it instead of rebuilding it."""
        from .hf_tokens import vocabulary_from_transformers

        return vocabulary_from_transformers(tokenizer, eos_token_ids, size=size, cache_dir=cache_dir)

    def free_run_table(self, chars: CharSet) -> FreeRunTable:
        """The (lazily built, shared) free-run table of the whole vocabulary for the character class ``chars``."""
        table = self._tables.get(chars)
        if table is None:
            with self._lock:
                table = self._tables.get(chars)
                if table is None:
                    table = FreeRunTable(enumerate(self.token_bytes), chars, self.size)
                    self._tables[chars] = table
        return table

    def subtree_run_table(self, node: Trie, chars: CharSet) -> FreeRunTable:
        """A free-run table for the tokens below one trie node (say, every token starting with a quote),
        for walks that enter a free-text state part-way through a token. Unbucketed, to bound memory."""
        key = (id(node), chars)
        table = self._subtables.get(key)
        if table is None:
            with self._lock:
                table = self._subtables.get(key)
                if table is None:
                    table = FreeRunTable(_subtree_entries(node), chars, self.size, bucketed=False)
                    self._subtables[key] = table
        return table

    def text_of(self, token_id: int) -> bytes:
        """The bytes ``token_id`` adds (empty for EOS, special and unknown ids)."""
        if 0 <= token_id < len(self.token_bytes):
            return self.token_bytes[token_id] or b""
        return b""

    def __len__(self) -> int:
        return self.size

    def __repr__(self) -> str:
        return f"Vocabulary({self.name or 'tokens'}, size={self.size}, eos={list(self.eos_token_ids)})"
