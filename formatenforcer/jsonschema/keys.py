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

from collections.abc import Callable

from ..core.errors import RegexError
from ..parsers.dfa_ops import combine
from ..parsers.regex import compile_boolean, compile_regex
from .ecma.translate import literal_pattern, search
from .formats.content import Content, LengthContent, RegexContent, TrieContent
from .formats.patterns import format_automaton
from .schema.ir import AnyValue, Never, Node, Object, String, Unsupported, deref
from .schema.merge import Merger
from .string_content import ecma_full, string_content

HasValue = Callable[[Node], bool] | None

MAX_PATTERNS = 8
"""Objects with more distinct key patterns than this are not checked (2^k combinations)."""


def _value_ok(node: Object, matched: frozenset[str], merger: Merger, has_value: HasValue = None) -> bool:
    value: Node = AnyValue()
    try:
        for side in node.sides:
            parts = [schema for pattern, schema in side.patterns if pattern in matched] or [side.additional]
            for part in parts:
                value = merger.intersect(value, part)
    except Unsupported:
        return False  # the value could not be compiled either
    return not isinstance(deref(value), Never) and (has_value is None or has_value(value))


def patterns_of(node: Object) -> list[str]:
    """The distinct ``patternProperties`` patterns of all sides, in order."""
    return list(dict.fromkeys(p for side in node.sides for p, _ in side.patterns))


def bad_matches(node: Object, merger: Merger, has_value: HasValue = None) -> list[frozenset[str]] | None:
    """The sets of matched patterns for which an extra key could have no value (None: too many patterns).
    ``has_value`` (the finiteness check) also rules out a value that could start but never finish."""
    patterns = patterns_of(node)
    if not patterns:  # the usual object: one combination, no pattern matched
        if all(deref(side.additional).__class__ is AnyValue for side in node.sides):
            return []  # an extra key's value may be anything (the usual open object): it always has one
        return [] if _value_ok(node, frozenset(), merger, has_value) else [frozenset()]
    if len(patterns) > MAX_PATTERNS:
        return None
    out = []
    for bits in range(1 << len(patterns)):
        matched = frozenset(p for i, p in enumerate(patterns) if bits >> i & 1)
        if not _value_ok(node, matched, merger, has_value):
            out.append(matched)
    return out


def good_keys(node: Object, bad: list[frozenset[str]], full) -> tuple:  # noqa: ANN001 - pattern converter
    """Clauses for ``regex.compile_boolean``: the key texts whose set of matched patterns is not ``bad``
    (``full`` turns a JSON Schema search pattern into a full-match one, None when it matches nothing)."""
    patterns = patterns_of(node)
    clauses = []
    for bits in range(1 << len(patterns)):
        matched = frozenset(p for i, p in enumerate(patterns) if bits >> i & 1)
        if matched not in bad:
            clauses.append((tuple(full(p) for p in patterns if p in matched),
                            tuple(full(p) for p in patterns if p not in matched)))  # fmt: skip
    return tuple(clauses)


def extra_keys(
    node: Object, merger: Merger, key_rule: String | None | bool, has_value: HasValue = None
) -> Content | None:
    """The automaton of the keys an object may hold besides its named ones (None: no such key), narrowed
    (see the module notes) when some combination of matched patterns leaves an extra key with no value
    (none at all, or with ``has_value`` none that can finish)."""
    content = _open_extras(node, key_rule)
    if content is None:
        return None
    bad = bad_matches(node, merger, has_value)
    closed = [side for side in node.sides if isinstance(deref(side.additional), Never)]
    relevant = bad
    if closed and bad:
        lives = [{p for p, schema in side.patterns if not isinstance(deref(schema), Never)} for side in closed]
        # the others are already excluded: they miss every live pattern of some closed side
        relevant = [m for m in bad if all(m & live for live in lives)]
    if not relevant:
        return content
    patterns = patterns_of(node)
    if key_rule is not True and key_rule.values is not None:
        values = [v for v in key_rule.values if frozenset(p for p in patterns if search(p, v)) not in bad]
        return TrieContent(values) if values else None
    rule = _Rule(key_rule, patterns)
    clauses = tuple((must, tuple(t for t in never if t is not None))
                    for must, never in good_keys(node, bad, rule.texts.get) if None not in must)  # fmt: skip
    if not clauses or rule.must is None:
        return None
    clauses = tuple((tuple(dict.fromkeys(m + rule.must)), n + rule.never) for m, n in clauses)
    return _automaton(clauses, rule)


COUNT_STEPS = 100_000
"""Most automaton steps ``count_keys`` takes before it assumes enough keys exist (docs/bad-input.md)."""


def count_keys(extras: Content | None, names: tuple[str, ...], limit: int) -> int:
    """How many distinct extra keys ``extras`` allows that are not one of ``names`` (a name is never an
    extra key), counted up to ``limit``: ``minProperties`` beyond the named and extra keys that exist leaves
    no object. The automaton is pruned (every character it offers leads on to a key), so each pending
    prefix of the depth-first count is at least one key, and an interval of ``limit`` characters settles
    it. Past ``COUNT_STEPS`` steps the count answers ``limit`` (enough), the documented bound."""
    if extras is None or limit <= 0:
        return 0
    taken = 0
    for name in names:
        state = extras.start()
        for ch in name:
            state = extras.step(state, ch)
            if state is None:
                break
        else:
            taken += extras.accepting(state)
    goal = limit + taken
    count, steps, stack = 0, 0, [extras.start()]
    while stack:
        state = stack.pop()
        count += extras.accepting(state)
        for lo, hi in extras.allowed(state).intervals:
            if count + len(stack) + hi - lo + 1 >= goal:
                return limit
            for point in range(lo, hi + 1):
                steps += 1
                after = extras.step(state, chr(point))
                if after is not None:
                    stack.append(after)
        if count + len(stack) >= goal or steps > COUNT_STEPS:
            return limit
    return max(0, count - taken)


MAX_KEY_CLAUSES = 64
"""Most combinations (one live pattern per closed side) turned into one key automaton."""


def _open_extras(node: Object, key_rule: String | None | bool) -> Content | None:
    """Extra keys as closed sides and ``propertyNames`` (``key_rule``: True for any string) allow them."""
    if key_rule is None:
        return None
    closed = [side for side in node.sides if isinstance(deref(side.additional), Never)]
    patterns: list[str] | None = None
    if closed:
        if any(not side.patterns for side in closed):
            return None
        per_side = [[p for p, schema in side.patterns if not isinstance(deref(schema), Never)] for side in closed]
        if not all(per_side):
            return None
        if len(per_side) > 1 or (key_rule is not True and key_rule.values is None):
            return _combined_keys(per_side, key_rule)
        patterns = per_side[0]
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
        values = [v for v in key_rule.values if any(search(p, v) for p in patterns)]
        return TrieContent(values) if values else None
    return string_content(key_rule)


def _combined_keys(per_side: list[list[str]], key_rule: String | bool) -> Content | None:
    """Extra keys of an object closed by several ``patternProperties`` sides (``allOf``), or closed by one
    and narrowed by a ``propertyNames`` string schema: a key must match a live pattern of every closed side
    and the key rule, so the automaton is the union, over one pattern per side, of the intersections
    (``regex.compile_boolean``), with the rule's lengths beside it. Pruned, so no dead end."""
    if key_rule is not True and key_rule.values is not None:
        values = [v for v in key_rule.values if all(any(search(p, v) for p in ps) for ps in per_side)]
        return TrieContent(values) if values else None
    rule = _Rule(key_rule, [p for patterns in per_side for p in patterns])
    if rule.must is None:
        return None
    combos: list[tuple[str, ...]] = [()]
    for patterns in per_side:
        texts = [t for t in map(rule.texts.get, patterns) if t is not None]  # None: matches no key
        combos = [(*combo, t) for combo in combos for t in texts]
        if len(combos) > MAX_KEY_CLAUSES:
            raise Unsupported("patternProperties", "too many pattern combinations across closed object schemas")
    if not combos:
        return None
    return _automaton(tuple((tuple(dict.fromkeys(combo + rule.must)), rule.never) for combo in combos), rule)


class _Rule:
    """The object's key patterns and a ``propertyNames`` string schema (no enum), translated together from
    ECMA-262 (so they share the stand-ins of large classes): ``texts`` maps each pattern to its full-match
    text (None: it matches nothing); ``must``/``never``: the rule's texts to match (None when one of them
    matches nothing) and to avoid; ``low``/``high``: its lengths."""

    def __init__(self, key_rule: String | bool, patterns: list[str]) -> None:
        rule: String | None = None if key_rule is True else key_rule
        wanted = () if rule is None else tuple(rule.patterns)
        unwanted = () if rule is None else (*rule.not_patterns, *(literal_pattern(v) for v in sorted(rule.excluded)))
        formats = () if rule is None else tuple(format_automaton(f) for f in rule.formats)
        not_formats = () if rule is None else tuple(format_automaton(f) for f in rule.not_formats)
        translation = ecma_full((*patterns, *wanted, *unwanted), "patternProperties")
        if translation.stand_ins and (formats or not_formats):
            raise Unsupported("propertyNames", "a pattern with a large Unicode class together with a format")
        texts = translation.texts
        self.stand_ins = translation.stand_ins
        self.texts: dict[str, str | None] = dict(zip(patterns, texts))
        rule_must = texts[len(patterns) : len(patterns) + len(wanted)]
        rule_never = texts[len(patterns) + len(wanted) :]
        self.must: tuple | None = None if None in rule_must else (*rule_must, *formats)
        self.never: tuple = (*(t for t in rule_never if t is not None), *not_formats)
        self.low, self.high = (0, None) if rule is None else (rule.min_length, rule.max_length)


def _automaton(clauses: tuple, rule: _Rule) -> Content | None:
    """``compile_boolean(clauses)`` within the rule's lengths; None when no key fits."""
    try:
        # (stand-ins never meet a format automaton: refused in _Rule)
        dfa = compile_boolean(clauses, rule.stand_ins) if rule.stand_ins else combine(clauses)
        content = RegexContent(dfa, rule.low, rule.high)
    except RegexError as error:
        if "no string" in str(error):
            return None
        raise Unsupported("patternProperties", str(error)) from None
    return content if content.satisfiable() else None


__all__ = [
    "COUNT_STEPS",
    "MAX_KEY_CLAUSES",
    "MAX_PATTERNS",
    "bad_matches",
    "count_keys",
    "extra_keys",
    "good_keys",
    "patterns_of",
]
