"""MaskBench's grammar cases (benchmarks/grammar_cases.py) mean the same language in both notations: every
text is accepted by formatenforcer (Lark and EBNF), lark (the Lark text), llguidance (Lark) and xgrammar
(EBNF), and a broken copy of each text by none, so the engines are timed on the same work."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from grammar_cases import GRAMMARS, grammar_cases, xgrammar_grammar  # noqa: E402

from formatenforcer import GrammarParser  # noqa: E402

CASES = grammar_cases()


def test_five_grammars_with_texts() -> None:
    assert set(GRAMMARS) == {"sql", "arithmetic", "c_like", "json_grammar", "tool_call"}
    assert len(CASES) >= 15 and len({case["name"] for case in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_every_engine_reads_the_same_verdicts(case: dict) -> None:
    lark = pytest.importorskip("lark")
    xgrammar = pytest.importorskip("xgrammar")
    llguidance = pytest.importorskip("llguidance")
    from xgrammar.testing import _is_grammar_accept_string

    broken = case["text"] + "@"  # no grammar here has '@' anywhere
    parsers = [GrammarParser(case["lark"], "lark")]
    if case["ebnf"] != "tool_call":
        parsers.append(GrammarParser(case["ebnf"], "ebnf"))
        oracle = lark.Lark(case["lark"], parser="earley", lexer="dynamic_complete")
        oracle.parse(case["text"])
        with pytest.raises(lark.exceptions.LarkError):
            oracle.parse(broken)
    for parser in parsers:
        assert parser.accepts(case["text"]) and not parser.accepts(broken)
    compiled = xgrammar_grammar(xgrammar, case["ebnf"])
    assert _is_grammar_accept_string(compiled, case["text"]) and not _is_grammar_accept_string(compiled, broken)
    grammar = llguidance.LLMatcher.grammar_from_lark(case["lark"])
    is_error, messages = llguidance.LLMatcher.validate_grammar_with_warnings(grammar)
    assert not is_error, messages
