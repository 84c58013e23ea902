"""A hypothesis strategy for JSON Schemas of the kinds formatenforcer enforces (used by the property tests).

Schemas are kept small and satisfiable-looking; the tests skip the rare ones the parser refuses as
unsatisfiable or unsupported, so the strategy does not have to be exact.
"""

from __future__ import annotations

from hypothesis import strategies as st

_NAMES = st.sampled_from(["id", "name", "tags", "price", "a", "b", "x-y", "naïve", "emoji😀", 'q"uote'])
_PATTERNS = st.sampled_from(["^[a-z]+$", "^[0-9]{2,4}$", "ab", "^x", "[A-Z][a-z]*$", "^(?:yes|no)$"])
# email/hostname/uri left out: hypothesis-jsonschema generates forms (quoted local parts, IP-literal
# domains, 253+ character names) that formatenforcer documents as not generated
_FORMATS = st.sampled_from(["date", "date-time", "time", "uuid", "ipv4", "ipv6", "duration"])
_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-50, 50), st.text(max_size=5))


@st.composite
def _string(draw):  # noqa: ANN001, ANN202
    schema = {"type": "string"}
    kind = draw(st.sampled_from(["plain", "length", "pattern", "format", "enum"]))
    if kind == "length":
        low = draw(st.integers(0, 4))
        schema.update(minLength=low, maxLength=low + draw(st.integers(0, 6)))
    elif kind == "pattern":
        schema["pattern"] = draw(_PATTERNS)
        if draw(st.booleans()):
            schema["maxLength"] = 12
    elif kind == "format":
        schema["format"] = draw(_FORMATS)
    elif kind == "enum":
        schema["enum"] = draw(st.lists(st.text(max_size=6), min_size=1, max_size=4, unique=True))
    return schema


@st.composite
def _number(draw):  # noqa: ANN001, ANN202
    schema = {"type": draw(st.sampled_from(["integer", "number"]))}
    if draw(st.booleans()):
        schema["minimum"] = draw(st.integers(-1000, 1000))
    if draw(st.booleans()):
        schema["maximum"] = schema.get("minimum", 0) + draw(st.integers(0, 5000))
    if draw(st.booleans()):
        key = draw(st.sampled_from(["exclusiveMinimum", "exclusiveMaximum"]))
        schema[key] = draw(st.sampled_from([-7.5, 0, 2.25, 99]))
    if schema["type"] == "integer" and draw(st.booleans()):
        schema["multipleOf"] = draw(st.sampled_from([2, 3, 5, 7]))
    return schema


def schemas(depth: int = 2) -> st.SearchStrategy:
    """JSON Schemas up to ``depth`` levels of nesting."""
    leaves = st.one_of(
        _string(),
        _number(),
        st.just({"type": "boolean"}),
        st.just({"type": "null"}),
        st.builds(lambda v: {"const": v}, _SCALARS),
        st.builds(lambda v: {"enum": v}, st.lists(_SCALARS, min_size=1, max_size=4)),
        st.just({}),
    )
    if depth == 0:
        return leaves
    inner = schemas(depth - 1)

    @st.composite
    def _object(draw):  # noqa: ANN001, ANN202
        props = draw(st.dictionaries(_NAMES, inner, max_size=3))
        schema = {"type": "object", "properties": props}
        if props:
            schema["required"] = draw(st.lists(st.sampled_from(sorted(props)), unique=True))
        schema["additionalProperties"] = draw(st.one_of(st.booleans(), inner))
        if draw(st.booleans()):
            schema["maxProperties"] = len(schema.get("required", [])) + draw(st.integers(0, 2))
        if draw(st.booleans()):
            schema["patternProperties"] = {"^p_": draw(inner)}
        return schema

    @st.composite
    def _array(draw):  # noqa: ANN001, ANN202
        schema = {"type": "array", "items": draw(inner)}
        if draw(st.booleans()):
            schema["prefixItems"] = draw(st.lists(inner, max_size=2))
        low = draw(st.integers(0, 2))
        schema["minItems"] = low
        if draw(st.booleans()):
            schema["maxItems"] = low + draw(st.integers(0, 3))
        if draw(st.booleans()):
            schema["contains"] = draw(leaves)
        return schema

    return st.one_of(
        leaves,
        _object(),
        _array(),
        st.builds(lambda xs: {"anyOf": xs}, st.lists(inner, min_size=1, max_size=3)),
        st.builds(lambda a, b: {"allOf": [a, b]}, inner, inner),
        st.builds(lambda s: {"type": ["string", "null"], **{k: v for k, v in s.items() if k != "type"}}, _string()),
    )
