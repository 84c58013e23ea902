"""The curated public surface: what ``import formatenforcer`` exports is pinned here on purpose."""

from __future__ import annotations

import formatenforcer

CORE = {
    "CharSet",
    "CharacterParser",
    "ChoiceParser",
    "EnforcerConfig",
    "FormatEnforcerError",
    "FormatError",
    "FreeRun",
    "Matcher",
    "ReasoningParser",
    "RegexError",
    "RegexParser",
    "SchemaError",
    "SequenceParser",
    "TokenEnforcer",
    "UnionParser",
    "UnsupportedSchemaError",
    "Vocabulary",
    "VocabularyError",
    "allocate_bitmask",
    "apply_bitmask",
    "fill_bitmasks",
}
ENGINES = {"fill_position_bitmasks", "mask_token_ids", "token_bytes_from_pieces", "write_mask_row"}
"""What the engine adapters (integrations/) use beyond the core: they import nothing else."""
JSON = {"JsonConfig", "JsonParser", "JsonSchemaParser"}
GRAMMAR = {"GrammarError", "GrammarParser", "ToolCallParser"}


def test_exported_members():
    exported = set(formatenforcer.__all__)
    assert CORE | JSON | ENGINES | GRAMMAR <= exported
    assert all(hasattr(formatenforcer, name) for name in exported)
    assert not {name for name in exported if name.startswith("_")}


def test_error_tree():
    assert issubclass(formatenforcer.RegexError, formatenforcer.FormatError)
    assert issubclass(formatenforcer.UnsupportedSchemaError, formatenforcer.SchemaError)
    assert issubclass(formatenforcer.SchemaError, formatenforcer.FormatEnforcerError)
    assert issubclass(formatenforcer.VocabularyError, formatenforcer.FormatEnforcerError)
    assert issubclass(formatenforcer.GrammarError, formatenforcer.FormatError)
