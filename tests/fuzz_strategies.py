"""Hypothesis strategies for the fuzz suite (tests/test_fuzz.py): JSON Schemas that mix the enforced
kinds of json_schema_strategies.py with the keywords that decide dead ends and key texts (minProperties,
dependentRequired, propertyNames, uniqueItems, not, oneOf, $ref to the root), odd values, and regexes built
from a small grammar of Python ``re`` syntax. Schemas may well be unsatisfiable or unsupported: the suite
checks that each is then refused at construction with a documented error.
"""

from __future__ import annotations

from hypothesis import strategies as st

from .json_schema_strategies import schemas

_KEYS = st.sampled_from(["a", "b", "id", "x-y", "p_1", "naïve"])


@st.composite
def _object_rules(draw, inner):  # noqa: ANN001, ANN202
    """An open or closed object with the keywords that count or name keys."""
    schema: dict = {"type": "object"}
    if draw(st.booleans()):
        schema["properties"] = draw(st.dictionaries(_KEYS, inner, max_size=3))
    if draw(st.booleans()):
        schema["required"] = draw(st.lists(_KEYS, unique=True, max_size=3))
    for key, values in (("minProperties", st.integers(0, 3)), ("maxProperties", st.integers(0, 4))):
        if draw(st.booleans()):
            schema[key] = draw(values)
    if draw(st.booleans()):
        schema["dependentRequired"] = draw(st.dictionaries(_KEYS, st.lists(_KEYS, unique=True, max_size=2), max_size=2))
    if draw(st.integers(0, 3)) == 0:
        schema["dependentSchemas"] = {draw(_KEYS): {"required": draw(st.lists(_KEYS, unique=True, max_size=2))}}
    if draw(st.integers(0, 3)) == 0:
        schema["propertyNames"] = draw(
            st.sampled_from([{"maxLength": 3}, {"pattern": "^[a-z]+$"}, {"enum": ["a", "b", "zz"]}, {"minLength": 2}])
        )
    if draw(st.integers(0, 3)) == 0:
        schema["patternProperties"] = {draw(st.sampled_from(["^p_", "^x", "[0-9]"])): draw(inner)}
    if draw(st.booleans()):
        schema["additionalProperties"] = draw(st.one_of(st.booleans(), inner))
    return schema


@st.composite
def _array_rules(draw, inner):  # noqa: ANN001, ANN202
    schema: dict = {"type": "array", "items": draw(inner)}
    if draw(st.booleans()):
        schema["uniqueItems"] = True
    low = draw(st.integers(0, 3))
    if low:
        schema["minItems"] = low
    if draw(st.booleans()):
        schema["maxItems"] = low + draw(st.integers(0, 2))
    if draw(st.integers(0, 3)) == 0:
        schema["contains"] = draw(inner)
    return schema


def fuzz_schemas() -> st.SearchStrategy:
    """Schemas of up to two levels, the enforced kinds plus the hostile keywords above."""
    inner = schemas(depth=1)
    hostile = st.one_of(
        _object_rules(inner),
        _array_rules(inner),
        st.builds(lambda s: {"not": s}, inner),
        # an object under the `not` of another's key rules: members it must hold (object_exists.py)
        st.builds(lambda a, b: {**a, "not": b}, _object_rules(inner), _object_rules(inner)),
        st.builds(lambda xs: {"oneOf": xs}, st.lists(inner, min_size=1, max_size=3)),
        st.builds(lambda a, b: {"allOf": [a, b]}, inner, inner),
        st.builds(
            lambda s: {"type": "object", "properties": {"self": {"$ref": "#"}, "v": s}},
            inner,
        ),
        st.builds(lambda a, b: {"if": a, "then": b}, inner, inner),
    )
    return st.one_of(schemas(depth=2), hostile)


_ATOMS = st.sampled_from(
    ["a", "b", "xyz", ".", r"\d", r"\w", r"\s", "[a-c]", "[^a]", r"\.", "é", "😀", "^", "$", r"\b", "[0-9]", "(?:ab)"]
)
_QUANTIFIERS = st.sampled_from(["", "", "*", "+", "?", "{2}", "{1,3}", "{0,}", "*?", "{3,1}", "{1000}{1000}"])


def regexes() -> st.SearchStrategy:
    """Python ``re`` patterns from atoms, quantifiers, groups, alternation and anchors (some invalid)."""
    atom = st.builds(lambda a, q: a + q, _ATOMS, _QUANTIFIERS)

    def extend(children: st.SearchStrategy) -> st.SearchStrategy:
        return st.one_of(
            st.builds(lambda xs: "".join(xs), st.lists(children, min_size=1, max_size=4)),
            st.builds(lambda xs: "|".join(xs), st.lists(children, min_size=2, max_size=3)),
            st.builds(lambda x, q: f"({x}){q}", children, _QUANTIFIERS),
        )

    return st.recursive(atom, extend, max_leaves=8)
