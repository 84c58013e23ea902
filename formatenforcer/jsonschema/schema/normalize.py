"""Stage one: a raw JSON Schema (dict, JSON text or pydantic model) to the intermediate form (schema/ir.py).

Resolves ``$ref`` (JSON pointers, ``$defs``/``definitions``, ``$anchor``, ``$id``-relative references) lazily
through ``Ref`` nodes, splits every schema by ``type`` into one node per kind, merges ``allOf`` (and 2020-12
``$ref`` siblings), turns ``anyOf``/disjoint ``oneOf`` into unions, ``not`` into complements of kinds and
literals, ``if/then/else`` into ``(if AND then) OR (NOT if AND else)``, and ``enum``/``const`` into the literal
values the rest of the schema allows. Keyword types are checked here (SchemaError with the JSON pointer);
keywords that cannot be enforced are collected as (pointer, keyword) problems for UnsupportedSchemaError.
Cost: linear in the schema, plus the merges, which are memoised.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from fractions import Fraction
from typing import Any

from ...core.errors import Problem, SchemaError
from ..ecma.parse import EcmaSyntaxError
from ..ecma.translate import check_pattern
from . import unevaluated
from .dialects import is_legacy, unknown_keywords
from .format_checks import format_checks
from .ir import (
    ANNOTATIONS,
    IMPLEMENTED_KEYWORDS,
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
    Unsupported,
    deref,
    kinds_of,
    union_of,
)
from .load import load_schema
from .merge import Merger, checked_array
from .metaschemas import is_metaschema_uri
from .number_bounds import bounds_satisfiable
from .openapi_formats import FORMAT_ALIASES, NUMBER_FORMATS, format_known
from .references import CYCLE, References, Scope, _escape, _join
from .validate import accepts, to_fraction

_TYPES = ("null", "boolean", "integer", "number", "string", "array", "object")
_COUNTS = ("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties",
           "minContains", "maxContains")  # fmt: skip
_NUMBERS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
_SCHEMAS = (
    "additionalProperties",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "additionalItems",
    "unevaluatedProperties",
    "unevaluatedItems",
)
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")


_KIND_KEYWORDS = frozenset(
    {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength", "maxLength",
     "pattern", "format", "items", "prefixItems", "additionalItems", "minItems", "maxItems", "uniqueItems",
     "contains", "minContains", "maxContains", "properties", "required", "additionalProperties",
     "patternProperties", "propertyNames", "minProperties", "maxProperties", "dependentRequired",
     "dependencies"}
)  # fmt: skip

_CHECKED = frozenset(
    (*_COUNTS, *_NUMBERS, *_SCHEMAS, *_SCHEMA_LISTS, *_SCHEMA_MAPS, "type", "required", "enum", "pattern", "format",
     "items", "dependentRequired")
)  # fmt: skip
"""The keywords whose values ``Normalizer._check_keywords`` checks."""
_COUNT, _NUMBER, _SCHEMA, _SCHEMA_LIST, _SCHEMA_MAP, _OTHER = (object() for _ in range(6))
_BOOLEAN_KEYWORDS = frozenset({"uniqueItems", "nullable", "$recursiveAnchor"})
_STRING_KEYWORDS = frozenset({"$id", "$schema", "$anchor", "$dynamicAnchor", "$comment"})
_CHECK_OF: dict[str, object] = {
    **{key: _OTHER for key in _CHECKED}, **{key: _SCHEMA_MAP for key in _SCHEMA_MAPS},
    **{key: _SCHEMA_LIST for key in _SCHEMA_LISTS}, **{key: _SCHEMA for key in _SCHEMAS},
    **{key: _NUMBER for key in _NUMBERS}, **{key: _COUNT for key in _COUNTS},
    **{key: _OTHER for key in _BOOLEAN_KEYWORDS | _STRING_KEYWORDS},
}  # fmt: skip
"""Which check ``_check_keywords`` applies to each keyword of ``_CHECKED`` (the first group it belongs to)."""
_STEPS = (
    ("allOf", "_all_of"), ("$ref", "_ref_sibling"), ("$dynamicRef", "_dynamic_ref"),
    ("$recursiveRef", "_recursive_ref"), ("anyOf", "_any_of"), ("oneOf", "_one_of"), ("not", "_not"),
    ("if", "_if"), ("dependentSchemas", "_dependent_schemas"),
    ("dependencies", "_dependent_schemas"),
)  # fmt: skip
"""The keywords ``Normalizer._read`` applies after the per-kind split, in order, with the method for each."""
_COMBINING = frozenset(
    (*(keyword for keyword, _ in _STEPS), "unevaluatedProperties", "unevaluatedItems", "enum", "const")
)
"""Every keyword ``_read`` handles after the per-kind split."""
_BOUNDS = (("minimum", True, False), ("exclusiveMinimum", True, True), ("maximum", False, False),
           ("exclusiveMaximum", False, True))  # fmt: skip
"""Number bounds: (keyword, whether it is a lower bound, whether it is open), in the order they are merged."""
_RANGES = (("minimum", "maximum"), ("minLength", "maxLength"), ("minItems", "maxItems"),
           ("minProperties", "maxProperties"))  # fmt: skip


def _names_itself(node: Node) -> bool:
    """Whether resolving ``node`` needs a schema still being built (a reference back to an enclosing one)."""
    try:
        deref(node)
    except CycleError:
        return True
    return False


_JSON_TYPE = {Null: "null", Boolean: "boolean", Number: "number", String: "string", Array: "array", Object: "object"}


def _declared_types(schema: Any) -> frozenset[str] | None:
    """The JSON types a schema's own ``type`` keyword allows (``integer`` read as ``number``); None without one."""
    if not isinstance(schema, dict) or "type" not in schema:
        return None
    declared = schema["type"]
    names = declared if isinstance(declared, list) else [declared]
    return frozenset("number" if name == "integer" else name for name in names if isinstance(name, str))


def _value_types(node: Node) -> frozenset[str] | None:
    """The JSON types a value of ``node`` can have; None for any, or where a reference is still being built."""
    try:
        kinds = kinds_of(node)
    except CycleError:
        return None
    if kinds is None or not kinds <= _JSON_TYPE.keys():
        return None
    return frozenset(_JSON_TYPE[kind] for kind in kinds)


def literal_node(value: Any) -> Node:
    """The node whose only instance is the JSON value ``value`` (a ``const``, an ``enum`` member)."""
    if value is None:
        return Null()
    if isinstance(value, bool):
        return Boolean(frozenset({value}))
    if isinstance(value, (int, float)):
        point = to_fraction(value)
        return Number(low=point, high=point)
    if isinstance(value, str):
        return String(values=frozenset({value}))
    if isinstance(value, list):
        return Array(tuple(literal_node(v) for v in value), Never("no more items"), len(value), len(value))
    properties = tuple((k, literal_node(v)) for k, v in value.items())
    return Object((Side(properties, (), Never("no other property"), silent=True),), frozenset(value))


def literals(values: list[Any]) -> Node:
    """The union of the given JSON values, strings and booleans grouped into one node each."""
    strings = frozenset(v for v in values if isinstance(v, str))
    booleans = frozenset(v for v in values if isinstance(v, bool))
    others = [literal_node(v) for v in values if not isinstance(v, (str, bool))]
    if strings:
        others.append(String(values=strings))
    if booleans:
        others.append(Boolean(booleans))
    return union_of(others) if others else Never("an empty enum")


class Normalizer(References):
    """One pass over one schema; ``problems`` collects unsupported keywords with their pointers.
    ``resources``: other schema documents by absolute URI, for ``$ref`` to them (never fetched)."""

    def __init__(self, root: Any, resources: Mapping[str, Any] | None = None) -> None:
        self.problems: list[Problem] = []
        self.unknown_formats: list[Problem] = []
        """``format`` values this library does not know: annotations (any string), reported as warnings."""
        self.merger = Merger()
        self.origin: dict[int, str] = {}
        self._nodes: dict[tuple[str, Scope], Node] = {}
        self.track = False  # whether annotations matter (some unevaluated* keyword exists)
        super().__init__(root, resources)

    # --- one schema ------------------------------------------------------------------------------------
    def node(self, schema: Any, pointer: str = "#", base: str | None = None) -> Node:
        """The intermediate form of ``schema`` found at ``pointer``, memoised by pointer and dynamic scope (the
        only thing besides the location that a ``$dynamicRef`` below it can depend on)."""
        key = (pointer, self.scope)
        hit = self._nodes.get(key)
        if hit is not None:
            return hit
        if base is None:
            base = self._bases.get(pointer, "")
        result = self._node(schema, pointer, base)
        self._nodes[key] = result
        self.origin.setdefault(id(result), pointer)
        return result

    def _node(self, schema: Any, pointer: str, base: str) -> Node:
        if schema is True:
            return AnyValue()
        if schema is False:
            return Never(f"the schema at {pointer} is false")
        if not isinstance(schema, dict):
            raise SchemaError(f"a schema must be an object or a boolean, not {type(schema).__name__}", pointer)
        dialect = self.dialect_at(pointer)
        unknown = unknown_keywords(dialect)
        if unknown and not unknown.isdisjoint(schema):  # keywords of later drafts: annotations in this dialect
            schema = {key: value for key, value in schema.items() if key not in unknown}
        ident = schema.get("$id")
        if isinstance(ident, str) and pointer != "#" and not (is_legacy(dialect) and "$ref" in schema):
            base = self.base_of(pointer, _join(base, ident).partition("#")[0] or base)
            scope = self.enter(self.scope, base)  # a nested resource joins the dynamic scope below it
            if scope != self.scope:
                return self.in_scope(scope, lambda: self._read(schema, pointer, base))
        return self._read(schema, pointer, base)

    def _read(self, schema: dict, pointer: str, base: str) -> Node:
        self._check_keywords(schema, pointer)
        if "$ref" in schema and is_legacy(self.dialect_at(pointer)):
            return self._reference(schema["$ref"], base, f"{pointer}/$ref")
        node = self._kinds(schema, pointer, base)
        if _COMBINING.isdisjoint(schema):
            return node  # most schemas: only keywords of the kinds (nothing below applies)
        for keyword, method in _STEPS:
            if keyword in schema:
                try:
                    node = getattr(self, method)(node, schema, pointer, base)
                except Unsupported as problem:
                    self.report(f"{pointer}/{keyword}", problem.keyword, problem.reason)
                except CycleError:
                    self.report(f"{pointer}/{keyword}", "$ref", CYCLE)
        for keyword in ("unevaluatedProperties", "unevaluatedItems"):
            if keyword in schema:
                node = self._unevaluated(node, schema, pointer, base, keyword)
        for keyword in ("enum", "const"):
            if keyword in schema:
                values = schema[keyword] if keyword == "enum" else [schema[keyword]]
                try:
                    node = literals([v for v in values if accepts(node, v)])
                except Unsupported as problem:  # (more values than a union holds: not enforced)
                    self.report(f"{pointer}/{keyword}", keyword, problem.reason)
        return node

    def _sub(self, schema: dict, keyword: str, pointer: str, base: str) -> Node:
        return self.node(schema[keyword], f"{pointer}/{keyword}", base)  # (no keyword holds "~" or "/")

    def _subs(self, schema: dict, keyword: str, pointer: str, base: str) -> list[Node]:
        return [self.node(s, f"{pointer}/{keyword}/{i}", base) for i, s in enumerate(schema[keyword])]

    def _all_of(self, node: Node, schema: dict, pointer: str, base: str) -> Node:
        for sub in self._subs(schema, "allOf", pointer, base):
            node = self.merger.intersect(node, sub)
        return node

    def _ref_sibling(self, node: Node, schema: dict, pointer: str, base: str) -> Node:
        # lazily: the target may be the schema being built (recursion through a $ref with siblings)
        return self.merger.lazy_and(node, self._reference(schema["$ref"], base, f"{pointer}/$ref"))

    def _dynamic_ref(self, node: Node, schema: dict, pointer: str, base: str) -> Node:
        target = self._dynamic_reference(schema["$dynamicRef"], base, f"{pointer}/$dynamicRef")
        return self.merger.lazy_and(node, target)

    def _recursive_ref(self, node: Node, schema: dict, pointer: str, base: str) -> Node:
        target = self._recursive_reference(schema["$recursiveRef"], base, f"{pointer}/$recursiveRef")
        return self.merger.lazy_and(node, target)

    def _any_of(self, node: Node, schema: dict, pointer: str, base: str) -> Node:
        subs = self._subs(schema, "anyOf", pointer, base)
        if self.track:  # a `true` branch must not hide the annotations of the others
            subs = [union_of(unevaluated.kinds()) if isinstance(s, AnyValue) else s for s in subs]
        return self.merger.intersect(node, union_of(subs))

    def _one_of(self, node: Node, schema: dict, pointer: str, base: str) -> Node:
        """Exactly one branch: branch i AND NOT every other branch j that it is not provably disjoint from."""
        merger = self.merger
        raw = self._subs(schema, "oneOf", pointer, base)
        subs = [merger.intersect(node, s) for s in raw]
        live = [i for i, s in enumerate(subs) if not isinstance(deref(s), Never)]
        options = []
        for i in live:
            part = subs[i]
            for j in live:
                if j != i and not merger.disjoint(subs[i], subs[j]):
                    try:
                        part = merger.intersect(part, merger.negate(raw[j], part))
                    except Unsupported as problem:
                        raise Unsupported("oneOf", f"overlapping branches: {problem.reason}") from None
            options.append(part)
        try:
            return union_of(options)
        except Unsupported as problem:
            raise Unsupported("oneOf", f"overlapping branches: {problem.reason}") from None

    def _not(self, node: Node, schema: dict, pointer: str, base: str) -> Node:
        return self.merger.intersect(node, self.merger.negate(self._sub(schema, "not", pointer, base), node))

    def _if(self, node: Node, schema: dict, pointer: str, base: str) -> Node:
        if "then" not in schema and "else" not in schema:
            if not self.track:
                return node
            # a passing `if` still evaluates properties/items: (node AND if) OR node, exact by monotonicity
            whole = union_of(unevaluated.kinds()) if isinstance(node, AnyValue) else node
            return union_of([self.merger.intersect(node, self._sub(schema, "if", pointer, base)), whole])
        condition = self._sub(schema, "if", pointer, base)
        then = self._sub(schema, "then", pointer, base) if "then" in schema else AnyValue()
        otherwise = self._sub(schema, "else", pointer, base) if "else" in schema else AnyValue()
        merger = self.merger
        yes = merger.intersect(merger.intersect(node, condition), then)
        rest = merger.intersect(node, otherwise)
        no = merger.intersect(rest, merger.negate(condition, rest))
        return union_of([yes, no])

    def _unevaluated(self, node: Node, schema: dict, pointer: str, base: str, keyword: str) -> Node:
        """``node`` under ``unevaluatedProperties``/``unevaluatedItems``, built when first needed (the node may
        be a reference still being resolved) and resolved by ``finish`` so its problems are known at build."""
        rest = self._sub(schema, keyword, pointer, base)
        where = f"{pointer}/{keyword}"

        def build() -> Node:
            try:
                return unevaluated.close(self.merger, node, rest, keyword)
            except Unsupported as problem:
                self.report(where, problem.keyword, problem.reason)
            except CycleError:
                self.report(where, "$ref", CYCLE)
            return node

        ref = self._refs[(where, self.scope)] = Ref(where, build)
        return ref

    def _dependent_schemas(self, node: Node, schema: dict, pointer: str, base: str) -> Node:
        keyword = "dependentSchemas" if "dependentSchemas" in schema else "dependencies"
        for name, sub in schema[keyword].items():
            if isinstance(sub, list):
                continue  # the array form is dependentRequired, handled with the object keywords
            target = self.node(sub, f"{pointer}/{keyword}/{_escape(name)}", base)
            without = Object((Side(((name, Never(f"{name!r} would need {keyword}")),)),))
            others = union_of([Null(), Boolean(), Number(), String(), Array()])
            with_it = self.merger.intersect(Object(required=frozenset({name})), target)
            node = self.merger.intersect(node, union_of([others, without, with_it]))
        return node

    # --- keyword checks and the per-kind split ------------------------------------------------------------
    def _check_keywords(self, schema: dict, pointer: str) -> None:
        # one dict lookup per key picks its check; the key's pointer is only built for an error or a report
        # (every checked keyword is free of "~" and "/", so its pointer token is the keyword itself)
        for key, value in schema.items():
            check = _CHECK_OF.get(key)
            if check is None:
                continue  # most keys of a schema (titles, descriptions, "type"-free annotations) need no check
            if check is _COUNT:
                if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0 or value != int(value):
                    raise SchemaError(f"'{key}' must be a non-negative integer", f"{pointer}/{key}")
            elif check is _NUMBER:
                if isinstance(value, float) and not math.isfinite(value):
                    raise SchemaError(f"'{key}' must be a finite number, not {value!r}", f"{pointer}/{key}")
                if key.startswith("exclusive") and isinstance(value, bool):
                    # draft-04's form (also OpenAPI 3.0's): a flag that makes minimum/maximum exclusive
                    bound = "minimum" if key == "exclusiveMinimum" else "maximum"
                    if value and bound not in schema:
                        raise SchemaError(
                            f"'{key}': true needs '{bound}' (draft-04's boolean form makes {bound} exclusive)",
                            f"{pointer}/{key}",
                        )
                elif isinstance(value, bool) or not isinstance(value, (int, float)):
                    raise SchemaError(f"'{key}' must be a number", f"{pointer}/{key}")
                elif key == "multipleOf" and value <= 0:
                    raise SchemaError("'multipleOf' must be greater than 0", f"{pointer}/{key}")
            elif check is _SCHEMA:
                if not isinstance(value, (dict, bool)):
                    raise SchemaError(f"'{key}' must be a schema", f"{pointer}/{key}")
            elif check is _SCHEMA_LIST:
                if not isinstance(value, list) or (key != "prefixItems" and not value):
                    raise SchemaError(f"'{key}' must be a non-empty array of schemas", f"{pointer}/{key}")
            elif check is _SCHEMA_MAP:
                if not isinstance(value, dict):
                    raise SchemaError(f"'{key}' must be an object", f"{pointer}/{key}")
            elif key == "type":
                if isinstance(value, str):
                    if value not in _TYPES:
                        raise SchemaError(
                            f"'type' must be one of {', '.join(_TYPES)} or a list of them", f"{pointer}/{key}"
                        )
                else:
                    listed = value if isinstance(value, list) else [value]
                    if not listed or any(t not in _TYPES for t in listed):
                        raise SchemaError(
                            f"'type' must be one of {', '.join(_TYPES)} or a list of them", f"{pointer}/{key}"
                        )
            elif key == "required":
                if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                    raise SchemaError("'required' must be an array of strings", f"{pointer}/{key}")
            elif key == "enum":
                if not isinstance(value, list):
                    raise SchemaError("'enum' must be an array", f"{pointer}/{key}")
            elif key == "pattern" or key == "format":
                if not isinstance(value, str):
                    raise SchemaError(f"'{key}' must be a string", f"{pointer}/{key}")
                if key == "pattern":
                    self._check_pattern(value, f"{pointer}/{key}", "pattern")
            elif key == "items":
                if not isinstance(value, (dict, bool, list)):
                    raise SchemaError("'items' must be a schema or an array of schemas", f"{pointer}/{key}")
            elif key == "dependentRequired" and not isinstance(value, dict):
                raise SchemaError("'dependentRequired' must be an object", f"{pointer}/{key}")
            elif key in _BOOLEAN_KEYWORDS and not isinstance(value, bool):
                raise SchemaError(f"'{key}' must be a boolean, not {type(value).__name__}", f"{pointer}/{key}")
            elif key in _STRING_KEYWORDS and not isinstance(value, str):
                raise SchemaError(f"'{key}' must be a string, not {type(value).__name__}", f"{pointer}/{key}")
        for low, high in _RANGES:
            a = schema.get(low)
            if a is None:
                continue
            b = schema.get(high)
            if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool) and a > b:
                raise SchemaError(f"'{low}' {a} is greater than '{high}' {b}", pointer)

    def _check_pattern(self, pattern: str, where: str, keyword: str) -> None:
        """Patterns are ECMA-262 (ecma/parse.py): a syntax error is a broken schema; lookaround, back-references,
        ``\\b`` and inner anchors are valid but not regular here, so they are reported as unsupported."""
        try:
            problem = check_pattern(pattern)
        except EcmaSyntaxError as error:
            raise SchemaError(f"'{keyword}' holds an invalid ECMA-262 regular expression: {error}", where) from None
        if problem is not None:
            self.report(where, keyword, problem)

    def _kinds(self, schema: dict, pointer: str, base: str) -> Node:
        fmt = schema.get("format")
        if isinstance(fmt, str) and not format_known(fmt) and not is_metaschema_uri(pointer.partition("#")[0]):
            # JSON Schema 2020-12 makes `format` an annotation unless the format-assertion vocabulary is on: a
            # validator accepts any value there, and so does this parser (with a warning)
            why = f"unknown format {fmt!r} is not asserted: any value is allowed there (an annotation)"
            self.unknown_formats.append(Problem(f"{pointer}/format", "format", why))
        declared = schema.get("type")
        if declared is None and _KIND_KEYWORDS.isdisjoint(schema):
            return AnyValue()  # keeps a bare {"$ref": ...} a plain reference
        if type(declared) is str and declared in _TYPES and schema.get("nullable") is not True:
            # one kind (most schemas): the general path below with one option, whose union is that option
            # (a Never one rebuilt by union_of, as there)
            if declared == "string":
                node = self._string(schema, pointer)
            elif declared == "object":
                node = self._object(schema, pointer, base)
            elif declared == "integer" or declared == "number":
                node = self._number(schema, integer=declared == "integer")
            elif declared == "array":
                node = self._array(schema, pointer, base)
            else:
                node = Boolean() if declared == "boolean" else Null()
            return union_of([node]) if isinstance(node, Never) else node
        types = set(declared if isinstance(declared, list) else [declared]) if declared is not None else set(_TYPES)
        if schema.get("nullable") is True:
            types.add("null")
        options: list[Node] = []
        if "null" in types:
            options.append(Null())
        if "boolean" in types:
            options.append(Boolean())
        if "integer" in types or "number" in types:
            options.append(self._number(schema, integer="number" not in types))
        if "string" in types:
            options.append(self._string(schema, pointer))
        if "array" in types:
            options.append(self._array(schema, pointer, base))
        if "object" in types:
            options.append(self._object(schema, pointer, base))
        return union_of(options)

    def _number(self, schema: dict, integer: bool) -> Node:
        """``Number(integer)`` intersected with each bound in turn (minimum, exclusiveMinimum, maximum,
        exclusiveMaximum, multipleOf), as ``Merger.intersect`` merges two numbers, without building a node per
        bound: each step keeps the tighter end and asks whether a number is left (the first step that leaves
        none gives the Never that intersecting with the remaining bounds would keep)."""
        low: Fraction | None = None
        high: Fraction | None = None
        low_open = high_open = False
        # draft-04's boolean exclusiveMinimum/exclusiveMaximum: a flag on minimum/maximum (a boolean is skipped
        # below as a bound of its own)
        flagged = {"minimum": schema.get("exclusiveMinimum") is True, "maximum": schema.get("exclusiveMaximum") is True}
        for key, is_low, open_ in _BOUNDS:
            value = schema.get(key)
            open_ = open_ or flagged.get(key, False)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                point = to_fraction(value)
                if is_low:
                    if low is None or point > low or (point == low and open_):
                        low, low_open = point, open_
                elif high is None or point < high or (point == high and open_):
                    high, high_open = point, open_
                if not bounds_satisfiable(integer, low, low_open, high, high_open, None):
                    return Never("no number satisfies the bounds")
        width = NUMBER_FORMATS.get(schema.get("format")) if isinstance(schema.get("format"), str) else None
        if width is not None:  # int32/int64: an integer of that signed width
            integer = True
            if low is None or width[0] > low or (width[0] == low and low_open):
                low, low_open = Fraction(width[0]), False
            if high is None or width[1] < high or (width[1] == high and high_open):
                high, high_open = Fraction(width[1]), False
            if not bounds_satisfiable(integer, low, low_open, high, high_open, None):
                return Never("no number satisfies the bounds")
        multiple = schema.get("multipleOf")
        step = None
        if isinstance(multiple, (int, float)) and not isinstance(multiple, bool):
            step = to_fraction(multiple)
            if not bounds_satisfiable(integer, low, low_open, high, high_open, step):
                return Never("no number satisfies the bounds")
        return Number(integer, low, low_open, high, high_open, step)

    def _string(self, schema: dict, pointer: str) -> Node:
        formats: tuple[str, ...] = ()
        fmt = schema.get("format")
        if isinstance(fmt, str):
            fmt = FORMAT_ALIASES.get(fmt, fmt)
            if fmt in format_checks().names:
                formats = (fmt,)
            # else: a number format, a format that constrains no string (ANY_STRING_FORMATS), or an unknown
            # one, which _kinds notes as an annotation (json-schema.org's metaschemas declare it one too)
        pattern = schema.get("pattern")
        if isinstance(pattern, str) and not _translatable(pattern):
            pattern = None  # reported by _check_pattern; with lenient=True it is not enforced
        high = schema.get("maxLength")
        node = String(int(schema.get("minLength", 0)), None if high is None else int(high),
                      (pattern,) if isinstance(pattern, str) else (), formats)  # fmt: skip
        if node.max_length is not None and node.min_length > node.max_length:
            return Never("minLength > maxLength")
        return node

    def _array(self, schema: dict, pointer: str, base: str) -> Node:
        items = schema.get("items")
        prefix: list[Node] = []
        rest: Node = AnyValue()
        if isinstance(items, list):
            prefix = [self.node(s, f"{pointer}/items/{i}", base) for i, s in enumerate(items)]
            if "additionalItems" in schema:
                rest = self._sub(schema, "additionalItems", pointer, base)
        else:
            if "prefixItems" in schema:
                prefix = self._subs(schema, "prefixItems", pointer, base)
            if items is not None:
                rest = self._sub(schema, "items", pointer, base)
        high = schema.get("maxItems")
        contains = self._sub(schema, "contains", pointer, base) if "contains" in schema else None
        max_contains = schema.get("maxContains") if contains is not None else None
        min_contains = int(schema.get("minContains", 1)) if contains is not None else 1
        if contains is not None and _names_itself(contains):
            # the array's items would be matched against a schema still being built (``contains: {"$ref":
            # "#"}``): its count is not tracked exactly, so the keyword is refused rather than misjudged,
            # unless the types alone show that no item can match it
            wanted = self._contains_types(schema["contains"], f"{pointer}/contains", base)
            offered = [_value_types(item) for item in (*prefix, rest)]
            if wanted is None or None in offered or not wanted.isdisjoint(frozenset().union(*offered)):
                self.report(f"{pointer}/contains", "$ref", CYCLE)
            elif min_contains > 0:
                items = ", ".join(sorted(frozenset().union(*offered))) or "none"
                return Never(f"'contains' at {pointer}/contains can never match: it takes only "
                             f"{', '.join(sorted(wanted)) or 'nothing'}, and the items can be {items}")  # fmt: skip
            contains = max_contains = None
            min_contains = 1
        whole = (items is not None and not isinstance(items, list)) or (
            isinstance(items, list) and "additionalItems" in schema
        )
        node = Array(
            tuple(prefix), rest, int(schema.get("minItems", 0)), None if high is None else int(high),
            schema.get("uniqueItems") is True, contains, min_contains,
            None if max_contains is None else int(max_contains), None if whole else len(prefix),
            () if contains is None else (contains,),
        )  # fmt: skip
        if contains is not None and isinstance(deref(contains), Never) and min_contains > 0:
            return Never("'contains' can never match")
        if contains is not None and min_contains == 0 and max_contains is None:
            node = replace(node, contains=None, min_contains=1)
        return checked_array(node)

    def _contains_types(self, raw: Any, pointer: str, base: str) -> frozenset[str] | None:
        """The JSON types a value matching the ``contains`` schema ``raw`` (at ``pointer``) must have, read from
        the ``type`` of the schema its ``$ref`` names (a sibling ``type`` only narrows them further, and is not
        read: draft 7 ignores it); None where that is not known."""
        if isinstance(raw, dict) and "$ref" in raw:
            return _declared_types(self.raw_target(raw["$ref"], self.base_of(pointer, base)))
        return _declared_types(raw)

    def _object(self, schema: dict, pointer: str, base: str) -> Node:
        properties = tuple(
            (name, self.node(sub, f"{pointer}/properties/{_escape(name)}", base))
            for name, sub in schema.get("properties", {}).items()
        )
        patterns = tuple(
            (p, self.node(sub, f"{pointer}/patternProperties/{_escape(p)}", base))
            for p, sub in schema.get("patternProperties", {}).items()
        )
        for p, _ in patterns:
            self._check_pattern(p, f"{pointer}/patternProperties", "patternProperties")
        patterns = tuple((p, sub) for p, sub in patterns if _translatable(p))
        additional = self._sub(schema, "additionalProperties", pointer, base) if "additionalProperties" in schema \
            else AnyValue()  # fmt: skip
        names = self._sub(schema, "propertyNames", pointer, base) if "propertyNames" in schema else None
        dependent = dict(schema.get("dependentRequired", {}))
        source = dict.fromkeys(dependent, "dependentRequired")  # the keyword each entry is read from
        for key, value in schema.get("dependencies", {}).items() if isinstance(schema.get("dependencies"), dict) \
                else ():  # fmt: skip
            if isinstance(value, list):
                dependent[key] = value
                source[key] = "dependencies"
        for key, value in dependent.items():
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                where = f"{pointer}/{source[key]}/{_escape(key)}"
                raise SchemaError(f"{source[key]} values must be arrays of strings", where)
        high = schema.get("maxProperties")
        return Object(
            (Side(properties, patterns, additional, "additionalProperties" in schema),),
            frozenset(schema.get("required", ())), names,
            int(schema.get("minProperties", 0)), None if high is None else int(high),
            tuple((k, tuple(v)) for k, v in dependent.items()),
        )  # fmt: skip


def _translatable(pattern: str) -> bool:
    try:
        return check_pattern(pattern) is None
    except EcmaSyntaxError:
        return False


__all__ = ["ANNOTATIONS", "IMPLEMENTED_KEYWORDS", "Normalizer", "load_schema", "literals"]
