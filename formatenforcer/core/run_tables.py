"""Free-run tables: for a character class C (say "any character allowed raw inside a JSON string"), the tokens
made only of C characters, grouped by length, and the remaining tokens re-indexed by what follows their
longest C prefix. The enforcer answers a state that loops over C from these tables (see core/walk.py).

Whole-vocabulary tables are built in one vectorized numpy pass over the token texts (decoded once per
vocabulary); a small subtree's table is built by a plain loop, which costs a tenth of numpy's fixed price
there (thousands of them are built on the first walks of a process).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from . import backend
from .charset import ANY, CharSet, utf8_length
from .trie import IDS, Trie, ids_at, insert


def pack_ids(ids: Iterable[int], size: int) -> np.ndarray:
    """A packed bitmask row (int32 words, bit ``i % 32`` of word ``i // 32``) with the given ids set.

    A few ids are OR-ed into their words directly: the flag array of one byte per token and its packing
    cost ~13 µs whatever the count, a fixed price on every mask computed. With the compiled core, a list
    of ids (what a walk collects) is set in one call."""
    if ids.__class__ is list and backend.active():
        words = np.zeros((size + 31) // 32, dtype=np.int32)
        backend.native.set_ids(words, ids)  # type: ignore[union-attr]
        return words
    if ids.__class__ is list and len(ids) <= 8:  # (the common case of a walk's own ids: a handful)
        words = np.zeros((size + 31) // 32, dtype=np.uint32)
        for token_id in ids:
            words[token_id >> 5] |= 1 << (token_id & 31)
        return words.view(np.int32)
    index = ids.astype(np.int64, copy=False) if isinstance(ids, np.ndarray) else np.fromiter(ids, dtype=np.int64)
    if index.size < _FEW_TO_PACK:
        words = np.zeros((size + 31) // 32, dtype=np.uint32)
        if index.size:
            np.bitwise_or.at(words, index >> 5, np.left_shift(np.uint32(1), (index & 31).astype(np.uint32)))
        return words.view(np.int32)
    flags = np.zeros(((size + 31) // 32) * 32, dtype=np.bool_)
    flags[index] = True
    return np.packbits(flags, bitorder="little").view(np.int32)


def pack_rows(ids: list[int], rows: list[np.ndarray], size: int) -> tuple[np.ndarray, bool]:
    """A new packed row: the OR of ``rows`` (packed rows of ``size`` tokens, left as they are) with ``ids``
    set, and whether any bit of it is set. A mask assembled from cached parts (a lexeme's inside row, the
    rows of the walks past its ends, a walk's own ids) is one call to the compiled core, where numpy pays a
    zeroed row, a pass per row and a reduction for the emptiness test (~10 µs on a 128k vocabulary)."""
    if backend.active():
        words = np.empty((size + 31) // 32, dtype=np.int32)
        nonempty = backend.native.or_rows(words, ids, rows)  # type: ignore[union-attr]
        return words, nonempty
    words = pack_ids(ids, size)
    for row in rows:
        words |= row
    return words, bool(words.any())


_FEW_TO_PACK = 128


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
                split = _walkable_split(data)
                if split is None:
                    continue
                text, tail = split
            add_id(token_id)
            add_text(text)
            add_tail(tail)
        self.ids = np.array(ids, dtype=np.int64)
        # tuples, not lists: once the collector has seen them they are untracked (thousands of these live on)
        self.texts: tuple[str, ...] | None = tuple(texts)
        self.tails: tuple[bytes, ...] | dict[int, bytes] = tuple(tails)
        self.lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
        offsets = np.zeros(len(texts) + 1, dtype=np.int64)
        np.cumsum(self.lengths, out=offsets[1:])
        self.starts, self.ends = offsets[:-1], offsets[1:]
        """Each token's characters are ``code_points[starts[row]:ends[row]]``."""
        self.code_points = np.frombuffer("".join(texts).encode("utf-32-le"), dtype=np.int32)
        self.has_tail = np.fromiter(map(bool, tails), dtype=np.bool_, count=len(tails))
        self._top: int | None = None  # one past the largest code point (see _member_table)

    _native: Any = None
    """The compiled core, for texts it decoded (``decoded``): class runs are then counted in C."""

    @classmethod
    def decoded(cls, token_bytes: list[bytes | None], native: Any) -> TokenTexts:
        """The texts of every token (``token_bytes[i]`` for id ``i``), decoded by the compiled core's
        ``decode_tokens`` (by the rules of the constructor above, tests/test_vocabulary.py checks they agree):
        a few milliseconds for 128k tokens where the loop above takes a tenth of a second. The characters
        of a token are read back from the code points when asked (``text``), and ``class_runs`` counts in C."""
        filled = [data or b"" for data in token_bytes]  # (one list for the lengths and the blob, no generator)
        lengths = np.fromiter(map(len, filled), dtype=np.int64, count=len(filled))
        offsets = np.zeros(len(token_bytes) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        blob = b"".join(filled)
        ids, code_points, counts, tail_lengths = native.decode_tokens(blob, offsets)
        self = cls.__new__(cls)
        self.ids = np.frombuffer(ids, dtype=np.int64)
        self.lengths = np.frombuffer(counts, dtype=np.int64)
        ends = np.cumsum(self.lengths)
        self.starts, self.ends = ends - self.lengths, ends
        self.code_points = np.frombuffer(code_points, dtype=np.int32)
        tails = np.frombuffer(tail_lengths, dtype=np.uint8)
        self.has_tail = tails > 0
        self.texts = None
        self.tails = {
            row: token_bytes[token_id][-int(tails[row]) :]  # type: ignore[index]
            for row, token_id in zip(np.flatnonzero(self.has_tail).tolist(), self.ids[self.has_tail].tolist())
        }
        self._top = None
        self._native = native
        self._tail_len = tails
        self._tail_code = np.zeros(len(tails), dtype=np.uint32)
        for row, tail in self.tails.items():
            self._tail_code[row] = int.from_bytes(tail, "little")
        return self

    def text(self, row: int) -> str:
        """The complete characters of the token at ``row``."""
        if self.texts is None:
            return self.code_points[self.starts[row] : self.ends[row]].tobytes().decode("utf-32-le")
        return self.texts[row]

    def tail(self, row: int) -> bytes:
        """The bytes of the token's trailing incomplete character (empty when none)."""
        if self.texts is None:
            return self.tails.get(row, b"")  # type: ignore[union-attr]
        return self.tails[row]  # type: ignore[index]

    def suffixes(self, rows: np.ndarray, skip: int) -> TokenTexts:
        """The tokens at ``rows`` without their first ``skip`` characters, sharing these arrays: the texts
        below a trie node whose path is ``skip`` whole characters (the space, a quote), read from the
        whole vocabulary's texts instead of visiting and decoding the node's subtree (~100 ms for the
        58k tokens below Llama 3's space). Rows left with no character and no tail are dropped (the tokens
        ending at the node, which a subtree table does not hold)."""
        view = _Suffixes.__new__(_Suffixes)
        starts = self.starts[rows] + skip
        keep = (starts < self.ends[rows]) | self.has_tail[rows]
        rows = rows[keep]
        view._base, view._rows, view._skip = self, rows, skip
        view.ids, view.starts, view.ends = self.ids[rows], starts[keep], self.ends[rows]
        view.lengths = view.ends - view.starts
        view.code_points, view.has_tail, view._top = self.code_points, self.has_tail[rows], self._top
        view._native = self._native
        if self._native is not None:
            view._tail_len, view._tail_code = self._tail_len[rows], self._tail_code[rows]
        return view

    def entries_led_by(self, rows: np.ndarray, leads: set[int]) -> list[tuple[int, bytes]]:
        """(id, bytes) of the tokens at ``rows`` whose first byte is in ``leads`` (read from the code points:
        only those are encoded)."""
        picked = rows[np.isin(_lead_bytes(self, rows, np.zeros(len(rows), dtype=np.int64)), list(leads))]
        return [(int(self.ids[row]), self.text(row).encode("utf-8") + self.tail(row)) for row in picked.tolist()]

    def class_runs(self, chars: CharSet) -> tuple[np.ndarray, np.ndarray]:
        """Per token, how many of its leading complete characters are in ``chars`` (``runs``), and whether
        the whole token stays in the class: every complete character, and a trailing partial one that can
        still become a class character. In C for decoded texts, else with numpy and a loop over the tails."""
        if self._native is not None:
            run = np.empty(len(self.ids), dtype=np.int64)
            whole = np.empty(len(self.ids), dtype=np.uint8)
            bounds = np.array(chars.intervals, dtype=np.int32).reshape(-1, 2)
            low, high = np.ascontiguousarray(bounds[:, 0]), np.ascontiguousarray(bounds[:, 1])
            starts, lengths = np.ascontiguousarray(self.starts), np.ascontiguousarray(self.lengths)
            self._native.class_runs(self.code_points, starts, lengths, self._tail_len, self._tail_code, low, high,
                                    run, whole)  # fmt: skip
            return run, whole.view(np.bool_)
        run = self.runs(chars)
        whole = run == self.lengths
        verdicts: dict[bytes, bool] = {}
        for row in np.flatnonzero(whole & self.has_tail).tolist():
            tail = self.tail(row)
            allowed = verdicts.get(tail)
            if allowed is None:
                allowed = verdicts[tail] = chars.allows_utf8_prefix(tail)
            whole[row] = allowed
        return run, whole

    def runs(self, chars: CharSet) -> np.ndarray:
        """Per token, how many of its leading complete characters are in ``chars``.

        Character by character over the tokens still inside the class: for a narrow class (digits, a
        format's letters) most tokens leave it at their first character, so a few small passes decide
        everything (~1 ms for 128k tokens). A wide class keeps most tokens going, and is decided in one
        pass over every character instead (``_runs_everywhere``)."""
        member = self._member_table(chars)
        lengths, starts, cps = self.lengths, self.starts, self.code_points
        run = np.zeros(len(lengths), dtype=np.int64)
        active = np.flatnonzero(lengths > 0)
        step = 0
        while active.size:
            inside = member[cps[starts[active] + step]]  # (every active token has a character at ``step``)
            if step == 1 and active.size * 4 > len(lengths) and inside.sum() * 2 > active.size:
                # many tokens start inside and most stay (a wide class): one pass over every character is
                # cheaper; a class like whitespace, which they leave at once, goes on step by step
                return self._runs_everywhere(member)
            active = active[inside]
            step += 1
            run[active] = step
            active = active[lengths[active] > step]
        return run

    def _runs_everywhere(self, member: np.ndarray) -> np.ndarray:
        """``runs`` from the positions of every character outside the class."""
        cps, starts = self.code_points, self.starts
        outside = np.flatnonzero(~member[cps])
        first = np.append(outside, len(cps))[np.searchsorted(outside, starts)]
        return np.minimum(first, self.ends) - starts

    def _member_table(self, chars: CharSet) -> np.ndarray:
        """Class membership by code point, up to the largest code point of these texts."""
        top = self._top
        if top is None:
            top = self._top = int(self.code_points.max()) + 1 if len(self.code_points) else 1
        member = np.zeros(top, dtype=np.bool_)
        for lo, hi in chars.intervals:
            if lo >= top:
                break
            member[lo : hi + 1] = True
        return member


class _Suffixes(TokenTexts):
    """A view of some tokens' texts past their first characters (see TokenTexts.suffixes)."""

    _base: TokenTexts
    _rows: np.ndarray
    _skip: int

    def text(self, row: int) -> str:
        return self._base.text(int(self._rows[row]))[self._skip :]

    def tail(self, row: int) -> bytes:
        return self._base.tail(int(self._rows[row]))


_FEW_IDS = 1024

_SHARE_LOCK = threading.Lock()
"""Held while a table reads the root it was given as a function (``FreeRunTable._share_root``)."""

_EXITS_KEPT = 64
"""Exit tries kept per table, by (run length, allowed set): a value start after whitespace asks the same few
sets in every schema (``{``, ``[``, a quote), and choosing the groups a set allows is a Python pass over
every first byte past the run (~40 µs for the whitespace table) where the tries themselves are shared."""


class FreeRunTable:
    """Tokens sorted by how they behave in a state that loops over the character class ``chars``.

    ``texts``: the tokens (bytes still to read) as TokenTexts or (token id, bytes) pairs; ``bucketed`` keeps one
    mask per run length (so a ``maxLength`` can be honoured exactly) instead of a single mask for runs of any
    length; ``root``: the trie node those bytes hang from, whose subtrees are shared as the exits of run 0 (and,
    for a class of a few ASCII characters, as the exits by an ASCII byte after any run: ``_shared_exit``);
    ``root_of`` instead: a function giving that node, called at the first ask for an exit (the vocabulary's
    dict trie, which the compiled walk never reads: its masks ask only ``runs_upto``).

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
        root_of: Callable[[], Trie] | None = None,
    ) -> None:
        if not isinstance(texts, TokenTexts):
            texts = TokenTexts(texts)
        self.bucketed = bucketed
        run, whole = texts.class_runs(chars)
        leaving = np.flatnonzero(~whole)
        self._first_exits: Trie | None = None
        self._unshared: tuple[Callable[[], Trie], np.ndarray] | None = None
        """(``root_of``, the rows of the run-0 exits) until ``_share_root`` reads the root."""
        if root is not None or root_of is not None:
            rows = leaving[run[leaving] == 0]
            if root is not None:
                self._first_exits = _share_first_exits(chars, root, lambda mixed: texts.entries_led_by(rows, mixed))
            else:
                self._unshared = (root_of, rows)  # type: ignore[assignment]
            leaving = leaving[run[leaving] > 0]
        self._texts = texts
        self._root = root
        self._chars = chars
        self._groups = _exit_groups(texts, leaving, run[leaving])
        self._built: dict[tuple[int, int], Trie] = {}
        self._exits: dict[tuple[int, CharSet], Trie] = {}
        self._exit_lengths = self._lengths_out()
        ids = texts.ids[whole]
        lengths = (run + texts.has_tail)[whole]
        self.longest_run = int(lengths.max()) if len(lengths) else 0
        self._tails: dict[int, list[tuple[int, bytes]]] = {}
        for row in np.flatnonzero(whole & texts.has_tail).tolist():
            self._tails.setdefault(int(run[row]), []).append((int(texts.ids[row]), texts.tail(row)))
        self._size = size
        self._within: dict[int, tuple[int, ...] | np.ndarray] = {}
        self._by_length: dict[int, np.ndarray] = {}
        self.few: tuple[int, ...] | None = None
        """Unbucketed tables of small subtrees keep their run tokens as a tuple of ids (cheaper than a packed mask)."""
        if bucketed:  # sorted by run length: ``runs_upto`` packs a prefix, on demand
            order = np.argsort(_narrowed(lengths), kind="stable")
            ids, lengths = ids[order], lengths[order]
        self._run_ids, self._run_lengths = ids, lengths
        self._full: np.ndarray | None = None
        if not bucketed and len(ids) <= _FEW_IDS:
            self.few = tuple(ids.tolist())
            return
        flags = np.zeros(((size + 31) // 32) * 32, dtype=np.bool_)
        flags[ids] = True
        self._full = np.packbits(flags, bitorder="little").view(np.int32)
        self._full.flags.writeable = False

    @property
    def exit_lengths(self) -> tuple[int, ...]:
        """The run lengths after which some token leaves the class (ascending)."""
        if self._unshared is not None:
            self._share_root()
        return self._exit_lengths

    def _lengths_out(self) -> tuple[int, ...]:
        """The run lengths of the exit groups, and 0 where some token leaves the class at once."""
        return tuple(sorted({*self._groups, *((0,) if self._first_exits else ())}))

    def _share_root(self) -> None:
        """Reads the root given as ``root_of``: the exits of run 0 below it (``_share_first_exits``), once
        (under a lock, so that every walk gets the same exit trie)."""
        with _SHARE_LOCK:
            unshared = self._unshared
            if unshared is None:
                return
            root_of, rows = unshared
            root = root_of()
            texts = self._texts
            first = _share_first_exits(self._chars, root, lambda mixed: texts.entries_led_by(rows, mixed))  # type: ignore[union-attr]
            self._first_exits, self._root = first, root
            self._exit_lengths = self._lengths_out()
            self._unshared = None

    def runs_upto(self, max_length: int | None) -> np.ndarray | None:
        """Packed mask of the tokens made of at most ``max_length`` class characters (None: any length);
        None when this table is not bucketed and a limit is asked for. (Not for tables with ``few``.)
        A bounded mask is packed at its first use and kept: a table is asked for a handful of lengths (a
        ``maxLength``, the room left), where packing one per run length up front cost a mask for each of
        the 100+ lengths of the longest tokens."""
        if max_length is None or max_length >= self.longest_run:
            return self._full
        if not self.bucketed:
            return None
        max_length = max(max_length, 0)
        mask = self._by_length.get(max_length)
        if mask is None:
            cut = int(np.searchsorted(self._run_lengths, max_length, side="right"))
            mask = pack_ids(self._run_ids[:cut], self._size)
            mask.flags.writeable = False
            self._by_length[max_length] = mask
        return mask

    def within(self, max_length: int) -> tuple[int, ...] | np.ndarray:
        """Unbucketed tables: the run tokens made of at most ``max_length`` class characters, as a tuple of ids
        (when few) or a packed mask; memoised per length. Lets a bounded run (a counted repeat such as
        ``[A-Za-z0-9]{8}``) use one subtree table instead of descending to the nodes where every run fits,
        which built thousands of small tables on a first visit."""
        hit = self._within.get(max_length)
        if hit is None:
            ids = self._run_ids[self._run_lengths <= max_length]  # type: ignore[index,operator]
            if len(ids) <= _FEW_IDS:
                hit = tuple(ids.tolist())
            else:
                hit = pack_ids(ids, self._size)
                hit.flags.writeable = False
            self._within[max_length] = hit
        return hit

    def tails_at(self, length: int) -> list[tuple[int, bytes]]:
        """The run tokens of ``length`` complete class characters that end inside one more character, as
        (id, its bytes): counted as runs of ``length + 1``, so a run bounded at ``length`` leaves them out
        of its mask, yet their last bytes may start a character of what follows the run (``.?é`` takes
        `` \xc3``: a space, then the first byte of é). The walk checks them against the state there."""
        return self._tails.get(length, [])

    def exits_for(self, length: int, allowed: CharSet) -> Trie:
        """The tokens that leave the class after ``length`` run characters, as a trie holding only the first
        bytes ``allowed`` can start (a superset the walk then checks character by character); kept per
        (length, allowed set), read-only."""
        if self._unshared is not None:
            self._share_root()
        if length == 0 and self._first_exits is not None:
            return self._first_exits
        key = (length, allowed)
        out = self._exits.get(key)
        if out is not None:
            return out
        out = {}
        ascii_ok = allowed.ascii
        for byte, rows in self._groups.get(length, {}).items():
            if byte < 0x80:
                if not ascii_ok[byte]:
                    continue
            elif not allowed.allows_utf8_prefix(bytes((byte,))):
                continue
            child = self._built.get((length, byte))
            if child is None and byte < 0x80:
                child = self._shared_exit(length, byte)
                if child is not None:
                    self._built[(length, byte)] = child
            if child is None:
                child = {}
                texts = self._texts
                if texts is None:  # a small table (see ``small``): the bytes after the first are kept
                    for token_id, rest in rows:
                        insert(child, rest, token_id)
                else:
                    for row in rows.tolist():
                        rest = texts.text(row)[length:].encode("utf-8") + texts.tail(row)
                        insert(child, rest[1:], int(texts.ids[row]))
                self._built[(length, byte)] = child
            out[byte] = child
        if len(self._exits) >= _EXITS_KEPT:
            self._exits.clear()
        self._exits[key] = out
        return out

    def _shared_exit(self, length: int, byte: int) -> Trie | int | None:
        """The exit trie of ``(length, byte)`` from the trie this table reads (``root``), without copying a token:
        for a class of a few ASCII characters (whitespace, digits) a run of ``length`` characters is a path of
        ``length`` class bytes below ``root``, and an ASCII ``byte`` outside the class ends the run, so the
        tokens that leave after ``length`` characters by ``byte`` are exactly those below such a path and
        ``byte``: that subtree (the vocabulary's own node), or where several paths lead to one, a merge of
        them. None when the class is not such (the trie is then built token by token). Inserting each of
        the tokens below ``" t"`` into a new trie (the exits of a value start after a space) took ~20 ms."""
        if self._texts is None:  # (a small table: its few tokens are inserted)
            return None
        root, narrow = self._root, self._chars.narrow
        if root is None or narrow is None:
            return None
        level: list[Trie] = [root]
        for _ in range(length):
            level = [child for node in level for b in narrow
                     if (child := node.get(b)) is not None and child.__class__ is dict]  # fmt: skip
        found = [child for node in level if (child := node.get(byte)) is not None]
        if not found:
            return None
        shared = found[0]
        for other in found[1:]:
            shared = _merged(shared, other)
        return shared

    def all_exits(self) -> dict[int, Trie]:
        """Every exit trie, by run length (for checks: walks build only what they reach)."""
        return {length: self.exits_for(length, ANY) for length in self.exit_lengths}

    def approx_bytes(self) -> int:
        """About the bytes this table holds when built (for a cache budget), from the sizes of its parts
        rather than a walk over every object in them: its arrays, its id tuple, and its exit groups and
        tails at ~56 bytes a member, ~140 with the bytes a small table keeps (exit tries are built later,
        by walks, and shared trie nodes are the vocabulary's)."""
        total = 600 + self._run_ids.nbytes + self._run_lengths.nbytes
        if self.few is not None:
            total += 36 * len(self.few)
        per_member = 56 if self._texts is not None else 140
        for by_byte in self._groups.values():
            total += 240 + sum(96 + per_member * len(rows) for rows in by_byte.values())
        for tails in self._tails.values():
            total += 120 + 100 * len(tails)
        return total

    @classmethod
    def small(cls, entries: Iterable[tuple[int, bytes]], chars: CharSet, size: int, root: Trie) -> FreeRunTable:
        """The unbucketed table of a small subtree (``entries``: token ids and the bytes below ``root``), built
        by a plain loop over its few tokens: the same table as the vectorized build, which pays some thirty
        numpy calls (~80 µs) whatever the count, and first walks build thousands of these."""
        table = cls.__new__(cls)
        table.bucketed = False
        run_ids: list[int] = []
        run_lengths: list[int] = []
        first: list[tuple[int, bytes]] = []
        groups: dict[int, dict[int, list[tuple[int, bytes]]]] = {}
        tails: dict[int, list[tuple[int, bytes]]] = {}
        for token_id, data in entries:
            if not data:
                continue
            try:
                text, tail = data.decode("utf-8"), b""
            except UnicodeDecodeError:
                split = _walkable_split(data)
                if split is None:
                    continue
                text, tail = split
            run = 0
            for ch in text:
                if ch not in chars:
                    break
                run += 1
            if run == len(text) and (not tail or chars.allows_utf8_prefix(tail)):
                run_ids.append(token_id)
                run_lengths.append(run + (1 if tail else 0))
                if tail:
                    tails.setdefault(run, []).append((token_id, tail))
            elif run == 0:
                first.append((token_id, data))
            else:
                rest = text[run:].encode("utf-8") + tail
                groups.setdefault(run, {}).setdefault(rest[0], []).append((token_id, rest[1:]))
        table._first_exits = _share_first_exits(chars, root, lambda mixed: first)
        table._texts = None
        table._root = root
        table._chars = chars
        table._groups = groups  # type: ignore[assignment]
        table._built = {}
        table._exits = {}
        table._unshared = None
        table._exit_lengths = table._lengths_out()
        table.longest_run = max(run_lengths, default=0)
        table._tails = tails
        table._size = size
        table._within = {}
        table._run_ids = np.array(run_ids, dtype=np.int64)
        table._run_lengths = np.array(run_lengths, dtype=np.int64)
        table.few = tuple(run_ids)
        table._full = None
        table._by_length = {}
        return table


def _merged(a: Trie | int, b: Trie | int) -> Trie:
    """The trie of the tokens below ``a`` and below ``b`` (nodes or leaf ids), as new dicts only where the two
    meet: the nodes of each below a byte the other lacks are shared, never changed."""
    out = {IDS: a} if a.__class__ is int else dict(a)  # type: ignore[dict-item]
    if b.__class__ is int:
        b = {IDS: b}
    for key, sub in b.items():  # type: ignore[union-attr]
        mine = out.get(key)
        if mine is None:
            out[key] = sub
        elif key == IDS:
            out[IDS] = (*ids_at(mine), *ids_at(sub))
        else:
            out[key] = _merged(mine, sub)
    return out


def _share_first_exits(
    chars: CharSet, root: Trie, leaving: Callable[[set[int]], Iterable[tuple[int, bytes]]]
) -> Trie | None:
    """Exits after a run of 0: the tokens whose first character is outside the class, i.e. whole subtrees
    of ``root`` (shared, not copied) except under lead bytes where the class holds some characters, where
    the tokens ``leaving(those bytes)`` gives (id, bytes: the run-0 tokens led by them) are inserted."""
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
        for token_id, data in leaving(mixed):
            if data[0] in mixed:
                insert(first, data, token_id)
    return first or None


def _lead_bytes(texts: TokenTexts, rows: np.ndarray, runs: np.ndarray) -> np.ndarray:
    """The UTF-8 lead byte of the character after ``runs`` characters of each token at ``rows`` (the first
    byte of its trailing incomplete character when the run covers every complete one)."""
    inside = runs < texts.lengths[rows]
    cp = np.zeros(len(rows), dtype=np.int64)
    cp[inside] = texts.code_points[(texts.starts[rows] + runs)[inside]]
    lead = np.where(cp < 0x80, cp, np.where(cp < 0x800, 0xC0 | (cp >> 6),
                                            np.where(cp < 0x10000, 0xE0 | (cp >> 12), 0xF0 | (cp >> 18))))  # fmt: skip
    for index in np.flatnonzero(~inside).tolist():
        lead[index] = texts.tail(int(rows[index]))[0]
    return lead


def _exit_groups(texts: TokenTexts, rows: np.ndarray, runs: np.ndarray) -> dict[int, dict[int, np.ndarray]]:
    """The rows of tokens leaving a class, grouped by run length, then by the first byte past the run."""
    if not len(rows):
        return {}
    lead = _lead_bytes(texts, rows, runs)
    keys = _narrowed(runs.astype(np.int64) * 256 + lead)
    order = np.argsort(keys, kind="stable")
    keys, rows = keys[order], rows[order]
    cuts = np.flatnonzero(np.diff(keys)) + 1
    groups: dict[int, dict[int, np.ndarray]] = {}
    for start, stop in zip([0, *cuts.tolist()], [*cuts.tolist(), len(keys)]):
        key = int(keys[start])
        groups.setdefault(key >> 8, {})[key & 0xFF] = rows[start:stop]
    return groups


def _narrowed(keys: np.ndarray) -> np.ndarray:
    """``keys`` (non-negative) as 16-bit integers where they fit: numpy's stable sort of those is a radix
    sort, several times faster over a vocabulary's rows than its timsort of 64-bit ones (same order)."""
    if len(keys) and 0 <= int(keys.min()) and int(keys.max()) < 1 << 16:
        return keys.astype(np.uint16)
    return keys


def _walkable_split(data: bytes) -> tuple[str, bytes] | None:
    """``split_complete`` for a token that does not decode whole; None for a token no walk can accept: one
    starting inside a character, or with invalid UTF-8 inside (the walk refuses it at the bad byte)."""
    if utf8_length(data[0]) == 0:
        return None
    text, tail = split_complete(data)
    if not text and tail == data and len(data) >= utf8_length(data[0]):
        return None
    return text, tail


def split_complete(data: bytes) -> tuple[str, bytes]:
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
