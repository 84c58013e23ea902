"""A referenced resource is read in the dialect its own ``$schema`` names, not the root's (schema/dialects.py).

The suite's ``remotes/`` hold documents written for one draft and referenced from another (the official
``optional/cross-draft.json`` cases, which the stored corpus lacks, use them); each case is checked token
by token with the real Llama 3 tokenizer for the valid texts and character by character for the invalid.
"""

from __future__ import annotations

import json

import pytest

from formatenforcer import JsonSchemaParser, TokenEnforcer

from .json_checks import accepts_tokens
from .json_suite_runner import GET_SUITE, REMOTES

D2020 = "https://json-schema.org/draft/2020-12/schema"
D2019 = "https://json-schema.org/draft/2019-09/schema"
D7 = "http://json-schema.org/draft-07/schema#"


class _Remote(str):
    """A document of the suite's ``remotes/`` (read when the test runs: the corpus may be absent)."""

    def resources(self) -> dict:
        if not REMOTES.is_dir():
            pytest.skip(f"JSON-Schema-Test-Suite remotes not found at {REMOTES}; to run these tests: {GET_SUITE}")
        return {f"http://localhost:1234/{self}": json.loads((REMOTES / self).read_text())}


def _remote(path: str) -> _Remote:
    return _Remote(path)


OLD_TUPLE = {  # a draft-07 document: tuple `items`, `additionalItems`, `definitions`, `dependencies`
    "$schema": D7,
    "definitions": {"name": {"type": "string", "maxLength": 3}},
    "type": "object",
    "properties": {"pair": {"type": "array", "items": [{"$ref": "#/definitions/name"}, {"type": "integer"}],
                            "additionalItems": False}},
    "dependencies": {"pair": ["id"], "id": {"properties": {"id": {"type": "integer"}}}},
    "dependentRequired": {"id": ["never"]},  # 2019-09's keyword: unknown in draft-07, so no constraint
}  # fmt: skip

CASES = [
    pytest.param(  # 2019-09 has no prefixItems: the remote's prefixItems constrains nothing
        {"$schema": D2020, "type": "array", "$ref": "http://localhost:1234/draft2019-09/ignore-prefixItems.json"},
        _remote("draft2019-09/ignore-prefixItems.json"), ["[1, 2, 3]", '["a"]'], ["{}"], id="2020-12->2019-09"),
    pytest.param(  # draft-07 has no dependentRequired
        {"$schema": D2020, "type": "object",
         "allOf": [{"properties": {"foo": True}}, {"$ref": "http://localhost:1234/draft7/ignore-dependentRequired.json"}]},
        _remote("draft7/ignore-dependentRequired.json"), ['{"foo": "x"}', '{"foo": 1, "bar": 2}'], ["[]"],
        id="2020-12->draft-07"),
    pytest.param(  # ...but a 2019-09 document referenced from a draft-07 root keeps its dependentRequired
        {"$schema": D7, "type": "object",
         "allOf": [{"properties": {"foo": True}}, {"$ref": "http://localhost:1234/draft2019-09/dependentRequired.json"}]},
        _remote("draft2019-09/dependentRequired.json"), ['{"foo": 1, "bar": 2}', '{"bar": 2}'], ['{"foo": "x"}'],
        id="draft-07->2019-09"),
    pytest.param(  # a 2020-12 document's prefixItems hold under a 2019-09 root
        {"$schema": D2019, "type": "array", "$ref": "https://example.com/prefix.json"},
        {"https://example.com/prefix.json": {"$schema": D2020, "prefixItems": [{"type": "string"}]}},
        ['["a", 2]', "[]"], ["[1, 2, 3]"], id="2019-09->2020-12"),
    pytest.param(  # draft-07: $ref replaces its siblings; 2020-12: they apply beside it
        {"$schema": D2020, "type": "array",
         "prefixItems": [{"$ref": "https://example.com/old.json"}, {"$ref": "https://example.com/new.json"}]},
        {"https://example.com/old.json": {"$schema": D7, "definitions": {"i": {"type": "integer"}},
                                          "$ref": "#/definitions/i", "minimum": 5},
         "https://example.com/new.json": {"$schema": D2020, "$defs": {"i": {"type": "integer"}},
                                          "$ref": "#/$defs/i", "minimum": 5}},
        ["[3, 5]", "[9, 7, true]", "[1]"], ["[3, 3]", '["a", 5]', "[3, 5.5]"], id="ref-siblings"),
    pytest.param(  # the root names no dialect: its draft-07 document is still read as draft-07
        {"type": "object", "properties": {"old": {"$ref": "https://example.com/tuple.json"}}},
        {"https://example.com/tuple.json": OLD_TUPLE},
        ['{"old": {"pair": ["abc", 1], "id": 2}}', '{"old": {"id": 3}}', '{"old": {}}'],
        ['{"old": {"pair": ["abc", 1]}}', '{"old": {"pair": ["abcd", 1], "id": 2}}',
         '{"old": {"pair": ["a", 1, 2], "id": 2}}', '{"old": {"id": "x"}}'], id="draft-07 keywords"),
    pytest.param(  # an embedded resource with its own $id and $schema
        {"$schema": D2020, "type": "array", "items": {"$ref": "#/$defs/legacy"},
         "$defs": {"legacy": {"$id": "https://example.com/legacy", "$schema": D7, "type": "object",
                              "dependentSchemas": {"a": False}, "required": ["a"]}}},
        {}, ['[{"a": 1}]', "[]"], ["[{}]", "[1]"], id="embedded"),
]  # fmt: skip


@pytest.mark.parametrize(("schema", "resources", "valid", "invalid"), CASES)
def test_each_resource_is_read_in_its_own_dialect(schema, resources, valid, invalid, llama3_vocabulary,
                                                  llama3_tokenizer):  # fmt: skip
    if isinstance(resources, _Remote):
        resources = resources.resources()
    parser = JsonSchemaParser(schema, resources=resources)
    enforcer = TokenEnforcer(llama3_vocabulary, parser)
    for text in valid:
        ok, why = accepts_tokens(enforcer, llama3_tokenizer, text)
        assert ok, (text, why)
    for text in invalid:
        assert not parser.accepts(text), text


def test_root_dialect_still_governs_its_own_ref_siblings():
    # a draft-07 root (the draft7 suite's setting) keeps ignoring $ref's siblings, a 2020-12 root applies them
    schema = {"$ref": "#/definitions/n", "minimum": 5, "definitions": {"n": {"type": "integer"}}}
    assert JsonSchemaParser({"$schema": D7, **schema}).accepts("3")
    assert not JsonSchemaParser({"$schema": D2020, **schema}).accepts("3")
