"""Algebra on the intermediate form: intersection (``allOf``), union, complement (``not``), disjointness.

Intersection is exact for every pair of kinds except where noted by raising ``Unsupported`` (two different
``contains`` on one array). Sub-schemas of containers are intersected lazily (a ``Ref`` whose resolution
merges), which keeps recursive schemas finite; results are memoised per normalizer.
"""

from __future__ import annotations

from fractions import Fraction
from math import gcd

from .complement import complement
from .ir import (
    AnyValue,
    Array,
    Boolean,
    CycleError,
    Never,
    Node,
    Null,
    Number,
    Object,
    Ref,
    String,
    Union,
    Unsupported,
    deref,
    number_literals,
    settled,
    union_of,
)
from .number_bounds import number_satisfiable
from .validate import _search, accepts, number_ok, string_ok


def _min_opt(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else min(a, b)


def _lcm(a, b):  # noqa: ANN001, ANN202 - Fractions
    return Fraction(a.numerator * b.numerator // gcd(a.numerator, b.numerator), gcd(a.denominator, b.denominator))


MOST_PARTS = 32
"""The most parts an intersection is keyed by; past it, by its two nodes (a chain of thousands of nested
``allOf`` would otherwise keep sets of every size up to its length: quadratic memory)."""


class Merger:
    """Intersections with a memo, one per normalizer (never shared between schemas)."""

    def __init__(self) -> None:
        self._lazy: dict[tuple[int, int], Node] = {}
        self._met: dict[frozenset[int], Node] = {}
        """The parts of an intersection (``_parts``) -> its node: the same parts always give the same node,
        whatever the order and grouping they were met in, so the checks that follow merged sub-schemas
        (finite.py, the array items that must match ``contains``) meet a node again instead of a fresh copy
        each time, and a recursive schema stays a finite graph. Keyed by the pair alone, ``(t and u) and t``
        was a new node beside ``t and u``: two arrays that contain each other through ``contains`` unfolded
        without end, each match one merge deeper."""
        self._parts: dict[int, frozenset[int]] = {}
        """id(node made by ``intersect``) -> the ids of the concrete nodes it is the intersection of (a node
        not made here is its own only part). Intersection is associative, commutative and idempotent, so
        the node of a set of parts stands for every way of intersecting them."""
        self._keep: list[Node] = []
        self.negations: dict[int, Ref] = {}
        self._meeting: set[frozenset[int]] = set()
        """The parts whose intersection is being computed (a pair met again inside its own is a cycle)."""
        self._complements: dict[int, Node] = {}
        """id(node) -> its whole complement (``negate`` without ``within``): one node per node, as ``_met``."""
        self.facts: dict[tuple[str, int], tuple[Node, object]] = {}
        """(kind, id(node)) -> (node, what a later stage computed of it once for the schema's life: the
        named keys of an object, asked by the finiteness check and by the object's compiled context)."""

    def lazy_and(self, a: Node, b: Node) -> Node:
        """``a`` and ``b`` together, merged when first needed."""
        if isinstance(a, AnyValue) or a is b:
            return b
        if isinstance(b, AnyValue):
            return a
        key = (id(a), id(b))
        hit = self._lazy.get(key)
        if hit is None:
            self._keep.extend((a, b))
            hit = self._lazy[key] = Ref("allOf", lambda: self.intersect(a, b))
        return hit

    def intersect(self, a: Node, b: Node) -> Node:
        """The values that are instances of both ``a`` and ``b`` (memoised per pair of concrete nodes)."""
        a, b = deref(a), deref(b)
        parts = self._parts
        mine, theirs = parts.get(id(a)), parts.get(id(b))
        if mine is None:
            mine = frozenset((id(a),))
        if theirs is None:
            theirs = frozenset((id(b),))
        if len(mine) + len(theirs) > MOST_PARTS:
            key = frozenset((id(a), id(b)))  # (the pair: also the parts of their intersection, only coarser)
        else:
            key = mine | theirs
        hit = self._met.get(key)
        if hit is None:
            if key in self._meeting:
                # the parts need themselves with no value read in between (a union that names itself through
                # a $ref, e.g. anyOf [{"$ref": "#/$defs/x"}, ...] inside x): a cycle, refused by the caller
                raise CycleError("allOf")
            self._meeting.add(key)
            try:
                hit = self._met[key] = self._intersect(a, b)
            finally:
                self._meeting.discard(key)
            if hit is not a and hit is not b and id(hit) not in parts:
                parts[id(hit)] = key
            self._keep.extend((a, b, hit))
        return hit

    def _intersect(self, a: Node, b: Node) -> Node:
        if isinstance(a, AnyValue) or isinstance(b, Never):
            return b
        if isinstance(b, AnyValue) or isinstance(a, Never):
            return a
        if isinstance(a, Union):
            return union_of([self.intersect(option, b) for option in a.options])
        if isinstance(b, Union):
            return union_of([self.intersect(a, option) for option in b.options])
        if type(a) is not type(b):
            return Never(f"a value cannot be both {type(a).__name__.lower()} and {type(b).__name__.lower()}")
        if isinstance(a, Null):
            return a
        if isinstance(a, Boolean):
            values = a.values & b.values
            return Boolean(values) if values else Never("no boolean value is left")
        if isinstance(a, Number):
            return _numbers(a, b)
        if isinstance(a, String):
            return _strings(a, b)
        if isinstance(a, Array):
            return self._arrays(a, b)
        return self._objects(a, b)

    def _arrays(self, a: Array, b: Array) -> Node:
        also = a.also_contains + b.also_contains
        if a.contains is not None and b.contains is not None:
            if a.max_contains is None:
                a, b = b, a  # the one with a maximum (if any) stays the counted-and-capped `contains`
            if b.max_contains is not None:
                raise Unsupported("contains", "two 'contains' with maxContains on one array")
            also = also + ((b.contains, b.min_contains),)
        prefix = tuple(
            self.lazy_and(a.prefix[i] if i < len(a.prefix) else a.items, b.prefix[i] if i < len(b.prefix) else b.items)
            for i in range(max(len(a.prefix), len(b.prefix)))
        )
        with_contains = a if a.contains is not None else b
        return checked_array(
            Array(
                prefix,
                self.lazy_and(a.items, b.items),
                max(a.min_items, b.min_items),
                _min_opt(a.max_items, b.max_items),
                a.unique or b.unique,
                with_contains.contains,
                with_contains.min_contains,
                with_contains.max_contains,
                None if a.evaluated is None or b.evaluated is None else max(a.evaluated, b.evaluated),
                a.evaluated_by + b.evaluated_by,
                tuple(dict.fromkeys(also)),
            )
        )

    def _objects(self, a: Object, b: Object) -> Node:
        names: Node | None
        if a.property_names is None or b.property_names is None:
            names = a.property_names or b.property_names
        else:
            names = self.lazy_and(a.property_names, b.property_names)
        low, high = max(a.min_properties, b.min_properties), _min_opt(a.max_properties, b.max_properties)
        if high is not None and low > high:
            return Never(f"minProperties {low} > maxProperties {high}")
        merged = Object(
            a.sides + b.sides,
            a.required | b.required,
            names,
            max(a.min_properties, b.min_properties),
            _min_opt(a.max_properties, b.max_properties),
            a.dependent_required + b.dependent_required,
            tuple(dict.fromkeys(a.exists + b.exists)),
        )
        return checked_object(merged)

    def negate(self, node: Node, within: Node | None = None) -> Node:
        """The values that are *not* instances of ``node`` (see schema/complement.py); raises Unsupported where the
        complement cannot be expressed. ``within``: only its kinds matter (the result is intersected with
        it), so a kind it lacks is skipped even when its complement could not be expressed."""
        if within is not None:
            return complement(self, node, within)
        hit = self._complements.get(id(node))
        if hit is None:
            hit = self._complements[id(node)] = complement(self, node)
            self._keep.extend((node, hit))
        return hit

    def keep(self, node: Node) -> None:
        """Keeps ``node`` alive as long as the merger (memo keys are object ids)."""
        self._keep.append(node)

    def disjoint(self, a: Node, b: Node, depth: int = 0) -> bool:
        """True only when no value can match both (conservative: False when unsure)."""
        a, b = deref(a), deref(b)
        if isinstance(a, Never) or isinstance(b, Never):
            return True
        if isinstance(a, AnyValue) or isinstance(b, AnyValue) or depth > 8:
            return False
        if isinstance(a, Union):
            return all(self.disjoint(option, b, depth + 1) for option in a.options)
        if isinstance(b, Union):
            return all(self.disjoint(a, option, depth + 1) for option in b.options)
        if type(a) is not type(b):
            return True
        if isinstance(a, Boolean):
            return not (a.values & b.values)
        if isinstance(a, String):
            for one, other in ((a, b), (b, a)):
                if one.values is not None and not any(string_ok(other, v) for v in one.values):
                    return True
            return False
        if isinstance(a, Number):
            for one, other in ((a, b), (b, a)):
                listed = number_literals(one)  # a literal or an enum: no merge (oneOf of hundreds of consts)
                if listed is not None:
                    return not any(number_ok(other, v, v.denominator == 1) for v in listed)
            return isinstance(_numbers(a, b), Never)
        if isinstance(a, Object):
            if any(_forbids(one, name) for one, other in ((a, b), (b, a)) for name in other.required):
                return True
            for name in a.required & b.required:
                va = _first_property(a, name)
                vb = _first_property(b, name)
                if va is not None and vb is not None and self.disjoint(va, vb, depth + 1):
                    return True
        return False


def _forbids(node: Object, name: str) -> bool:
    """Whether no object of ``node`` can hold key ``name`` (a closed side does not name or match it, or a
    side gives it the schema ``false``)."""
    for side in node.sides:
        matched = [schema for key, schema in side.properties if key == name]
        matched += [schema for pattern, schema in side.patterns if _search(pattern, name, False)]
        if any(isinstance(deref(schema), Never) for schema in matched):
            return True
        if not matched and isinstance(deref(side.additional), Never):
            return True
    return False


def checked_object(node: Object) -> Node:
    """``node``, or Never when a required key cannot be present: a side gives it the schema ``false`` (as a
    ``not`` of ``required`` does), or a closed side neither names nor matches it; or more keys are required
    than ``maxProperties`` allows. Pruning such intersections early keeps products of complements small."""
    if node.max_properties is not None and len(node.required) > node.max_properties:
        return Never(f"{len(node.required)} required properties > maxProperties {node.max_properties}")
    for name in sorted(node.required):  # (sorted: the message names the same key in every run)
        for side in node.sides:
            matched = [schema for key, schema in side.properties if key == name]
            matched += [schema for pattern, schema in side.patterns if _search(pattern, name, False)]
            if not matched and isinstance(settled(side.additional), Never):
                return Never(f"required property {name!r} is not allowed")
            if any(isinstance(settled(schema), Never) for schema in matched):
                return Never(f"required property {name!r} can have no value")
    return node


def _first_property(node: Object, name: str) -> Node | None:
    for side in node.sides:
        for key, schema in side.properties:
            if key == name:
                return schema
    return None


def checked_array(node: Array) -> Node:
    """``node``, or Never when its bounds contradict each other or a needed item cannot exist."""
    if node.max_items is not None and node.min_items > node.max_items:
        return Never(f"minItems {node.min_items} > maxItems {node.max_items}")
    for i in range(min(node.min_items, len(node.prefix))):
        target = node.prefix[i]
        if isinstance(target, Never):
            return Never(f"item {i} is required by minItems but cannot exist: {target.reason}")
    return node


def _numbers(a: Number, b: Number) -> Node:
    low, low_open = a.low, a.low_open
    if b.low is not None and (low is None or b.low > low or (b.low == low and b.low_open)):
        low, low_open = b.low, b.low_open
    high, high_open = a.high, a.high_open
    if b.high is not None and (high is None or b.high < high or (b.high == high and b.high_open)):
        high, high_open = b.high, b.high_open
    multiple = a.multiple_of if b.multiple_of is None else b.multiple_of if a.multiple_of is None else None
    if a.multiple_of is not None and b.multiple_of is not None:
        multiple = _lcm(a.multiple_of, b.multiple_of)
    merged = Number(a.integer or b.integer, low, low_open, high, high_open, multiple, a.excluded | b.excluded,
                    tuple(dict.fromkeys(a.not_multiples + b.not_multiples)))  # fmt: skip
    if a.values is not None or b.values is not None:
        # a set of values under other constraints: the values that meet them are the whole node (only
        # ``integer`` stays, as it also rules out a fraction in the text)
        listed = a.values if b.values is None else b.values if a.values is None else a.values & b.values
        values = frozenset(v for v in listed if number_ok(merged, v, v.denominator == 1))  # type: ignore[union-attr]
        return Number(merged.integer, values=values) if values else Never("no enum number satisfies the bounds")
    return merged if number_satisfiable(merged) else Never("no number satisfies the bounds")


def _strings(a: String, b: String) -> Node:
    if a.values is not None or b.values is not None:
        if a.values is not None and b.values is not None:
            values = a.values & b.values
        else:
            listed, other = (a, b) if a.values is not None else (b, a)
            values = frozenset(v for v in listed.values if string_ok(other, v))
        return String(values=values) if values else Never("no enum string satisfies the other constraints")
    high = _min_opt(a.max_length, b.max_length)
    low = max(a.min_length, b.min_length)
    if high is not None and low > high:
        return Never(f"minLength {low} > maxLength {high}")
    return String(low, high, a.patterns + b.patterns, a.formats + b.formats, None, a.excluded | b.excluded,
                  a.not_patterns + b.not_patterns, a.not_formats + b.not_formats)  # fmt: skip


__all__ = ["Merger", "Unsupported", "accepts", "checked_array", "checked_object", "settled", "union_of"]
