"""JSON arrays: ``prefixItems``/``items`` per position, ``minItems``/``maxItems``, ``contains`` with
``minContains``/``maxContains``, ``uniqueItems`` over scalar items.

A state is (context, phase, items done, whitespace run, current item state, extra). Items never dead-end:
``,`` is offered only when another item can exist and ``]`` only once the array may close. ``contains`` is
counted by running the contains parser beside each item; when the remaining room equals the matches still
needed, the next item must match ``contains`` (its schema becomes items AND contains), and once
``maxContains`` is reached the next ones must not (items AND NOT contains). Several ``contains`` (``allOf``)
are counted jointly where the room is unbounded (``ArrayContext._joint_count``). ``uniqueItems`` keeps the
values seen and gives the next item a schema that excludes them; an array or object item that can always
differ refuses only the bracket that would close a duplicate, and one whose values can run out (a closed
object, a constrained array) takes a character only while it can still end as a new value (unique_guard.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable
from fractions import Fraction
from itertools import product
from math import ceil, floor
from typing import TYPE_CHECKING

from ..core.charset import EMPTY, CharSet, union_memo
from ..core.protocol import CharacterParser, MemoAllowed
from .array_phases import AFTER, DONE, FIRST, NEXT, OPEN, VALUE
from .array_walk import ArrayWalkHooks, holds_unknown
from .partial_item import PartialItem, first_char, partials
from .schema.ir import (
    AnyValue,
    Array,
    Boolean,
    Never,
    Node,
    Null,
    Number,
    Object,
    String,
    Union,
    Unsupported,
    deref,
    union_of,
)
from .schema.normalize import literal_node
from .schema.validate import number_ok
from .unique_guard import UniqueGuard
from .unique_text import canonical
from .whitespace import WHITESPACE_CHARS

if TYPE_CHECKING:
    from .compile import Compiler
    from .schema.merge import Merger

_OPEN = CharSet.of("[")
_CLOSE = CharSet.of("]")
_COMMA = CharSet.of(",")


def _scalar_only(node: Node) -> bool:
    node = deref(node)
    if isinstance(node, Union):
        return all(_scalar_only(o) for o in node.options)
    if isinstance(node, String):
        # format "regex" too: every prefix of a regex completes to infinitely many, so excluding a few is safe
        return node.values is not None or (node.max_length is None and not node.patterns
                                           and set(node.formats) <= {"regex"}
                                           and not node.not_patterns and not node.not_formats)  # fmt: skip
    return isinstance(node, (Null, Boolean, Number))


def _plain_container(node: Node) -> bool:
    """An array or object schema with no constraint at all: every prefix of such a value can still end as
    infinitely many different values, so refusing only the bracket that would close a duplicate never
    strands the item (another item or key can always come instead)."""
    if isinstance(node, Array):
        return (not node.prefix and isinstance(deref(node.items), AnyValue) and not node.min_items
                and node.max_items is None and not node.unique and node.contains is None)  # fmt: skip
    if isinstance(node, Object):
        return (not node.required and node.property_names is None and not node.min_properties
                and node.max_properties is None and not node.dependent_required and not node.exists
                and all(not s.properties and not s.patterns and isinstance(deref(s.additional), AnyValue)
                        for s in node.sides))  # fmt: skip
    return False


def _open_object(node: Node) -> bool:
    """An object schema to which a key can always be added, however far its value has been written: no
    ``maxProperties`` and no ``propertyNames``, and a key that no side names or matches by a pattern takes
    any value (``additionalProperties`` absent or true), as do the keys of every pattern. Its named
    properties may be constrained at will. When the closing bracket would make it equal to an earlier item,
    a fresh key (there are infinitely many, none of them a ``dependentRequired`` trigger) makes it another
    value instead, so refusing that bracket never strands the item."""
    return (
        isinstance(node, Object)
        and node.max_properties is None
        and node.property_names is None
        and not node.exists
        and all(
            isinstance(deref(side.additional), AnyValue)
            and all(isinstance(deref(schema), AnyValue) for _, schema in side.patterns)
            for side in node.sides
        )
    )


def _unique_kind(node: Node) -> str | None:
    """ "scalar" when uniqueness is enforced by excluding seen values, "compound" when (also) by refusing
    the closing bracket of a duplicate array/object, None when neither is exact and dead-end free."""
    node = deref(node)
    if isinstance(node, AnyValue):
        return "compound"
    if isinstance(node, Union):
        kinds = [_unique_kind(o) for o in node.options]
        return None if None in kinds else "compound" if "compound" in kinds else "scalar"
    if _scalar_only(node) or isinstance(node, Never):
        return "scalar"
    return "compound" if _plain_container(node) or _open_object(node) else None


def _count_values(node: Node, limit: int = 1 << 16) -> int | None:
    """How many distinct values ``node`` has when they are finitely many (at most ``limit``: booleans, null,
    enums, bounded integers and unions of them), else None: ``uniqueItems`` cannot have more items than that.
    Exact, duplicates across a union's branches counted once: an over-count would offer an item no value
    can fill (a dead end), an under-count would refuse a schema that has instances."""
    try:
        values = _distinct_values(node, limit)
    except RecursionError:  # a schema nested deeper than Python's stack: not counted
        return None
    return None if values is None else len(values)


def _distinct_values(node: Node, limit: int) -> set[tuple] | None:
    """The values of ``node`` as tagged tuples (numbers as Fractions: 1 and 1.0 are one value), or None
    when they are not known to be at most ``limit``."""
    node = deref(node)
    if isinstance(node, Never):
        return set()
    if isinstance(node, Null):
        return {("null",)}
    if isinstance(node, Boolean):
        return {("bool", value) for value in node.values}
    if isinstance(node, String):
        return None if node.values is None else {("str", value) for value in node.values}
    if isinstance(node, Number):
        numbers = _bounded_numbers(node, limit)
        return None if numbers is None else {("num", value) for value in numbers}
    if isinstance(node, Union):
        out: set[tuple] = set()
        for option in node.options:
            values = _distinct_values(option, limit)
            if values is None:
                return None
            out |= values
            if len(out) > limit:
                return None
        return out
    if isinstance(node, Object):
        return _object_values(node, limit)
    if isinstance(node, Array):
        return _array_values(node, limit)
    return None


_ALL_KINDS = frozenset({"null", "bool", "num", "str", "arr", "obj"})


def _kinds(node: Node) -> frozenset[str]:
    """The tags (as ``_distinct_values`` writes them) the values of ``node`` may carry; all where unsure."""
    node = deref(node)
    if isinstance(node, Never):
        return frozenset()
    if isinstance(node, Union):
        return frozenset().union(*(_kinds(option) for option in node.options))
    kind = {Null: "null", Boolean: "bool", Number: "num", String: "str"}.get(type(node))
    return _ALL_KINDS if kind is None else frozenset({kind})


def _bounded_numbers(node: Number, limit: int) -> list[Fraction] | None:
    """The numbers of ``node`` when it is a single point, a set of at most ``limit`` values or bounded integers
    (at most ``limit`` candidates before the multiple and exclusion filters), else None."""
    low, high = node.low, node.high
    if node.values is not None:
        candidates = sorted(node.values)
        if len(candidates) > limit:
            return None
    elif low is None or high is None:
        return None
    elif low == high:
        candidates = [low]
    elif node.integer:
        first = ceil(low) + (1 if node.low_open and low == ceil(low) else 0)
        last = floor(high) - (1 if node.high_open and high == floor(high) else 0)
        if last - first + 1 > limit:
            return None
        candidates = [Fraction(k) for k in range(first, last + 1)]
    else:
        return None
    return [value for value in candidates if number_ok(node, value, value.denominator == 1)]


def _object_values(node: Object, limit: int) -> set[tuple] | None:
    """The values of a closed object with one side, no pattern keys, ``propertyNames`` or
    ``dependentRequired``, whose properties have finitely many values each: every choice of present
    properties (the required ones always) within ``minProperties``/``maxProperties``. None otherwise, or
    past ``limit`` combinations."""
    if len(node.sides) != 1 or node.property_names is not None or node.dependent_required:
        return None
    side = node.sides[0]
    if side.patterns or not isinstance(deref(side.additional), Never):
        return None
    names = {name for name, _ in side.properties}
    if not node.required <= names:
        return set()  # a required key no property names: no value
    choices: list[list[tuple | None]] = []
    total = 1
    for name, schema in side.properties:
        values = _distinct_values(schema, limit)
        if values is None:
            return None
        options: list[tuple | None] = [(name, value) for value in values]
        if name not in node.required:
            options.append(None)
        total *= len(options)
        if total > limit:
            return None
        choices.append(options)
    out: set[tuple] = set()
    for combination in product(*choices):
        members = [member for member in combination if member is not None]
        if len(members) >= node.min_properties and (node.max_properties is None or len(members) <= node.max_properties):
            out.add(("obj", frozenset(members)))
    return out


def _array_values(node: Array, limit: int) -> set[tuple] | None:
    """The values of an array with a bounded length (a closed tuple or ``maxItems``) whose positions have
    finitely many values each, without ``contains``; None otherwise, or past ``limit`` combinations."""
    if node.contains is not None or node.also_contains:
        return None
    top = len(node.prefix) if isinstance(deref(node.items), Never) else node.max_items
    if top is None:
        return None
    if node.max_items is not None:
        top = min(top, node.max_items)
    positions: list[list[tuple]] = []
    for index in range(top):
        values = _distinct_values(node.prefix[index] if index < len(node.prefix) else node.items, limit)
        if values is None:
            return None
        positions.append(sorted(values, key=repr))
    out: set[tuple] = set()
    total = 0
    for length in range(node.min_items, top + 1):
        count = 1
        for values in positions[:length]:
            count *= len(values)
        total += count
        if total > limit:
            return None
        for combination in product(*positions[:length]):
            if not node.unique or len(set(combination)) == length:
                out.add(("arr", combination))
    return out


def _many(node: Node, need: int) -> bool:
    """Whether ``node`` surely has at least ``need`` distinct values (a string or number with infinitely
    many, an object that can take one with them, or a count). False where unsure."""
    node = deref(node)
    if isinstance(node, Union):
        return any(_many(option, need) for option in node.options) or (_count_values(node) or 0) >= need
    if isinstance(node, String):
        if node.values is None and not (node.patterns or node.formats or node.not_patterns or node.not_formats):
            return node.max_length is None or node.min_length <= node.max_length and node.max_length >= 1
    elif isinstance(node, Number):
        if node.values is None and (node.low is None or node.high is None):
            return True
    elif isinstance(node, Array):
        if (not node.prefix and node.max_items is None and node.contains is None and not node.unique
                and _many(node.items, 1)):  # fmt: skip
            return True
    elif isinstance(node, Object) and node.property_names is None and not node.dependent_required:
        if node.max_properties is None and all(isinstance(deref(s.additional), AnyValue) for s in node.sides):
            return True
        if len(node.sides) == 1 and any(
            _many(schema, need) for name, schema in node.sides[0].properties
            if name in node.required or node.max_properties is None
        ):  # fmt: skip
            return True
    return (_count_values(node) or 0) >= need


def no_array(node: Array, merger: Merger, has_value: Callable[[Node], bool] | None = None) -> bool:
    """Whether the array rules leave no array at all, whatever the items can hold: more items needed than
    ``maxItems`` or the tuple allow, more distinct items than ``uniqueItems`` can find, or no position where
    a ``contains`` match fits. Read from the node alone (no start state is built), so the finiteness check
    (finite.py) and ``ArrayContext.start`` decide alike; may raise Unsupported from a merge. ``has_value``
    (both pass the compiler's string check) rules out a match that is a string no text satisfies; when it
    cannot tell (the match's automaton ran out of build time) it raises Unsupported, ``named`` by the
    ``contains`` schema (the merged match has no pointer of its own)."""
    max_items = node.max_items
    tracked = node.contains is not None and (node.min_contains > 0 or node.max_contains is not None)
    if tracked and node.max_contains is not None and node.max_contains < node.min_contains:
        return True
    if max_items is not None and max_items < node.min_items:
        return True
    positions = len(node.prefix) + 1
    if max_items is not None:
        positions = min(positions, max_items)
    schemas = [*node.prefix, node.items][:positions]
    possible = 0
    while possible < len(schemas) and not isinstance(deref(schemas[possible]), Never):
        possible += 1
    if possible == len(node.prefix) + 1:
        possible = max_items if max_items is not None else 1 << 30
    if possible < node.min_items:
        return True
    if node.unique and node.min_items > len(node.prefix):
        distinct = _count_values(node.items)  # each item after the tuple needs a value not yet used
        if distinct is not None and len(node.prefix) + distinct < node.min_items:
            return True
    if tracked and node.min_contains > 0 and not node.also_contains:
        matching = [merger.intersect(s, node.contains) for s in schemas[: min(len(schemas), possible)]]
        try:
            if all(isinstance(deref(m), Never) or (has_value is not None and not has_value(m)) for m in matching):
                return True
        except Unsupported as problem:  # a match's build ran out of time: refused, named by ``contains``
            if getattr(problem, "named", None) is None:
                problem.named = node.contains  # type: ignore[attr-defined]
            raise
    return False


def item_modes(node: Array) -> tuple[str, ...]:
    """The contains modes an item of ``node`` can be read in besides "free": "avoid" only under
    ``maxContains`` (``ArrayContext._mode``), so its schema (items AND NOT contains, which may not be
    expressible) is built, and refused, only where it is used."""
    return ("match", "avoid") if node.max_contains is not None else ("match",)


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
        self.also = node.also_contains
        self.zero: int | tuple[int, ...] = 0
        self.compound = False
        self.guard: UniqueGuard | None = None
        if node.unique and (node.max_items is None or node.max_items > 1):
            kinds = [_unique_kind(schema) for schema in (*node.prefix, node.items)]
            if None in kinds:  # items whose values can run out: each character checked (unique_guard.py)
                self._check_room()
                self.guard = UniqueGuard()
            else:
                self.compound = "compound" in kinds
                self._check_tuple_room()
            self.unique = True
        else:
            self.unique = False
        self._seen_values: dict[frozenset, frozenset] = {}
        if self.track and node.max_contains is not None and node.max_contains < node.min_contains:
            self.max_items = -1  # unsatisfiable, start() reports it
        self._items: dict[tuple, CharacterParser | None] = {}
        self.unions: dict[tuple[CharSet, ...], CharSet] = {}
        # per (phase, index, ws, extra) between items: the structural characters allowed (see ArrayParser)
        self.structural: dict[tuple, CharSet] = {}
        # the contains trackers and the "must match" / "must not match" items are built now, so problems
        # surface here, unless they hold a value being built further up (Compiler.settled_start): then when
        # first needed
        self._tracker: CharacterParser | None = None
        self._tracker_known = not self.track
        if self.track:
            self._tracker, self._tracker_known = compiler.settled_start(node.contains)
        self._trackers: tuple[CharacterParser | None, ...] = ()
        self._trackers_known = True
        if self.also:
            self._joint_count()
        if self.track:
            for position in range(len(node.prefix) + 1):
                for mode in item_modes(node):
                    schema = self._item_schema(position, mode, frozenset())
                    if not compiler.building(schema):  # (else: being built above, read when first needed)
                        state, known = self._build_item(position, mode, frozenset())
                        if known:
                            self._items[(position, mode, frozenset())] = state

    def _check_room(self) -> None:
        """Under ``minItems``, items checked by the guard must find a new value at every position the array
        cannot close before: position ``j`` has at least ``j + 1`` distinct values (at most ``j`` are taken).
        Too few values for ``items`` alone is no instance at all (``no_array`` says so); otherwise, where the
        values are not known to suffice, the schema is refused with the reason."""
        node = self.node
        needs = [(node.prefix[j], j + 1) for j in range(min(node.min_items, len(node.prefix)))]
        if node.min_items > len(node.prefix):
            needs.append((node.items, node.min_items))
        for schema, need in needs:
            try:
                enough = need < 2 or _many(schema, need)
            except RecursionError:  # a schema nested deeper than Python's stack: not known to suffice
                enough = False
            if enough:
                continue
            if schema is node.items and not node.prefix and _count_values(schema) is not None:
                continue  # fewer values than minItems: no_array reports the schema unsatisfiable
            raise Unsupported(
                "uniqueItems",
                f"uniqueItems with minItems {node.min_items} over items not known to have that many distinct values",
            )

    def _check_tuple_room(self) -> None:
        """Under ``minItems``, scalar items of a tuple (seen values excluded) must find a value left at every
        position ``j`` the array cannot close before: of its values, each earlier position can have taken at
        most one, and only one whose values meet them (``[{"enum": [1, 2]}, {"const": 1}]`` after ``[1``
        would be stuck). Enough values then means more than the earlier positions that share some. A
        position with too few is refused with the reason (``[2, 1]`` would have been valid: choosing the
        first item for the sake of the second needs the whole tuple at once). Items alone are
        ``no_array``'s (too few values for ``minItems`` leaves no array)."""
        node = self.node
        if not node.prefix or node.min_items < 2:
            return
        last = node.min_items - 1  # the array cannot close before position ``last`` is filled
        schemas = [node.prefix[j] if j < len(node.prefix) else node.items for j in range(last + 1)]
        values = [_distinct_values(schema, 1 << 16) for schema in schemas[: len(node.prefix) + 1]]
        values.extend([values[-1]] * (len(schemas) - len(values)))  # (``items`` from the tuple's end on)
        for j in range(1, len(values)):
            own = values[j]
            if own is None:
                continue  # infinitely many (or too many to count): one is always left
            tags = {value[0] for value in own}
            sharing = sum(
                1 for i in range(j)
                if (values[i] & own if values[i] is not None else _kinds(schemas[i]) & tags)
            )  # fmt: skip
            if len(own) <= sharing:
                raise Unsupported(
                    "uniqueItems",
                    f"uniqueItems with minItems {node.min_items}: item {j} of the tuple has {len(own)} value(s), "
                    "which the items before it can all have taken",
                )

    def _joint_count(self) -> None:
        """Several ``contains`` (the first may have a maximum, the others only minimums): each gets its own
        count and tracker. Exact and dead-end free when the room is unbounded and every needed match can
        come as one more item whatever was written: an item matching each other ``contains`` (and not the
        first one, once that is at its maximum) must exist. Otherwise the joint room check (which items can
        still cover every shortfall at once) would be needed: not implemented."""
        node, merger = self.node, self.compiler.merger
        self.track = True
        items = node.items
        if self.max_items is not None or self.unique or isinstance(deref(items), Never):
            raise Unsupported("contains", "several 'contains' under maxItems, uniqueItems or a closed tuple")
        needed = [schema for schema, low in self.also if low > 0]
        if node.min_contains > 0:
            needed.append(node.contains)
        avoid = merger.negate(node.contains) if node.max_contains is not None else None
        for schema in node.prefix:  # every position up to the unbounded `items` must stay fillable
            if isinstance(deref(schema), Never) or (
                avoid is not None and isinstance(deref(merger.intersect(schema, avoid)), Never)
            ):
                raise Unsupported("contains", "several 'contains' where a tuple position bounds the room")
        for schema in needed:
            one = merger.intersect(items, schema)
            if schema is not node.contains and avoid is not None:
                one = merger.intersect(one, avoid)
            if isinstance(deref(one), Never):
                raise Unsupported("contains", "several 'contains' that one more item cannot always satisfy")
        built = [self.compiler.settled_start(schema) for schema, _ in self.also]
        self._trackers = tuple(state for state, _ in built)
        self._trackers_known = all(known for _, known in built)
        self.zero = (0,) * (1 + len(self.also))

    def _count_after(self, count: tuple[int, ...], trackers: tuple) -> tuple[int, ...]:
        """The joint counts after an item, each capped where more matches change nothing."""
        node = self.node
        caps = (node.max_contains if node.max_contains is not None else node.min_contains,
                *(low for _, low in self.also))  # fmt: skip
        return tuple(min(c + (t is not None and t.can_end()), cap) for c, t, cap in zip(count, trackers, caps))

    def tracker(self) -> CharacterParser | None:
        """The start of the ``contains`` tracker (None when nothing is tracked, or no value matches)."""
        if not self._tracker_known:
            self._tracker, self._tracker_known = self.compiler.start(self.node.contains), True
        return self._tracker

    def trackers(self) -> tuple[CharacterParser | None, ...]:
        """The starts of the trackers of the other ``contains`` (``also_contains``), one each."""
        if not self._trackers_known:
            self._trackers, self._trackers_known = tuple(self.compiler.start(s) for s, _ in self.also), True
        return self._trackers

    def start(self) -> CharacterParser | None:
        """The opening state, or None when no array fits (too few items can exist, or none can match
        ``contains``): then the parent never offers this value, so no state can be stranded inside it."""
        if no_array(self.node, self.compiler.merger, self.compiler.string_has_value):
            return None
        node = self.node
        if self.track and not self.also and self.max_items is not None and self._matchable(0) < node.min_contains:
            return None  # too few positions where a contains match can be written
        return ArrayParser(self, OPEN, 0, 0, None, (self.zero, frozenset()))

    def item_start(self, index: int, count: int, seen: frozenset) -> tuple[CharacterParser | None, bool]:
        """The start of item ``index`` and whether it still needs the contains tracker."""
        key = (min(index, len(self.node.prefix)), self._mode(index, count), seen)
        return self.item_start_of(key), self.track and (key[1] == "free" or bool(self.also))

    def _matchable(self, index: int) -> int:
        """How many positions from ``index`` up to ``maxItems`` can hold a ``contains`` match (its "match"
        item has a start): when the matches still needed exceed those after this one, this one must match."""
        prefix, out = len(self.node.prefix), 0
        for position in range(index, self.max_items or 0):
            if self._can_match(min(position, prefix)):
                out += 1 if position < prefix else self.max_items - position  # type: ignore[operator]
            if position >= prefix:
                break
        return out

    def _can_match(self, position: int) -> bool:
        """Whether an item at ``position`` (prefix or ``items``) can match ``contains``: its "match" item has a
        start. While that item's schema is still being built further up (items that recurse to an array
        holding this one), its start is not known yet: the finiteness check answers, as the start will."""
        key = (position, "match", frozenset())
        if key in self._items:
            return self._items[key] is not None
        schema = self._item_schema(position, "match", frozenset())
        if self.compiler.building(schema):
            return self.compiler.finite(schema)
        state, known = self._build_item(*key)
        if not known:  # it holds a value being built further up: answered alike
            return self.compiler.finite(schema)
        self._items[key] = state
        return state is not None

    def item_start_of(self, key: tuple) -> CharacterParser | None:
        """The start of the item ``key`` = (position, mode, values seen), built once."""
        hit = self._items.get(key)
        if hit is None and key not in self._items:
            hit, known = self._build_item(*key)
            if known:
                self._items[key] = hit
        return hit

    def _mode(self, index: int, count: int | tuple[int, ...]) -> str:
        node = self.node
        if not self.track:
            return "free"
        if isinstance(count, tuple):  # several contains: unbounded room (see _joint_count), so never "match"
            return "avoid" if node.max_contains is not None and count[0] >= node.max_contains else "free"
        if node.max_contains is not None and count >= node.max_contains:
            return "avoid"
        if self.max_items is not None and node.min_contains - count > self._matchable(index + 1):
            return "match"
        return "free"

    def _build_item(self, position: int, mode: str, seen: frozenset) -> tuple[CharacterParser | None, bool]:
        """The start of an item, and whether it is known (``Compiler.settled_start``)."""
        return self.compiler.settled_start(self._item_schema(position, mode, seen))

    def _item_schema(self, position: int, mode: str, seen: frozenset) -> Node:
        """The schema of an item at ``position`` (prefix or ``items``), narrowed by the contains mode and,
        for scalar items of a uniqueItems array, by the values ``seen``."""
        node, merger = self.node, self.compiler.merger
        schema = node.prefix[position] if position < len(node.prefix) else node.items
        if mode == "match":
            schema = merger.intersect(schema, node.contains)
        elif mode == "avoid":
            schema = merger.intersect(schema, merger.negate(node.contains))
        scalars = [json.loads(text) for text in seen if text.__class__ is str and text[0] not in "[{"]
        if scalars:
            schema = merger.intersect(schema, merger.negate(union_of([literal_node(v) for v in scalars])))
        return schema

    def duplicate(self, text: str | PartialItem, seen: frozenset) -> bool:
        """Whether the array/object ``text`` equals (as JSON values: 1 == 1.0, any key order) a seen item, or
        might, when either was read partly in a free run (see partial_item.py)."""
        if isinstance(text, PartialItem):
            return any(text.may_equal(t) for t in seen)
        if any(t.may_equal(text) for t in partials(seen)):
            return True
        values = self._seen_values.get(seen)
        if values is None:
            values = self._seen_values[seen] = frozenset(
                canonical(t) for t in seen if t.__class__ is str and t[0] in "[{"
            )
        return canonical(text) in values


class ArrayParser(ArrayWalkHooks, MemoAllowed):
    """One JSON array; ``extra`` is (contains matches so far, texts of the items seen when unique). With
    several ``contains`` the matches are a tuple (one count each) and so are the trackers of the item."""

    __slots__ = ("_ctx", "_phase", "_index", "_ws", "_child", "_extra", "_tracker", "_text", "_allowed", "_key",
                 "_live")  # fmt: skip

    def __init__(self, ctx: ArrayContext, phase: int, index: int, ws: int, child: CharacterParser | None,
                 extra: tuple, tracker: CharacterParser | tuple | None = None, text: str = "",
                 live: bool | None = None) -> None:  # fmt: skip
        self._ctx, self._phase, self._index, self._ws = ctx, phase, index, ws
        self._child, self._extra, self._tracker, self._text = child, extra, tracker, text
        self._allowed: CharSet | None = None
        self._key: Hashable | None = None
        self._live = live

    def _is_live(self) -> bool:
        """Under the guard (unique_guard.py): whether the item's text may still become a seen item (a text
        read partly in a run never is: the run is only offered once it cannot)."""
        if self._live is None:
            text = self._text
            self._live = text.__class__ is str and self._ctx.guard.items(self._extra[1]).live(text)  # type: ignore[union-attr]
        return self._live

    def _can_add_item(self, index: int) -> bool:
        """Whether another item can come at ``index``: it has a start and, under the guard, can be a value
        not seen. With an item read partly in a run among those seen (only inside one token's walk) the
        guard cannot tell: refused, a stand-in that shrinks the mask (docs/json-schema.md counts it)."""
        start = self._item(index)
        if start is None:
            return False
        guard = self._ctx.guard
        if guard is None:
            return True
        seen = self._extra[1]
        return not partials(seen) and guard.admits(start, "", seen)

    def _item_chars(self, start: CharacterParser) -> CharSet:
        """An item's first characters; under the guard, those after which it can be a value not seen."""
        allowed = start.allowed_characters()
        guard, seen = self._ctx.guard, self._extra[1]
        if guard is None or not seen:
            return allowed
        return guard.allowed(start, "", seen, allowed)

    def _item(self, index: int) -> CharacterParser | None:
        ctx = self._ctx
        if ctx.max_items is not None and index >= ctx.max_items:
            return None
        return ctx.item_start(index, self._extra[0], self._extra[1])[0]

    def _closable(self, count: int) -> bool:
        ctx = self._ctx
        if count < ctx.min_items:
            return False
        counts = self._extra[0]
        if isinstance(counts, tuple):
            return counts[0] >= ctx.node.min_contains and all(c >= low for c, (_, low) in zip(counts[1:], ctx.also))
        return not ctx.track or counts >= ctx.node.min_contains

    def _finish_item(self) -> ArrayParser | None:
        ctx = self._ctx
        count, seen = self._extra
        after = seen
        if ctx.unique:
            text = self._text  # an array or object as read (compared by ``canonical``), a scalar normalised
            if text.__class__ is str and text[0] not in "[{":
                text = json.dumps(json.loads(text))
            if first_char(text) not in "[{" and any(p.may_equal(text) for p in partials(seen)):
                return None  # might repeat an item read partly in a free run (see partial_item.py)
            if ctx.guard is not None and self._is_live() and ctx.guard.items(seen).repeats(text):  # type: ignore[arg-type]
                return None
            after = seen | {text}
        if holds_unknown(self._tracker):
            return None  # a walk's stand-in that does not know whether the item matches (array_walk.py)
        _, tracked = ctx.item_start(self._index, count, seen)
        mode = ctx._mode(self._index, count) if ctx.track else "free"
        if isinstance(count, tuple):
            count = ctx._count_after(count, self._tracker or (None,) * len(count))
        elif mode == "match" or (tracked and self._tracker is not None and self._tracker.can_end()):
            count += 1
        return ArrayParser(ctx, AFTER, self._index + 1, 0, None, (count, after))

    def _begin_item(self, ch: str) -> ArrayParser | None:
        ctx = self._ctx
        if ctx.max_items is not None and self._index >= ctx.max_items:
            return None
        start, tracked = ctx.item_start(self._index, *self._extra)
        if start is None:
            return None
        child = start.add_character(ch)
        if child is None:
            return None
        seen = self._extra[1]
        if (
            ctx.guard is not None
            and seen
            and ch in ctx.guard.items(seen).keep
            and not ctx.guard.admits(child, ch, seen)
        ):
            return None  # the item could only end as a value already seen
        if ctx.also:
            starts = (ctx.tracker(), *ctx.trackers())
            tracker: object = tuple(None if t is None else t.add_character(ch) for t in starts)
        else:
            start = ctx.tracker() if tracked else None
            tracker = start.add_character(ch) if start is not None else None
        return ArrayParser(ctx, VALUE, self._index, 0, child, self._extra, tracker, ch if ctx.unique else "")

    def add_text(self, text: str) -> ArrayParser | None:  # type: ignore[override]
        # reading an item of an array that does not check its items' texts (no uniqueItems), each character
        # the item takes goes to the item and its contains trackers and gives nothing else (a refused tracker
        # stays None): fold the item's and the trackers' own text; where the item refuses a character it may
        # end there, so the text is read again character by character
        if self._phase != VALUE or self._ctx.unique:
            return super().add_text(text)  # type: ignore[return-value]
        child = self._child.add_text(text)
        if child is None:
            return super().add_text(text)  # type: ignore[return-value]
        tracker = self._tracker
        if isinstance(tracker, tuple):
            tracker = tuple(None if t is None else t.add_text(text) for t in tracker)
        elif tracker is not None:
            tracker = tracker.add_text(text)
        return ArrayParser(self._ctx, VALUE, self._index, 0, child, self._extra, tracker)

    def add_character(self, ch: str) -> ArrayParser | None:
        phase, ctx = self._phase, self._ctx
        if phase == VALUE:
            child = self._child.add_character(ch)
            if child is not None:
                tracker = self._tracker
                if isinstance(tracker, tuple):
                    tracker = tuple(None if t is None else t.add_character(ch) for t in tracker)
                elif tracker is not None:
                    tracker = tracker.add_character(ch)
                text = self._text + ch if ctx.unique else ""
                live = None
                if ctx.guard is not None:
                    if not self._is_live() or ch not in ctx.guard.items(self._extra[1]).keep:
                        live = False  # (a character of no seen text: a string now holds what none does)
                    elif not ctx.guard.admits(child, text, self._extra[1]):
                        return None  # the item could only end as a value already seen
                if (
                    ctx.compound
                    and first_char(text) in "[{"
                    and child.can_end()
                    and ctx.duplicate(text, self._extra[1])
                ):
                    return None  # the bracket that would close a duplicate of an earlier item (or might)
                return ArrayParser(ctx, VALUE, self._index, 0, child, self._extra, tracker, text, live)
            if not self._child.can_end():
                return None
            done = self._finish_item()
            return None if done is None else done.add_character(ch)
        if phase == OPEN:
            return ArrayParser(ctx, FIRST, 0, 0, None, self._extra) if ch == "[" else None
        if phase == DONE:
            return None
        ws = ctx.ws.step(self._ws, ch) if ch in WHITESPACE_CHARS else None
        if ws is not None:
            return ArrayParser(ctx, phase, self._index, ws, None, self._extra)
        if not ctx.ws.can_stop(self._ws):
            return None
        if phase in (FIRST, AFTER) and ch == "]":
            if not self._closable(self._index):
                return None
            return ArrayParser(ctx, DONE, self._index, 0, None, (0, frozenset()))
        if phase == AFTER:
            if ch == "," and self._can_add_item(self._index):
                return ArrayParser(ctx, NEXT, self._index, 0, None, self._extra)
            return None
        return self._begin_item(ch)

    def _compute_allowed(self) -> CharSet:
        phase, ctx = self._phase, self._ctx
        if phase == OPEN:
            return _OPEN
        if phase == DONE:
            return EMPTY
        if phase == VALUE:
            if not self._child.can_end():
                allowed = self._child_chars()
                if ctx.compound and first_char(self._text) in ("[", "{"):
                    for closer in "]}":
                        if closer in allowed and self.add_character(closer) is None:
                            allowed = allowed - CharSet.of(closer)  # it would close a duplicate item
                return allowed
            done = self._finish_item()
            if done is None:
                return self._child_chars()
            return union_memo(ctx.unions, (self._child_chars(), done.allowed_characters()))
        ident = (phase, self._index, self._ws, self._extra)
        done = ctx.structural.get(ident)
        if done is None:
            done = ctx.structural[ident] = self._structural_allowed()
        return done

    def _child_chars(self) -> CharSet:
        """The item's characters; under the guard while the item may still repeat a seen one, those after
        which it can still be a new value."""
        allowed = self._child.allowed_characters()
        if self._ctx.guard is not None and self._is_live():
            return self._ctx.guard.allowed(self._child, self._text, self._extra[1], allowed)  # type: ignore[arg-type]
        return allowed

    def _structural_allowed(self) -> CharSet:
        """The characters allowed between items: whitespace, brackets, a comma, an item's start (memoised
        in the context: every whitespace state of a position asks)."""
        phase, ctx = self._phase, self._ctx
        parts = [ctx.ws.allowed(self._ws)]
        if ctx.ws.can_stop(self._ws):
            if phase in (FIRST, AFTER) and self._closable(self._index):
                parts.append(_CLOSE)
            item = self._item(self._index)
            if item is not None:
                if phase != AFTER:
                    parts.append(self._item_chars(item))
                elif self._can_add_item(self._index):
                    parts.append(_COMMA)
        return union_memo(ctx.unions, tuple(parts))

    def can_end(self) -> bool:
        return self._phase == DONE

    def key(self) -> Hashable:
        if self._key is None:
            child = None if self._child is None else self._child.key()
            tracker = self._tracker
            if isinstance(tracker, tuple):
                tracker = tuple(None if t is None else t.key() for t in tracker)
            elif tracker is not None:
                tracker = tracker.key()
            index = self._index
            ctx = self._ctx
            if (
                not ctx.unique
                and not ctx.track
                and ctx.max_items is None
                and index > max(ctx.min_items, len(ctx.node.prefix))
            ):
                index = -1  # past every positional rule: later items all behave alike
            text = self._text if ctx.unique else None  # what the item has read decides what may follow
            self._key = ("arr", id(ctx), self._phase, index, self._ws, child, self._extra, tracker, text)
        return self._key

    def __repr__(self) -> str:
        return f"ArrayParser(phase={self._phase}, index={self._index}, child={self._child!r})"


__all__ = ["AnyValue", "ArrayContext", "ArrayParser"]
