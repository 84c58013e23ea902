"""Intersections of unions, kept small: the complement of a union is an intersection of unions.

``not: {anyOf: [A, B, C]}`` (and every other branch a ``oneOf`` branch must exclude) is ``not A AND not B
AND not C``, each complement itself a union (schema/complement.py); multiplied out, that is |not A| x |not B| x ...
alternatives, which nested ``oneOf``s push into the hundreds of thousands. Most of the products are empty
or redundant, so ``conjoin`` multiplies one factor at a time and after each step drops

- empty alternatives (``Merger.intersect`` returns Never for contradictions such as "key k required" and
  "key k absent", see ``merge.checked_object``),
- duplicates, and alternatives that imply another one (``implies``: their value set is a subset; the
  union is unchanged).

The alternatives a complement builds carry no annotations (``not`` evaluates nothing, for
``unevaluated*``), so dropping a subsumed one loses nothing. The factors and the result stay within
``MAX_PRODUCT`` and ``merge.MAX_UNION``; past them the caller's keyword is refused (``Unsupported``).
"""

from __future__ import annotations

from dataclasses import fields, replace
from typing import TYPE_CHECKING

from .ir import (
    MAX_UNION,
    AnyValue,
    Boolean,
    Never,
    Node,
    Null,
    Number,
    Object,
    Side,
    String,
    Union,
    Unsupported,
    settled,
)

if TYPE_CHECKING:
    from .merge import Merger

MAX_PRODUCT = 8192
"""At most this many pairwise intersections per step (alternatives so far x the next factor's)."""


def _sig(node: Node) -> object:
    """What identifies a sub-schema cheaply: ``true``/``false`` by kind, anything else by identity."""
    node = settled(node)
    if isinstance(node, AnyValue):
        return "any"
    if isinstance(node, Never):
        return "never"
    return id(node)


def side_key(side: Side, annotations: bool = True) -> tuple:
    """A side's constraints (and, with ``annotations``, what it evaluates) as a hashable value."""
    key = (tuple((n, _sig(s)) for n, s in side.properties), tuple((p, _sig(s)) for p, s in side.patterns),
           _sig(side.additional))  # fmt: skip
    return (*key, side.rest_evaluated, side.silent) if annotations else key


def _trivial(side: Side) -> bool:
    """A side that constrains nothing (every value ``true``)."""
    return _sig(side.additional) == "any" and all(_sig(s) == "any" for _, s in side.properties + side.patterns)


def _value_sides(node: Object) -> frozenset:
    return frozenset(side_key(s, False) for s in node.sides if not _trivial(s))


def _tidy(node: Node) -> Node:
    """``node`` with repeated identical object sides dropped (intersections concatenate sides)."""
    if not isinstance(node, Object) or len(node.sides) < 2:
        return node
    seen: dict[tuple, Side] = {}
    for side in node.sides:
        seen.setdefault(side_key(side), side)
    return node if len(seen) == len(node.sides) else replace(node, sides=tuple(seen.values()))


def _exists(node: Object) -> frozenset:
    """The members an object must hold (``Object.exists``), by their schemas' signatures."""
    return frozenset((_sig(keys), _sig(value)) for keys, value in node.exists)


def _key(node: Node) -> object:
    """Equal keys: the same constraints (exactly; otherwise identity)."""
    if isinstance(node, Object):
        return (Object, frozenset(side_key(s) for s in node.sides), node.required, _sig(node.property_names)
                if node.property_names is not None else None, node.min_properties, node.max_properties,
                frozenset(node.dependent_required), _exists(node))  # fmt: skip
    if isinstance(node, (Null, Boolean, Number, String)):
        kind = type(node)
        names = _FIELD_NAMES.get(kind)
        if names is None:  # (dataclasses.fields builds its tuple anew at every call)
            names = _FIELD_NAMES[kind] = tuple(f.name for f in fields(node))
        return (kind, *(getattr(node, name) for name in names))
    return id(node)


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}
"""The field names of the scalar node classes, in order (four classes)."""


def _profile(node: Node) -> tuple:
    """What ``implies`` compares, computed once per alternative."""
    if isinstance(node, Object):
        names = None if node.property_names is None else _sig(node.property_names)
        return (Object, node.required, node.min_properties, node.max_properties, names,
                frozenset(node.dependent_required), _value_sides(node), _exists(node))  # fmt: skip
    if isinstance(node, Boolean):
        return (Boolean, node.values)
    return (type(node), _key(node))


def _implied(a: tuple, b: tuple) -> bool:
    """Whether the alternative profiled ``a`` implies the one profiled ``b`` (conservative)."""
    if a[0] is not b[0]:
        return False
    if a[0] is Boolean:
        return a[1] <= b[1]
    if a[0] is not Object:
        return a[0] is Null or a[1] == b[1]
    _, required, low, high, names, dependent, sides, exists = a
    _, b_required, b_low, b_high, b_names, b_dependent, b_sides, b_exists = b
    if not b_required <= required or low < b_low or (b_names is not None and names != b_names):
        return False
    if b_high is not None and (high is None or high > b_high):
        return False
    return b_dependent <= dependent and b_sides <= sides and b_exists <= exists


def implies(a: Node, b: Node) -> bool:
    """True only when every value of ``a`` is a value of ``b`` (conservative: False when unsure)."""
    return a is b or _implied(_profile(a), _profile(b))


def _alternatives(node: Node) -> list[Node]:
    node = settled(node)
    if isinstance(node, Union):
        return [o for option in node.options for o in _alternatives(option)]
    return [] if isinstance(node, Never) else [node]


def prune(options: list[Node]) -> list[Node]:
    """``options`` without duplicates and without options that imply another (the union is the same)."""
    unique: dict[object, Node] = {}
    for option in options:
        unique.setdefault(_key(option), option)
    kept = list(unique.values())
    if len(kept) > 2 * MAX_UNION:
        return kept  # too many to compare pairwise; the caller's limit decides
    profiles = [_profile(option) for option in kept]
    out = []
    for i, a in enumerate(profiles):
        if not any(j != i and _implied(a, b) and (j < i or not _implied(b, a)) for j, b in enumerate(profiles)):
            out.append(kept[i])
    return out


def conjoin(merger: Merger, current: list[Node], factor: list[Node], keyword: str) -> list[Node]:
    """The alternatives of ``(OR current) AND (OR factor)``, pruned; Unsupported(``keyword``) past the limits."""
    if len(current) * len(factor) > MAX_PRODUCT:
        raise Unsupported(keyword, f"a complement multiplies into more than {MAX_PRODUCT} combinations")
    products = [_tidy(o) for a in current for b in factor for o in _alternatives(merger.intersect(a, b))]
    out = prune(products)
    if len(out) > MAX_UNION:
        raise Unsupported(keyword, f"a complement expands into more than {MAX_UNION} alternatives")
    return out


__all__ = ["MAX_PRODUCT", "conjoin", "implies", "prune", "side_key"]
