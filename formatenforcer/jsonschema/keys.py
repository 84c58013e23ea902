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

from ..errors import RegexError
from ..regex import compile_boolean, compile_regex
from .compile import ecma_full, string_content
from .content import Content, LengthContent, RegexContent, TrieContent
from .ecma_translate import search
from .ir import AnyValue, Never, Node, Object, String, deref
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


def extra_keys(node: Object, merger: Merger, key_rule: String | None | bool) -> Content | None:
    """The automaton of the keys an object may hold besides its named ones (None: no such key), narrowed
    (see the module notes) when some combination of matched patterns leaves an extra key with no value."""
    content = _open_extras(node, key_rule)
    if content is None:
        return None
    bad = bad_matches(node, merger)
    closed = [side for side in node.sides if isinstance(deref(side.additional), Never)]
    if closed and bad:
        live = {p for p, schema in closed[0].patterns if not isinstance(deref(schema), Never)}
        bad = [m for m in bad if m & live]  # the others are already excluded: they match no live pattern
    if not bad:
        return content
    if key_rule is not True:
        raise Unsupported("propertyNames", "propertyNames on an object where some extra keys can have no value")
    patterns = patterns_of(node)
    translation = ecma_full(tuple(patterns), "patternProperties")
    texts = dict(zip(patterns, translation.texts))
    clauses = tuple((must, tuple(t for t in never if t is not None))
                    for must, never in good_keys(node, bad, texts.get) if None not in must)  # fmt: skip
    if not clauses:
        return None
    try:
        return RegexContent(compile_boolean(clauses, translation.stand_ins))
    except RegexError as error:
        if "no string" in str(error):
            return None
        raise Unsupported("patternProperties", str(error)) from None


def _open_extras(node: Object, key_rule: String | None | bool) -> Content | None:
    """Extra keys as closed sides and ``propertyNames`` (``key_rule``: True for any string) allow them."""
    if key_rule is None:
        return None
    closed = [side for side in node.sides if isinstance(deref(side.additional), Never)]
    patterns: list[str] | None = None
    if closed:
        if len(closed) > 1 and sum(1 for side in closed if side.patterns) > 1:
            raise Unsupported("additionalProperties", "several closed object schemas with patternProperties")
        if any(not side.patterns for side in closed):
            return None
        patterns = [p for p, schema in closed[0].patterns if not isinstance(deref(schema), Never)]
        if not patterns:
            return None
    if key_rule is True:
        if patterns is None:
            return LengthContent()
        translation = ecma_full(tuple(patterns), "patternProperties")
        texts = [t for t in translation.texts if t is not None]
        if not texts:
            return None
        full = "|".join(f"(?:{t})" for t in texts)
        try:
            return RegexContent(compile_regex(full, translation.stand_ins))
        except RegexError as error:
            raise Unsupported("patternProperties", str(error)) from None
    if patterns is not None:
        if key_rule.values is None:
            raise Unsupported("propertyNames", "propertyNames together with patternProperties on a closed object")
        values = [v for v in key_rule.values if any(search(p, v) for p in patterns)]
        return TrieContent(values) if values else None
    return string_content(key_rule)


__all__ = ["MAX_PATTERNS", "bad_matches", "extra_keys", "good_keys", "patterns_of"]
