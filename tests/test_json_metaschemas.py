"""``$ref`` to json-schema.org's metaschemas, read from the installed ``jsonschema-specifications`` package.

A value under ``{"$ref": "https://json-schema.org/draft/2020-12/schema"}`` must itself be a schema. The
2020-12 metaschema recurses through ``$dynamicRef: "#meta"`` across its vocabulary documents, so this also
exercises dynamic scopes on a real, large schema: the walks below check generation never dead-ends and what
it finishes is a schema the ``jsonschema`` validator accepts against the same metaschema.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from formatenforcer import JsonConfig, JsonSchemaParser, TokenEnforcer, UnsupportedSchemaError

from .checking import random_walk
from .json_checks import accepts_tokens

pytest.importorskip("jsonschema_specifications")

META_2020 = "https://json-schema.org/draft/2020-12/schema"
META_7 = "http://json-schema.org/draft-07/schema#"


def test_2020_12_metaschema_accepts_schemas_and_refuses_non_schemas(llama3_vocabulary, llama3_tokenizer):
    parser = JsonSchemaParser({"$ref": META_2020})
    enforcer = TokenEnforcer(llama3_vocabulary, parser)
    for text in ('{"type": "integer", "minimum": 0}', "true", '{"$defs": {"a": {"$ref": "#/$defs/b"}}}',
                 '{"properties": {"a": {"items": {"enum": [1, "x"]}}}, "required": ["a"]}'):  # fmt: skip
        ok, why = accepts_tokens(enforcer, llama3_tokenizer, text)
        assert ok, (text, why)
    for text in ('{"$defs": {"foo": {"type": 1}}}', '{"minLength": -1}', '{"type": "nope"}', "3",
                 '{"properties": {"a": {"anyOf": []}}}', '{"items": {"required": "a"}}'):  # fmt: skip
        assert not parser.accepts(text), text


def test_draft7_metaschema(llama3_vocabulary, llama3_tokenizer):
    parser = JsonSchemaParser({"$schema": META_7, "$ref": META_7})
    enforcer = TokenEnforcer(llama3_vocabulary, parser)
    for text in ('{"type": ["string", "null"], "maxLength": 3}', '{"definitions": {"a": {"$ref": "#"}}}', "false"):
        ok, why = accepts_tokens(enforcer, llama3_tokenizer, text)
        assert ok, (text, why)
    for text in ('{"definitions": {"a": {"type": 1}}}', '{"minLength": -1}', '{"required": [1]}'):
        assert not parser.accepts(text), text


def test_resources_override_the_installed_metaschema():
    parser = JsonSchemaParser({"$ref": META_2020}, resources={META_2020: {"type": "integer"}})
    assert parser.accepts("3") and not parser.accepts("{}")


def test_without_the_package_the_error_names_the_uri_and_the_remedy():
    code = (
        "import sys; sys.modules['jsonschema_specifications'] = None\n"  # makes the import fail
        "from formatenforcer import JsonSchemaParser, UnsupportedSchemaError\n"
        f"try:\n    JsonSchemaParser({{'$ref': {META_2020!r}}})\n"
        "except UnsupportedSchemaError as e:\n    print(e)\n"
    )
    root = Path(__file__).resolve().parents[1]  # this checkout's formatenforcer
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True,
                         cwd=root, env={**os.environ, "PYTHONPATH": str(root)})  # fmt: skip
    assert META_2020 in out.stdout and "jsonschema-specifications" in out.stdout and "resources=" in out.stdout
    with pytest.raises(UnsupportedSchemaError):  # an unknown json-schema.org URI stays unresolved here too
        JsonSchemaParser({"$ref": "https://json-schema.org/draft/2099-01/schema"})


KEYWORDS = ["type", "properties", "items", "required", "minimum", "$defs", "anyOf", "not", "enum", "maxLength",
            "additionalProperties", "prefixItems", "contains", "minItems", "const"]  # fmt: skip
STRICT_META = {"$id": "https://example.com/strict-meta", "$dynamicAnchor": "meta", "$ref": META_2020,
               "type": "object", "propertyNames": {"enum": KEYWORDS}, "maxProperties": 3}  # fmt: skip
"""The 2020-12 metaschema extended the way the spec intends: this resource declares ``$dynamicAnchor: meta``
first, so every nested subschema (``$dynamicRef: "#meta"`` in the vocabularies) must follow it too. Walks
therefore write real keywords at every depth instead of wandering in free-form keys."""


def test_extended_metaschema_applies_at_every_depth():
    parser = JsonSchemaParser(STRICT_META)
    assert parser.accepts('{"items": {"anyOf": [{"type": "string"}, {"not": {"const": 1}}]}}')
    assert not parser.accepts('{"items": {"anyOf": [{"title": "x"}]}}')  # a nested key outside KEYWORDS
    assert not parser.accepts('{"items": {"anyOf": [true]}}')  # nested schemas must be objects here


@pytest.mark.parametrize("root", [STRICT_META, {"$schema": META_7, "$ref": META_7}])
def test_metaschema_walks_never_dead_end_and_finish_as_schemas(llama3_vocabulary, root):
    parser = JsonSchemaParser(root, config=JsonConfig(whitespace="compact"))
    enforcer = TokenEnforcer(llama3_vocabulary, parser)
    validator = jsonschema.validators.validator_for(root, default=jsonschema.Draft202012Validator)(root)
    finished = nested = 0
    for seed in range(12):
        text, done = random_walk(enforcer, seed, max_tokens=200, end_bias=0.3)
        if done:
            finished += 1
            validator.validate(json.loads(text))
            nested += text.count("{") >= 2
    assert finished >= 4 and (nested >= 1 or root is not STRICT_META)  # draft-07's walks mostly pick true/false
