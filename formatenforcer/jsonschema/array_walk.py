"""The array state's walk hooks (core/hooks.py): how the token walk may take an array's next characters in
bigger steps than one character, without changing which tokens are allowed.

- ``free_run``: flexible whitespace between tokens, and runs its item promises, passed through;
- ``lexeme``: an item's start after ``[`` or a comma (``SpacedValue``), and the item's own lexeme;
- ``alternatives`` and ``first_char_split``: the item's, put back in the array.

``ArrayParser`` (arrays.py) inherits these; they read its fields and build its states, and say nothing of
what JSON allows, which arrays.py decides.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

from ..core.hooks import FreeRun, Lexeme, nested_alternatives, nested_first_char_split, nested_lexeme
from ..core.protocol import CharacterParser
from .after_value import after_value_lexeme
from .array_phases import AFTER, FIRST, NEXT, VALUE
from .partial_item import PartialItem, first_char
from .spaced import SpacedValue
from .strings import StringParser
from .whitespace import JSON_WHITESPACE


def _not_a_key() -> None:
    """``reads_key`` of a state that has none: it is not reading a key."""
    return None


class UnknownTracker:
    """A ``contains`` tracker's stand-in after a run inside a key whose text it keeps, under ``maxContains``
    (see ``ArrayWalkHooks._tracked_run``): it does not know whether the item will match, so it takes every
    character and the item refuses to end while it rides along (``ArrayParser._finish_item``). Whether the
    item matches decides only the count at its end (the tracker never refuses the item a character), so the
    states it stands in accept everything the real ones do except the item's end: a subset, never an item
    the cap forbids. Only a walk's state past a run holds one; a step never does."""

    __slots__ = ()

    def add_character(self, ch: str) -> UnknownTracker:
        return self

    def key(self) -> Hashable:
        return ("unknown contains tracker",)

    def __repr__(self) -> str:
        return "<unknown contains tracker>"


UNKNOWN_TRACKER = UnknownTracker()


def _stays_unknown(n: int) -> UnknownTracker:
    """The run of a tracker already unknown: unknown after any characters."""
    return UNKNOWN_TRACKER


def _unknown_after(tracker: CharacterParser) -> Callable[[int], object]:
    """The run of a capped tracker whose key run is a stand-in: itself after no character, unknown after any."""
    return lambda n: UNKNOWN_TRACKER if n else tracker


def holds_unknown(tracker: object) -> bool:
    """Whether an item's tracker (or one of its trackers, under several ``contains``) is the stand-in."""
    if isinstance(tracker, tuple):
        return any(t is UNKNOWN_TRACKER for t in tracker)
    return tracker is UNKNOWN_TRACKER


class ArrayWalkHooks:
    """The walk hooks of ``ArrayParser`` (a mixin: no fields of its own)."""

    __slots__ = ()

    def free_run(self) -> FreeRun | None:
        """The item's run, passed through (not with a contains tracker riding along). Under uniqueItems the
        run's characters are not known to ``after(n)``, so its stand-in carries the item's text with a gap
        (``PartialItem``, see partial_item.py), which finishes the item and records it as seen exactly."""
        state = type(self)
        if self._phase in (FIRST, AFTER, NEXT):
            return self._whitespace_run()
        if self._phase != VALUE:
            return None
        inner = self._child.free_run()
        if inner is None:
            return None
        if self._tracker is not None:
            return self._tracked_run(inner)
        ctx, index, extra, after, text = self._ctx, self._index, self._extra, inner.after, self._text
        if not ctx.unique:
            return FreeRun(inner.chars, inner.max_length, lambda n: state(ctx, VALUE, index, 0, after(n), extra))
        if ctx.guard is not None and self._is_live():
            return None  # every character is checked while the item may still repeat a seen one
        if first_char(text) in ("[", "{") and (
            inner.chars == JSON_WHITESPACE
            or (inner.chars.size() <= 10 and any(first_char(seen) in ("[", "{") for seen in extra[1]))
        ):
            # whitespace inside a compound item is followed by its closing bracket (" },"), and a compound
            # item whose run is a number's digits cannot be compared with the compound items seen: walked
            # from real states instead (a string's run can: PartialItem._compound_may_equal)
            return None
        chars = inner.chars

        def stand_in(n: int) -> CharacterParser:
            item = PartialItem.after_run(text, n, chars) if n else text
            return state(ctx, VALUE, index, 0, after(n), extra, None, item)

        return FreeRun(inner.chars, inner.max_length, stand_in)

    def _tracked_run(self, inner: FreeRun) -> FreeRun | None:
        """The item's run with its ``contains`` trackers riding along (one, or one per ``contains`` when there
        are several; a tracker already gone stays gone): over the characters every run takes, a tracker reads
        ``n`` of them as its run says, and past its run's bound it has refused one, so it is gone (None: the
        item no longer matches that ``contains``), as ``add_character`` leaves it. The other characters of the
        item's run are exits, walked from the state after the run. Without this a string or key inside an
        item under a tracker was walked over the whole vocabulary, character by character (seconds a mask;
        half a minute under two ``contains``).

        A tracker rides along where its run is exact: it reads a string value (a ``StringParser``, or a stack
        whose top is one) or a key whose text is not kept (``reads_key``). A tracker reading a key whose run
        is a stand-in (its text is kept: ``patternProperties``, ``minProperties``; see ``KeyContent.free``)
        rides along too. A stand-in may refuse what the real tracker takes, which leaves the item one match
        short; without a cap a missing match only takes tokens away, so the mask stays a subset of the step's,
        as a stand-in may leave it, and only in a token that, after its run inside the key, also closes the
        key, writes the value and ends the item (where the match is counted). Under ``maxContains`` a missing
        match could allow an item the cap forbids, so there the tracker becomes ``UNKNOWN_TRACKER`` after a
        run of one character or more: the item may not end within that token (the same tokens at most are
        left out, and never one the step refuses is let in). A tracker already unknown stays unknown."""
        if self._ctx.unique:
            return None
        several = isinstance(self._tracker, tuple)
        trackers = self._tracker if several else (self._tracker,)
        chars = inner.chars
        capped = self._ctx.node.max_contains is not None  # (only the first ``contains`` may have a maximum)
        ridden: list[tuple[Callable[[int], object], int | None] | None] = []
        for position, tracker in enumerate(trackers):
            if tracker is None:
                ridden.append(None)
                continue
            if tracker is UNKNOWN_TRACKER:
                ridden.append((_stays_unknown, None))  # (it takes any character: no bound, no class)
                continue
            exact = True
            if type(tracker) is not StringParser and not getattr(tracker, "reads_string_value", bool)():
                exact = getattr(tracker, "reads_key", _not_a_key)()
                if exact is None:
                    return None
            own = tracker.free_run()
            if own is None:
                return None
            if exact or not capped or position:
                ridden.append((own.after, own.max_length))
            else:
                ridden.append((_unknown_after(tracker), own.max_length))
            chars = chars & own.chars
        if not chars.intervals:
            return None
        state = type(self)
        ctx, index, extra, after = self._ctx, self._index, self._extra, inner.after

        def tracked(n: int) -> object:
            out = tuple(None if run is None or (run[1] is not None and n > run[1]) else run[0](n) for run in ridden)
            return out if several else out[0]

        def stand_in(n: int) -> CharacterParser:
            return state(ctx, VALUE, index, 0, after(n), extra, tracked(n))

        return FreeRun(chars, inner.max_length, stand_in, inner.ends_inside)

    def _whitespace_run(self) -> FreeRun | None:
        """Flexible whitespace between tokens: a bounded run (see ObjectParser._whitespace_run)."""
        state = type(self)
        ctx, phase, index, ws, extra = self._ctx, self._phase, self._index, self._ws, self._extra
        room = ctx.ws.room(ws)
        if not room:
            return None
        return FreeRun(JSON_WHITESPACE, room, lambda n: state(ctx, phase, index, ws + n, None, extra))

    def lexeme(self) -> Lexeme | None:
        state = type(self)
        # not when a contains tracker or a unique item's text must see every character
        if self._phase == NEXT and self._ctx.tracker() is None and not self._ctx.unique:
            return self._item_start_lexeme()
        if self._phase == AFTER:
            return self._after_value_lexeme(self, self._ws)
        if self._phase != VALUE:
            return None
        child = self._child
        if child.can_end() and not child.allowed_characters():  # a closed string or container
            after = self._finish_item()
            return None if after is None else self._after_value_lexeme(after, 0)
        if self._tracker is not None or self._ctx.unique:
            return None
        ctx, index, extra = self._ctx, self._index, self._extra
        return nested_lexeme(
            child,
            lambda c: state(ctx, VALUE, index, 0, c, extra),
            lambda c: state(ctx, VALUE, index, 0, c, extra)._finish_item(),
        )

    def alternatives(self) -> tuple[CharacterParser, ...] | None:
        state = type(self)
        # as for objects: an item over a union is the union of the arrays over each branch
        if self._phase != VALUE or self._ctx.guard is not None:
            return None  # (under the guard the item is judged whole: its search is not split by branch)
        ctx, index, extra, tracker, text = self._ctx, self._index, self._extra, self._tracker, self._text
        return nested_alternatives(self._child, lambda c: state(ctx, VALUE, index, 0, c, extra, tracker, text))

    def first_char_split(self) -> tuple[CharacterParser, bytes] | None:
        """The item's split, passed through. This is what makes a uniqueItems array of strings cheap: a new
        item excludes the earlier ones, so its string is not a free run until it leaves all of them, and a
        walk from its start would enter every first character of the vocabulary on its own (1,600 subtree
        tables, ~50 ms per item). Its twin has already left them, so its mask is one shared free-run table;
        only tokens starting with an earlier item's first letter (or a quote, a backslash) are walked here."""
        state = type(self)
        if self._phase != VALUE or self._tracker is not None or self._ctx.guard is not None:
            return None  # (the twin's text would lack the character the guard reads)
        ctx, index, extra, text = self._ctx, self._index, self._extra, self._text
        return nested_first_char_split(self._child, lambda c: state(ctx, VALUE, index, 0, c, extra, None, text))

    def _after_value_lexeme(self, after: CharacterParser, run: int) -> Lexeme:
        """After an item (``after``: the state in AFTER), whitespace then ``,`` or ``]`` alone (after_value.py)."""
        state = type(self)
        ctx, index, extra = after._ctx, after._index, after._extra
        comma = after._can_add_item(index)
        closer = "]" if after._closable(index) else None
        return after_value_lexeme(ctx.ws, run, comma, closer, lambda n: state(ctx, AFTER, index, n, None, extra))

    def _item_start_lexeme(self) -> Lexeme | None:
        """After ``,``, the whitespace and the next item's start alone (see spaced.py)."""
        state = type(self)
        ctx, index, extra = self._ctx, self._index, self._extra
        if ctx.max_items is not None and index >= ctx.max_items:
            return None
        start, _ = ctx.item_start(index, *extra)
        if start is None:
            return None

        def resume(inner: CharacterParser) -> CharacterParser:
            if isinstance(inner, SpacedValue):
                return state(ctx, NEXT, index, inner.run, None, extra)
            return state(ctx, VALUE, index, 0, inner, extra)

        return Lexeme(SpacedValue(ctx.ws, self._ws, start), resume)
