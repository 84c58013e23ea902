"""The cycle collector policy (collector.py): paused inside formatenforcer's work, restored exactly after."""

from __future__ import annotations

import gc
import warnings

import pytest

from formatenforcer import JsonSchemaParser, SchemaError, TokenEnforcer
from formatenforcer.collector import paused


def test_paused_disables_inside_and_restores_after_nesting():
    assert gc.isenabled()
    with paused():
        assert not gc.isenabled()
        with paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # only the outermost pause resumes collection
    assert gc.isenabled()


def test_paused_keeps_a_collector_the_caller_disabled_off():
    gc.disable()
    try:
        with paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_paused_restores_on_error():
    with pytest.raises(ValueError):
        with paused():
            raise ValueError("boom")
    assert gc.isenabled()


def test_building_and_masking_leave_the_collector_enabled(llama3_vocabulary):
    parser = JsonSchemaParser({"type": "object", "properties": {"a": {"type": "string"}}})
    matcher = TokenEnforcer(llama3_vocabulary, parser).matcher()
    assert len(matcher.allowed_token_ids()) > 0
    assert gc.isenabled()
    with pytest.raises(SchemaError):
        JsonSchemaParser({"type": "object", "properties": {"a": {"$ref": "#/nowhere"}}})
    assert gc.isenabled()


def test_lenient_warning_points_at_the_callers_line():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        JsonSchemaParser({"type": "string", "format": "no-such-format"}, lenient=True)
    assert caught and caught[0].filename == __file__
