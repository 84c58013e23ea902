"""A dropped grammar is freed without the cycle collector: its parser object is not in a reference cycle, and
when it goes its states and Earley sets drop the memos that tied them into cycles (``_Compiled.release``), so
reference counting frees them at once instead of a full collection later (full collections were about a third
of grammar mask time). States still held elsewhere keep working, exactly as before."""

from __future__ import annotations

import gc
import sys
import weakref
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from grammar_cases import GRAMMARS  # noqa: E402

from formatenforcer import GrammarParser, TokenEnforcer, allocate_bitmask  # noqa: E402


def _sql() -> tuple[str, str]:
    lark, _, texts = GRAMMARS["sql"]
    return (lark() if callable(lark) else lark), texts[1]


def test_a_dropped_grammar_frees_its_states_without_the_collector(llama3_vocabulary, llama3_tokenizer):
    lark, text = _sql()
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        parser = GrammarParser(lark, "lark")
        matcher = TokenEnforcer(llama3_vocabulary, parser).matcher()
        bitmask = allocate_bitmask(1, llama3_vocabulary.size)
        for token in llama3_tokenizer.encode(text, add_special_tokens=False)[:12]:
            matcher.fill_bitmask(bitmask, 0)
            assert matcher.accept_token(token)
        compiled = parser._compiled
        states = [weakref.ref(state) for state in list(compiled.states.values())]
        root = compiled.earley.root
        sets = [weakref.ref(found) for found in list(compiled.earley._sets.values()) if found is not root]
        assert len(states) > 50 and len(sets) > 20  # the walks made many of both
        del parser, matcher, compiled, root
        alive_states = sum(ref() is not None for ref in states)
        alive_sets = sum(ref() is not None for ref in sets)
        assert (alive_states, alive_sets) == (0, 0), f"{alive_states} states, {alive_sets} sets wait for the collector"
    finally:
        if was_enabled:
            gc.enable()


def test_a_state_held_after_its_parser_is_gone_reads_on_as_before():
    lark, text = _sql()
    middle = len(text) // 2
    parser = GrammarParser(lark, "lark")
    state = parser.add_text(text[:middle])
    assert state is not None
    expected = []
    walk = state
    for ch in text[middle:]:
        expected.append((walk.allowed_characters(), walk.can_end(), walk.key()[2:]))
        walk = walk.add_character(ch)
        assert walk is not None
    del parser, walk
    gc.collect()
    seen = []
    for ch in text[middle:]:
        seen.append((state.allowed_characters(), state.can_end(), state.key()[2:]))
        state = state.add_character(ch)
        assert state is not None
    assert seen == expected
    assert state.can_end()
    assert state.add_character("\x00") is None
