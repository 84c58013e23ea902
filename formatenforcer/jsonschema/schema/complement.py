"""``not`` on the intermediate form: the complement of a node, by De Morgan over its constraints.

A node of one kind is the conjunction of its constraints, so its complement *within that kind* is the
union of the constraints' complements, each again a node: ``minLength 3`` -> ``maxLength 2``, ``pattern``
-> a pattern the string must not match (``String.not_patterns``, enforced by a product automaton),
``integer`` -> a number that is no multiple of 1 (``Number.not_multiples``), ``items: S`` -> ``contains: not
S``, item ``i`` of a tuple -> "at least i+1 items and item i not ...", a named property -> "the key is
present and its value is not ...", ``required`` -> "the key is absent". Complements of sub-schemas are built
lazily and memoised, so recursive schemas stay finite. The kinds a union leaves out are added whole; the
complements of a union's options are intersected one at a time, dropping empty and subsumed products
(schema/products.py), so nested ``oneOf``s do not multiply out into every combination.

A constraint on keys an object does not name says "there exists" in its complement: ``propertyNames: S``
-> some key is not S, ``additionalProperties: X`` -> some key no name and no pattern covers has a value
that is not X, ``patternProperties: {p: X}`` -> some key matching p has a value that is not X. Those are
members the object must hold (``Object.exists``, enforced by jsonschema/object_exists.py); for a closed
object without patterns "some other key" stays "more keys than the named ones present", one alternative
per set of optional names. The complement of a member is "every key of K has a value outside V".

Refused (``Unsupported("not")``), because the complement says "there exists" about something nothing
tracks: ``uniqueItems`` (a duplicate exists) and ``items`` after a prefix (an item past the prefix is bad;
``contains`` counts every item).
"""

from __future__ import annotations

from dataclasses import fields
from fractions import Fraction
from typing import TYPE_CHECKING

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
    Side,
    String,
    Union,
    Unsupported,
    deref,
    kinds_of,
    union_of,
)
from .products import conjoin

if TYPE_CHECKING:
    from .merge import Merger

_KINDS = (Null, Boolean, Number, String, Array, Object)


def _options(node: Node) -> list[Node]:
    node = deref(node)
    if isinstance(node, Union):
        return [o for option in node.options for o in _options(option)]
    return [node]


def complement(merger: Merger, node: Node, within: Node | None = None) -> Node:
    """The values that are not instances of ``node``. ``within``: only its kinds matter (the caller
    intersects with it), so a kind it lacks is skipped even when its complement could not be expressed."""
    relevant = None if within is None else kinds_of(within)
    result: dict[type, list[Node]] = {kind: [kind()] for kind in _KINDS}
    for option in _options(node):
        if isinstance(option, AnyValue):
            return Never("'not' of a schema that allows everything")
        if isinstance(option, Never):
            continue
        kind = type(option)
        if relevant is not None and kind not in relevant:
            continue
        result[kind] = conjoin(merger, result[kind], _within_kind(merger, option), "not")
    return union_of([option for options in result.values() for option in options])


def negated(merger: Merger, node: Node) -> Node:
    """``complement(node)`` for a sub-schema, memoised by node and built now when it can be (so problems
    surface at build time); a recursive schema meets its own complement as a not-yet-resolved reference."""
    memo = merger.negations
    hit = memo.get(id(node))
    if hit is None:
        hit = memo[id(node)] = Ref("not", lambda: complement(merger, node))
        merger.keep(node)
        try:
            hit.get()
        except CycleError:
            pass  # a reference still being built: resolved by Normalizer.finish, which reports problems
    return hit


def _concrete(node: Node) -> Node | None:
    """``deref(node)``, or None for a reference still being built (recursion): treated as constrained."""
    try:
        return deref(node)
    except CycleError:
        return None


def _within_kind(merger: Merger, node: Node) -> list[Node]:
    """The alternatives of the complement of ``node`` among the values of its kind."""
    if isinstance(node, Null):
        return []
    if isinstance(node, Boolean):
        rest = frozenset({True, False}) - node.values
        return [Boolean(rest)] if rest else []
    if isinstance(node, Number):
        return _numbers(node)
    if isinstance(node, String):
        return _strings(node)
    if isinstance(node, Array):
        return _arrays(merger, node)
    if isinstance(node, Object):
        return _objects(merger, node)
    raise Unsupported("not", f"'not' of {type(node).__name__}")


def _numbers(node: Number) -> list[Node]:
    if node.values is not None:  # every number but these, and the non-integers when only integers are allowed
        rest = Number(excluded=node.values)
        return [rest, Number(not_multiples=(Fraction(1),))] if node.integer else [rest]
    point = node.low is not None and node.low == node.high and not node.low_open and not node.high_open
    if point and not (node.integer or node.multiple_of is not None or node.excluded or node.not_multiples):
        return [Number(excluded=frozenset({node.low}))]  # a literal: every other number
    out: list[Node] = []
    if node.integer:
        out.append(Number(not_multiples=(Fraction(1),)))
    if node.low is not None:
        out.append(Number(high=node.low, high_open=not node.low_open))
    if node.high is not None:
        out.append(Number(low=node.high, low_open=not node.high_open))
    if node.multiple_of is not None and not (node.integer and node.multiple_of == 1):
        out.append(Number(not_multiples=(node.multiple_of,)))
    out.extend(Number(low=x, high=x) for x in node.excluded)
    out.extend(Number(multiple_of=m) for m in node.not_multiples)
    return out


def _strings(node: String) -> list[Node]:
    if node.values is not None:
        return [String(excluded=node.values)]
    out: list[Node] = []
    if node.min_length:
        out.append(String(max_length=node.min_length - 1))
    if node.max_length is not None:
        out.append(String(min_length=node.max_length + 1))
    out.extend(String(not_patterns=(p,)) for p in node.patterns)
    out.extend(String(not_formats=(f,)) for f in node.formats)
    if node.excluded:
        out.append(String(values=node.excluded))
    out.extend(String(patterns=(p,)) for p in node.not_patterns)
    out.extend(String(formats=(f,)) for f in node.not_formats)
    return out


def _arrays(merger: Merger, node: Array) -> list[Node]:
    if node.unique:
        raise Unsupported("not", "'not' of uniqueItems (an array holding a duplicate)")
    out: list[Node] = []
    if node.min_items:
        out.append(Array(max_items=node.min_items - 1))
    if node.max_items is not None:
        out.append(Array(min_items=node.max_items + 1))
    for i, schema in enumerate(node.prefix):
        if not isinstance(_concrete(schema), AnyValue):
            out.append(Array((AnyValue(),) * i + (negated(merger, schema),), min_items=i + 1))
    items = _concrete(node.items)
    if isinstance(items, Never):
        out.append(Array(min_items=len(node.prefix) + 1))
    elif not isinstance(items, AnyValue):
        if node.prefix:
            raise Unsupported("not", "'not' of an array constraining the items after a prefix")
        out.append(Array(contains=negated(merger, node.items)))
    if node.contains is not None:
        if node.min_contains > 0:
            out.append(Array(contains=node.contains, min_contains=0, max_contains=node.min_contains - 1))
        if node.max_contains is not None:
            out.append(Array(contains=node.contains, min_contains=node.max_contains + 1))
    for schema, low in node.also_contains:
        out.append(Array(contains=schema, min_contains=0, max_contains=low - 1))
    return out


def _absent(name: str) -> Side:
    return Side(((name, Never(f"'not' needs property {name!r} absent")),), silent=True)


MAX_OPTIONAL = 6
"""A closed object with more optional named keys than this is not complemented (2^n alternatives)."""


def _extra_key(side: Side, required: frozenset[str]) -> list[Node]:
    """Objects holding a key outside the closed ``side``'s names N, given every required key is present
    (the other case is a separate alternative): for each set S of the optional names present, exactly S
    of them and more than |S| + |required names| keys in all."""
    names = list(dict.fromkeys(name for name, _ in side.properties))
    optional = [name for name in names if name not in required]
    if len(optional) > MAX_OPTIONAL:
        raise Unsupported("not", "'not' of a closed object with many optional properties")
    base = [name for name in names if name in required]
    out: list[Node] = []
    for bits in range(1 << len(optional)):
        present = [name for i, name in enumerate(optional) if bits >> i & 1]
        absent = tuple(_absent(name) for name in optional if name not in present)
        out.append(Object(absent, frozenset(base + present), min_properties=len(base) + len(present) + 1))
    return out


def _bad_keys(merger: Merger, names: Node) -> list[Node]:
    """The alternatives of "a key that is not an instance of ``names``" (a propertyNames schema), each a
    ``String`` node: keys are strings, so only the complement's string part matters."""
    return [o for o in _options(complement(merger, names, String())) if isinstance(o, String)]


def _only(node: String, *names: str) -> bool:
    """Whether ``node`` sets no field but ``names``."""
    blank = String()
    return all(getattr(node, f.name) == getattr(blank, f.name) for f in fields(String) if f.name not in names)


def _some_member(keys: Node, value: Node) -> Object:
    """The objects holding a member whose key is an instance of ``keys`` and whose value one of ``value``."""
    return Object(exists=((keys, value),))


def _no_member(merger: Merger, keys: Node, value: Node) -> Node:
    """The complement of ``_some_member(keys, value)``: every key of ``keys`` has a value outside ``value``,
    expressed with the object keywords where ``keys`` allows it."""
    concrete = _concrete(keys)
    if isinstance(concrete, String) and isinstance(_concrete(value), AnyValue):
        return Object(property_names=negated(merger, keys))  # no key of ``keys`` at all
    if isinstance(concrete, String) and _only(concrete, "patterns") and len(concrete.patterns) == 1:
        return Object((Side(patterns=((concrete.patterns[0], negated(merger, value)),), silent=True),))
    if isinstance(concrete, String) and _only(concrete, "excluded", "not_patterns"):
        side = Side(
            tuple((name, AnyValue()) for name in sorted(concrete.excluded)),
            tuple((pattern, AnyValue()) for pattern in concrete.not_patterns),
            negated(merger, value),
            silent=True,
        )
        return Object((side,))
    raise Unsupported("not", "'not' of a 'not' of an object constraining keys it does not name")


def _objects(merger: Merger, node: Object) -> list[Node]:
    out: list[Node] = [Object((_absent(name),)) for name in sorted(node.required)]
    if node.property_names is not None and not isinstance(deref(node.property_names), AnyValue):
        out.extend(_some_member(keys, AnyValue()) for keys in _bad_keys(merger, node.property_names))
    if node.min_properties:
        out.append(Object(max_properties=node.min_properties - 1))
    if node.max_properties is not None:
        out.append(Object(min_properties=node.max_properties + 1))
    for key, needed in node.dependent_required:
        out.extend(Object((_absent(name),), required=frozenset({key})) for name in needed)
    for side in node.sides:
        additional = _concrete(side.additional)
        patterns = [p for p, schema in side.patterns if not isinstance(_concrete(schema), AnyValue)]
        if isinstance(additional, Never) and not side.patterns:
            out.extend(_extra_key(side, node.required))
        elif not isinstance(additional, AnyValue):  # some key no property names and no pattern matches ...
            others = String(
                excluded=frozenset(name for name, _ in side.properties),
                not_patterns=tuple(dict.fromkeys(p for p, _ in side.patterns)),
            )
            bad = AnyValue() if isinstance(additional, Never) else negated(merger, side.additional)
            out.append(_some_member(others, bad))  # ... whose value breaks additionalProperties
        for pattern, schema in side.patterns:
            if pattern in patterns:  # some key matching the pattern has a value that breaks its schema
                out.append(_some_member(String(patterns=(pattern,)), negated(merger, schema)))
        for name, schema in side.properties:
            concrete = _concrete(schema)
            if isinstance(concrete, Never):  # "not absent" is "present", whatever the value
                out.append(Object(required=frozenset({name})))
            elif not isinstance(concrete, AnyValue):
                value = Side(((name, negated(merger, schema)),), silent=True)  # `not` evaluates nothing
                out.append(Object((value,), required=frozenset({name})))
    out.extend(_no_member(merger, keys, value) for keys, value in node.exists)
    return out


__all__ = ["complement", "negated"]
