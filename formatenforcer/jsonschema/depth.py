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
become stacks of their own, ``base`` levels down (``settle``), so a deep item costs no recursion either. An
object that must hold members (``ExistsObject``, object_exists.py) is transparent while no tracker reads its
value, and otherwise, like such an array, keeps its value and trackers as stacks of their own.

Unions of open containers: a union whose branches are transparent containers reading a value (``anyOf`` of
two array schemas after ``[[``) is taken apart too, into *heads* ``(top, frame)``, one per branch, and heads
with equal tops become one head over a frame level holding all their frames' edges. A level is thus a set of
edges ``(template, up)``: the containers that may be open there, each over the level around it (a
graph-structured stack). Its language is the union, over its edges, of the template holding the value and
read inside ``up``, so the merge is exact. When the top ends and the next character is refused by it, each
edge's template reads that character (``_plug``) and the states it gives are taken apart into heads over
that edge's ``up`` and merged again. At depth ``n`` a union of two recursing arrays has 2^n ways of having
chosen its branches, but they share one head and ``n`` levels of two edges: a step costs what one level
costs, whatever the depth. Several heads with distinct tops (the branches read values that differ) are a
``Stacks``: a character goes to each and the heads they give are merged; the walk takes them one by one
(``alternatives``), and a head whose level has several edges, once its value may end, one edge at a time,
each with its own lexemes. A union is taken apart only when one of its branches is such a container, so
every other state (a union of scalars, of containers before their value) is as before.

Their tops being equal, merged heads are as deep: every branch has read the same text, so it opens the same
brackets. Heads never outnumber the distinct values the schema's containers can be reading at one point
(their item and property schemas), so the cost stays linear in depth. Not taken apart, so still nested:
a union of arrays that are none of them transparent (each with ``uniqueItems`` or ``contains``); their items
are stacks of their own, but the union holds one per branch at each such level.
"""

from __future__ import annotations

import weakref
from collections.abc import Hashable, Iterable

from ..core.charset import EMPTY, CharSet
from ..core.hooks import FreeRun, Lexeme, nested_alternatives, nested_first_char_split, nested_lexeme
from ..core.protocol import CharacterParser
from ..parsers.combinators import UnionParser
from . import array_phases as ap
from . import object_phases as op
from .arrays import ArrayParser
from .depth_room import fit
from .object_exists import ExistsObject
from .objects import ObjectParser
from .strings import StringParser

_GUARD = 128
_OPENERS = CharSet.of("[") | CharSet.of("{")


class _Frame:
    """One level of open transparent containers: ``edges`` are the containers that may be open at this level,
    each ``(template, up)``, its state with no value (``_plug`` puts one in) and the level around it; every
    edge's ``up`` is as deep, and ``depth`` counts the levels down to and including this one. A level with
    several edges stands for the union of its containers, each over its own ``up`` (see the module
    docstring)."""

    __slots__ = ("edges", "depth", "__weakref__")

    def __init__(self, edges: tuple[tuple[CharacterParser, _Frame | None], ...], depth: int) -> None:
        self.edges, self.depth = edges, depth


class DepthLimit:
    """Per document: the limit and the table that interns frames (weakly: a frame lives as long as a state or
    a cache key holds it)."""

    def __init__(self, max_depth: int) -> None:
        self.max_depth = max_depth
        self._frames: weakref.WeakValueDictionary[Hashable, _Frame] = weakref.WeakValueDictionary()

    def frame(self, template: CharacterParser, up: _Frame | None) -> _Frame:
        ident = (template.key(), up)
        hit = self._frames.get(ident)
        if hit is None:
            hit = self._frames[ident] = _Frame(((template, up),), 1 if up is None else up.depth + 1)
        return hit

    def merged(self, frames: list[_Frame]) -> _Frame:
        """The level holding the edges of all ``frames`` (as deep as each other), interned like one edge."""
        edges: dict[tuple, tuple[CharacterParser, _Frame | None]] = {}
        for frame in frames:
            for edge in frame.edges:
                edges.setdefault((edge[0].key(), edge[1]), edge)
        if len(edges) == 1:
            return self.frame(*next(iter(edges.values())))
        ident = frozenset(edges)
        hit = self._frames.get(ident)
        if hit is None:
            hit = self._frames[ident] = _Frame(tuple(edges.values()), frames[0].depth)
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
    if kind is ExistsObject and not state._trackers:  # (no tracker reads the value: it only passes it on)
        inner = state._inner
        if inner._phase == op.VALUE:
            empty = ObjectParser(inner._ctx, op.VALUE, inner._seen, inner._extras, 0, None, inner._pending)
            return ExistsObject(empty, state._found, state._armed), inner._child
    return None


def _plug(template: CharacterParser, value: CharacterParser) -> CharacterParser:
    kind = type(template)
    if kind is ObjectParser:
        return ObjectParser(template._ctx, op.VALUE, template._seen, template._extras, 0, value, template._pending)
    if kind is ExistsObject:
        inner = template._inner
        plugged = ObjectParser(inner._ctx, op.VALUE, inner._seen, inner._extras, 0, value, inner._pending)
        return ExistsObject(plugged, template._found, template._armed)
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
        elif kind is ExistsObject:
            state = state._inner  # (an object that must hold members: its object counts)
        elif kind is Deep or kind is Stacks:
            return depth + state.depth() - state._base
        else:
            return depth


def _splits(union: UnionParser) -> bool:
    """Whether a branch of ``union`` (or of a union inside it) is a transparent container reading a value."""
    return any(
        _split(branch) is not None or (type(branch) is UnionParser and _splits(branch))
        for branch in union._alternatives
    )


def _heads(
    limit: DepthLimit, state: CharacterParser, frame: _Frame | None, base: int, out: list
) -> list[tuple[CharacterParser, _Frame | None]]:
    """Appends to ``out`` the heads ``(top, frame)`` of ``state`` read inside ``frame``: every transparent
    container it opens becomes a frame, and a union with such a container among its branches is taken
    apart into its branches' heads (their union is the state). An array that is not transparent
    (``uniqueItems``, a ``contains`` tracker) stays a state of its own, but its item and trackers become
    stacks of their own, a level further down."""
    todo = [(state, frame)]
    while todo:
        state, frame = todo.pop()
        split = _split(state)
        if split is not None:
            todo.append((split[1], limit.frame(split[0], frame)))
            continue
        kind = type(state)
        if kind is UnionParser and _splits(state):
            todo.extend((branch, frame) for branch in reversed(state._alternatives))
            continue
        if kind is ArrayParser and state._phase == ap.VALUE and type(state._child) not in _STACKS:
            state = _stacked_item(limit, state, base + (0 if frame is None else frame.depth) + 1)
        elif kind is ExistsObject and state._inner._phase == op.VALUE and type(state._inner._child) not in _STACKS:
            state = _stacked_member(limit, state, base + (0 if frame is None else frame.depth) + 1)
        out.append((state, frame))
    return out


def _built(limit: DepthLimit, heads: list[tuple[CharacterParser, _Frame | None]], base: int) -> CharacterParser:
    """The state whose language is the union of ``heads``: heads with equal tops become one, over the level
    holding all their frames' edges (so a union of containers whose values are alike costs one head, however
    many ways it could have been nested); one head is a ``Deep`` (or a bare scalar), several a ``Stacks``."""
    if len(heads) > 1:
        groups: dict[Hashable, tuple[CharacterParser, list]] = {}
        for top, frame in heads:
            group = groups.get((top.key(), frame is None))
            if group is None:
                groups[(top.key(), frame is None)] = (top, [frame])
            elif frame not in group[1]:
                group[1].append(frame)
        heads = [(top, frames[0] if len(frames) == 1 else limit.merged(frames)) for top, frames in groups.values()]
    if len(heads) == 1:
        top, frame = heads[0]
        if frame is None and top.SCALAR_LEXEME:
            return top  # a scalar value opens nothing
        return Deep(limit, top, frame, base)
    return Stacks(limit, tuple(Deep(limit, top, frame, base) for top, frame in heads), base)


def settle(limit: DepthLimit, state: CharacterParser, frame: _Frame | None, base: int = 0) -> CharacterParser:
    """``state`` (read inside ``frame``, ``base`` levels down) as a stack, or as stacks sharing their frames
    (``_heads``, ``_built``)."""
    if state.SCALAR_LEXEME:  # a string or number opens nothing: its one head is itself (every resumed walk)
        return state if frame is None else Deep(limit, state, frame, base)
    kind = type(state)
    if (kind is ObjectParser and state._phase != op.VALUE) or (kind is ArrayParser and state._phase != ap.VALUE):
        return Deep(limit, state, frame, base)  # a container between values (a key, punctuation): its one head
    return _built(limit, _heads(limit, state, frame, base, []), base)


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


def _stacked_member(limit: DepthLimit, state: ExistsObject, base: int) -> ExistsObject:
    """An object that must hold members (object_exists.py), reading a value: its value and the value's
    trackers read as stacks ``base`` levels down, like an array's item (``_stacked_item``)."""
    inner = state._inner
    child = settle(limit, inner._child, None, base)
    trackers = tuple((i, settle(limit, t, None, base)) for i, t in state._trackers)
    value = ObjectParser(inner._ctx, op.VALUE, inner._seen, inner._extras, 0, child, inner._pending)
    return ExistsObject(value, state._found, state._armed, trackers)


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
        """``top`` put back into the innermost frame (one level, of one edge), and the frames around that."""
        template, up = self._frame.edges[0]  # type: ignore[union-attr]
        return _plug(template, self._top), up

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
        limit, frame, base = self._limit, self._frame, self._base
        if top is not None:
            kind = type(top)
            if (kind is ObjectParser and top._phase != op.VALUE) or (kind is ArrayParser and top._phase != ap.VALUE):
                after = Deep(limit, top, frame, base)  # (a container reading no value: settle's one head)
            elif (
                kind is ArrayParser
                or kind is ObjectParser
                or kind is ExistsObject
                or (kind is UnionParser and _splits(top))
            ):
                after = settle(limit, top, frame, base)  # (a container may have begun a value)
            else:
                after = Deep(limit, top, frame, base)  # a transparent frame passes it on
                return after.fitted() if kind is UnionParser else after
        elif frame is not None and self._top.can_end():
            edges = frame.edges  # the value ends: each container of the level reads the character
            if len(edges) == 1:
                template, up = edges[0]
                state = _plug(template, self._top).add_character(ch)
                if state is None:
                    return None
                after = settle(limit, state, up, base)
            else:
                heads: list = []
                for template, up in edges:
                    state = _plug(template, self._top).add_character(ch)
                    if state is not None:
                        _heads(limit, state, up, base, heads)
                if not heads:
                    return None
                after = _built(limit, heads, base)
        else:
            return None
        if (ch == "[" or ch == "{") and _depth_of(after) > limit.max_depth:
            return None
        kind = type(after)
        return after.fitted() if kind is Deep or kind is Stacks else after

    def add_text(self, text: str) -> CharacterParser | None:
        # a character goes to the top first, and one the top takes gives a new top on the same frames and
        # nothing else when the top is a scalar (add_character's "transparent frame" branch) or an object
        # reading a key (it opens nothing, and far from the depth limit its stack is its own fit): step the
        # top alone and stack it once; where the top refuses a character, the frames may read it (the value
        # ends), so the text is read again character by character
        top = self._top
        if top.SCALAR_LEXEME:
            after = top.add_text(text)
        elif (
            type(top) is ObjectParser and top.plain_key(text) and "[" not in text and "{" not in text
            and self.room() >= _GUARD
        ):  # fmt: skip
            after = top.add_key_text(text)
        elif (
            type(top) is ArrayParser and top._phase == ap.VALUE and "[" not in text and "{" not in text
            and self.room() >= _GUARD
        ):  # fmt: skip
            # an array that is not transparent (a contains tracker) reading an item: while the item takes
            # every character the array's own fold is the top's, and with no bracket in the text and the
            # limit far, add_character would only settle it at each step: settle it once
            after = top.add_text(text)
            if after is not None:
                state = settle(self._limit, after, self._frame, self._base)
                return state.fitted() if type(state) in _STACKS else state
            return super().add_text(text)
        else:
            return super().add_text(text)
        if after is not None:
            return Deep(self._limit, after, self._frame, self._base)
        return super().add_text(text)

    def allowed_characters(self) -> CharSet:
        allowed = self._allowed
        if allowed is None:
            top = self._top
            frame = self._frame
            if frame is not None and top.can_end():
                if len(frame.edges) == 1:
                    allowed = self._local()[0].allowed_characters()
                else:
                    allowed = _allowed_union(_plug(template, top) for template, _ in frame.edges)
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

    def reads_string_value(self) -> bool:
        """Whether this stack's top is a string value (never a key: an object reading a key is a top of its
        own), whose run is exact: ``free_run().after(n)`` is the state ``n`` of its characters lead to."""
        return type(self._top) is StringParser

    def reads_key(self) -> bool | None:
        """None unless this stack's top is an object reading a key; then whether the key's run is exact
        (``ObjectWalkHooks.reads_key``)."""
        reads = getattr(self._top, "reads_key", None)
        return None if reads is None else reads()

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
            if len(frame.edges) > 1:
                return None  # one lexeme per container of the level (``alternatives``)
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
        top, frame = self._top, self._frame
        if frame is not None and len(frame.edges) > 1 and top.can_end():
            # the value may end: one stack per container of the level, each with its own lexemes
            limit, base = self._limit, self._base
            return tuple(Deep(limit, top, limit.frame(template, up), base) for template, up in frame.edges)
        return nested_alternatives(top, self._wrap())

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
    if type(state) is Deep or type(state) is Stacks:
        fitted = state.fitted()
        return state if fitted is None else fitted
    return state


def _depth_of(state: CharacterParser) -> int:
    return state.depth() if type(state) is Deep or type(state) is Stacks else open_depth(state)


class Stacks(CharacterParser):
    """The union of stacks ``members`` (``Deep`` states with distinct tops, their frames shared below):
    the heads of a union of containers whose values are not alike (see the module docstring). A character
    goes to every member and the heads they give are merged again (``_built``); the walk takes the members
    one by one (``alternatives``), each with its own cached walks."""

    __slots__ = ("_limit", "_members", "_base", "_allowed", "_key")

    def __init__(self, limit: DepthLimit, members: tuple[Deep, ...], base: int) -> None:
        self._limit, self._members, self._base = limit, members, base
        self._allowed: CharSet | None = None
        self._key: Hashable | None = None

    def depth(self) -> int:
        """Arrays and objects open here (alike in every member: they have read the same text)."""
        return self._members[0].depth()

    def add_character(self, ch: str) -> CharacterParser | None:
        heads: list = []
        for member in self._members:
            _heads_of(member.add_character(ch), heads)
        return _built(self._limit, heads, self._base) if heads else None

    def fitted(self) -> CharacterParser | None:
        """Each member read in the room left (``Deep.fitted``); the members that cannot finish there dropped."""
        if self._members[0].room() >= _GUARD:
            return self
        heads: list = []
        for member in self._members:
            _heads_of(member.fitted(), heads)
        return _built(self._limit, heads, self._base) if heads else None

    def allowed_characters(self) -> CharSet:
        if self._allowed is None:
            self._allowed = _allowed_union(self._members)
        return self._allowed

    def can_end(self) -> bool:
        return any(member.can_end() for member in self._members)

    def key(self) -> Hashable:
        if self._key is None:
            self._key = ("stacks", frozenset(member.key() for member in self._members))
        return self._key

    def alternatives(self) -> tuple[CharacterParser, ...] | None:
        return self._members

    def free_run(self) -> FreeRun | None:
        """A run every member shares (their values all inside strings): as ``UnionParser.free_run``."""
        runs = [member.free_run() for member in self._members]
        if any(run is None for run in runs) or len({run.chars for run in runs}) != 1:  # type: ignore[union-attr]
            return None
        lengths = [run.max_length for run in runs]  # type: ignore[union-attr]
        longest = None if None in lengths else max(lengths)  # type: ignore[type-var]
        limit, base = self._limit, self._base

        def after(n: int) -> CharacterParser:
            heads: list = []
            for run in runs:
                if run.max_length is None or n <= run.max_length:  # type: ignore[union-attr]
                    _heads_of(run.after(n), heads)  # type: ignore[union-attr]
            return _built(limit, heads, base)

        ends = any(run.ends_inside for run in runs)  # type: ignore[union-attr]
        return FreeRun(runs[0].chars, longest, after, ends)  # type: ignore[union-attr]

    def __repr__(self) -> str:
        return f"Stacks(depth={self.depth()}, members={len(self._members)})"


_STACKS = (Deep, Stacks)


def _heads_of(state: CharacterParser | None, out: list) -> None:
    """Appends the heads ``(top, frame)`` of a state a member handed back (None: none)."""
    kind = type(state)
    if kind is Deep:
        out.append((state._top, state._frame))  # type: ignore[union-attr]
    elif kind is Stacks:
        out.extend((member._top, member._frame) for member in state._members)  # type: ignore[union-attr]
    elif state is not None:
        out.append((state, None))


def _allowed_union(states: Iterable[CharacterParser]) -> CharSet:
    allowed = EMPTY
    for state in states:
        allowed = allowed | state.allowed_characters()
    return allowed
