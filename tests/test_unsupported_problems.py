"""``UnsupportedSchemaError.problems``: each item is the ``(pointer, keyword)`` pair it always was (unpacks,
compares, hashes as one) and also says why the keyword cannot be enforced; the message lists the reasons."""

from __future__ import annotations

import pickle
import warnings

import pytest

from formatenforcer import JsonSchemaParser, TokenEnforcer, UnsupportedSchemaError
from formatenforcer.core.errors import Problem

from .json_checks import accepts_tokens

CASES = [
    # (schema, pointer, keyword, words of the reason)
    ({"not": {"uniqueItems": True}}, "#/not", "not", "uniqueItems"),
    ({"items": {"type": "string", "pattern": "a\\bb"}}, "#/items/pattern", "pattern", "word-boundary"),
    ({"type": "string", "pattern": "(?=a)b"}, "#/pattern", "pattern", "look"),
    ({"$ref": "https://example.com/absent.json"}, "#/$ref", "$ref", "not supplied"),
    ({"not": {"anyOf": [{"required": [f"a{i}", f"b{i}"]} for i in range(12)]}}, "#/not", "not", "256"),
    ({"type": "string", "pattern": "\\p{Script=Greek}"}, "#/pattern", "pattern", "unicodedata"),
]  # fmt: skip


@pytest.mark.parametrize(("schema", "pointer", "keyword", "words"), CASES)
def test_each_problem_is_the_old_pair_with_a_reason(schema, pointer, keyword, words):
    with pytest.raises(UnsupportedSchemaError) as raised:
        JsonSchemaParser(schema)
    problems = raised.value.problems
    assert (pointer, keyword) in problems  # compares as the pair
    found = problems[problems.index((pointer, keyword))]
    assert isinstance(found, Problem) and found.pointer == pointer and found.keyword == keyword
    where, what = found  # unpacks as the pair
    assert (where, what) == (pointer, keyword) and hash(found) == hash((pointer, keyword))
    assert words.lower() in found.reason.lower(), found.reason
    assert found.reason in str(raised.value)  # the message lists the reason


def test_problem_survives_pickling_and_plain_pairs_still_build_the_error():
    problem = Problem("#/not", "not", "a reason")
    again = pickle.loads(pickle.dumps(problem))
    assert again == ("#/not", "not") and again.reason == "a reason"
    error = UnsupportedSchemaError([("#/x", "format")])
    assert error.problems == [("#/x", "format")] and error.problems[0].reason == ""
    assert "'format' at #/x" in str(error)


def test_lenient_warning_and_problems_carry_reasons(llama3_vocabulary, llama3_tokenizer):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parser = JsonSchemaParser({"type": "object", "properties": {"a": {"not": {"uniqueItems": True}}}},
                                  lenient=True)  # fmt: skip
    assert parser.problems == [("#/properties/a/not", "not")]
    assert "uniqueItems" in parser.problems[0].reason
    assert any(parser.problems[0].reason in str(w.message) for w in caught)
    ok, why = accepts_tokens(TokenEnforcer(llama3_vocabulary, parser), llama3_tokenizer, '{"a": [1, 1]}')
    assert ok, why  # leniently, the unenforced `not` constrains nothing
