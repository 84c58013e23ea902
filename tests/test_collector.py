"""The cycle collector policy (core/collector.py): paused while the index is built, restored exactly after."""

from __future__ import annotations

import gc

import pytest

from formatenforcer.core.collector import paused


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
