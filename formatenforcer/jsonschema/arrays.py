"""JSON arrays: ``prefixItems``/``items`` per position, ``minItems``/``maxItems``, ``contains`` with
``minContains``/``maxContains``, ``uniqueItems`` over scalar items.

A state is (context, phase, items done, whitespace run, current item state, extra). Items never dead-end:
``,`` is offered only when another item can exist and ``]`` only once the array may close. ``contains`` is
counted by running the contains parser beside each item; when the remaining room equals the matches still
needed, the next item must match ``contains`` (its schema becomes items AND contains), and once
``maxContains`` is reached the next ones must not (items AND NOT contains). ``uniqueItems`` keeps the
values seen and gives the next item a schema that excludes them.
"""

from __future__ import annotations

import json
from collections.abc import Hashable
from typing import TYPE_CHECKING

from ..charset import EMPTY, CharSet
from ..parser import CharacterParser, FreeRun, Lexeme, nested_lexeme
from .compile import union_memo
from .ir import AnyValue, Array, Boolean, Never, Node, Null, Number, String, Union, deref
from .merge import Unsupported, union_of
from .validate import to_fraction

if TYPE_CHECKING:
    from .compile import Compiler

OPEN, FIRST, VALUE, AFTER, NEXT, DONE = range(6)
_OPEN = CharSet.of("[")
_CLOSE = CharSet.of("]")
_COMMA = CharSet.of(",")


def _scalar_only(node: Node) -> bool:
    node = deref(node)
    if isinstance(node, Union):
        return all(_scalar_only(o) for o in node.options)
    if isinstance(node, String):
        return node.values is not None or (node.max_length is None and not node.patterns and not node.formats)
    return isinstance(node, (Null, Boolean, Number))


def _literal(value: object) -> Node:
    if value is None:
        return Null()
    if isinstance(value, bool):
        return Boolean(frozenset({value}))
    if isinstance(value, (int, float)):
        point = to_fraction(value)
        return Number(low=point, high=point)
    return String(values=frozenset({value}))  # type: ignore[arg-type]


class ArrayContext:
    """Compiled facts of one Array node, shared by all its states."""

    def __init__(self, node: Array, compiler: Compiler) -> None:
        self.node = node
        self.compiler = compiler
        self.ws = compiler.ws
        self.min_items = node.min_items
        self.max_items = node.max_items
        self.contains = node.contains
        self.track = node.contains is not None and (node.min_contains > 0 or node.max_contains is not None)
        if node.unique and (node.max_items is None or node.max_items > 1):
            for i in range(len(node.prefix) + 1):
                schema = node.prefix[i] if i < len(node.prefix) else node.items
                if not _scalar_only(schema) and not isinstance(deref(schema), Never):
                    raise Unsupported("uniqueItems", "uniqueItems is enforced for scalar items only")
            self.unique = True
        else:
            self.unique = False
        if self.track and node.max_contains is not None and node.max_contains < node.min_contains:
            self.max_items = -1  # unsatisfiable, start() reports it
        self._items: dict[tuple, CharacterParser | None] = {}
        self.unions: dict[tuple[CharSet, ...], CharSet] = {}
        self._tracker = compiler.start(node.contains) if self.track else None

    def start(self) -> CharacterParser | None:
        """The opening state, or None when no array fits (too few items can exist, or none can match
        ``contains``): then the parent never offers this value, so no state can be stranded inside it."""
        if self.max_items is not None and self.max_items < self.min_items:
            return None
        positions = len(self.node.prefix) + 1
        if self.max_items is not None:
            positions = min(positions, self.max_items)
        node, merger = self.node, self.compiler.merger
        schemas = [*node.prefix, node.items][:positions]
        possible = 0
        while possible < len(schemas) and not isinstance(deref(schemas[possible]), Never):
            possible += 1
        if possible == len(node.prefix) + 1:
            possible = self.max_items if self.max_items is not None else 1 << 30
        if possible < self.min_items:
            return None
        if self.track and node.min_contains > 0:
            matching = [merger.intersect(s, node.contains) for s in schemas[: min(len(schemas), possible)]]
            if all(isinstance(deref(m), Never) for m in matching):
                return None
        return ArrayParser(self, OPEN, 0, 0, None, (0, frozenset()))

    def open_string_items(self, index: int) -> bool:
        """Items from ``index`` on are plain strings with no upper length, pattern or enum: excluding any
        finite set of seen values always leaves one, so uniqueItems can never leave them without a value."""
        if index < len(self.node.prefix) or self.track:
            return False
        item = deref(self.node.items)
        return (isinstance(item, String) and item.values is None and item.max_length is None
                and not item.patterns and not item.formats)  # fmt: skip

    def item_start(self, index: int, count: int, seen: frozenset) -> tuple[CharacterParser | None, bool]:
        """The start of item ``index`` and whether it still needs the contains tracker."""
        key = (min(index, len(self.node.prefix)), self._mode(index, count), seen)
        hit = self._items.get(key)
        if hit is None and key not in self._items:
            hit = self._items[key] = self._build_item(*key)
        return hit, key[1] == "free" and self.track

    def _mode(self, index: int, count: int) -> str:
        node = self.node
        if not self.track:
            return "free"
        if node.max_contains is not None and count >= node.max_contains:
            return "avoid"
        if self.max_items is not None and node.min_contains - count >= self.max_items - index:
            return "match"
        return "free"

    def _build_item(self, position: int, mode: str, seen: frozenset) -> CharacterParser | None:
        node, merger = self.node, self.compiler.merger
        schema = node.prefix[position] if position < len(node.prefix) else node.items
        if mode == "match":
            schema = merger.intersect(schema, node.contains)
        elif mode == "avoid":
            schema = merger.intersect(schema, merger.negate(node.contains))
        if seen:
            listed = union_of([_literal(json.loads(text)) for text in seen])
            schema = merger.intersect(schema, merger.negate(listed))
        return self.compiler.start(schema)


_UNKNOWN_SEEN = frozenset({"\x00unknown"})
"""Items seen by a free-run stand-in that read an item without knowing its text: no further item may begin."""


class ArrayParser(CharacterParser):
    """One JSON array; ``extra`` is (contains matches so far, texts of the items seen when unique)."""

    __slots__ = ("_ctx", "_phase", "_index", "_ws", "_child", "_extra", "_tracker", "_text", "_allowed", "_key")

    def __init__(self, ctx: ArrayContext, phase: int, index: int, ws: int, child: CharacterParser | None,
                 extra: tuple, tracker: CharacterParser | None = None, text: str | None = "") -> None:  # fmt: skip
        self._ctx, self._phase, self._index, self._ws = ctx, phase, index, ws
        self._child, self._extra, self._tracker, self._text = child, extra, tracker, text
        self._allowed: CharSet | None = None
        self._key: Hashable | None = None

    def _item(self, index: int) -> CharacterParser | None:
        ctx = self._ctx
        if (ctx.max_items is not None and index >= ctx.max_items) or self._extra[1] is _UNKNOWN_SEEN:
            return None
        return ctx.item_start(index, self._extra[0], self._extra[1])[0]

    def _can_continue(self) -> bool:
        """Whether another item may follow. A free-run stand-in that does not know the last item's text can
        still say yes when items are strings open enough that one more distinct value always exists."""
        if self._extra[1] is not _UNKNOWN_SEEN:
            return self._item(self._index) is not None
        ctx = self._ctx
        return ctx.open_string_items(self._index) and (ctx.max_items is None or self._index < ctx.max_items)

    def _closable(self, count: int) -> bool:
        ctx = self._ctx
        return count >= ctx.min_items and (not ctx.track or self._extra[0] >= ctx.node.min_contains)

    def _finish_item(self) -> ArrayParser:
        ctx = self._ctx
        count, seen = self._extra
        _, tracked = ctx.item_start(self._index, count, seen)
        mode = ctx._mode(self._index, count) if ctx.track else "free"
        if mode == "match" or (tracked and self._tracker is not None and self._tracker.can_end()):
            count += 1
        if ctx.unique:
            if self._text is None:  # a free-run stand-in (see free_run): what it read is not known
                return ArrayParser(ctx, AFTER, self._index + 1, 0, None, (count, _UNKNOWN_SEEN))
            seen = seen | {json.dumps(json.loads(self._text))}
        return ArrayParser(ctx, AFTER, self._index + 1, 0, None, (count, seen))

    def _begin_item(self, ch: str) -> ArrayParser | None:
        ctx = self._ctx
        if (ctx.max_items is not None and self._index >= ctx.max_items) or self._extra[1] is _UNKNOWN_SEEN:
            return None
        start, tracked = ctx.item_start(self._index, *self._extra)
        if start is None:
            return None
        child = start.add_character(ch)
        if child is None:
            return None
        tracker = ctx._tracker.add_character(ch) if tracked and ctx._tracker is not None else None
        return ArrayParser(ctx, VALUE, self._index, 0, child, self._extra, tracker, ch if ctx.unique else "")

    def add_character(self, ch: str) -> ArrayParser | None:
        phase, ctx = self._phase, self._ctx
        if phase == VALUE:
            child = self._child.add_character(ch)
            if child is not None:
                tracker = self._tracker.add_character(ch) if self._tracker is not None else None
                text = self._text + ch if ctx.unique and self._text is not None else self._text
                return ArrayParser(ctx, VALUE, self._index, 0, child, self._extra, tracker, text)
            if not self._child.can_end():
                return None
            return self._finish_item().add_character(ch)
        if phase == OPEN:
            return ArrayParser(ctx, FIRST, 0, 0, None, self._extra) if ch == "[" else None
        if phase == DONE:
            return None
        ws = ctx.ws.step(self._ws, ch)
        if ws is not None:
            return ArrayParser(ctx, phase, self._index, ws, None, self._extra)
        if not ctx.ws.can_stop(self._ws):
            return None
        if phase in (FIRST, AFTER) and ch == "]":
            if not self._closable(self._index):
                return None
            return ArrayParser(ctx, DONE, self._index, 0, None, (0, frozenset()))
        if phase == AFTER:
            if ch == "," and self._can_continue():
                return ArrayParser(ctx, NEXT, self._index, 0, None, self._extra)
            return None
        return self._begin_item(ch)

    def allowed_characters(self) -> CharSet:
        if self._allowed is None:
            self._allowed = self._compute_allowed()
        return self._allowed

    def _compute_allowed(self) -> CharSet:
        phase, ctx = self._phase, self._ctx
        if phase == OPEN:
            return _OPEN
        if phase == DONE:
            return EMPTY
        if phase == VALUE:
            if not self._child.can_end():
                return self._child.allowed_characters()
            return union_memo(ctx.unions, (self._child.allowed_characters(), self._finish_item().allowed_characters()))
        parts = [ctx.ws.allowed(self._ws)]
        if ctx.ws.can_stop(self._ws):
            if phase in (FIRST, AFTER) and self._closable(self._index):
                parts.append(_CLOSE)
            if phase == AFTER:
                if self._can_continue():
                    parts.append(_COMMA)
            else:
                item = self._item(self._index)
                if item is not None:
                    parts.append(item.allowed_characters())
        return union_memo(ctx.unions, tuple(parts))

    def can_end(self) -> bool:
        return self._phase == DONE

    def free_run(self) -> FreeRun | None:
        """The item consumes the whole run (not when a contains tracker rides along). Under uniqueItems the
        item's text matters once the item ends, so ``after(n)`` for n > 0 is a stand-in that does not know
        it: it may end the item and close the array, but refuses to begin another item in the same token
        (a subset of the real continuations, as parser.FreeRun allows)."""
        if self._phase != VALUE or self._tracker is not None:
            return None
        inner = self._child.free_run()
        if inner is None:
            return None
        ctx, index, extra, after = self._ctx, self._index, self._extra, inner.after
        if not ctx.unique:
            return FreeRun(inner.chars, inner.max_length, lambda n: ArrayParser(ctx, VALUE, index, 0, after(n), extra))
        text = self._text

        def stand_in(n: int) -> ArrayParser:
            return ArrayParser(ctx, VALUE, index, 0, after(n), extra, None, text if n == 0 else None)

        return FreeRun(inner.chars, inner.max_length, stand_in)

    def lexeme(self) -> Lexeme | None:
        # not when a contains tracker or a unique item's text must see every character
        if self._phase != VALUE or self._tracker is not None or self._ctx.unique:
            return None
        ctx, index, extra = self._ctx, self._index, self._extra
        return nested_lexeme(self._child, lambda c: ArrayParser(ctx, VALUE, index, 0, c, extra))

    def key(self) -> Hashable:
        if self._key is None:
            child = None if self._child is None else self._child.key()
            tracker = None if self._tracker is None else self._tracker.key()
            index = self._index
            ctx = self._ctx
            if not ctx.unique and not ctx.track and ctx.max_items is None and index > max(ctx.min_items,
                                                                                          len(ctx.node.prefix)):
                index = -1  # past every positional rule: later items all behave alike
            text = self._text if ctx.unique else ""  # the item's text decides what later items may be
            self._key = ("arr", id(ctx), self._phase, index, self._ws, child, self._extra, tracker, text)
        return self._key

    def __repr__(self) -> str:
        return f"ArrayParser(phase={self._phase}, index={self._index}, child={self._child!r})"


__all__ = ["AnyValue", "ArrayContext", "ArrayParser"]
