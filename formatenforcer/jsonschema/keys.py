"""Extra keys whose value no schema allows: ruled out while the key is read, so the object never dead-ends.

A key outside ``properties`` gets, from every side of an object, the schemas of that side's
``patternProperties`` it matches, or the side's ``additionalProperties`` when it matches none. Which
combination applies depends on the key text, so two sides with contradicting ``additionalProperties``
(``string`` and ``integer``), or a pattern whose schema contradicts another side's, leave some keys with no
possible value. ``bad_matches`` finds those combinations (sets of matched patterns); ``good_keys`` turns the
others into one automaton (intersections and complements of the patterns), used as the extra-key language.
Cost: 2^k intersections for k distinct patterns on one object, done once per object node at build time.
"""

from __future__ import annotations

from .ir import AnyValue, Never, Node, Object, deref
from .merge import Merger, Unsupported

MAX_PATTERNS = 8
"""Objects with more distinct key patterns than this are not checked (2^k combinations)."""


def _value_ok(node: Object, matched: frozenset[str], merger: Merger) -> bool:
    value: Node = AnyValue()
    try:
        for side in node.sides:
            parts = [schema for pattern, schema in side.patterns if pattern in matched] or [side.additional]
            for part in parts:
                value = merger.intersect(value, part)
    except Unsupported:
        return False  # the value could not be compiled either
    return not isinstance(deref(value), Never)


def patterns_of(node: Object) -> list[str]:
    """The distinct ``patternProperties`` patterns of all sides, in order."""
    return list(dict.fromkeys(p for side in node.sides for p, _ in side.patterns))


def bad_matches(node: Object, merger: Merger) -> list[frozenset[str]] | None:
    """The sets of matched patterns for which an extra key could have no value (None: too many patterns)."""
    patterns = patterns_of(node)
    if len(patterns) > MAX_PATTERNS:
        return None
    out = []
    for bits in range(1 << len(patterns)):
        matched = frozenset(p for i, p in enumerate(patterns) if bits >> i & 1)
        if not _value_ok(node, matched, merger):
            out.append(matched)
    return out


def good_keys(node: Object, bad: list[frozenset[str]], full) -> tuple:  # noqa: ANN001 - pattern converter
    """Clauses for ``regex.compile_boolean``: the key texts whose set of matched patterns is not ``bad``
    (``full`` turns a JSON Schema search pattern into a full-match one)."""
    patterns = patterns_of(node)
    clauses = []
    for bits in range(1 << len(patterns)):
        matched = frozenset(p for i, p in enumerate(patterns) if bits >> i & 1)
        if matched not in bad:
            clauses.append((tuple(full(p) for p in patterns if p in matched),
                            tuple(full(p) for p in patterns if p not in matched)))  # fmt: skip
    return tuple(clauses)


__all__ = ["MAX_PATTERNS", "bad_matches", "good_keys", "patterns_of"]
