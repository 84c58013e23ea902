"""The vocabulary index: the exact bytes each token adds to the output, in a byte trie, built once per tokenizer.

Why bytes and not characters: byte-level BPE vocabularies (GPT-2, Llama 3, Qwen) and byte-fallback
SentencePiece vocabularies (Llama 2) hold tokens that are only part of a UTF-8 character. Keying the trie by
bytes lets an emoji split over three tokens be generated wherever the format allows the emoji: the walk
carries the incomplete character's bytes along and checks them against the allowed characters as a prefix.

Layout: each trie node is a dict ``{byte: child}``; the key ``-1`` holds the ids of the tokens that end at
that node, as a bare int (a tuple when several tokens have the same bytes). A leaf (the end of a token that
no longer token extends: a third of the nodes of a 128k vocabulary) is stored as its bare token id instead
of ``{-1: id}``. So the trie holds dicts and ints only: a third fewer objects to build and keep in memory.
Special tokens and tokens that add no text are left out of the trie, so they are never allowed; the
end-of-sequence ids are handled by the enforcer (allowed exactly when the format may end).

With the compiled core, the walks in C and the JSON machine read the same trie as flat arrays
(flat_trie.py, ~5 MB for 128k tokens), which the disk cache stores; the dicts (~45 MB) are made from them
only when a Python walk first needs them (``Vocabulary.trie``), out of the cycle collector's sight.

Free-run tables (run_tables.py) are built lazily, once per vocabulary and class (and per trie node for the
tables of subtrees), and kept here, with the other caches every parser enforced over this vocabulary shares.
They count against one memory budget per vocabulary (``cache_bytes``; default 256 MiB, or the environment's
``FORMATENFORCER_CACHE_MB``; cache_budget.py): past it the least recently used entries are evicted, and
recomputed identically when next needed.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from . import backend, disk_cache, flat_trie, pretokens
from .cache_budget import CacheBudget, approx_bytes
from .charset import CharSet
from .collector import freeze_existing, paused
from .errors import VocabularyError
from .pretokens import PreTokens
from .run_tables import FreeRunTable, TokenTexts, pack_ids, pack_rows
from .token_texts import agrees, cache_key, default_eos_ids, encoder_of, token_bytes_of
from .trie import IDS, Trie, build, ids_at, longest_match, subtree_entries

__all__ = ["IDS", "Trie", "Vocabulary", "pack_ids"]

_SMALL_SUBTREE = 24
"""Subtrees of at most this many tokens get their free-run tables from a plain loop (FreeRunTable.small)."""
_SUFFIX_SUBTREE = 2048
"""Subtrees of more tokens than this (below a path of whole characters) read their texts from the whole
vocabulary's."""


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
        cache_bytes: int | None = None,
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
        self._trie_lock = threading.Lock()
        self._trie: Trie | None = trie
        if trie is None and backend.native is None:  # without the compiled core every walk reads it: now
            self._trie = self._build_trie()
        freeze_existing()
        self.eos_mask = pack_ids(self.eos_token_ids, self.size)
        self.eos_mask.flags.writeable = False
        self.cache_budget = CacheBudget(cache_bytes)
        """The memory budget of the caches below (``cache_budget.limit`` may be changed at any time)."""
        budget = self.cache_budget
        self._tables = budget.cache("free-run tables", grows=True)
        self._subtables = budget.cache("subtree run tables", _held_bytes, grows=True)
        self._first_bytes = budget.cache("first-byte masks")
        self._first_byte: np.ndarray | None = None
        self._longest: int | None = None
        self.shared_groups = budget.cache("shared-children groups")
        """What the children of a trie node add in one shared state, by node, class and exceptions (walk.py)."""
        self.lexeme_cache = budget.cache("lexeme walks")
        """Walks of inner string states keyed by value (``shared_lexeme_key``), shared by every enforcer."""
        self.format_caches: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        """The mask and walk caches of each parser object enforced over this vocabulary (enforcer.py), kept
        as long as the parser lives: every TokenEnforcer made for the same parser object shares them."""
        self._texts: TokenTexts | None = None
        self._subtexts = budget.cache("subtree texts", _held_bytes)
        self.lexeme_automata = budget.cache("explored lexeme automata")
        """Explored lexeme automata by state key (lexeme_automaton.py)."""
        self._lock = threading.Lock()
        self.encode: Callable[[str], list[int]] | None = None
        """The tokenizer's own ``encode`` (text to ids, no special tokens), set by ``from_transformers``:
        jump-forward writes forced text as the model's tokenizer would (forced.py). None: ``tokenize``
        falls back to a greedy longest match over the trie."""
        self.pre_tokens: PreTokens | None = None
        """The tokenizer's pre-token cuts (pretokens.py), set by ``from_transformers`` for a fast tokenizer:
        jump-forward holds back fewer tokens where a cut proves no token can span the forced text's end."""

    def tokenize(self, text: str) -> list[int]:
        """``text`` as token ids: the tokenizer's own encoding when known (``encode``), else the greedy
        longest match over the trie (``trie.longest_match``; empty when some byte starts no token)."""
        if self.encode is not None:
            return list(self.encode(text))
        return longest_match(self.trie, text.encode("utf-8"))

    def first_bytes_mask(self, lead: bytes) -> np.ndarray:
        """Packed mask of the tokens whose first byte is one of ``lead`` (memoised per set of bytes, and per byte).

        Read from one array of first bytes (built at the first call) rather than by visiting the subtrees
        below those bytes: the letters' subtrees hold most of the vocabulary, and visiting them cost
        tens of milliseconds per new set."""
        key = bytes(sorted(set(lead)))
        hit = self._first_bytes.get(key)
        if hit is None:
            if len(key) == 1:
                hit = pack_ids(np.flatnonzero(self._first_byte_array() == key[0]), self.size)
            else:  # the OR of each byte's row: the sets of bytes differ from schema to schema, the bytes do not
                hit = pack_rows([], [self.first_bytes_mask(key[i : i + 1]) for i in range(len(key))], self.size)[0]
            hit.flags.writeable = False
            self._first_bytes[key] = hit
        return hit

    def _first_byte_array(self) -> np.ndarray:
        """Each token's first byte (-1 for tokens left out of the trie), built at the first call."""
        if self._first_byte is None:
            with self._lock:
                if self._first_byte is None:
                    self._first_byte = np.fromiter(
                        (data[0] if data else -1 for data in self.token_bytes), dtype=np.int16,
                        count=len(self.token_bytes),
                    )  # fmt: skip
        return self._first_byte

    @property
    def longest_token(self) -> int:
        """Bytes in the longest token: no token can add more characters than this."""
        if self._longest is None:
            self._longest = max(map(len, filter(None, self.token_bytes)), default=0)
        return self._longest

    @property
    def trie(self) -> Trie:
        """The byte trie of the Python walk (trie.py), built at its first use and kept.

        Why at first use: it is ~190,000 dicts (~45 MB for 128k tokens), while the compiled walk and the JSON
        machine read the flat trie (flat_trie.py), so a process whose masks all run in C never builds it.
        Built in C (``as_dicts``) where the compiled core exists, its dicts are left out of the cycle
        collector's sight, so a build in the middle of generation needs no ``gc.freeze``; without the
        compiled core it is built with the vocabulary, before the freeze."""
        trie = self._trie
        if trie is None:
            with self._trie_lock:
                trie = self._trie
                if trie is None:
                    trie = self._trie = self._build_trie()
        return trie

    def _ready(self) -> Vocabulary:
        """Builds now what the first mask would build otherwise: with the compiled core, the flat trie (a
        no-op when read from the disk cache), and the dict trie too when every walk is a Python walk (the
        compiled walk switched off). Returns the vocabulary."""
        if backend.native is not None:
            flat_trie.flat_trie(self)
            if not backend.active():
                self.trie  # noqa: B018 (made now)
        return self

    def _build_trie(self) -> Trie:
        # Hundreds of thousands of small dicts, none cyclic: pausing the cycle collector halves the build time.
        with paused():
            if backend.native is not None:
                # the flat trie (one sort in C; the compiled walk needs it anyway) made into the same dicts
                # in C: ~0.1 s instead of ~0.3 s for 128k tokens
                return flat_trie.flat_trie(self).as_dicts()
            return build(self.token_bytes)

    @classmethod
    def from_tokens(
        cls,
        tokens: Sequence[str | bytes | None],
        eos_token_ids: Iterable[int] = (),
        *,
        size: int | None = None,
        strip_leading_space: bool = False,
        cache_bytes: int | None = None,
    ) -> Vocabulary:
        """A vocabulary from plain token texts (index = id). ``str`` is UTF-8 encoded; ``bytes`` taken as is;
        None or empty marks a token that is never allowed (special tokens other than EOS). ``cache_bytes``:
        the memory budget of its shared caches."""
        data: list[bytes | None] = []
        for i, token in enumerate(tokens):
            if token is None or isinstance(token, bytes):
                data.append(token)
            elif isinstance(token, str):
                data.append(token.encode("utf-8"))
            else:
                raise VocabularyError(f"token #{i} is {type(token).__name__}; expected str, bytes or None")
        made = cls(data, eos_token_ids, size=size, strip_leading_space=strip_leading_space, cache_bytes=cache_bytes)
        return made._ready()

    @classmethod
    def from_transformers(
        cls,
        tokenizer: Any,
        eos_token_ids: Iterable[int] | None = None,
        *,
        size: int | None = None,
        cache_dir: str | os.PathLike | None | bool = True,
        cache_bytes: int | None = None,
    ) -> Vocabulary:
        """The vocabulary index of a transformers tokenizer (slow or fast), memoised per tokenizer object.

        ``cache_dir``: where the index is cached on disk (True: ``~/.cache/formatenforcer``; False/None: no
        disk cache), so a restarted process reloads it instead of rebuilding it. ``cache_bytes``: the memory
        budget of its shared caches (None: the default, or what the memoised vocabulary has); given, it is set
        on the memoised vocabulary too."""
        eos = tuple(eos_token_ids) if eos_token_ids is not None else tuple(default_eos_ids(tokenizer))
        key = (eos, size)
        with _MEMO_LOCK:
            cached = _MEMO.get(tokenizer, {}).get(key)
        if cached is not None:
            if cache_bytes is not None:
                cached.cache_budget.limit = cache_bytes
            return cached
        with paused():  # large lists of small objects, none cyclic: no need for the cycle collector to scan them
            vocabulary = _index(tokenizer, eos, size, cache_dir)
        if cache_bytes is not None:
            vocabulary.cache_budget.limit = cache_bytes
        with _MEMO_LOCK:
            _MEMO.setdefault(tokenizer, {})[key] = vocabulary
        return vocabulary

    def free_run_table(self, chars: CharSet) -> FreeRunTable:
        """The (lazily built, shared) free-run table of the whole vocabulary for the character class ``chars``."""
        table = self._tables.get(chars)
        if table is None:
            with self._lock:
                table = self._tables.get(chars)
                if table is None:
                    # the dict trie only when a Python walk asks the table for its exits: the JSON machine
                    # reads only its rows (weakly held: the table is this vocabulary's cache entry)
                    owner = weakref.ref(self)
                    table = FreeRunTable(self._token_texts(), chars, self.size, root_of=lambda: owner().trie)  # type: ignore[union-attr]
                    self._tables[chars] = table
        return table

    def _token_texts(self) -> TokenTexts:
        """Every token's text, decoded once for all the whole-vocabulary tables (call under the lock)."""
        if self._texts is None:
            native = backend.native if backend.active() else None
            if native is not None:
                self._texts = TokenTexts.decoded(self.token_bytes, native)
            else:
                self._texts = TokenTexts(enumerate(self.token_bytes))
        return self._texts

    def _subtree_source(self, node: Trie) -> TokenTexts | tuple[tuple[int, bytes], ...]:
        """The tokens below one trie node, read once for every class asked there (call under the lock): as
        TokenTexts for the vectorized build, or for a small subtree its (id, bytes) pairs (``FreeRunTable.small``)."""
        held = self._subtexts.get(id(node))
        if held is not None and held[0] is node:  # (an entry holds its node: its id stays unique while cached)
            return held[1]
        entries = subtree_entries(node, self.token_bytes, _SUFFIX_SUBTREE)
        source = None
        if entries is None:
            source = self._suffix_source(node)
            if source is None:
                entries = subtree_entries(node, self.token_bytes)
        if entries is not None:
            source = tuple(entries) if len(entries) <= _SMALL_SUBTREE else TokenTexts(entries)
        self._subtexts[id(node)] = (node, source)
        return source

    def _suffix_source(self, node: Trie) -> TokenTexts | None:
        """For a big subtree below a path of whole characters, its texts as a view of the whole vocabulary's
        (``TokenTexts.suffixes``); None for other nodes. The path is read from a token below the node and
        checked by following it from the root (a node of an exit trie, which is not the vocabulary's, has
        no path)."""
        depth, current = 0, node
        while current.__class__ is not int:
            below = current.get(IDS)
            if below is not None:
                current = ids_at(below)[0]
                break
            current = next(iter(current.values()))
            depth += 1
        data = self.token_bytes[current]  # type: ignore[index]
        prefix = data[: len(data) - depth] if data else b""
        if not prefix:
            return None
        found: Trie | int = self.trie
        for byte in prefix:
            found = found.get(byte) if found.__class__ is dict else None  # type: ignore[union-attr]
        if found is not node:
            return None
        try:
            chars = prefix.decode("utf-8")
        except UnicodeDecodeError:
            return None  # the path ends inside a character
        texts = self._token_texts()
        rows = np.arange(len(texts.ids))
        for position, ch in enumerate(chars):  # the rows whose texts start with the path, narrowed per character
            rows = rows[texts.lengths[rows] > position]
            rows = rows[texts.code_points[texts.starts[rows] + position] == ord(ch)]
        return texts.suffixes(rows, len(chars))

    def built_subtree_run_table(self, node: Trie, chars: CharSet) -> FreeRunTable | None:
        """The table ``subtree_run_table`` would return, if it is already built; None otherwise."""
        held = self._subtables.get((id(node), chars))
        return held[1] if held is not None and held[0] is node else None

    def subtree_run_table(self, node: Trie, chars: CharSet) -> FreeRunTable:
        """A free-run table for the tokens below one trie node (say, every token starting with a quote),
        for walks that enter a free-text state part-way through a token. Unbucketed, to bound memory."""
        key = (id(node), chars)
        held = self._subtables.get(key)
        if held is None or held[0] is not node:  # (an entry holds its node: its id stays unique while cached)
            with self._lock:
                held = self._subtables.get(key)
                if held is None or held[0] is not node:
                    source = self._subtree_source(node)
                    if source.__class__ is tuple:
                        table = FreeRunTable.small(source, chars, self.size, node)  # type: ignore[arg-type]
                    else:
                        table = FreeRunTable(source, chars, self.size, bucketed=False, root=node)
                    held = (node, table)
                    self._subtables.put(key, held, table.approx_bytes())
        return held[1]

    def text_of(self, token_id: int) -> bytes:
        """The bytes ``token_id`` adds (empty for EOS, special and unknown ids)."""
        if 0 <= token_id < len(self.token_bytes):
            return self.token_bytes[token_id] or b""
        return b""

    def __len__(self) -> int:
        return self.size

    def __repr__(self) -> str:
        return f"Vocabulary({self.name or 'tokens'}, size={self.size}, eos={list(self.eos_token_ids)})"


def _held_bytes(held: tuple[Trie, object]) -> int:
    """The bytes of a (trie node, value) cache entry: the value's (the node is the vocabulary's or its owner's)."""
    return approx_bytes(held[1])


_MEMO: weakref.WeakKeyDictionary[Any, dict[tuple, Vocabulary]] = weakref.WeakKeyDictionary()
_MEMO_LOCK = threading.Lock()
"""Vocabularies built from a transformers tokenizer, per tokenizer object and (EOS ids, size)."""


def _index(tokenizer: Any, eos: tuple[int, ...], size: int | None, cache_dir: Any) -> Vocabulary:
    parts = None
    folder = None
    if cache_dir is True:
        folder = disk_cache.default_cache_dir()
    elif cache_dir:
        folder = Path(cache_dir)
    fingerprint = ""
    payload = None
    if folder is not None:
        fingerprint, parts = cache_key(tokenizer, eos, size)
        payload = disk_cache.load(folder, fingerprint)
        if payload is not None and parts is None and not agrees(tokenizer, payload[0], payload[2], eos):
            payload = None  # same file, different tokenizer in memory: rebuild (and overwrite the entry)
    flat_parts = None
    if payload is not None:
        data, strip, scheme, trie, flat_parts = payload
    else:
        data, strip, scheme = token_bytes_of(tokenizer, parts)
        trie = None
    name = f"{getattr(tokenizer, 'name_or_path', '') or type(tokenizer).__name__} ({scheme})"
    vocabulary = Vocabulary(data, eos, size=size, strip_leading_space=strip, name=name, trie=trie)
    if flat_parts is not None:  # the compiled walk's flat trie, read back instead of built at the first walk
        flat = flat_trie.from_parts(flat_parts, vocabulary.size)
        if flat is not None:
            flat_trie.adopt(vocabulary, flat)
    if folder is not None and payload is None:
        # With the compiled core the entry holds the flat trie (built now: the first walk would build it
        # anyway) and not the dict trie, which is made from it in C when first used (Vocabulary.trie);
        # without it, the dict trie, whose Python build is what the entry spares.
        if backend.native is not None:
            entry = (vocabulary.token_bytes, strip, scheme, None, flat_trie.parts_of(flat_trie.flat_trie(vocabulary)))
        else:
            entry = (vocabulary.token_bytes, strip, scheme, vocabulary.trie, None)
        disk_cache.save(folder, fingerprint, entry)
    vocabulary.encode = encoder_of(tokenizer)
    vocabulary.pre_tokens = pretokens.of(tokenizer)
    return vocabulary._ready()
