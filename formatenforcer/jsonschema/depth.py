"""Nesting without recursion, and the nesting limit (``JsonConfig.max_depth``).

An array or object state holds the state of the value it is reading, so a document nested ``d`` levels deep
is a chain of ``d`` container states, and every step, mask or key would recurse ``d`` times. ``Deep`` keeps
that chain as a stack instead: ``top`` is the innermost state and ``frame`` a linked list of the containers
around it, each a *transparent* container (an object, or an array with neither ``uniqueItems`` nor a
``contains`` tracker: while its value is open it only passes characters to it). Such a container's state is
its value's state put back in place (``_plug``), so the stack stands for exactly the nested chain, and it is
taken one level at a time: a character goes to ``top`` alone, and only when ``top`` refuses it while it may
end is ``top`` put back into the innermost frame for that one step. Keys are flat: frames are interned per
document (equal stacks are the same object), so a key holds the frame itself, hashed and compared by
identity.

The limit: ``max_depth`` arrays and objects may be open at once. A character that would open one more is
refused by ``add_character`` and left out of ``allowed_characters``, so the mask and the step agree. The walk
shortcuts pass through (their states put back on the stack) except, within ``_GUARD`` levels of the limit,
a lexeme whose inner state can open a container (a value's start): that walk is cached without the stack,
so there the walk steps this state character by character instead. Exact for tokens holding fewer than
``_GUARD`` opening brackets (the vocabularies here hold at most a few dozen). Within ``_GUARD`` levels of
the limit, too, the top of the stack is read in the room it has left (``fitted``, depth_room.py): no key,
item or union branch is offered whose value needs more levels than remain, so no value is started that
could not close.

An array that is not transparent stays a state of its own, but its item and its ``contains`` trackers
become stacks of their own, ``base`` levels down (``settle``), so a deep item costs no recursion either. Not
split, so still nested (and recursive): a union of containers that are all still open (``anyOf`` of two
array schemas). The depth it adds still counts.
"""

from __future__ import annotations

import weakref
from collections.abc import Hashable

from ..core.charset import CharSet
from ..core.hooks import FreeRun, Lexeme, nested_alternatives, nested_first_char_split, nested_lexeme
from ..core.protocol import CharacterParser
from ..parsers.combinators import UnionParser
from . import array_phases as ap
from . import object_phases as op
from .arrays import ArrayParser
from .depth_room import fit
from .objects import ObjectParser

_GUARD = 128
_OPENERS = CharSet.of("[") | CharSet.of("{")


class _Frame:
    """One open transparent container: ``template`` is its state with no value (``_plug`` puts one in),
    ``up`` the frame around it, ``depth`` the containers open down to and including this one."""

    __slots__ = ("template", "up", "depth", "__weakref__")

    def __init__(self, template: CharacterParser, up: _Frame | None) -> None:
        self.template, self.up = template, up
        self.depth = 1 if up is None else up.depth + 1


class DepthLimit:
    """Per document: the limit and the table that interns frames (weakly: a frame lives as long as a state or
    a cache key holds it)."""

    def __init__(self, max_depth: int) -> None:
        self.max_depth = max_depth
        self._frames: weakref.WeakValueDictionary[tuple, _Frame] = weakref.WeakValueDictionary()

    def frame(self, template: CharacterParser, up: _Frame | None) -> _Frame:
        ident = (template.key(), up)
        hit = self._frames.get(ident)
        if hit is None:
            hit = self._frames[ident] = _Frame(template, up)
        return hit

    def wrap(self, state: CharacterParser) -> CharacterParser:
        """The document's first state under the limit."""
        return settle(self, state, None)


def _split(state: CharacterParser) -> tuple[CharacterParser, CharacterParser] | None:
    """(template, value) of a transparent container reading a value, else None."""
    kind = type(state)
    if kind is ObjectParser:
        if state._phase == op.VALUE:
            return ObjectParser(state._ctx, op.VALUE, state._seen, state._extras, 0, None, state._pending), state._child
        return None
    if kind is ArrayParser:
        if state._phase == ap.VALUE and state._tracker is None and not state._ctx.unique:
            return ArrayParser(state._ctx, ap.VALUE, state._index, 0, None, state._extra), state._child
    return None


def _plug(template: CharacterParser, value: CharacterParser) -> CharacterParser:
    if type(template) is ObjectParser:
        return ObjectParser(template._ctx, op.VALUE, template._seen, template._extras, 0, value, template._pending)
    return ArrayParser(template._ctx, ap.VALUE, template._index, 0, value, template._extra)


_PHASES = {ArrayParser: ap, ObjectParser: op}
"""A container's phase constants by its class (both have OPEN, VALUE and DONE)."""


def open_depth(state: CharacterParser) -> int:
    """The arrays and objects open in ``state`` itself (not counting frames), without recursion. The
    branches of a union have read the same text, so the first one tells."""
    depth = 0
    while True:
        kind = type(state)
        phases = _PHASES.get(kind)
        if phases is not None:
            phase = state._phase
            if phase == phases.OPEN or phase == phases.DONE:
                return depth
            depth += 1
            if phase != phases.VALUE:
                return depth
            state = state._child
        elif kind is UnionParser:
            state = state._alternatives[0]
        elif kind is Deep:
            return depth + state.depth() - state._base
        else:
            return depth


def settle(limit: DepthLimit, state: CharacterParser, frame: _Frame | None, base: int = 0) -> CharacterParser:
    """``state`` (read inside ``frame``, ``base`` levels down) as a stack: every transparent container it
    opens becomes a frame. An array that is not transparent (``uniqueItems``, a ``contains`` tracker) stays
    a state of its own, but its item and trackers become stacks of their own, a level further down."""
    while True:
        split = _split(state)
        if split is None:
            break
        frame = limit.frame(split[0], frame)
        state = split[1]
    if type(state) is ArrayParser and state._phase == ap.VALUE and type(state._child) is not Deep:
        state = _stacked_item(limit, state, base + (0 if frame is None else frame.depth) + 1)
    if frame is None and state.SCALAR_LEXEME:
        return state  # a scalar value opens nothing
    return Deep(limit, state, frame, base)


def _stacked_item(limit: DepthLimit, state: ArrayParser, base: int) -> ArrayParser:
    """``state`` with its item and its trackers read as stacks ``base`` levels down (they read the same text,
    so a deep item costs no recursion in them either)."""
    tracker = state._tracker
    if isinstance(tracker, tuple):
        tracker = tuple(None if t is None else settle(limit, t, None, base) for t in tracker)
    elif tracker is not None:
        tracker = settle(limit, tracker, None, base)
    child = settle(limit, state._child, None, base)
    return ArrayParser(state._ctx, ap.VALUE, state._index, 0, child, state._extra, tracker, state._text)


class Deep(CharacterParser):
    """The state ``top`` inside the open containers ``frame`` (see the module docstring)."""

    __slots__ = ("_limit", "_top", "_frame", "_base", "_allowed", "_key")

    def __init__(self, limit: DepthLimit, top: CharacterParser, frame: _Frame | None, base: int = 0) -> None:
        self._limit, self._top, self._frame, self._base = limit, top, frame, base
        self._allowed: CharSet | None = None
        self._key: Hashable | None = None

    def depth(self) -> int:
        """Arrays and objects open here."""
        return self._base + (0 if self._frame is None else self._frame.depth) + open_depth(self._top)

    def _local(self) -> tuple[CharacterParser, _Frame | None]:
        """``top`` put back into the innermost frame (one level), and the frames around that."""
        frame = self._frame
        if frame is None:
            return self._top, None
        return _plug(frame.template, self._top), frame.up

    def room(self) -> int:
        """The levels left under the limit for ``top`` and what it holds (``top`` counting as one when it
        is an open container)."""
        return self._limit.max_depth - self._base - (0 if self._frame is None else self._frame.depth)

    def fitted(self) -> Deep | None:
        """This stack with its top read in the room left (depth_room.py), within ``_GUARD`` levels of the
        limit; None when the top cannot finish there."""
        room = self.room()
        if room >= _GUARD:
            return self
        top = fit(self._top, room)
        if top is None:
            return None
        return self if top is self._top else Deep(self._limit, top, self._frame, self._base)

    def add_character(self, ch: str) -> CharacterParser | None:
        top = self._top.add_character(ch)
        if top is not None:
            kind = type(top)
            if kind is ArrayParser or kind is ObjectParser:
                after = settle(self._limit, top, self._frame, self._base)  # (a container may have begun a value)
            else:
                after = Deep(self._limit, top, self._frame, self._base)  # a transparent frame passes it on
                return after.fitted() if kind is UnionParser else after
        elif self._frame is not None and self._top.can_end():
            local, up = self._local()  # the value ends: its container reads the character
            state = local.add_character(ch)
            if state is None:
                return None
            after = settle(self._limit, state, up, self._base)
        else:
            return None
        if (ch == "[" or ch == "{") and _depth_of(after) > self._limit.max_depth:
            return None
        return after.fitted() if type(after) is Deep else after

    def allowed_characters(self) -> CharSet:
        allowed = self._allowed
        if allowed is None:
            top = self._top
            if self._frame is not None and top.can_end():
                allowed = self._local()[0].allowed_characters()
            else:
                allowed = top.allowed_characters()
            if self.depth() + _GUARD > self._limit.max_depth and ("[" in allowed or "{" in allowed):
                for opener in "[{":
                    if opener in allowed and self.add_character(opener) is None:
                        allowed = allowed - CharSet.of(opener)
            self._allowed = allowed
        return allowed

    def can_end(self) -> bool:
        return self._frame is None and self._top.can_end()

    def key(self) -> Hashable:
        if self._key is None:
            self._key = ("deep", self._top.key(), self._frame, self._base)
        return self._key

    # The walk hooks. A transparent container reading a value offers exactly its value's hooks, with the
    # value's states put back in it (array_walk.py, object_walk.py), so here they are ``top``'s, put back on
    # the stack; a container's run never ends the document (no ``ends_inside`` under a frame).

    def _wrap(self):  # noqa: ANN202
        limit, frame, base = self._limit, self._frame, self._base
        return lambda state: _fitted(settle(limit, state, frame, base))

    def free_run(self) -> FreeRun | None:
        run = self._top.free_run()
        if run is None:
            return None
        after, limit, frame, base = run.after, self._limit, self._frame, self._base
        ends = run.ends_inside and frame is None
        return FreeRun(run.chars, run.max_length, lambda n: _fitted(settle(limit, after(n), frame, base)), ends)

    def lexeme(self) -> Lexeme | None:
        top, frame = self._top, self._frame
        if frame is not None and top.can_end():
            # the value may end: its container's lexeme (the punctuation after a finished value, or the
            # value's own with how the container goes on once it ends), put back on the frames around it
            local, up = self._local()
            limit, base = self._limit, self._base
            lexeme = nested_lexeme(local, lambda state: _fitted(settle(limit, state, up, base)))
        else:
            lexeme = nested_lexeme(top, self._wrap())
        if lexeme is not None and not lexeme.inner.SCALAR_LEXEME and self.depth() + _GUARD > self._limit.max_depth:
            return None  # the inner walk could open containers past the limit unseen: step this state instead
        return lexeme

    def alternatives(self) -> tuple[CharacterParser, ...] | None:
        return nested_alternatives(self._top, self._wrap())

    def first_char_split(self) -> tuple[CharacterParser, bytes] | None:
        return nested_first_char_split(self._top, self._wrap())

    def shared_lexeme_key(self, horizon: int) -> Hashable | None:
        if self._frame is not None:
            return None
        inner = self._top.shared_lexeme_key(horizon)
        return None if inner is None else ("deep", self._limit.max_depth, self._base, inner)

    def __repr__(self) -> str:
        return f"Deep(depth={self.depth()}, top={self._top!r})"


def _fitted(state: CharacterParser) -> CharacterParser:
    """A state the walk hooks hand out, read in the room left like a stepped one (a free run, a split or a
    branch never opens a container, so its top fits and ``fitted`` only narrows its context)."""
    if type(state) is Deep:
        fitted = state.fitted()
        return state if fitted is None else fitted
    return state


def _depth_of(state: CharacterParser) -> int:
    return state.depth() if type(state) is Deep else open_depth(state)
