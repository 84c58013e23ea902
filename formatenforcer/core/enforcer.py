"""TokenEnforcer: one per (vocabulary, format). Answers "which tokens may come next" and makes matchers.

Objects by lifetime: the Vocabulary is per tokenizer, the TokenEnforcer per format, and a Matcher per sequence.
The result caches belong to the (vocabulary, parser object) pair, not to one enforcer: every TokenEnforcer made
for the same JsonSchemaParser or RegexParser object shares them for as long as that object lives, so a server
or a script that makes an enforcer per request from one compiled schema pays each first walk once.

Masks are cached by ``(parser state key, pending bytes, at start)`` in a bounded least-recently-used cache,
so a state seen before costs one dict look-up. A state from which no token can continue (a dead end) never
yields an empty mask: end-of-sequence is allowed instead and a warning names the state.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from .bitmask import ids_of
from .budget import checked_megabytes, checked_seconds
from .cache_release import track
from .compiled_walk import machine_mask
from .errors import FormatError
from .machine import MachineState
from .matcher import Matcher, log_fallback
from .position import Position
from .protocol import CharacterParser
from .vocabulary import Vocabulary, pack_ids
from .walk import advance, budgeted_mask

logger = logging.getLogger("formatenforcer")


@dataclass(frozen=True)
class EnforcerConfig:
    """Settings of a TokenEnforcer, each with its cost.

    cache_size: masks kept per parser object (least recently used evicted); each costs ``vocab/8`` bytes
        (16 KB for a 128k vocabulary), so the default 2048 bounds the cache near 32 MB. As many positions
        are kept, with the tokens already taken from each (a revisited token costs a look-up).
    mask_seconds: the most one mask may take to compute (None: no limit). Past it the walk stops with
        ``MaskTimeoutError``: the matcher that asked enters its error state (end-of-sequence only, the error
        logged once), and ``allowed_tokens`` answers end-of-sequence for that call. A mask normally takes
        microseconds to tens of milliseconds, and the costliest first walks seen (an IDN hostname's
        63-letter label) about 1.5 CPU-seconds; the budget is wall time, so the default leaves room for a
        machine loaded tenfold, and still stops a hostile format.
    mask_megabytes: the most the process's resident memory may grow while one mask is computed (MiB; None:
        no limit). Past it the walk stops with ``MaskMemoryError``, handled as ``MaskTimeoutError`` is. A
        mask in progress holds a few rows of the vocabulary's width and the walks it caches, which count
        against the vocabulary's budget (``Vocabulary(cache_bytes=...)``, 256 MiB by default), so the
        default stops only a walk gone wild. The resident size is read at most once a millisecond, from the
        mask's first millisecond on (a mask of microseconds never reads it): a guard, not an account.
    """

    cache_size: int = 2048
    mask_seconds: float | None = 60.0
    mask_megabytes: float | None = 1024.0

    def __post_init__(self) -> None:
        size, seconds = self.cache_size, self.mask_seconds
        if isinstance(size, bool) or not isinstance(size, int):
            raise TypeError(f"EnforcerConfig.cache_size must be an int, not {type(size).__name__}: {size!r}")
        if size < 1:
            raise ValueError(f"EnforcerConfig.cache_size must be at least 1, not {size}")
        checked_seconds(seconds, "EnforcerConfig.mask_seconds")
        checked_megabytes(self.mask_megabytes, "EnforcerConfig.mask_megabytes")


_DEFAULT_CONFIG = EnforcerConfig()
"""The settings of an enforcer given none (frozen: one object serves every enforcer)."""


class TokenEnforcer:
    """Allowed next tokens for ``parser``'s format over ``vocabulary``."""

    def __init__(self, vocabulary: Vocabulary, parser: CharacterParser, config: EnforcerConfig | None = None):
        if not isinstance(vocabulary, Vocabulary):
            raise FormatError(f"vocabulary must be a formatenforcer.Vocabulary, not {type(vocabulary).__name__}")
        if not isinstance(parser, CharacterParser):
            raise FormatError(f"parser must be a CharacterParser, not {type(parser).__name__}")
        self.vocabulary = vocabulary
        self.parser = parser
        self.config = config or _DEFAULT_CONFIG
        track(self)  # live until collected: the end of a burst frees what only dropped ones used (cache_release)
        caches = _shared_caches(vocabulary, parser)
        self._cache: OrderedDict[Hashable, np.ndarray] = caches.masks
        self._lexemes: dict[Hashable, object] = caches.lexemes  # inner string/number walks, see walk.allowed_mask
        self._lock = caches.lock
        self._positions = caches.positions
        self._forced: dict[Hashable, str] = caches.forced  # forced text by state key (forced.py)
        # not in the shared positions: they must not hold the parser itself; a format the compiled machine
        # covers starts from its twin there (core/machine.py), which accepts exactly the same texts
        self._start = Position(parser.compiled_twin() or parser)
        self._root = _PrefixNode(self._start)
        self._finished_mask = vocabulary.eos_mask if vocabulary.eos_token_ids else pack_ids((), vocabulary.size)

    # --- masks -------------------------------------------------------------------------------------------
    def mask(self, position: Position) -> np.ndarray:
        """The packed, read-only mask of tokens allowed at ``position``."""
        known = position.mask
        if known is not None:
            return known
        if position.finished:
            return self._finished_mask
        position.mask = mask = self._mask(position)
        return mask

    def _mask(self, position: Position) -> np.ndarray:
        key = position.cache_key()
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
                return hit
        state = position.state
        found = None
        if type(state) is MachineState:  # a format on the compiled JSON machine: one call into C
            found = machine_mask(self.vocabulary, state, position.pending, position.at_start)
        if found is not None:
            mask, some = found
        else:
            mask = budgeted_mask(self.vocabulary, state, position.pending, position.at_start, self._lexemes,
                                 self.config.mask_seconds, self.config.mask_megabytes)  # fmt: skip
            some = bool(np.count_nonzero(mask))  # (a fixed C loop; ndarray.any() goes through a ufunc reduction)
        if not some:
            logger.warning(
                "formatenforcer: no token can continue the format from parser state %r (pending bytes %r); "
                "allowing end-of-sequence so generation stops instead of failing",
                position.state,
                position.pending,
            )
            mask = self.vocabulary.eos_mask.copy()
        mask.flags.writeable = False
        with self._lock:
            self._cache[key] = mask
            if len(self._cache) > self.config.cache_size:
                self._cache.popitem(last=False)
        return mask

    def step(self, position: Position, token_id: int) -> Position | None:
        """The position after ``token_id``, or None if the format refuses it there."""
        nexts = position.next
        known = nexts.get(token_id, _UNKNOWN)
        if known is not _UNKNOWN:
            return known  # type: ignore[return-value]
        moved = self._step(position, token_id)
        nexts[token_id] = moved
        return moved

    def _canonical(self, state: CharacterParser, pending: bytes, at_start: bool, finished: bool) -> Position:
        """The one position object kept for this place (least recently used evicted, its memos cleared so
        that it holds on to nothing), so that memos made from one sequence serve the next. The place's key is
        computed before any position is made: a place seen before makes none."""
        key = (state.key(), pending, at_start)
        place = (key, finished)  # (``Position.place``)
        positions = self._positions
        with self._lock:
            kept = positions.get(place)
            if kept is not None:
                positions.move_to_end(place)
                return kept
            position = positions[place] = Position(state, pending, at_start, finished, key)
            if len(positions) > self.config.cache_size:
                _, evicted = positions.popitem(last=False)
                evicted.next = {}
        return position

    def _step(self, position: Position, token_id: int) -> Position | None:
        """The canonical position after ``token_id`` (see ``step``), or None."""
        moved = self._moved(position, token_id)
        return None if moved is None else self._canonical(*moved)

    def _moved(self, position: Position, token_id: int) -> tuple[CharacterParser, bytes, bool, bool] | None:
        """(state, pending bytes, at start, finished) after ``token_id``, or None if the format refuses it:
        the step itself, before any position is kept for it."""
        if position.finished:
            return None
        vocabulary = self.vocabulary
        if token_id in vocabulary.eos_token_ids:
            if position.pending or not position.state.can_end():
                return None
            return position.state, b"", False, True
        token_bytes = vocabulary.token_bytes  # (``Vocabulary.text_of``, without its call)
        data = token_bytes[token_id] if 0 <= token_id < len(token_bytes) else None
        if not data:
            return None
        if position.at_start and vocabulary.strip_leading_space and data[:1] == b" ":
            data = data[1:]
            if not data:  # a lone "▁" first: it adds no text, and the next token keeps its space
                return position.state, b"", False, False
        state = position.state
        if type(state) is MachineState and not position.pending:
            after = state.add_bytes(data)  # (whole characters: one call into C)
            if after is not False:
                return (after, b"", False, False) if after is not None else None
        moved = advance(state, position.pending, data)
        if moved is None:
            return None
        return moved[0], moved[1], False, False

    # --- prefix-keyed use (Hugging Face prefix_allowed_tokens_fn) ----------------------------------------
    def allowed_tokens(self, token_ids: Sequence[int]) -> list[int]:
        """Allowed next ids after the generated ``token_ids`` (prompt excluded). Never empty, and never raises
        because of the format: an internal error (see ``Matcher``'s error state) is logged and answered with
        end-of-sequence alone."""
        try:
            position = self.position_after(token_ids)
            if position is not None:
                return ids_of(self.mask(position))
        except Exception as error:  # noqa: BLE001 - never into the engine's loop
            log_fallback(error)
            return list(self.vocabulary.eos_token_ids) or [0]
        logger.warning(
            "formatenforcer: the generated tokens %r left the format; allowing only end-of-sequence",
            list(token_ids)[-8:],
        )
        return list(self.vocabulary.eos_token_ids) or [0]

    def position_after(self, token_ids: Sequence[int]) -> Position | None:
        """The position after ``token_ids``, or None if some token was refused. Positions are memoised in a
        tree of prefixes (memory grows with the tokens generated, not with their square)."""
        node = self._root
        for token in token_ids:
            if node.position is None:
                return None
            child = node.children.get(token)
            if child is None:
                parent = node.position
                position = parent if parent.finished else self.step(parent, int(token))
                child = node.children[token] = _PrefixNode(position)
            node = child
        return node.position

    def reset(self) -> None:
        """Forgets the prefix memo (start of a new generation); the mask cache is kept."""
        self._root = _PrefixNode(self._start)

    # --- per-sequence use ----------------------------------------------------------------------------------
    @property
    def start(self) -> Position:
        """The position before any token."""
        return self._start

    def matcher(self) -> Matcher:
        """A new stateful matcher at the start of the format."""
        return Matcher(self)


_UNKNOWN = object()


class _Caches:
    """What a TokenEnforcer caches: masks by position key and one position object per place (least
    recently used first; see position.py), the walks of inner values (walk.allowed_mask), the forced text
    by state key (forced.py) and the lock that guards them. Keys hold ``id()``s of the parser's compiled
    parts, so a cache is only valid while its parser object lives."""

    __slots__ = ("masks", "positions", "lexemes", "lock", "forced")

    def __init__(self) -> None:
        self.masks: OrderedDict[Hashable, np.ndarray] = OrderedDict()
        self.positions: OrderedDict[Hashable, Position] = OrderedDict()
        self.lexemes: dict[Hashable, object] = {}
        self.lock = threading.Lock()
        self.forced: dict[Hashable, str] = {}


def _shared_caches(vocabulary: Vocabulary, parser: CharacterParser) -> _Caches:
    """The caches of ``parser`` over ``vocabulary``, shared with every other enforcer of the same parser
    object and dropped with it (a weak reference); a parser that cannot be weakly referenced (a state
    in the middle of a format) gets caches of its own."""
    try:
        with vocabulary._lock:
            caches = vocabulary.format_caches.get(parser)
            if caches is None:
                caches = vocabulary.format_caches[parser] = _Caches()
        return caches
    except TypeError:
        return _Caches()


class _PrefixNode:
    __slots__ = ("position", "children")

    def __init__(self, position: Position | None) -> None:
        self.position = position
        self.children: dict[int, _PrefixNode] = {}
