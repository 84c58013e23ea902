"""The typed intermediate form a JSON Schema is normalized into, before any parser is built.

A schema becomes a tree of small immutable nodes, one class per value kind. Keywords that constrain one kind
only (``minLength``, ``minimum``, ``properties``...) land on that kind's node; ``type`` picks which kinds
exist; ``anyOf`` becomes a ``Union``; ``allOf`` is merged away (see schema/merge.py); ``false`` and contradictions
become ``Never(reason)``. ``$ref`` stays a lazy ``Ref`` so recursive schemas are finite trees.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction

IMPLEMENTED_KEYWORDS = frozenset(
    {
        # applicators and references
        "$ref", "$dynamicRef", "$recursiveRef", "$defs", "definitions", "$anchor", "allOf", "anyOf", "oneOf", "not",
        "if", "then", "else", "dependentRequired", "dependentSchemas", "dependencies",
        # any kind
        "type", "enum", "const", "nullable",
        # numbers
        "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
        # strings
        "minLength", "maxLength", "pattern", "format",
        # arrays
        "items", "prefixItems", "additionalItems", "unevaluatedItems", "minItems", "maxItems", "uniqueItems",
        "contains", "minContains", "maxContains",
        # objects
        "properties", "required", "additionalProperties", "patternProperties", "propertyNames",
        "unevaluatedProperties",
        "minProperties", "maxProperties",
    }
)  # fmt: skip
"""Every validation keyword formatenforcer enforces (some only in the combinations schema/normalize.py accepts)."""

ANNOTATIONS = frozenset(
    {
        "title", "description", "default", "examples", "$comment", "deprecated", "readOnly", "writeOnly",
        "$schema", "$id", "id", "contentMediaType", "contentEncoding", "contentSchema", "$vocabulary",
        "discriminator", "example", "x-nullable", "externalDocs", "xml", "$dynamicAnchor",
        "$recursiveAnchor",
    }
)  # fmt: skip
"""Keywords that carry no constraint: accepted and ignored (``discriminator`` only names a property)."""


class Node:
    """Base of the intermediate form."""

    __slots__ = ()


@dataclass(frozen=True, eq=False)
class AnyValue(Node):
    """Any JSON value (the schema ``true``)."""


@dataclass(frozen=True, eq=False)
class Never(Node):
    """No value at all; ``reason`` says why (shown in errors)."""

    reason: str


@dataclass(frozen=True, eq=False)
class Null(Node):
    """``null``."""


@dataclass(frozen=True, eq=False)
class Boolean(Node):
    """``true`` and/or ``false``."""

    values: frozenset[bool] = frozenset({True, False})


@dataclass(frozen=True, eq=False)
class Number(Node):
    """A JSON number in ``[low, high]`` (each end open when its flag is set), a multiple of ``multiple_of``
    (``Fraction(1)`` for integers). ``integer`` also forbids fraction and exponent in the text.
    ``not_multiples`` (from ``not``): the value is a multiple of none of them (``1``: not an integer).
    ``values`` (a large number enum, see ``union_of``): the value is also one of them; such a number is
    written in plain decimal notation (no exponent)."""

    integer: bool = False
    low: Fraction | None = None
    low_open: bool = False
    high: Fraction | None = None
    high_open: bool = False
    multiple_of: Fraction | None = None
    excluded: frozenset[Fraction] = frozenset()
    not_multiples: tuple[Fraction, ...] = ()
    values: frozenset[Fraction] | None = None


@dataclass(frozen=True, eq=False)
class String(Node):
    """A JSON string. ``values`` (an enum) makes every other field irrelevant; lengths count code points.
    ``not_patterns``/``not_formats`` (from ``not``): patterns the string must not match, formats it must not
    have."""

    min_length: int = 0
    max_length: int | None = None
    patterns: tuple[str, ...] = ()
    formats: tuple[str, ...] = ()
    values: frozenset[str] | None = None
    excluded: frozenset[str] = frozenset()
    not_patterns: tuple[str, ...] = ()
    not_formats: tuple[str, ...] = ()


@dataclass(frozen=True, eq=False)
class Array(Node):
    """A JSON array: item ``i`` follows ``prefix[i]``, later ones ``items``; ``contains`` counts matches.

    ``evaluated`` and ``evaluated_by`` record what ``unevaluatedItems`` may not touch: the first ``evaluated``
    items (None: every item, an ``items`` keyword was present) and the items matching any ``evaluated_by``
    schema (the ``contains`` keywords merged in). Literal arrays (``const``/``enum``) evaluate nothing.
    ``also_contains``: more ``contains`` merged in by ``allOf``, as (schema, minimum matches), with no maximum
    (arrays.py counts each one beside ``contains``)."""

    prefix: tuple[Node, ...] = ()
    items: Node = field(default_factory=AnyValue)
    min_items: int = 0
    max_items: int | None = None
    unique: bool = False
    contains: Node | None = None
    min_contains: int = 1
    max_contains: int | None = None
    evaluated: int | None = 0
    evaluated_by: tuple[Node, ...] = ()
    also_contains: tuple[tuple[Node, int], ...] = ()


@dataclass(frozen=True, eq=False)
class Side(Node):
    """One original object schema's key rules: the value of key ``k`` must match ``properties[k]`` and every
    pattern matching ``k``; a key in neither must match ``additional``.

    For ``unevaluatedProperties``: the side's named and pattern keys count as evaluated, and every other key
    too when ``rest_evaluated`` (an explicit ``additionalProperties`` or ``unevaluatedProperties``);
    a ``silent`` side (a ``const``/``enum`` literal) evaluates nothing."""

    properties: tuple[tuple[str, Node], ...] = ()
    patterns: tuple[tuple[str, Node], ...] = ()
    additional: Node = field(default_factory=AnyValue)
    rest_evaluated: bool = False
    silent: bool = False


@dataclass(frozen=True, eq=False)
class Object(Node):
    """A JSON object: every key obeys every ``Side`` (allOf of objects keeps one side each).

    ``exists`` (from ``not``): pairs (keys, value), each a member the object must hold: a key that is an
    instance of ``keys`` (a ``String`` node, or ``AnyValue`` for any key) whose value is an instance of
    ``value``. ``not {propertyNames: S}`` is "some key is not S", ``not {additionalProperties: X}`` "some
    key no property names or pattern matches has a value that is not X" (objects.py tracks them)."""

    sides: tuple[Side, ...] = ()
    required: frozenset[str] = frozenset()
    property_names: Node | None = None
    min_properties: int = 0
    max_properties: int | None = None
    dependent_required: tuple[tuple[str, tuple[str, ...]], ...] = ()
    exists: tuple[tuple[Node, Node], ...] = ()


@dataclass(frozen=True, eq=False)
class Union(Node):
    """Any of ``options`` (``anyOf``, ``type`` lists, ``oneOf`` with disjoint branches)."""

    options: tuple[Node, ...]


class CycleError(Exception):
    """A reference whose resolution needs its own result (``allOf: [{"$ref": "#"}]`` at the root)."""


class Ref(Node):
    """A ``$ref`` resolved on first use, so recursive schemas stay finite."""

    __slots__ = ("pointer", "_resolve", "_target", "_busy")

    def __init__(self, pointer: str, resolve: Callable[[], Node]) -> None:
        self.pointer = pointer
        self._resolve = resolve
        self._target: Node | None = None
        self._busy = False

    def get(self) -> Node:
        """The node the reference names (resolved once); CycleError if resolving needs itself."""
        if self._target is None:
            if self._busy:
                raise CycleError(self.pointer)
            self._busy = True
            try:
                self._target = self._resolve()
            finally:
                self._busy = False
            if isinstance(self._target, Union):
                self._target = _without_self_loops(self._target)
        return self._target

    @property
    def resolved(self) -> Node | None:
        """The target if already resolved, else None (never triggers the resolution)."""
        return self._target

    def settle(self, node: Node) -> None:
        """Resolves the reference to ``node`` when its own resolution failed (lenient: unenforced)."""
        self._target = node

    def __repr__(self) -> str:
        return f"Ref({self.pointer!r})"


def _without_self_loops(union: Union) -> Node:
    """``union`` with every option that leads back to it through references and unions alone taken out, and
    the unions reached that way flattened in. ``x = anyOf [{"$ref": x}, S]`` is then ``S``, the smallest
    set that solves it (a value is never an instance of ``x`` only because it is an instance of ``x``), and
    code that walks a union's options meets no cycle. Only references already resolved are followed, so
    nothing is built here that would not be built anyway."""
    if not any(isinstance(option, Ref) for option in union.options):
        return union
    seen = {id(union)}
    out: list[Node] = []
    looped = False
    stack = list(reversed(union.options))
    while stack:
        option = stack.pop()
        target = option
        while isinstance(target, Ref) and target.resolved is not None:
            target = target.resolved
        if isinstance(target, Union):
            if id(target) in seen:
                looped = True  # reached again: it adds nothing the first visit does not
                continue
            seen.add(id(target))
            stack.extend(reversed(target.options))
        else:
            out.append(option)
    if not looped:
        return union
    if not out:
        return Never("a union whose every option is itself")
    return out[0] if len(out) == 1 else Union(tuple(out))


def deref(node: Node) -> Node:
    """Follows references until a concrete node."""
    if node.__class__ is not Ref:
        return node  # (most nodes: no loop to set up)
    steps = 0
    seen: set[int] | None = None
    while isinstance(node, Ref):
        node = node.get()
        steps += 1
        if steps > 64:  # a long chain, or a cycle: a cycle meets a reference again (chains of any length pass)
            if seen is None:
                seen = set()
            if id(node) in seen:
                return Never("a $ref cycle that never reaches a schema")
            seen.add(id(node))
    return node


MAX_UNION = 256
"""A union that would grow past this many branches (anyOf of anyOf of ...) is refused as unsupported."""

NUMBER_SET_MIN = 64
"""A union with more number literals than this holds them as one ``Number`` with a set of ``values``. Fewer
stay one branch each, which may also be written with an exponent (``1e2`` for 100); the set is written in
plain decimal notation only, like numbers under ``multipleOf``."""


class Unsupported(Exception):
    """A combination the parsers cannot enforce without risking a dead end; ``keyword`` names it."""

    def __init__(self, keyword: str, reason: str) -> None:
        super().__init__(reason)
        self.keyword = keyword
        self.reason = reason


def union_of(options: list[Node] | tuple[Node, ...]) -> Node:
    """The union of ``options``: nested unions flattened, ``Never`` dropped, one option returned as is."""
    flat: list[Node] = []
    for option in options:
        concrete = option if isinstance(option, Ref) else option
        if isinstance(concrete, Union):
            flat.extend(concrete.options)
        elif isinstance(concrete, AnyValue):
            return concrete
        elif not isinstance(concrete, Never):
            flat.append(concrete)
    if not flat:
        reasons = [o.reason for o in options if isinstance(o, Never)]
        return Never(reasons[0] if len(reasons) == 1 else "no alternative can match")
    if len(flat) > 1:
        flat = _grouped_literals(flat)
    if len(flat) > MAX_UNION:
        raise Unsupported("anyOf", f"the schema expands into more than {MAX_UNION} alternatives")
    return flat[0] if len(flat) == 1 else Union(tuple(flat))


def _grouped_literals(flat: list[Node]) -> list[Node]:
    """``flat`` with its string enums made one ``String`` (the union of their values), its booleans one
    ``Boolean``, its nulls one ``Null`` and, past ``NUMBER_SET_MIN``, its number literals one ``Number`` with
    a set of ``values``, in the place of the first of each: the same values, as one branch. So ``anyOf`` of
    hundreds of ``const``s (a union type written out) is one enum, never hundreds of branches, and stays
    clear of ``MAX_UNION``."""
    enums = [o for o in flat if type(o) is String and o.values is not None]
    booleans = [o for o in flat if type(o) is Boolean]
    nulls = [o for o in flat if type(o) is Null]
    numbers = [o for o in flat if type(o) is Number and number_literals(o) is not None]
    grouped = len(numbers) > 1 and (len(numbers) > NUMBER_SET_MIN or any(o.values is not None for o in numbers))
    if len(enums) < 2 and len(booleans) < 2 and len(nulls) < 2 and not grouped:
        return flat
    merged: dict[type, Node] = {}
    if len(enums) > 1:
        merged[String] = String(values=frozenset().union(*(o.values for o in enums)))  # type: ignore[attr-defined]
    if len(booleans) > 1:
        merged[Boolean] = Boolean(frozenset().union(*(o.values for o in booleans)))  # type: ignore[attr-defined]
    if len(nulls) > 1:
        merged[Null] = nulls[0]
    if grouped:
        merged[Number] = Number(values=frozenset().union(*(number_literals(o) for o in numbers)))  # type: ignore[arg-type]
    out: list[Node] = []
    placed: set[type] = set()
    for option in flat:
        kind = type(option)
        if (
            kind not in merged
            or (kind is String and option.values is None)  # type: ignore[attr-defined]
            or (kind is Number and number_literals(option) is None)  # type: ignore[arg-type]
        ):
            out.append(option)
        elif kind not in placed:
            placed.add(kind)
            out.append(merged[kind])
    return out


def number_literals(node: Number) -> frozenset[Fraction] | None:
    """The values of a number node that is a literal (``low == high``, nothing else) or a bare set of values
    (``values``, nothing else); None for any other number node."""
    if node.integer or node.multiple_of is not None or node.excluded or node.not_multiples:
        return None
    if node.values is not None:
        return node.values if node.low is None and node.high is None else None
    if node.low is not None and node.low == node.high and not node.low_open and not node.high_open:
        return frozenset({node.low})
    return None


def kinds_of(node: Node) -> set[type] | None:
    """The node classes a value of ``node`` can be (None: any)."""
    node = deref(node)
    if isinstance(node, AnyValue):
        return None
    if isinstance(node, Never):
        return set()
    if isinstance(node, Union):
        out: set[type] = set()
        for option in node.options:
            more = kinds_of(option)
            if more is None:
                return None
            out |= more
        return out
    return {type(node)}


def settled(node: Node) -> Node:
    """``node`` with references followed only as far as they are already resolved (never resolves one: the
    target may be the schema being built)."""
    while isinstance(node, Ref) and node.resolved is not None:
        node = node.resolved
    return node
