"""The room left under ``JsonConfig.max_depth``: near the limit, an array or object offers only the keys, items
and union branches whose values can still finish in the levels that remain.

Refusing the bracket past the limit (depth.py) is not enough: a key whose value is an object that must hold
another (``{"a": {"$ref": "#"}}`` with ``a`` required inside), or an item that must be an array of arrays,
would be offered where its value can no longer close, a dead end. A container at the top of a stack, ``room``
levels below the limit counting itself, is therefore read with its context *narrowed* to that room: a
schema fits when its fewest nested arrays and objects (``FiniteCheck.min_depth``) are at most ``room - 1``
for a key's value or an item; named keys, extra keys (the key automaton is rebuilt with "fits" as its value
check, as for values with no finite instance) and items that do not fit are never offered, and a container
whose own schema needs more levels than its room is refused when it opens (its union branch dropped).

Narrowed contexts are copies of the context with their own memos, one per room, made only within ``_GUARD``
levels of the limit (depth.py), so a document far from it (the default limit is 1,000) never pays for them.
Exact for the schemas whose smallest values nest fewer than ``_GUARD`` levels. A union of containers that are
all still open is narrowed branch by branch, down through the values they read; the ``contains`` trackers
are not (they count matches, they refuse nothing).
"""

from __future__ import annotations

from typing import TypeVar

from ..core.protocol import CharacterParser
from ..parsers.combinators import UnionParser
from . import array_phases as ap
from . import object_phases as op
from .arrays import ArrayContext, ArrayParser, item_modes
from .formats.content import LengthContent
from .keys import extra_keys
from .object_exists import ExistsObject
from .objects import ObjectContext, ObjectParser
from .schema.ir import Node


def _fits(ctx: ObjectContext | ArrayContext, node: Node) -> bool:
    """Whether a value of ``node`` can be written within ``ctx.room`` levels."""
    if not ctx.compiler.finite(node):
        return False
    needed = ctx.compiler.min_depth(node)
    return needed is not None and needed <= ctx.room


class RoomObjectContext(ObjectContext):
    """An ObjectContext whose values must fit in ``room`` levels (made by ``narrowed``)."""

    room: int

    def fits(self, node: Node) -> bool:
        return _fits(self, node)

    def value_start(self, key):  # noqa: ANN001, ANN201 - as ObjectContext.value_start
        if isinstance(key, int) and not self.fits(self.values[key]):
            return None
        return super().value_start(key)  # (extra keys: the narrowed key automaton offers only those that fit)


class RoomArrayContext(ArrayContext):
    """An ArrayContext whose items must fit in ``room`` levels (made by ``narrowed``)."""

    room: int

    def _build_item(self, position: int, mode: str, seen: frozenset) -> tuple[CharacterParser | None, bool]:
        schema = self._item_schema(position, mode, seen)
        return self.compiler.settled_start(schema) if _fits(self, schema) else (None, True)


def narrowed(ctx: ObjectContext | ArrayContext, room: int) -> ObjectContext | ArrayContext | None:
    """The context of ``ctx``'s node with values limited to ``room`` levels (memoised on the plain context),
    or None when no value of the node fits in ``room + 1`` levels."""
    base = getattr(ctx, "plain", ctx)
    rooms = base.__dict__.setdefault("rooms", {})
    if room in rooms:
        return rooms[room]
    compiler = base.compiler
    needed = compiler.min_depth(base.node)
    out: ObjectContext | ArrayContext | None = None
    if needed is not None and needed <= room + 1:
        if isinstance(base, ObjectContext):
            out = _narrow_object(base, room)
        else:
            out = _narrow_array(base, room)
    rooms[room] = out
    return out


_Room = TypeVar("_Room", RoomObjectContext, RoomArrayContext)


def _room_copy(base: ObjectContext | ArrayContext, kind: type[_Room], room: int) -> _Room:
    """A ``kind`` sharing ``base``'s attributes (not its memo of rooms), ``room`` levels deep, ``plain`` being
    ``base``; the caller resets the memos that the room changes."""
    ctx = object.__new__(kind)
    ctx.__dict__.update(base.__dict__)
    ctx.plain, ctx.room = base, room
    del ctx.__dict__["rooms"]
    return ctx


def _narrow_object(base: ObjectContext, room: int) -> RoomObjectContext | None:
    ctx = _room_copy(base, RoomObjectContext, room)
    ctx.extras = extra_keys(base.node, base.compiler.merger, base.key_rule, ctx.fits)
    if ctx.witnesses is not None:  # (the members' key sets ride along, object_exists.py)
        ctx.extras = ctx.witnesses.marked_extras(ctx.extras)
    ctx.any_extra_key = (
        not ctx.track_extra_text
        and isinstance(ctx.extras, LengthContent)
        and ctx.extras.high is None
        and ctx.extras.low == 0
    )
    ctx._live, ctx._extra_values, ctx._value_starts = {}, {}, {}
    ctx.key_contents, ctx.key_starts, ctx.closable, ctx.structural, ctx.available = {}, {}, {}, {}, {}
    if ctx.impossible(ctx.extras, ctx.fits):
        return None
    return ctx


def _narrow_array(base: ArrayContext, room: int) -> RoomArrayContext | None:
    ctx = _room_copy(base, RoomArrayContext, room)
    ctx._items, ctx.structural = {}, {}
    if ctx.track:  # the "match" items decide how many positions can still match (ArrayContext._matchable)
        node = base.node
        for position in range(len(node.prefix) + 1):
            for mode in item_modes(node):
                ctx.item_start_of((position, mode, frozenset()))
        if node.min_contains > 0 and not ctx.also:  # (as ArrayContext.start: no room for the matches needed)
            matches = [ctx.item_start_of((p, "match", frozenset())) for p in range(len(node.prefix) + 1)]
            if all(m is None for m in matches):
                return None
            if ctx.max_items is not None and ctx._matchable(0) < node.min_contains:
                return None
    return ctx


def fit(state: CharacterParser, room: int) -> CharacterParser | None:
    """``state``, an open container (or a union of them) ``room`` levels below the limit counting itself,
    read with narrowed contexts; None when it cannot finish in that room. Other states are returned as
    they are. A stack inside (an item of a non-transparent array) is fitted by its own ``fitted``."""
    kind = type(state)
    if kind is ObjectParser or kind is ArrayParser:
        phases = op if kind is ObjectParser else ap
        phase = state._phase
        if phase == phases.OPEN or phase == phases.DONE:
            return state
        ctx = narrowed(state._ctx, room - 1)
        if ctx is None:
            return None
        child = state._child
        if child is not None and phase == phases.VALUE:
            fitted = getattr(child, "fitted", None)
            child = fitted() if fitted is not None else fit(child, room - 1)
            if child is None:
                return None
        if ctx is state._ctx and child is state._child:
            return state
        if kind is ObjectParser:
            return ObjectParser(ctx, phase, state._seen, state._extras, state._ws, child, state._pending)
        return ArrayParser(ctx, phase, state._index, state._ws, child, state._extra, state._tracker, state._text)
    if kind is ExistsObject:
        inner = fit(state._inner, room)
        if inner is None:
            return None
        ctx = inner._ctx
        if isinstance(ctx, RoomObjectContext):  # every member still missing must have a value that fits
            members = ctx.witnesses.member_values()
            if not all(ctx.fits(value) for i, value in enumerate(members) if not state._found >> i & 1):
                return None
        return state if inner is state._inner else ExistsObject(inner, state._found, state._armed, state._trackers)
    if kind is UnionParser:
        branches = state._alternatives
        kept = [b for b in (fit(branch, room) for branch in branches) if b is not None]
        if not kept:
            return None
        if len(kept) == len(branches) and all(k is b for k, b in zip(kept, branches)):
            return state
        return kept[0] if len(kept) == 1 else UnionParser(kept)
    return state
