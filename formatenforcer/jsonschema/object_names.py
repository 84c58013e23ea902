"""The named keys of an object schema and whether any object fits it, read from the node alone.

``ObjectNames`` holds what ``ObjectContext`` (objects.py) and the finiteness check (finite.py) both need:
the names (``properties``, ``required``, ``dependentRequired``), each name's value schema, which names can
be written at all (``propertyNames`` accepts them, their value is not ``Never``, and so is every name they
bring in through ``dependentRequired``), and ``impossible``: the object rules leave no object. It builds no
parser state, so the finiteness check can ask it of any node without recursing into the compiler, and the
two never disagree about an object that cannot exist.
"""

from __future__ import annotations

from collections.abc import Callable

from .formats.content import Content
from .keys import count_keys, extra_keys
from .schema.ir import AnyValue, Never, Node, Object, Ref, String, Union, Unsupported, deref
from .schema.merge import Merger
from .schema.validate import accepts, value_schemas


def _string_part(node: Node | None) -> String | None | bool:
    """The string part of a propertyNames schema: True for "any string", None for "no string"."""
    if node is None:
        return True
    node = deref(node)
    if isinstance(node, AnyValue):
        return True
    if isinstance(node, Union):
        parts = [deref(o) for o in node.options if isinstance(deref(o), String)]
        if len(parts) > 1:
            raise Unsupported("propertyNames", "propertyNames with several string alternatives")
        return parts[0] if parts else None
    return node if isinstance(node, String) else None


def _named_values(node: Object, names: tuple[str, ...], merger: Merger) -> list[Node]:
    """The schema of the value of each of ``names``: ``value_schemas(node, name)`` joined by ``lazy_and``
    (starting from ``AnyValue()``, which the first part replaces). One side without patterns (the usual
    object) by one dict lookup per name instead of a scan of its properties per name."""
    sides = node.sides
    if len(sides) == 1 and not sides[0].patterns:
        table = dict(sides[0].properties)
        if len(table) == len(sides[0].properties):
            additional = sides[0].additional
            return [table.get(name, additional) for name in names]
    values = []
    for name in names:
        schema: Node = AnyValue()
        for part in value_schemas(node, name):
            schema = merger.lazy_and(schema, part)
        values.append(schema)
    return values


class ObjectNames:
    """The named keys of one Object node: ``names`` (in order), ``index``, ``values`` (their schemas),
    ``usable`` (bit mask of the names that can be written), ``required`` and ``deps`` (bit masks)."""

    def __init__(self, node: Object, merger: Merger) -> None:
        self.node = node
        names: list[str] = [name for side in node.sides for name, _ in side.properties]
        if node.required:
            names.extend(sorted(node.required))
        for key, needed in node.dependent_required:
            names.append(key)
            names.extend(needed)
        self.names = tuple(dict.fromkeys(names))
        self.index = index = {name: i for i, name in enumerate(self.names)}
        self.key_rule = key_rule = _string_part(node.property_names)
        self.values: list[Node] = _named_values(node, self.names, merger)
        usable = 0
        for i, schema in enumerate(self.values):
            if key_rule is not True and (key_rule is None or not accepts(key_rule, self.names[i])):
                continue
            if not isinstance(deref(schema) if isinstance(schema, Ref) else schema, Never):
                usable |= 1 << i
        self.required = sum(1 << index[name] for name in node.required) if node.required else 0
        deps = [0] * len(self.names)
        for key, needed in node.dependent_required:
            for name in needed:
                deps[index[key]] |= 1 << index[name]
        self.deps = deps
        self.has_deps = bool(node.dependent_required)
        """Whether some name brings in others (``dependentRequired``): else ``closure`` is the identity."""
        # a name is usable only if every name it brings in (dependentRequired, transitively) is: a key
        # that requires a name propertyNames refuses can never be written
        self.usable = sum(
            1 << i for i in range(len(self.names)) if usable >> i & 1 and not self.closure(1 << i) & ~usable
        )
        self.min_properties, self.max_properties = node.min_properties, node.max_properties

    def closure(self, names: int) -> int:
        """``names`` with every name ``dependentRequired`` adds to them, transitively."""
        if not self.has_deps:
            return names
        out, todo = names, names
        while todo:
            low = todo & -todo
            todo ^= low
            more = self.deps[low.bit_length() - 1] & ~out
            out |= more
            todo |= more
        return out

    def impossible(self, extras: Content | None, has_value: Callable[[Node], bool] | None = None) -> bool:
        """Whether no object fits, given ``extras``, the automaton of its extra keys: a required name
        cannot be written, more keys are needed than ``maxProperties`` allows, or fewer distinct keys
        exist (usable names and extra keys) than ``minProperties`` asks for. With ``has_value`` (the
        finiteness check) a name counts towards ``minProperties`` only if its value, and the value of
        every name it brings in, has a finite instance."""
        missing = self.closure(self.required)
        if missing & ~self.usable:
            return True
        high = self.max_properties
        if high is not None and (self.min_properties > high or bin(missing).count("1") > high):
            return True
        if self.min_properties > 0:
            usable = self.usable
            if has_value is not None:
                good = sum(1 << i for i in range(len(self.names)) if usable >> i & 1 and has_value(self.values[i]))
                usable = sum(
                    1 << i for i in range(len(self.names)) if good >> i & 1 and not self.closure(1 << i) & ~good
                )
            named = bin(usable).count("1")
            if named + count_keys(extras, self.names, self.min_properties - named) < self.min_properties:
                return True
        return False


def object_names(node: Object, merger: Merger) -> ObjectNames:
    """The ``ObjectNames`` of ``node``, computed once per schema (kept in ``merger.facts``)."""
    key = ("names", id(node))
    hit = merger.facts.get(key)
    if hit is not None and hit[0] is node:
        return hit[1]  # type: ignore[return-value]
    facts = ObjectNames(node, merger)
    merger.facts[key] = (node, facts)
    return facts


def no_object(node: Object, merger: Merger) -> bool:
    """Whether the object rules of ``node`` leave no object at all, whatever the values hold (as
    ``ObjectContext.start`` finds). Cheap unless ``minProperties`` makes it count the extra keys."""
    if not node.required and not node.min_properties:
        return False
    facts = object_names(node, merger)
    extras = extra_keys(node, merger, facts.key_rule) if node.min_properties > 0 else None
    return facts.impossible(extras)
