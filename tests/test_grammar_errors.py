"""A grammar that cannot be enforced exactly is refused at construction with one GrammarError line naming
the problem and where it is; hostile grammars end within the time limit."""

from __future__ import annotations

import pytest

from formatenforcer import FormatEnforcerError, GrammarError, GrammarParser

ERRORS = [
    ("lark", "start: (", r"Lark grammar: Unclosed parenthesis, at line 1"),
    ("lark", "start: foo", r"Rule 'foo' used but not defined"),
    ("lark", 'start: "a"\nunused: "b"', r"rule 'unused' \(line 2\) is never used"),
    ("lark", 'start: "a" | a\na: a "x"', r"rule 'a' \(line 2\) derives no string at all"),
    ("lark", 'start: start "x"', r"accepts no string at all: rule 'start' \(line 1\)"),
    ("lark", "start: X\nX: /a(?=b)/", r"terminal 'X' \(line 2\): .*lookaround"),
    ("lark", "start: X\nX: /[^\\s\\S]/", r"terminal 'X' \(line 2\): .*matches no string"),
    ("lark", 'start: FOO "a"\n%declare FOO', r"declared terminal 'FOO'"),
    ("lark", "start: x\n%ignore Y", r"Rule 'x' used but not defined"),
    ("lark", "", r"no rule 'start'"),
    ("gbnf", "root ::= foo", r"rule 'root' \(line 1\) uses the undefined rule 'foo'"),
    ("gbnf", 'root ::= "abc', r"GBNF grammar \(rule 'root', line 1\): a string literal is not closed"),
    ("gbnf", "root ::= [abc", r"character class is not closed"),
    ("gbnf", 'root ::= ("a" | "b"', r"a '\(' is not closed"),
    ("gbnf", 'root ::= "a" )', r"a '\)' closes no '\('"),
    ("gbnf", 'root ::= "\\q"', r"unknown escape \\q"),
    ("gbnf", "root ::= [z-a]", r"range 'z'-'a' is reversed"),
    ("gbnf", 'root ::= "a"\nroot ::= "b"', r"\(line 2\): rule 'root' is defined twice \(first on line 1\)"),
    ("gbnf", 'start ::= "a"', r"no rule 'root'"),
    ("gbnf", 'root ::= "a"\n\nother ::= "b"', r"rule 'other' \(line 3\) is never used"),
    ("gbnf", 'root ::= "x" | a\na ::= a "x"', r"rule 'a' \(line 2\) derives no string at all"),
    ("gbnf", 'root ::= a{0,5000}\na ::= "x" | "(" a ")"', r"rule 'root' \(line 1\): repeat \{0,5000\}"),
    ("gbnf", 'root ::= "a"{3,2}', r"maximum below its minimum"),
    ("gbnf", "root ::= [^\\x00-\\U0010FFFF]", r"rule 'root' \(line 1\): .*matches no string"),
    ("gbnf", 'root ::= "a" ::= "b"', r"expected a rule name|unexpected"),
    ("ebnf", 'root ::= (= "a") "a"', r"EBNF grammar .*lookahead assertions"),
    ("xml", 'root ::= "a"', r"unknown grammar syntax 'xml'"),
    (None, 42, r"a grammar must be a string, not int"),
]


@pytest.mark.parametrize(("syntax", "text", "message"), ERRORS, ids=[f"{i}-{e[0]}" for i, e in enumerate(ERRORS)])
def test_refused_with_one_line_naming_the_place(syntax, text, message):
    with pytest.raises(GrammarError, match=message) as raised:
        GrammarParser(text, syntax)
    assert "\n" not in str(raised.value)
    assert isinstance(raised.value, FormatEnforcerError)


def test_a_huge_terminal_repeat_is_refused_within_the_time_limit(monkeypatch):
    """Refused at the automaton's time limit, here 1 s (the default 5 s would only burn more CPU)."""
    from formatenforcer.parsers import regex

    monkeypatch.setattr(regex, "COMPILE_SECONDS", 1.0)
    with pytest.raises(GrammarError, match=r"terminal 'A' \(line 2\): .*did not finish building within 1 s"):
        GrammarParser('start: A\nA: "a"~1000000')  # a{100000} builds in a few seconds: a million does not


def test_exponentially_ambiguous_grammar_stays_polynomial():
    """Every split of a run of a's is a parse (Catalan-many); the recognizer's sets stay small."""
    parser = GrammarParser('start: x+\nx: "a" | "aa" | x x | "(" x ")"')
    text = "a" * 80 + "(" + "a" * 20 + ")"
    assert parser.accepts(text)
    assert not parser.accepts(text + "(")
    assert not parser.accepts(text + "b")
