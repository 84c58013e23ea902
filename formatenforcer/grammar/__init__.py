"""Context-free grammars (Lark, GBNF, EBNF) as character-level parsers.

ir.py          the neutral grammar form every syntax is read into (BNF over rules and regex terminals)
lark_text.py   Lark text, read by lark's own grammar loader
gbnf_text.py   GBNF (llama.cpp) and xgrammar EBNF text, read by hand
check.py       construction-time checks: undefined, unreachable, unproductive, empty, bad terminals
earley.py      the Earley recognizer over lexemes, its item sets interned
parser.py      GrammarParser: the character-level state over it (contextual lexing, both lexeme splits)
"""

from .parser import GrammarParser, GrammarState, detect_syntax, read_grammar

__all__ = ["GrammarParser", "GrammarState", "detect_syntax", "read_grammar"]
