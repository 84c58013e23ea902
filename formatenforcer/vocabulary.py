"""The vocabulary index: the exact bytes each token adds to the output, in a byte trie, built once per tokenizer.

Why bytes and not characters: byte-level BPE vocabularies (GPT-2, Llama 3, Qwen) and byte-fallback
SentencePiece vocabularies (Llama 2) hold tokens that are only part of a UTF-8 character. Keying the trie by
bytes lets an emoji split over three tokens be generated wherever the format allows the emoji: the walk
carries the incomplete character's bytes along and checks them against the allowed characters as a prefix.

Layout: each trie node is a dict ``{byte: child}``; the key ``-1`` holds the ids of the tokens that end at
that node, as a bare int (a tuple when several tokens have the same bytes). A leaf (the end of a token that
no longer token extends: a third of the nodes of a 128k vocabulary) is stored as its bare token id instead
of ``{-1: id}``. So the trie holds dicts and ints only: a third fewer objects to build, keep in memory and
reload from the disk cache, and dicts holding no list are never tracked by the cycle collector, so loading
the index leaves it no garbage-collection debt to pay during generation. Special tokens and tokens that add
no text are left out of the trie, so they are never allowed; the end-of-sequence ids are handled by the
enforcer (allowed exactly when the format may end).

Free-run tables: for a character class C (say "any character allowed raw inside a JSON string"), the
tokens made only of C characters, grouped by length, and the remaining tokens re-indexed by what follows
their longest C prefix. The enforcer answers a state that loops over C from these tables (see enforcer.py).
Each table is built lazily, once per vocabulary and class, in one vectorized numpy pass over the token texts
(decoded once per vocabulary): tens of milliseconds for a 128k vocabulary.
"""

from __future__ import annotations

import atexit
import gc
import os
import threading
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from .charset import ANY, CharSet, utf8_length
from .errors import VocabularyError

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


def as_dict(node: Trie | int) -> Trie:
    """``node`` as a dict (a leaf's id becomes ``{IDS: id}``), for code off the hot path."""
    return {IDS: node} if node.__class__ is int else node


def ids_at(value: int | tuple[int, ...]) -> tuple[int, ...]:
    """The ids stored under a node's ``IDS`` key: one id as a bare int (the common case), several as a
    tuple (tokens with the same bytes)."""
    return (value,) if value.__class__ is int else value


def pack_ids(ids: Iterable[int], size: int) -> np.ndarray:
    """A packed bitmask row (int32 words, bit ``i % 32`` of word ``i // 32``) with the given ids set."""
    flags = np.zeros(((size + 31) // 32) * 32, dtype=np.bool_)
    index = np.fromiter(ids, dtype=np.int64)
    if index.size:
        flags[index] = True
    return np.packbits(flags, bitorder="little").view(np.int32)


class TokenTexts:
    """Token texts ready for vectorized class tests: the complete characters of every token as one flat
    array of code points (with per-token offsets), and the bytes of a trailing incomplete character.

    Tokens that no walk can accept (empty, starting inside a character, invalid UTF-8 inside) are dropped."""

    def __init__(self, entries: Iterable[tuple[int, bytes]]) -> None:
        ids: list[int] = []
        texts: list[str] = []
        tails: list[bytes] = []
        add_id, add_text, add_tail = ids.append, texts.append, tails.append
        for token_id, data in entries:
            if not data:
                continue
            try:  # most tokens are whole characters: one decode, no helper calls
                text, tail = data.decode("utf-8"), b""
            except UnicodeDecodeError:
                if utf8_length(data[0]) == 0:
                    continue  # starts inside a character
                text, tail = _split_complete(data)
                if not text and tail == data and len(data) >= utf8_length(data[0]):
                    continue  # invalid UTF-8 inside the token: the walk refuses it at the bad byte
            add_id(token_id)
            add_text(text)
            add_tail(tail)
        self.ids = np.array(ids, dtype=np.int64)
        self.texts, self.tails = texts, tails
        self.lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
        self.offsets = np.zeros(len(texts) + 1, dtype=np.int64)
        np.cumsum(self.lengths, out=self.offsets[1:])
        self.code_points = np.frombuffer("".join(texts).encode("utf-32-le"), dtype=np.int32)
        self.has_tail = np.fromiter(map(bool, tails), dtype=np.bool_, count=len(tails))

    def runs(self, chars: CharSet) -> np.ndarray:
        """Per token, how many of its leading complete characters are in ``chars``."""
        cps = self.code_points
        count = len(cps)
        if chars.intervals and count:
            starts = np.array([lo for lo, _ in chars.intervals], dtype=np.int32)
            ends = np.array([hi for _, hi in chars.intervals], dtype=np.int32)
            slot = np.searchsorted(starts, cps, side="right") - 1
            member = (slot >= 0) & (cps <= ends[np.maximum(slot, 0)])
        else:
            member = np.zeros(count, dtype=np.bool_)
        # position of each token's first character outside the class (count + 1 when there is none)
        position = np.where(member, count + 1, np.arange(count, dtype=np.int64))
        first = np.full(len(self.lengths), count + 1, dtype=np.int64)
        nonempty = self.lengths > 0
        if count:
            first[nonempty] = np.minimum.reduceat(position, self.offsets[:-1][nonempty])
        return np.minimum(first, self.offsets[1:]) - self.offsets[:-1]


_FEW_IDS = 1024


class FreeRunTable:
    """Tokens sorted by how they behave in a state that loops over the character class ``chars``.

    ``texts``: the tokens (bytes still to read) as TokenTexts or (token id, bytes) pairs; ``bucketed`` keeps one
    mask per run length (so a ``maxLength`` can be honoured exactly) instead of a single mask for runs of any
    length; ``root``: the trie node those bytes hang from, whose subtrees are shared as the exits of run 0.

    Built with numpy in one vectorized pass (tens of milliseconds for a 128k vocabulary). The tokens that leave
    the class after a run are grouped by run length and first byte past the run; a group becomes a small trie
    only when a walk reaches it with that byte allowed (``exits_for``). For a narrow class such as
    ``[A-Z0-9 -]`` half the vocabulary leaves it after a character or two, and the state after the run
    refuses most of those bytes: building every exit trie up front took a second there."""

    def __init__(
        self,
        texts: TokenTexts | Iterable[tuple[int, bytes]],
        chars: CharSet,
        size: int,
        bucketed: bool = True,
        root: Trie | None = None,
    ) -> None:
        if not isinstance(texts, TokenTexts):
            texts = TokenTexts(texts)
        self.bucketed = bucketed
        run = texts.runs(chars)
        whole = run == texts.lengths
        verdicts: dict[bytes, bool] = {}
        for row in np.flatnonzero(whole & texts.has_tail).tolist():
            tail = texts.tails[row]
            allowed = verdicts.get(tail)
            if allowed is None:
                allowed = verdicts[tail] = chars.allows_utf8_prefix(tail)
            whole[row] = allowed
        leaving = np.flatnonzero(~whole)
        self._first_exits: Trie | None = None
        if root is not None:
            self._first_exits = self._share_first_exits(texts, chars, root, leaving[run[leaving] == 0])
            leaving = leaving[run[leaving] > 0]
        self._texts = texts
        self._groups = _exit_groups(texts, leaving, run[leaving])
        self._built: dict[tuple[int, int], Trie] = {}
        lengths_out = set(self._groups)
        if self._first_exits:
            lengths_out.add(0)
        self.exit_lengths: list[int] = sorted(lengths_out)
        """The run lengths after which some token leaves the class (ascending)."""
        ids = texts.ids[whole]
        lengths = (run + texts.has_tail)[whole]
        self.longest_run = int(lengths.max()) if len(lengths) else 0
        self._upto: list[np.ndarray] = []
        self._size = size
        self._within: dict[int, list[int] | np.ndarray] = {}
        self._run_ids, self._run_lengths = (None, None) if bucketed else (ids, lengths)
        self.few: list[int] | None = None
        """Unbucketed tables of small subtrees keep their run tokens as a list (cheaper than a packed mask)."""
        if not bucketed and len(ids) <= _FEW_IDS:
            self.few = ids.tolist()
            return
        flags = np.zeros(((size + 31) // 32) * 32, dtype=np.bool_)
        if bucketed:
            order = np.argsort(lengths, kind="stable")
            ids, lengths = ids[order], lengths[order]
            done = 0
            for cut in np.searchsorted(lengths, np.arange(self.longest_run + 1), side="right").tolist():
                flags[ids[done:cut]] = True
                done = cut
                self._upto.append(np.packbits(flags, bitorder="little").view(np.int32))
        else:
            flags[ids] = True
            self._upto.append(np.packbits(flags, bitorder="little").view(np.int32))
        for mask in self._upto:
            mask.flags.writeable = False

    def runs_upto(self, max_length: int | None) -> np.ndarray | None:
        """Packed mask of the tokens made of at most ``max_length`` class characters (None: any length);
        None when this table is not bucketed and a limit is asked for. (Not for tables with ``few``.)"""
        if max_length is None or max_length >= self.longest_run:
            return self._upto[-1]
        if not self.bucketed:
            return None
        return self._upto[max(max_length, 0)]

    def within(self, max_length: int) -> list[int] | np.ndarray:
        """Unbucketed tables: the run tokens made of at most ``max_length`` class characters, as a list of ids
        (when few) or a packed mask; memoised per length. Lets a bounded run (a counted repeat such as
        ``[A-Za-z0-9]{8}``) use one subtree table instead of descending to the nodes where every run fits,
        which built thousands of small tables on a first visit."""
        hit = self._within.get(max_length)
        if hit is None:
            ids = self._run_ids[self._run_lengths <= max_length]  # type: ignore[index,operator]
            if len(ids) <= _FEW_IDS:
                hit = ids.tolist()
            else:
                hit = pack_ids(ids, self._size)
                hit.flags.writeable = False
            self._within[max_length] = hit
        return hit

    def exits_for(self, length: int, allowed: CharSet) -> Trie:
        """The tokens that leave the class after ``length`` run characters, as a trie holding only the first
        bytes ``allowed`` can start (a superset the walk then checks character by character)."""
        if length == 0 and self._first_exits is not None:
            return self._first_exits
        out: Trie = {}
        ascii_ok = allowed.ascii
        for byte, rows in self._groups.get(length, {}).items():
            if byte < 0x80:
                if not ascii_ok[byte]:
                    continue
            elif not allowed.allows_utf8_prefix(bytes((byte,))):
                continue
            child = self._built.get((length, byte))
            if child is None:
                child = {}
                texts = self._texts
                for row in rows.tolist():
                    rest = texts.texts[row][length:].encode("utf-8") + texts.tails[row]
                    insert(child, rest[1:], int(texts.ids[row]))
                self._built[(length, byte)] = child
            out[byte] = child
        return out

    def all_exits(self) -> dict[int, Trie]:
        """Every exit trie, by run length (for checks: walks build only what they reach)."""
        return {length: self.exits_for(length, ANY) for length in self.exit_lengths}

    def _share_first_exits(self, texts: TokenTexts, chars: CharSet, root: Trie, rows: np.ndarray) -> Trie | None:
        """Exits after a run of 0: the tokens whose first character is outside the class, i.e. whole subtrees
        of ``root`` (shared, not copied) except under lead bytes where the class holds some characters."""
        first: Trie = {}
        mixed: set[int] = set()
        for byte, child in root.items():
            if byte == IDS:
                continue
            if byte < 0x80:
                if not chars.ascii[byte]:
                    first[byte] = child
            elif utf8_length(byte) > 1:
                if chars.allows_utf8_prefix(bytes((byte,))):
                    mixed.add(byte)
                else:
                    first[byte] = child
        if mixed:
            for row in rows.tolist():
                data = texts.texts[row].encode("utf-8") + texts.tails[row]
                if data[0] in mixed:
                    insert(first, data, int(texts.ids[row]))
        return first or None


def _exit_groups(texts: TokenTexts, rows: np.ndarray, runs: np.ndarray) -> dict[int, dict[int, np.ndarray]]:
    """The rows of tokens leaving a class, grouped by run length, then by the first byte past the run."""
    if not len(rows):
        return {}
    inside = runs < texts.lengths[rows]  # else the token leaves inside its trailing incomplete character
    cp = np.zeros(len(rows), dtype=np.int64)
    cp[inside] = texts.code_points[(texts.offsets[rows] + runs)[inside]]
    lead = np.where(cp < 0x80, cp, np.where(cp < 0x800, 0xC0 | (cp >> 6),
                                            np.where(cp < 0x10000, 0xE0 | (cp >> 12), 0xF0 | (cp >> 18))))  # fmt: skip
    for index in np.flatnonzero(~inside).tolist():
        lead[index] = texts.tails[int(rows[index])][0]
    keys = runs.astype(np.int64) * 256 + lead
    order = np.argsort(keys, kind="stable")
    keys, rows = keys[order], rows[order]
    cuts = np.flatnonzero(np.diff(keys)) + 1
    groups: dict[int, dict[int, np.ndarray]] = {}
    for start, stop in zip([0, *cuts.tolist()], [*cuts.tolist(), len(keys)]):
        key = int(keys[start])
        groups.setdefault(key >> 8, {})[key & 0xFF] = rows[start:stop]
    return groups


def _subtree_entries(node: Trie) -> list[tuple[int, bytes]]:
    """(token id, bytes below ``node``) for every token in the subtree of ``node``."""
    out: list[tuple[int, bytes]] = []
    stack: list[tuple[Trie, bytes]] = [(as_dict(node), b"")]
    while stack:
        current, path = stack.pop()
        for byte, child in as_dict(current).items():
            if byte == IDS:
                out.extend((token_id, path) for token_id in ids_at(child))
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


def _freeze_collector() -> None:
    """Moves every object alive now out of the cycle collector's sight (``gc.freeze``).

    The trie is ~130,000 nested dicts that live as long as the process and never form cycles, yet each full
    collection walks them all: 150-200 ms on this machine, a pause that landed inside random masks (it was
    the maximum time per token). Frozen objects are still freed by reference counting; only a reference
    cycle that already exists at this moment would never be reclaimed. vLLM freezes its heap after start-up
    for the same reason. ``FORMATENFORCER_GC_FREEZE=0`` leaves the collector alone."""
    global _FROZE
    if os.environ.get("FORMATENFORCER_GC_FREEZE", "1") != "0":
        gc.freeze()
        if not _FROZE:  # shutdown collects as usual (extension modules report "leaks" of frozen objects)
            atexit.register(gc.unfreeze)
            _FROZE = True


_FROZE = False


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
        _freeze_collector()
        self.eos_mask = pack_ids(self.eos_token_ids, self.size)
        self.eos_mask.flags.writeable = False
        self._tables: dict[CharSet, FreeRunTable] = {}
        self._subtables: dict[tuple[int, CharSet], FreeRunTable] = {}
        self._first_bytes: dict[bytes, np.ndarray] = {}
        self._longest: int | None = None
        self.lexeme_cache: dict = {}
        """Walks of inner string states keyed by value (``shared_lexeme_key``), shared by every enforcer."""
        self._texts: TokenTexts | None = None
        self._subtexts: dict[int, TokenTexts] = {}
        self._lock = threading.Lock()

    def first_bytes_mask(self, lead: bytes) -> np.ndarray:
        """Packed mask of the tokens whose first byte is one of ``lead`` (memoised per set of bytes)."""
        key = bytes(sorted(set(lead)))
        hit = self._first_bytes.get(key)
        if hit is None:
            ids = [token_id for byte in key for token_id, _ in _subtree_entries(self.trie.get(byte, {}))]
            hit = self._first_bytes[key] = pack_ids(ids, self.size)
            hit.flags.writeable = False
        return hit

    @property
    def longest_token(self) -> int:
        """Bytes in the longest token: no token can add more characters than this."""
        if self._longest is None:
            self._longest = max(map(len, filter(None, self.token_bytes)), default=0)
        return self._longest

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
                    table = FreeRunTable(self._token_texts(), chars, self.size, root=self.trie)
                    self._tables[chars] = table
        return table

    def _token_texts(self) -> TokenTexts:
        """Every token's text, decoded once for all the whole-vocabulary tables (call under the lock)."""
        if self._texts is None:
            self._texts = TokenTexts(enumerate(self.token_bytes))
        return self._texts

    def _subtree_texts(self, node: Trie) -> TokenTexts:
        """The texts below one trie node, decoded once for every class asked there (call under the lock)."""
        texts = self._subtexts.get(id(node))
        if texts is None:
            texts = self._subtexts[id(node)] = TokenTexts(_subtree_entries(node))
        return texts

    def subtree_run_table(self, node: Trie, chars: CharSet) -> FreeRunTable:
        """A free-run table for the tokens below one trie node (say, every token starting with a quote),
        for walks that enter a free-text state part-way through a token. Unbucketed, to bound memory."""
        key = (id(node), chars)
        table = self._subtables.get(key)
        if table is None:
            with self._lock:
                table = self._subtables.get(key)
                if table is None:
                    table = FreeRunTable(self._subtree_texts(node), chars, self.size, bucketed=False, root=node)
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
