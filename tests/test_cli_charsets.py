"""``explain`` shows sets of characters unambiguously (formatenforcer/cli/charsets.py): each character quoted,
ranges as ``'a'..'z'``, so a grammar's ``(``, ``-`` and digits no longer read as the range ``(-0``."""

from __future__ import annotations

import io
from pathlib import Path

from formatenforcer import GrammarParser, RegexParser
from formatenforcer.cli.charsets import describe_characters
from formatenforcer.cli.trace import explain_characters
from formatenforcer.core.charset import ANY, EMPTY, CharSet

SAMPLES = Path(__file__).resolve().parent.parent / "samples" / "grammars"


def test_characters_and_ranges_are_quoted():
    assert describe_characters(CharSet.of("(-") | CharSet.ranges(("0", "9"))) == "'(' '-' '0'..'9'"
    assert describe_characters(CharSet.of(" =")) == "' ' '='"
    assert describe_characters(CharSet.of("\t\n'\"")) == "'\\t' '\\n' '\"' \"'\""
    assert describe_characters(CharSet.ranges(("8", "9"))) == "'8' '9'"


def test_wide_sets_show_what_they_leave_out():
    assert describe_characters(ANY) == "any character"
    assert describe_characters(EMPTY) == "no character"
    assert describe_characters(ANY - CharSet.of('"\\')) == "any character except '\"' '\\\\'"


def test_long_lists_are_cut_and_counted():
    letters = CharSet.of("acegikmoqsuwy") | CharSet.of("ACEGIKMOQSUWY")
    shown = describe_characters(letters)
    assert shown.endswith(" and 2 more") and shown.count("'") == 2 * 24


def test_explain_on_a_gbnf_grammar_names_each_character():
    out = io.StringIO()
    assert not explain_characters(GrammarParser((SAMPLES / "arithmetic.gbnf").read_text()), "", out)
    assert "it continues with: '(' '-' '0'..'9'\n" in out.getvalue()
    out = io.StringIO()
    assert not explain_characters(RegexParser("[a-c]x"), "d", out)
    assert "the format allowed there: 'a'..'c'\n" in out.getvalue()
