"""The token walk: which tokens can come next from a parser state, as a packed bitmask.

The byte trie of the vocabulary is walked depth first; at each node only the children whose byte can
continue an allowed character are entered, so a refused character prunes its whole subtree at once. Bytes of
a multi-byte character are carried as ``pending`` until the character is complete, then fed to the parser.

States that loop over a large character class (inside a JSON string, ``.*``) are answered from the
vocabulary's free-run tables: one precomputed mask for the tokens made only of that class, plus small walks
over the tokens that leave it. No token is ever decoded here; the only per-node work is a table look-up and,
for an allowed character, one parser step.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Hashable

import numpy as np

from .budget import MEMORY_READ_SECONDS, MemoryCap
from .cache_budget import STATE_BYTES, BudgetedCache
from .cache_release import register_memo
from .charset import ANY, CharSet, utf8_length
from .compiled_walk import compiled_mask
from .errors import MaskMemoryError, MaskTimeoutError
from .hooks import FreeRun, Lexeme, walk_lexeme
from .lexeme_automaton import FlatSources, compiled_below, compiled_lexeme
from .protocol import CharacterParser
from .run_tables import FreeRunTable, pack_rows
from .trie import IDS, Trie, as_dict, ids_at
from .vocabulary import Vocabulary

_CHR = [chr(b) for b in range(128)]
_BYTE = [bytes((b,)) for b in range(256)]
_LENGTH = [utf8_length(b) for b in range(256)]
_WIDE = 32
"""Trie nodes with more children than this are entered through a narrow set's own bytes (CharSet.narrow)."""
_WALKED_SUBTREE = 8
"""A subtree of at most this many tokens is walked, not given a free-run table (see ``_Walk.enter``)."""
_SHARED = 4
"""Trie nodes with more children than this look for one state shared by most children (_Walk._shared_step)."""
_SHARED_GROUPS = 8192
"""Cached shared-children groups per vocabulary (see _Walk._shared_children)."""


_SHARED_BYTES: dict[tuple, list[bool]] = {}
register_memo(_SHARED_BYTES.clear)  # emptied when a burst of enforcers ends (core/cache_release.py)


_FEW_BELOW: dict[int, bool] = {}
"""id(node) -> ``_few_below(node, _WALKED_SUBTREE)``. Only a choice of method (a walk or a table: the same
tokens either way), so an id reused by another node costs at most a table built or skipped."""
register_memo(_FEW_BELOW.clear)

_FIRST_BYTES: dict[int, tuple[Trie, bytes]] = {}
"""id(node) -> (node, the bytes its children start with): see ``_first_bytes``."""
_FIRST_BYTES_KEPT = 1 << 16
register_memo(_FIRST_BYTES.clear)


def _few_below(node: Trie, limit: int) -> bool:
    """Whether at most ``limit`` tokens are in the subtree of ``node`` (memoised for ``_WALKED_SUBTREE``)."""
    found = _FEW_BELOW.get(id(node))
    if found is None:
        if len(_FEW_BELOW) >= 1 << 18:
            _FEW_BELOW.clear()
        found = _FEW_BELOW[id(node)] = _count_below(node, limit)
    return found


def _count_below(node: Trie, limit: int) -> bool:
    """Whether at most ``limit`` tokens are in the subtree of ``node`` (stops counting past the limit)."""
    count = 0
    stack = [node]
    while stack:
        for byte, child in stack.pop().items():
            if child.__class__ is int:
                count += 1
            elif byte == IDS:
                count += len(child)
            else:
                stack.append(child)
            if count > limit:
                return False
    return True


def _shared_bytes(chars: CharSet, exceptions: bytes) -> list[bool]:
    """Per ASCII byte, whether it is a class character off the exceptions (memoised: a few per schema)."""
    key = (chars, exceptions)
    hit = _SHARED_BYTES.get(key)
    if hit is None:
        member = chars.ascii
        if len(_SHARED_BYTES) >= _SHARED_GROUPS:
            _SHARED_BYTES.clear()
        hit = _SHARED_BYTES[key] = [bool(member[b]) and b not in exceptions for b in range(128)]
    return hit


_budget = threading.local()
"""This thread's budget for the mask it computes (``budget``: a ``_MaskBudget``, or None): see
``budgeted_mask``."""
_monotonic = time.monotonic


class _MaskBudget:
    """The limits of one mask: a ``deadline`` (a ``time.monotonic()`` instant, or None) and a memory budget
    (``megabytes`` of growth, or None), whose ``MemoryCap`` is made at the first look, a millisecond into the
    mask (most masks end sooner and never pay for it). The walk compares the clock with ``poll``, the next
    instant either needs a look, so a memory budget adds nothing per trie node."""

    __slots__ = ("deadline", "megabytes", "memory", "poll")

    def __init__(self, deadline: float | None, megabytes: float | None, memory: MemoryCap | None, poll: float) -> None:
        self.deadline, self.megabytes, self.memory, self.poll = deadline, megabytes, memory, poll

    def check(self, state: CharacterParser) -> None:
        """Raises ``MaskTimeoutError`` past the deadline, ``MaskMemoryError`` past the memory budget."""
        now = _monotonic()
        deadline = self.deadline
        if deadline is not None and now > deadline:
            raise MaskTimeoutError(f"the mask took longer than its time budget (walking from {state!r:.200})")
        if self.megabytes is None:
            return
        memory = self.memory
        if memory is None:  # the first look: the resident size now is what growth is counted from
            memory = self.memory = MemoryCap(int(self.megabytes * 2**20), first_read=now)
        if memory.exceeded(now):
            raise MaskMemoryError(
                f"the mask's walk grew the process's memory by more than its budget of {self.megabytes:g} MiB "
                f"(EnforcerConfig.mask_megabytes; walking from {state!r:.200})"
            )
        self.poll = memory.next_read if deadline is None else min(deadline, memory.next_read)


class _Walk:
    """One mask computation: collects allowed ids, plus precomputed masks to OR in."""

    __slots__ = (
        "vocabulary", "out", "masks", "steps", "ends", "checked", "collects_ends", "shared", "runs", "budget"
    )  # fmt: skip

    def __init__(self, vocabulary: Vocabulary) -> None:
        self.vocabulary = vocabulary
        self.budget: _MaskBudget | None = getattr(_budget, "budget", None)  # see budgeted_mask
        self.out: list[int] = []
        self.masks: list[np.ndarray] = []
        # (id(state), byte) -> (state, next state): one parser step per state and character per walk, where
        # many trie nodes are walked from the same state (the end points of a lexeme, a run's exits)
        self.steps: dict[tuple[int, int], tuple[CharacterParser, CharacterParser | None]] = {}
        self.ends: list[tuple[Trie, CharacterParser]] = []
        self.checked = False  # see _LexemeWalk
        self.collects_ends = False  # records ends inside runs (FreeRun.ends_inside): unchecked lexeme walks
        # id(state) -> (state, its shared step or None): see _shared_step
        self.shared: dict[int, tuple[CharacterParser, tuple[CharacterParser, list[bool], tuple] | None]] = {}
        # id(state) -> (state, its free run): one FreeRun per state object, entered below many nodes
        self.runs: dict[int, tuple[CharacterParser, FreeRun | None]] = {}

    def _shared_step(self, state: CharacterParser) -> tuple[CharacterParser, list[bool], tuple] | None:
        """For a state with a first-character split whose twin loops over a class (a key on the trie of
        names in an open object: every character off the names leads to the same off-trie state), one state
        that stands for ``state`` after any class character off the exceptions, and which ASCII bytes those
        are: a wide trie node's children then share one state instead of one parser step and one new state
        (and its free run, its allowed set) each. Used only when exact: the twin's ``after(1)`` must have
        the key of a real step (a stand-in would drop tokens). The third item keys the shared children's
        cached contribution (see _shared_children)."""
        hit = self.shared.get(id(state))
        if hit is not None and hit[0] is state:
            return hit[1]
        found = None
        split = state.first_char_split()
        if split is not None:
            twin, exceptions = split
            run = twin.free_run()
            if run is not None and not run.ends_inside and (run.max_length is None or run.max_length >= 1):
                ok = _shared_bytes(run.chars, exceptions)
                probe = ok.index(True) if True in ok else -1
                if probe >= 0:
                    after, real = run.after(1), state.add_character(_CHR[probe])
                    if real is not None and real.key() == after.key():
                        found = (after, ok, (run.chars, exceptions))
        self.shared[id(state)] = (state, found)  # holds ``state``: its id stays unique
        return found

    def _shared_children(
        self, node: Trie, shared: CharacterParser, ok: list[bool], key: tuple
    ) -> tuple[tuple[int, ...], tuple[np.ndarray, ...], tuple[FreeRunTable, ...], list] | None:
        """What the children of ``node`` entered in the shared state add, as ``enter`` would add it: the ids
        of their run tokens (from each child's subtree table), masks, the tables whose exits must still be
        walked (from the shared state's run: they depend on the state past the run), and the other children
        to walk one by one. Cached per vocabulary by node, class and exceptions: the same key position recurs
        in every object of a schema, and the per-child tables are shared by every schema. None when the
        shared state does not loop without bound (or may end there)."""
        memo = self.runs.get(id(shared))
        if memo is None or memo[0] is not shared:
            memo = self.runs[id(shared)] = (shared, shared.free_run())
        run = memo[1]
        if run is None or run.max_length is not None or run.ends_inside or shared.can_end():
            return None
        cache = self.vocabulary.shared_groups
        hit = cache.get((id(node), key))
        if hit is not None and hit[0] is node:
            return hit[1]
        vocabulary = self.vocabulary
        ids: list[int] = []
        masks: list[np.ndarray] = []
        tables: list[FreeRunTable] = []
        rest = []
        for byte, child in node.items():
            if byte == IDS or byte >= 128 or not ok[byte]:
                rest.append((byte, child))
            elif child.__class__ is int:
                ids.append(child)
            elif child.__class__ is not dict:
                return None  # a merged copy (see _MergedNode): walked
            else:
                below = child.get(IDS)
                if below is not None:
                    ids.extend(ids_at(below))
                if len(child) > (0 if below is None else 1):
                    table = vocabulary.subtree_run_table(child, run.chars)
                    if table.few is not None:
                        ids.extend(table.few)
                    else:
                        masks.append(table.runs_upto(None))
                    if table.exit_lengths:
                        tables.append(table)
        group = (tuple(ids), tuple(masks), tuple(tables), rest)
        if len(cache) >= _SHARED_GROUPS:
            cache.clear()  # rare; rebuilt on demand
        cache[(id(node), key)] = (node, group)  # holds ``node``: its id stays unique
        return group

    def enter(self, child: Trie, state: CharacterParser) -> None:
        """Continues below ``child`` (reached on a complete character) in ``state``: from the node's subtree
        free-run table when the state promises a run (built once per node and class, small ones as id
        lists), else by walking."""
        memo = self.runs.get(id(state))
        if memo is not None and memo[0] is state:
            run = memo[1]
        else:
            run = state.free_run()
            self.runs[id(state)] = (state, run)
        if run is not None and child.__class__ is dict and not (run.ends_inside and self.checked):
            # (not a merged copy, see _MergedNode; a checked walk decides every end point on its own)
            narrow = run.chars.narrow
            if narrow is not None and child.keys().isdisjoint(narrow):
                # no token below starts the run (whitespace after a value, mostly): every one leaves it at
                # once, so the table would only hand the whole subtree back to a walk from this state
                self.walk(child, state, b"")
                return
            table = self.vocabulary.built_subtree_run_table(child, run.chars)
            if table is None:
                if _few_below(child, _WALKED_SUBTREE):
                    # building a table (its entries, exits, size, cache entry) costs more than walking a few
                    # tokens, and most subtrees a first walk enters hold one to three
                    self.walk(child, state, b"")
                    return
                table = self.vocabulary.subtree_run_table(child, run.chars)
            # subtree tables are not bucketed by length: a bounded run below the longest run of the subtree
            # (a counted repeat such as {1,30}) selects its tokens by length (memoised per bound)
            if run.max_length is None or run.max_length >= table.longest_run:
                if table.few is not None:
                    self.out.extend(table.few)
                else:
                    self.masks.append(table.runs_upto(None))
            else:
                within = table.within(run.max_length)
                if within.__class__ is tuple:
                    self.out.extend(within)
                else:
                    self.masks.append(within)
            self.exits(table, run, state)
            return
        self.walk(child, state, b"")

    def exits(self, table: FreeRunTable, run: FreeRun, start: CharacterParser) -> None:
        """Walks the tokens that leave the run's class, each from the state after its run; runs longer than
        the bound are refused (the FreeRun promise), so their tokens are skipped. ``start`` is the state
        whose run this is: after no run character it is its own state (no new state, so the steps walked
        from it are shared)."""
        limit = run.max_length
        record = run.ends_inside and self.collects_ends
        if limit is not None:  # tokens of ``limit`` run characters and the first bytes of one more
            tails = table.tails_at(limit)
            if tails:
                allowed = (run.after(limit) if limit else start).allowed_characters()
                self.out.extend(_prefixes_allowed(tails, allowed))
        for length in table.exit_lengths:
            if limit is not None and length > limit:
                break
            state = run.after(length) if length else start
            if record and length and state.can_end():
                # the value may end here, and these tokens go on past it: the full state reads what follows
                # (run length 0 is the entry node, recorded by _LexemeWalk.enter)
                ends = table.exits_for(length, ANY)
                if ends:
                    self.ends.append((ends, state))
            node = table.exits_for(length, state.allowed_characters())
            if node:
                self.walk(node, state, b"")

    def walk(self, node: Trie, state: CharacterParser, pending: bytes) -> None:
        """Adds every token below ``node`` that ``state`` (with ``pending`` bytes of an incomplete character
        already read) accepts as a prefix."""
        budget = self.budget
        if budget is not None and _monotonic() > budget.poll:
            budget.check(state)
        if node.__class__ is _MergedNode:
            _expanded(node)
        out = self.out
        steps = None if state.STEPS_MEMOISED else self.steps  # (such a state answers a step again at once)
        charset = state.allowed_characters()
        ascii_ok = charset.ascii
        items = node.items()
        shared = None
        if len(node) > _WIDE and not pending:
            narrow = charset.narrow
            if narrow is not None:  # a few ASCII characters: look them up rather than test every child
                items = _narrow_items(node, narrow)
        if len(node) > _SHARED and not pending and charset.narrow is None:
            shared = self._shared_step(state)
        if shared is not None:
            shared_state, shared_ok, group_key = shared
            group = self._shared_children(node, shared_state, shared_ok, group_key)
            if group is not None:  # the shared children's tokens at once; the others walked below
                ids, masks, tables, items = group
                out.extend(ids)
                self.masks.extend(masks)
                for table in tables:
                    self.exits(table, self.runs[id(shared_state)][1], shared_state)  # type: ignore[arg-type]
                shared = None
        for byte, child in items:
            if byte == IDS:
                continue
            if pending:
                data = pending + _BYTE[byte]
                if len(data) == _LENGTH[data[0]]:
                    try:
                        ch = data.decode("utf-8")
                    except UnicodeDecodeError:
                        continue
                    if ch not in charset:
                        continue
                    nxt = state.add_character(ch)
                    if nxt is None:
                        continue
                    if self.checked and nxt.can_end():
                        self.ends.append((child, nxt))
                        continue
                    if child.__class__ is int:  # a leaf: one token ends here, nothing below
                        out.append(child)
                        continue
                    ids = child.get(IDS)
                    if ids is not None:
                        if ids.__class__ is int:
                            out.append(ids)
                        else:
                            out.extend(ids)
                    if len(child) > (0 if ids is None else 1):
                        self.enter(child, nxt)
                elif 0x80 <= byte <= 0xBF and charset.allows_utf8_prefix(data):
                    if child.__class__ is int:
                        out.append(child)
                        continue
                    ids = child.get(IDS)
                    if ids is not None:
                        out.extend(ids_at(ids))
                    self.walk(child, state, data)
            elif byte < 128:
                if not ascii_ok[byte]:
                    continue
                if shared is not None and shared_ok[byte]:
                    nxt = shared_state
                elif steps is None:
                    nxt = state.add_character(_CHR[byte])
                else:
                    step = steps.get((id(state), byte))
                    if step is not None and step[0] is state:
                        nxt = step[1]
                    else:
                        nxt = state.add_character(_CHR[byte])
                        steps[(id(state), byte)] = (state, nxt)  # holds ``state``: its id stays unique
                if nxt is None:
                    continue
                if self.checked and nxt.can_end():
                    self.ends.append((child, nxt))  # its ids are decided by the full state (see Lexeme)
                    continue
                if child.__class__ is int:
                    out.append(child)
                    continue
                ids = child.get(IDS)
                if ids is not None:
                    if ids.__class__ is int:
                        out.append(ids)
                    else:
                        out.extend(ids)
                if len(child) > (0 if ids is None else 1):
                    self.enter(child, nxt)
            elif _LENGTH[byte] > 1 and charset.allows_utf8_prefix(_BYTE[byte]):
                if child.__class__ is int:
                    out.append(child)
                    continue
                ids = child.get(IDS)
                if ids is not None:
                    out.extend(ids_at(ids))
                self.walk(child, state, _BYTE[byte])


def _narrow_items(node: Trie, narrow: tuple[int, ...]) -> list[tuple[int, Trie]]:
    """The children of ``node`` under these bytes (apart from ``_Walk.walk``: a comprehension reading
    ``node`` there would make it a cell at every call of the walk)."""
    return [(byte, node[byte]) for byte in narrow if byte in node]


def _prefixes_allowed(tails: list[tuple[int, bytes]], allowed: CharSet) -> list[int]:
    """The ids of the tails whose bytes start a character of ``allowed`` (see ``_Walk.exits``)."""
    return [token_id for token_id, tail in tails if allowed.allows_utf8_prefix(tail)]


class _LexemeWalk(_Walk):
    """A walk with an inner scalar state alone that also records ``ends``: the trie nodes (with the inner
    state there) where the inner value may end while tokens go on below — where the full state takes over.
    When ``checked``, every node where the inner value may end is an end, the tokens ending there included
    (the full state may refuse that ending), and nothing below it is walked with the inner state."""

    __slots__ = ()

    def __init__(self, vocabulary: Vocabulary, checked: bool) -> None:
        super().__init__(vocabulary)
        self.checked = checked
        self.collects_ends = not checked

    def enter(self, child: Trie, state: CharacterParser) -> None:
        if not self.checked and state.can_end():
            self.ends.append((child, state))
        super().enter(child, state)


def _collect(walker: _Walk, state: CharacterParser, pending: bytes, at_start: bool) -> None:
    vocabulary = walker.vocabulary
    run = None if (pending or at_start) else state.free_run()
    if run is not None and not (run.ends_inside and walker.checked):
        table = vocabulary.free_run_table(run.chars)
        walker.masks.append(table.runs_upto(run.max_length))
        walker.exits(table, run, state)
    else:
        walker.walk(vocabulary.trie, state, pending)
        if at_start and vocabulary.strip_leading_space:
            # SentencePiece drops the space of the first decoded token: "▁{" at the start adds "{".
            # A lone "▁" adds nothing there; allowing it keeps the tokenizer's own "▁" + "2024" spelling.
            spaced = vocabulary.trie.get(0x20)
            if spaced is not None:
                spaced = as_dict(spaced)
                walker.out.extend(ids_at(spaced.get(IDS, ())))
                walker.walk(spaced, state, b"")


def _packed(walker: _Walk) -> np.ndarray:
    return pack_rows(walker.out, walker.masks, walker.vocabulary.size)[0]


_LEXEME_CACHE_SIZE = 2048
"""Lexeme walks kept in an enforcer's own memo (each a packed mask, 16 KB for a 128k vocabulary, plus its end
points) before it is emptied. The vocabulary's shared cache has no count limit: its memory budget evicts the
entries used longest ago, so the walks every schema shares (value starts, punctuation, plain strings) stay."""

LexemeResult = tuple[np.ndarray, list[tuple[CharacterParser, list[int], Trie]]]


def lexeme_result(
    vocabulary: Vocabulary, inner: CharacterParser, checked: bool = False, first: bytes | None = None
) -> LexemeResult:
    """The tokens ``inner`` reads on its own (packed, read-only) and, per state in which it may end with
    token bytes left, the continuations below those points merged into one trie (plus, when ``checked``,
    the ids of the tokens ending right there). Depends on ``inner`` only, so it is cached by its key and
    reused wherever the same scalar state recurs, whatever containers surround it; the full state then
    walks one small merged trie per end state instead of every end point."""
    walker = _LexemeWalk(vocabulary, checked)
    if not inner.can_end():
        compiled = compiled_lexeme(vocabulary, inner, checked, first)
        if compiled is not None:  # walked in C, with the same end points (core/lexeme_automaton.py)
            mask, walker.ends, frontier = compiled
            for node, state in frontier:  # where C stopped inside an escape: on in Python
                walker.enter(node, state)
            if walker.out or walker.masks:
                mask |= _packed(walker)
            mask.flags.writeable = False
            return mask, _end_groups(walker, checked)
    if first is None and not checked:
        compiled_terminal = compiled_below(vocabulary, inner, ((vocabulary.trie, None),))
        if compiled_terminal is not None:  # a terminal's automaton, walked in C from the root
            if inner.can_end():
                walker.ends.append((vocabulary.trie, inner))
            mask, ends = compiled_terminal
            walker.ends.extend(ends)
            mask.flags.writeable = False
            return mask, _end_groups(walker, checked)
    if first is not None:  # only the tokens starting with these bytes (see CharacterParser.first_char_split)
        trie = vocabulary.trie
        walker.walk({byte: trie[byte] for byte in first if byte in trie}, inner, b"")
    else:
        if inner.can_end():
            walker.ends.append((vocabulary.trie, inner))
        _collect(walker, inner, b"", False)
    mask = _packed(walker)
    mask.flags.writeable = False
    return mask, _end_groups(walker, checked)


def _end_groups(walker: _LexemeWalk, checked: bool) -> list[tuple[CharacterParser, list[int], Trie | Continuations]]:
    """A lexeme walk's end points grouped by end state: (state, ids decided there, continuations).

    A group of one end point whose children all go on is that vocabulary node itself, not a copy: its
    continuation walks are then cached by a node that every walk ending there shares (mostly the node of a
    token-initial quote: a key whose last letters end a token closes with ``":``, ``":"``, ``",``...,
    whichever position or schema it closes in). Otherwise the group's continuations are the edges of its
    end points that the inner value does not read (``Continuations``), merged into one trie when a Python
    walk needs them."""
    groups: dict = {}
    for node, state in walker.ends:
        group = groups.get(state.key())
        if group is None:
            group = groups[state.key()] = (state, [], [])
        group[2].append(_expanded(as_dict(node)))
    out = []
    for state, ids, nodes in groups.values():
        skip = state.allowed_characters().ascii
        if checked:
            for node in nodes:
                ids.extend(ids_at(node.get(IDS, ())))
        if len(nodes) == 1 and nodes[0].__class__ is dict and not _any_allowed(_child_bytes(nodes[0]), skip, False):
            if ids or len(nodes[0]) > (1 if IDS in nodes[0] else 0):
                out.append((state, ids, nodes[0]))
            continue
        read = _ascii_bytes(skip)
        sources = []
        for node in nodes:
            # what the inner value reads was walked
            taken = _child_bytes(node).translate(None, read)
            if taken:
                sources.append((node, taken))
        # ends with nothing past them (a number's every digit token, say) need no full-state walk: dropped
        if ids or sources:
            out.append((state, ids, Continuations(tuple(sources))))
    return out


class Continuations(FlatSources):
    """What the full state walks past one end state of a lexeme walk: the end points' trie nodes, each with
    the bytes of its edges the inner value does not read. The compiled core walks a terminal's lexeme below
    them node by node (``compiled_below``, which keeps where its walks start in the object); a Python walk
    merges them into one trie first (``trie``)."""

    __slots__ = ("_trie", "_first")

    def __init__(self, sources: tuple[tuple[Trie, bytes], ...]) -> None:
        super().__init__(sources)
        self._trie: Trie | None = None
        self._first: bytes | None = None

    def trie(self) -> Trie:
        """The continuations merged into one trie (vocabulary nodes shared until two meet), made once."""
        found = self._trie
        if found is None:
            found, owner = _MergedNode(), object()
            for node, taken in self.sources:
                for byte in taken:
                    _merge_child(found, byte, node[byte], owner)
            self._trie = found
        return found

    def first_bytes(self) -> bytes:
        """The bytes the continuations start with."""
        found = self._first
        if found is None:
            seen = set()
            for _, taken in self.sources:
                seen.update(taken)
            found = self._first = bytes(sorted(seen))
        return found


def trie_of(node: Trie | Continuations) -> Trie:
    """The trie below an end point of a lexeme result: a vocabulary node, or merged continuations."""
    return node.trie() if node.__class__ is Continuations else node  # type: ignore[union-attr,return-value]


def _first_bytes(node: Trie | Continuations) -> bytes:
    """The bytes the tokens below ``node`` start with (memoised per vocabulary node)."""
    if node.__class__ is Continuations:
        return node.first_bytes()  # type: ignore[union-attr]
    hit = _FIRST_BYTES.get(id(node))
    if hit is None or hit[0] is not node:
        if len(_FIRST_BYTES) >= _FIRST_BYTES_KEPT:
            _FIRST_BYTES.clear()
        hit = _FIRST_BYTES[id(node)] = (node, bytes(byte for byte in node if byte != IDS))  # type: ignore[union-attr]
    return hit[1]


def _child_bytes(node: Trie) -> bytes:
    """The bytes of the edges below a filled trie node, in its order (not memoised: an end point may be a
    node made for one walk, such as the root of a run table's exits)."""
    if IDS in node:
        keys = list(node)
        keys.remove(IDS)
        return bytes(keys)
    return bytes(node)


_ASCII_BYTES: dict[bytes, bytes] = {}
register_memo(_ASCII_BYTES.clear)


def _ascii_bytes(table: bytes) -> bytes:
    """The ASCII bytes an ASCII table (1 where allowed, see ``_any_allowed``) allows, to delete with
    ``bytes.translate`` (memoised: a few tables per grammar)."""
    found = _ASCII_BYTES.get(table)
    if found is None:
        if len(_ASCII_BYTES) >= 1 << 12:
            _ASCII_BYTES.clear()
        found = _ASCII_BYTES[table] = bytes(byte for byte in range(128) if table[byte])
    return found


def _any_allowed(first: bytes, ascii_ok: bytes, wide: bool) -> bool:
    """Whether a state allows one of ``first`` as a token's first byte: ``ascii_ok`` its ASCII table (1 where
    allowed), ``wide`` whether it allows some character beyond ASCII (a lead byte is then let through).
    One ``bytes.translate`` instead of a Python loop over the bytes."""
    return 1 in first.translate(ascii_ok + (_HIGH_ON if wide else _HIGH_OFF))


_HIGH_ON, _HIGH_OFF = b"\x01" * 128, b"\x00" * 128


def _width(node: Trie | Continuations) -> int:
    """How many children ``node`` has (for a trie node, counting the entry of its own tokens)."""
    return len(node.first_bytes()) if node.__class__ is Continuations else len(node)  # type: ignore[union-attr,arg-type]


class _MergedNode(dict):
    """A trie node copied where two merged subtrees meet (see ``_merge_child``). It lives only as long as its
    lexeme result, so it never gets a subtree table: those are keyed by node id, and a freed copy's id
    could be reused by another node. The vocabulary's own nodes (plain dicts) live as long as it does.

    A copy is filled one level at a time: until a walk reaches it (``_expanded``), it holds the ids of the
    tokens ending at it and, under ``_PENDING``, the subtrees it stands for. A walk reads a few children of
    a merged trie (those its state allows), so the copies below the others are never made."""

    __slots__ = ()


_PENDING = -2
"""The key of a merged copy not filled yet: ``[owner, subtree, ...]``, ``owner`` the token of the merged trie
that made it (only its own copies are changed in place; another trie's are copied where they meet)."""


def _merge_child(into: Trie, byte: int, child: Trie, owner: object) -> None:
    """Adds the subtree ``child`` under ``into[byte]``. Vocabulary nodes are shared until two meet; then
    the meeting node is a copy holding the ids of both and, until it is walked, the subtrees to merge below
    it (see ``_MergedNode``)."""
    current = into.get(byte)
    if current is None:
        into[byte] = child
        return
    pending = current.get(_PENDING) if current.__class__ is _MergedNode else None
    if pending is None or pending[0] is not owner:
        copy = _MergedNode()
        ids = as_dict(current).get(IDS)
        if ids is not None:
            copy[IDS] = ids
        pending = copy[_PENDING] = [owner]
        if current.__class__ is not int:
            pending.append(current)
        into[byte] = current = copy
    if child.__class__ is int:
        current[IDS] = (*ids_at(current.get(IDS, ())), child)
        return
    pending.append(child)
    ids = child.get(IDS)
    if ids is not None:
        current[IDS] = (*ids_at(current.get(IDS, ())), *ids_at(ids))


def _expanded(node: Trie) -> Trie:
    """``node`` with its children in place: a merged copy is filled one level on first use (``_MergedNode``)."""
    pending = node.pop(_PENDING, None) if node.__class__ is _MergedNode else None
    if pending is not None:
        owner = pending[0]
        for source in pending[1:]:
            for key, sub in _expanded(source).items():
                if key != IDS:
                    _merge_child(node, key, sub, owner)
    return node


def _cached_lexeme(
    vocabulary: Vocabulary, lexemes: dict, inner: CharacterParser, checked: bool, first: bytes | None
) -> LexemeResult:
    horizon = vocabulary.longest_token
    key = inner.shared_lexeme_key(horizon)
    if key is None:
        key = (inner.lexeme_key(horizon), checked, first)
    else:
        key, lexemes = (key, checked, first), vocabulary.lexeme_cache
    hit = lexemes.get(key)
    if hit is None:
        if lexemes.__class__ is dict and len(lexemes) >= _LEXEME_CACHE_SIZE:
            lexemes.clear()  # rare; rebuilt on demand (the vocabulary's budgeted cache evicts by its budget)
        hit = lexeme_result(vocabulary, inner, checked, first)
        _store(lexemes, key, hit, 120 + hit[0].nbytes + _groups_bytes(hit[1]))
    return hit


def _store(cache: dict | BudgetedCache, key: Hashable, value: object, size: int) -> None:
    """Puts ``value`` in ``cache``: a plain dict (an enforcer's own memo) or the vocabulary's budgeted cache,
    with its size given (the budget's generic estimate walks every object an entry holds, which cost more
    than a tenth of a teacher-forced pass at these inserts)."""
    if cache.__class__ is dict:
        cache[key] = value  # type: ignore[index]
    else:
        cache.put(key, value, size)  # type: ignore[union-attr]


def _groups_bytes(groups: list[tuple[CharacterParser, list[int], Trie]]) -> int:
    """About the bytes of a lexeme walk's end groups, counted as the budget counts them: a parser state
    each, the ids, and the merged copies of trie nodes (the vocabulary's own nodes are shared)."""
    total = 56 + 8 * len(groups)
    for _, ids, merged in groups:
        total += 64 + STATE_BYTES + 56 + 36 * len(ids) + _merged_bytes(merged)
    return total


def _merged_bytes(node: Trie) -> int:
    if node.__class__ is not _MergedNode:
        return 8  # a vocabulary node: shared
    total = 64 + 40 * len(node)
    for byte, child in node.items():
        if byte == IDS:
            total += 36 * len(ids_at(child))
        elif child.__class__ is _MergedNode:
            total += _merged_bytes(child)
    return total


def _resumed(walker: _Walk, lexeme: Lexeme, result: LexemeResult, memo: dict) -> np.ndarray:
    """Walks the full state from a lexeme result's end states into ``walker``; returns its inside mask."""
    _resume_groups(walker, lexeme, result[1], memo)
    return result[0]


def _resume_groups(walker: _Walk, lexeme: Lexeme, groups: list, memo: dict) -> None:
    """Walks the full state from the end states of a lexeme walk (see ``_end_groups``) into ``walker``.

    The walk past an end depends on the full state there and the merged trie only, and the full state past
    an end repeats (every position inside one string value resumes into the same container state once the
    string closes), so each is memoised in ``memo`` by (trie, state key)."""
    for inner, ids, merged in groups:
        outer = lexeme.resume(inner)
        if outer is None:
            continue  # the full state refuses the inner value ending here
        walker.out.extend(ids)
        key = ("resumed", id(merged), outer.key())
        hit = memo.get(key)
        if hit is None or hit[0] is not merged:  # (an id reused after the lexeme result was dropped)
            hit = memo[key] = (merged, *_walk_below(walker.vocabulary, merged, outer, memo))
        walker.out.extend(hit[1])
        walker.masks.extend(hit[2])


def _walk_below(
    vocabulary: Vocabulary, node: Trie | Continuations, state: CharacterParser, lexemes: dict
) -> tuple[list[int], list[np.ndarray]]:
    """The tokens below ``node`` (ids and masks; a trie node or a lexeme result's ``Continuations``) that
    ``state`` accepts, where ``state`` is a full state
    resumed past the end of an inner value. When its next characters go to an inner state of their own
    that reads at least one character (an object's colon and value after a key: ``":"``, ``":{"``), that
    inner state walks ``node`` alone, cached by its key and the node, and the full state resumes only where
    it ends: the continuation is then shared by every position that resumes into the same inner state,
    whatever keys the object has seen and whatever containers surround it. (The inner state must read a
    character before it may end, so each resumption is below a deeper node: the recursion ends.)"""
    lexeme = state.lexeme()
    if lexeme is not None and lexeme.finish is not None and lexeme.inner.can_end() and _refuses(lexeme.inner, node):
        # the inner value (a number) has ended: every token below goes on from the finished full state
        finished = lexeme.finish(lexeme.inner)
        return ([], []) if finished is None else _walk_below(vocabulary, node, finished, lexemes)
    sub = _Walk(vocabulary)
    if lexeme is None or lexeme.inner.can_end():
        branches = state.alternatives() if _width(node) > _WIDE else None
        if branches is not None:  # the union of the branches' walks, each from its own cached lexeme walks
            first = _first_bytes(node)
            for branch in branches:
                if _any_allowed(first, branch.allowed_characters().ascii, True):  # (else nothing below)
                    out, masks = _walk_below(vocabulary, node, branch, lexemes)
                    sub.out.extend(out)
                    sub.masks.extend(masks)
            return sub.out, sub.masks
        sub.walk(trie_of(node), state, b"")
        return sub.out, sub.masks
    inner, checked = lexeme.inner, lexeme.checked_ends
    horizon = vocabulary.longest_token
    # with an inner state alike across formats (a grammar's terminal, a plain string): shared by all; a merged
    # copy too (the entry holds it, so its id stays unique), as the copies of a shared lexeme result are shared
    shared = inner.shared_lexeme_key(horizon)
    cache = lexemes if shared is None else vocabulary.lexeme_cache
    key = ("below", id(node), inner.lexeme_key(horizon) if shared is None else shared, checked)
    hit = cache.get(key)
    if hit is None or hit[0] is not node:  # (holds ``node``: its id stays unique while cached)
        walker = _LexemeWalk(vocabulary, checked)
        compiled = None
        if not checked:
            sources = node if node.__class__ is Continuations else ((node, None),)
            compiled = compiled_below(vocabulary, inner, sources)  # type: ignore[arg-type]
        if compiled is None:
            walker.walk(trie_of(node), inner, b"")
        else:  # a terminal's automaton walked in C, with the points where it may end and tokens leave it
            mask, walker.ends = compiled
            mask.flags.writeable = False
            walker.masks.append(mask)
        if cache.__class__ is dict and len(cache) >= _LEXEME_CACHE_SIZE:
            cache.clear()
        hit = (node, walker.out, walker.masks, _end_groups(walker, checked))
        size = 64 + 36 * len(walker.out) + sum(120 + m.nbytes for m in walker.masks) + _groups_bytes(hit[3])
        _store(cache, key, hit, size)
    sub.out.extend(hit[1])
    sub.masks.extend(hit[2])
    _resume_groups(sub, lexeme, hit[3], lexemes)
    return sub.out, sub.masks


def _refuses(state: CharacterParser, node: Trie | Continuations) -> bool:
    """Whether ``state`` refuses the first byte of every token below ``node`` (a lead byte of a multi-byte
    character when it allows no character beyond ASCII)."""
    allowed = state.allowed_characters()
    ascii_ok = allowed.ascii
    wide = allowed.intervals and allowed.intervals[-1][1] >= 128
    return not _any_allowed(_first_bytes(node), ascii_ok, bool(wide))


def budgeted_mask(
    vocabulary: Vocabulary,
    state: CharacterParser,
    pending: bytes,
    at_start: bool,
    lexemes: dict | None,
    seconds: float | None,
    megabytes: float | None = None,
) -> np.ndarray:
    """``allowed_mask`` within ``seconds`` (None: no limit), else ``MaskTimeoutError``, and within
    ``megabytes`` (MiB) of growth of the process's resident memory (None: no limit), else
    ``MaskMemoryError``.

    The Python walk checks its budget at every trie node it enters (``_Walk.walk``), so it stops within one
    node's work of the deadline, or within a millisecond's allocation of the memory budget (the resident size
    is read at most once a millisecond, the first time a millisecond into the mask, and growth is counted
    from there); what it already cached stays exact (every cache entry is stored whole, once its walk has
    finished). The compiled walks run to their end: they are bounded by the vocabulary's size. The budget
    belongs to the thread, so the masks of a batch filled on a pool each have their own (the memory one is
    the process's, as the resident size is)."""
    if seconds is None and megabytes is None:
        return allowed_mask(vocabulary, state, pending, at_start, lexemes)
    previous: _MaskBudget | None = getattr(_budget, "budget", None)
    now = _monotonic()
    deadline = None if seconds is None else now + seconds
    memory = None
    if previous is not None:  # a mask within a mask: the tighter deadline, the outer memory budget
        if previous.deadline is not None:
            deadline = previous.deadline if deadline is None else min(deadline, previous.deadline)
        if previous.megabytes is not None:
            megabytes, memory = previous.megabytes, previous.memory
    first = None if megabytes is None else now + MEMORY_READ_SECONDS if memory is None else memory.next_read
    poll = first if deadline is None else deadline if first is None or deadline < first else first
    _budget.budget = _MaskBudget(deadline, megabytes, memory, poll)  # type: ignore[arg-type]
    try:
        return allowed_mask(vocabulary, state, pending, at_start, lexemes)
    finally:
        _budget.budget = previous


def allowed_mask(
    vocabulary: Vocabulary,
    state: CharacterParser,
    pending: bytes,
    at_start: bool,
    lexemes: dict | None = None,
) -> np.ndarray:
    """The packed mask (int32 words) of the tokens allowed from ``state``, EOS included when it may end.

    With a ``lexemes`` cache (a dict owned by the caller), a state whose next characters go to an inner
    string or number (``state.lexeme()``) is answered from that inner state's cached walk plus walks of the
    full state from the points where the inner value ends."""
    at_start = at_start and vocabulary.strip_leading_space  # only SentencePiece treats the first token apart
    lexeme = None if (lexemes is None or pending or at_start) else walk_lexeme(state)
    if lexeme is None and lexemes is not None and not pending and not at_start:
        branches = state.alternatives()
        if branches is not None:  # the OR of the branches' masks, each from its own cached walks
            walker = _Walk(vocabulary)
            for branch in branches:
                part = walk_lexeme(branch)
                if part is None:
                    walker.masks.append(allowed_mask(vocabulary, branch, b"", False, lexemes))
                else:  # its parts go into the one row made here (no row per branch, nor an OR per branch)
                    _lexeme_parts(walker, branch, part, lexemes)
            return _packed(walker)
        split = state.first_char_split()
        if split is not None:
            return _split_mask(vocabulary, state, split, lexemes)
    walker = _Walk(vocabulary)
    if lexeme is None:
        mask = compiled_mask(vocabulary, state, pending, at_start)
        if mask is None:
            _collect(walker, state, pending, at_start)
            mask = _packed(walker)
    else:
        # the walk's ids and rows, the inside row and end-of-sequence: one new row (the parts are cached)
        _lexeme_parts(walker, state, lexeme, lexemes)  # type: ignore[arg-type]
        return _packed(walker)
    if not pending and state.can_end():
        mask |= vocabulary.eos_mask
    return mask


def _lexeme_parts(walker: _Walk, state: CharacterParser, lexeme: Lexeme, lexemes: dict) -> None:
    """Adds to ``walker`` the ids and rows of the mask of ``state`` answered by its ``lexeme``: the inner
    state's cached walk (its inside row), the full state's walks from where the inner value ends, and
    end-of-sequence where the state may end."""
    vocabulary = walker.vocabulary
    inner, checked = lexeme.inner, lexeme.checked_ends
    split = inner.first_char_split()
    if split is None:
        inside = _resumed(walker, lexeme, _cached_lexeme(vocabulary, lexemes, inner, checked, None), lexemes)
    else:
        # tokens off the exception bytes: the twin's cached walk, cut to tokens not starting with them
        twin, exceptions = split
        others = _Walk(vocabulary)
        outside = _resumed(others, lexeme, _cached_lexeme(vocabulary, lexemes, twin, checked, None), lexemes)
        outside = (_packed(others) | outside) & ~vocabulary.first_bytes_mask(exceptions)
        inside = _resumed(walker, lexeme, _cached_lexeme(vocabulary, lexemes, inner, checked, exceptions), lexemes)
        walker.masks.append(outside)
    walker.masks.append(inside)
    if state.can_end():
        walker.masks.append(vocabulary.eos_mask)


def _split_mask(
    vocabulary: Vocabulary, state: CharacterParser, split: tuple[CharacterParser, bytes], lexemes: dict
) -> np.ndarray:
    """The mask of a state with a first-character split and no lexeme (see ``first_char_split``): the
    twin's mask cut to the tokens not starting with an exception byte, plus a walk of the tokens that do
    from the state itself; end-of-sequence as the state itself decides."""
    twin, exceptions = split
    mask = allowed_mask(vocabulary, twin, b"", False, lexemes) & ~vocabulary.first_bytes_mask(exceptions)
    walker = _Walk(vocabulary)
    trie = vocabulary.trie
    walker.walk({byte: trie[byte] for byte in exceptions if byte in trie}, state, b"")
    mask |= _packed(walker)
    if state.can_end():
        mask |= vocabulary.eos_mask
    elif twin.can_end():
        mask &= ~vocabulary.eos_mask
    return mask


def advance(state: CharacterParser, pending: bytes, data: bytes) -> tuple[CharacterParser, bytes] | None:
    """Feeds the bytes of one token to ``state``; returns the new (state, pending bytes), or None if refused.

    A token of whole characters (the usual case) is read as text (``add_text``, where parsers fold several
    characters at once); it needs no check of its bytes as they come: a character ``add_character`` accepts
    is in ``allowed_characters``, so every prefix of its bytes is too."""
    if not pending:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            pass  # a character split across tokens (or bytes no text has): byte by byte below
        else:
            after = state.add_text(text)
            return None if after is None else (after, b"")
    for byte in data:
        if pending:
            pending += _BYTE[byte]
            if not 0x80 <= byte <= 0xBF:
                return None
            if len(pending) < _LENGTH[pending[0]]:
                if not state.allowed_characters().allows_utf8_prefix(pending):
                    return None
                continue
            try:
                ch = pending.decode("utf-8")
            except UnicodeDecodeError:
                return None
            pending = b""
        elif byte < 128:
            ch = _CHR[byte]
        else:
            if _LENGTH[byte] < 2 or not state.allowed_characters().allows_utf8_prefix(_BYTE[byte]):
                return None
            pending = _BYTE[byte]
            continue
        nxt = state.add_character(ch)
        if nxt is None:
            return None
        state = nxt
    return state, pending
