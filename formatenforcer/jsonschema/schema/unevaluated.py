"""``unevaluatedProperties`` and ``unevaluatedItems`` on the intermediate form.

JSON Schema defines them through annotations: a key (item) is *evaluated* when a passing in-place subschema
(``allOf``, ``$ref``, a passing ``anyOf``/``oneOf`` branch, ``if``/``then``/``else``, ``dependentSchemas``)
named it in ``properties``, matched it by ``patternProperties``, covered it by ``additionalProperties`` or a
nested ``unevaluated*`` (for items: ``prefixItems`` positions, ``items``, ``contains`` matches). The
unevaluated ones must match the ``unevaluated*`` schema.

Normalization already flattens in-place applicators into a union of options, each an intersection of the
parts that pass together, and every ``Side`` (``Array``) remembers what it evaluates. So the evaluated set
of one option is known while generating, and the keyword becomes one more closed side (or a narrower item
schema). Where several options can match one value, the parts that pass are a *set* of options, and the
evaluated keys the union of theirs; evaluation only grows with more passing parts, so

    value valid  <=>  some non-empty set S of options all match it, and the keys outside E(S) match U

which is what ``close`` builds: one alternative per set S (the intersection of S, closed against E(S)).
Sets that add nothing over a subset, or hold two provably disjoint options, are skipped; that keeps the
usual cases (disjoint ``oneOf``, ``if``/``else``, a single object) at one alternative per option.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from .ir import (
    MAX_UNION,
    AnyValue,
    Array,
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
    deref,
    union_of,
)
from .merge import Merger, checked_array

MAX_GROUPS = 256
"""More sets of object (array) alternatives that may pass together (and evaluate different keys) than this
under one ``unevaluated*`` are refused: n overlapping alternatives can make 2^n - 1 such sets (8 make 255)."""

Key = tuple


def kinds() -> list[Node]:
    """The six kinds, unconstrained: ``true`` spelled as alternatives that annotations can be attached to."""
    return [Null(), Boolean(), Number(), String(), Array(), Object()]


def _options(node: Node) -> list[Node]:
    node = deref(node)
    if isinstance(node, Union):
        return [o for option in node.options for o in _options(option)]
    if isinstance(node, AnyValue):
        return kinds()
    return [] if isinstance(node, Never) else [node]


def object_evaluated(node: Object) -> tuple[list[str], list[str], bool]:
    """The named keys, key patterns and "every other key" that the object's sides evaluate."""
    names: dict[str, None] = {}
    patterns: dict[str, None] = {}
    every = False
    for side in node.sides:
        if side.silent:
            continue
        names.update(dict.fromkeys(n for n, _ in side.properties))
        patterns.update(dict.fromkeys(p for p, _ in side.patterns))
        every = every or side.rest_evaluated
    return list(names), list(patterns), every


def _object_key(node: Object) -> Key:
    names, patterns, every = object_evaluated(node)
    return (True,) if every else (False, frozenset(names), frozenset(patterns))


def _array_key(node: Array) -> Key:
    if node.evaluated is None:
        return (True,)
    return (False, node.evaluated, frozenset(id(deref(c)) for c in node.evaluated_by))


def _join(keys: list[Key]) -> Key:
    if any(k[0] for k in keys):
        return (True,)
    if len(keys[0]) == 3 and isinstance(keys[0][1], int):
        return (False, max(k[1] for k in keys), frozenset().union(*(k[2] for k in keys)))
    return (False, frozenset().union(*(k[1] for k in keys)), frozenset().union(*(k[2] for k in keys)))


def close_object(node: Object, rest: Node) -> Node:
    """``node`` whose keys outside its evaluated set must match ``rest`` (and now count as evaluated)."""
    names, patterns, every = object_evaluated(node)
    if every:
        return node
    side = Side(tuple((n, AnyValue()) for n in names), tuple((p, AnyValue()) for p in patterns), rest, True)
    return replace(node, sides=(*node.sides, side))


def close_array(merger: Merger, node: Array, rest: Node) -> Node:
    """``node`` whose items outside its evaluated set must match ``rest`` (and now count as evaluated)."""
    if node.evaluated is None:
        return node
    schema = union_of([rest, *node.evaluated_by]) if node.evaluated_by else rest
    prefix = tuple(p if i < node.evaluated else merger.lazy_and(p, schema) for i, p in enumerate(node.prefix))
    closed = replace(node, prefix=prefix, items=merger.lazy_and(node.items, schema), evaluated=None,
                     evaluated_by=())  # fmt: skip
    return checked_array(closed)


def _groups(merger: Merger, targets: list[Node], keys: list[Key], keyword: str) -> list[tuple[int, ...]]:
    """The sets of options that need an alternative of their own: every single option, and every larger
    set whose members can overlap pairwise and each evaluate something the others do not. Both properties
    pass to subsets, so sets are grown one member at a time and a set failing either is not grown further;
    mostly disjoint options (nested ``oneOf``s) then give few sets however many options there are."""
    n = len(targets)
    overlap = [[i != j and not merger.disjoint(targets[i], targets[j]) for j in range(n)] for i in range(n)]
    found: list[tuple[int, ...]] = [(i,) for i in range(n)]
    layer = found
    while layer:
        grown: list[tuple[int, ...]] = []
        for group in layer:
            for j in range(group[-1] + 1, n):
                if not all(overlap[i][j] for i in group):
                    continue
                candidate = (*group, j)
                total = _join([keys[i] for i in candidate])
                if any(_join([keys[k] for k in candidate if k != i]) == total for i in candidate):
                    continue  # some member evaluates nothing new: a smaller set already covers it
                grown.append(candidate)
                if len(found) + len(grown) > MAX_GROUPS:
                    raise Unsupported(
                        keyword,
                        f"more than {MAX_GROUPS} combinations of overlapping alternatives "
                        f"under {keyword} (each set of branches that can pass together is one)",
                    )
        found = found + grown
        layer = grown
    return found


def close(merger: Merger, node: Node, rest: Node, keyword: str) -> Node:
    """``node`` under ``unevaluatedProperties: rest`` (``keyword`` names which of the two) exactly; raises
    Unsupported when too many overlapping alternatives would have to be combined."""
    kind: type = Object if keyword == "unevaluatedProperties" else Array
    key: Callable[[Node], Key] = _object_key if kind is Object else _array_key  # type: ignore[assignment]
    options = _options(node)
    targets = [o for o in options if isinstance(o, kind)]
    others = [o for o in options if not isinstance(o, kind)]
    if len(targets) > MAX_UNION:
        raise Unsupported(keyword, f"more than {MAX_UNION} alternatives under {keyword}")
    keys = [key(t) for t in targets]
    out: list[Node] = list(others)
    for group in _groups(merger, targets, keys, keyword):
        part: Node = targets[group[0]]
        for i in group[1:]:
            part = merger.intersect(part, targets[i])
        if isinstance(part, Object):
            out.append(close_object(part, rest))
        elif isinstance(part, Array):
            out.append(close_array(merger, part, rest))
    return union_of(out)


__all__ = ["MAX_GROUPS", "close", "kinds", "close_array", "close_object", "object_evaluated"]
