"""Grammars the grammar tests share, with strings of their language, and a random derivation generator.

Each case: (syntax, grammar text, accepted strings, refused strings). The Lark cases are also parsed by lark
itself (its Earley parser with the complete dynamic lexer: every way of cutting the text into lexemes, the
language formatenforcer enforces) and the GBNF/EBNF ones by xgrammar, as oracles.
"""

from __future__ import annotations

import random

from formatenforcer.grammar.ir import Grammar
from formatenforcer.parsers.regex import CompiledRegex, compile_regex

ARITH = r"""
start: expr
?expr: expr "+" term | expr "-" term | term
?term: term "*" atom | term "/" atom | atom
?atom: NUMBER | NAME | "(" expr ")" | "-" atom
%import common.NUMBER
%import common.CNAME -> NAME
%import common.WS
%ignore WS
"""

SQL = r"""
start: select (";" select)* [";"]
select: SELECT columns FROM NAME [where] [order] [limit]
columns: "*" | column ("," column)*
column: NAME | NAME "." NAME | func "(" (NAME | "*") ")"
func: COUNT | SUM | MAX | MIN
where: WHERE condition
condition: condition (AND | OR) condition | NAME op value | "(" condition ")" | NOT condition
op: "=" | "!=" | "<" | ">" | "<=" | ">="
value: NUMBER | ESCAPED_STRING | NAME
order: ORDER BY NAME [ASC | DESC]
limit: LIMIT INT
SELECT: "select"i
FROM: "from"i
WHERE: "where"i
AND: "and"i
OR: "or"i
NOT: "not"i
ORDER: "order"i
BY: "by"i
ASC: "asc"i
DESC: "desc"i
LIMIT: "limit"i
COUNT: "count"i
SUM: "sum"i
MAX: "max"i
MIN: "min"i
NAME: /[a-z_][a-z0-9_]*/
%import common.NUMBER
%import common.INT
%import common.ESCAPED_STRING
%import common.WS
%ignore WS
"""

NULLABLE = r"""
start: a b c "!"
a: "x" |
b: a a
c: "y"*
"""

ADJACENT_NAMES = r"""
start: NAME NAME
NAME: /[a-z]+/
"""

AMBIGUOUS = r"""
start: x+
x: "a" | "aa" | "a" "a" | x x
"""

RIGHT_RECURSIVE = r"""
start: "(" start ")" start | "x" start |
"""

RIGHT_CHAINS = r"""
start: a ";" | a
a: "-" a | "-" a "+" | "!" c | NAME
c: "!" c | "?" a | NAME
NAME: /[a-z]+/
%ignore " "
"""
"""Right-recursive chains: ``a: "-" a`` is Leo's shortcut (earley.py, ``chain_base``), ``"-" a "+"`` waits for
``a`` beside it (no shortcut where both may follow), and ``a``/``c`` recurse through each other."""

REPEATS = r"""
start: "a"~2..3 B~2 item~0..2
item: "[" C "]"
B: "b"~1..2
C: /[0-9]/~3
"""

LARK_CASES = {
    "arith": (ARITH, ["1", "1+2*3", " ( a + 3 ) * -b ", "1.5e3-x/y", "-(-1)"], ["1+", "(1", "a b", "", "1 2", "*1"]),
    "sql": (
        SQL,
        [
            "SELECT * FROM users",
            'select name, count(*) from t where a = 1 and (b != "x" or not c < 2.5) order by name desc limit 10',
            'SELECT a.b FROM t WHERE s = "q\\"uote";select x from y;',
        ],
        ["SELECT FROM t", "select * from", "select * from t limit 1.5", "select * from t where", "selectx * from t"],
    ),
    "nullable": (NULLABLE, ["!", "x!", "xxx!", "yy!", "xxxyy!"], ["", "xxxx!", "y", "yx!"]),
    "adjacent_names": (ADJACENT_NAMES, ["ab", "abc", "zzzz"], ["a", "", "a b", "ab1"]),
    "ambiguous": (AMBIGUOUS, ["a", "aa", "aaaaaaa"], ["", "b", "ab"]),
    "right_recursive": (RIGHT_RECURSIVE, ["", "x", "(x)", "(())x(x(x))", "xxx"], ["(", ")", "(x", "y"]),
    "right_chains": (
        RIGHT_CHAINS,
        ["x", "--x", "--x+", "-!!?-x+", "---x++;", "!?x", "- - x +", "-----ab"],
        ["-", "x+", "---x++++", "!!", "-?x", "--x+++", "!?", "-x;;"],
    ),
    "repeats": (
        REPEATS,
        ["aabb", "aaabbbb", "aabb[123]", "aabbb[000][999]"],
        ["ab", "aab", "aaaabb", "aabbbbb", "aabb[12]", "aabb[1][2][3]"],
    ),
}

GBNF_ARRAY = r"""
# a JSON-like array of integers, llama.cpp style
root ::= "[" ws (num (ws "," ws num)*)? ws "]"
num ::= "-"? [0-9]+
ws ::= [ \t\n]*
"""

GBNF_ARITH = r"""
root  ::= (expr "=" ws term "\n")+
expr  ::= term ([-+*/] term)*
term  ::= ident | num | "(" ws expr ")" ws
ident ::= [a-z] [a-z0-9_]* ws
num   ::= [0-9]+ ws
ws    ::= [ \t\n]*
"""

GBNF_CHESS = r"""
root   ::= move (" " move){0,3}
move   ::= (pawn | nonpawn | castle) [+#]?
pawn   ::= ([a-h] "x")? [a-h] [1-8] ("=" [NBRQ])?
nonpawn ::= [NBKQR] [a-h]? [1-8]? "x"? [a-h] [1-8]
castle ::= "O-O" ("-O")?
"""

GBNF_LEFT = r"""
root ::= list
list ::= list "," item | item
item ::= [a-c]+ | "{" list? "}"
"""

EBNF_TOOL = r"""
root ::= "<call>" ws name ws "(" ws args? ws ")" ws "</call>"
name ::= [a-zA-Z_] [a-zA-Z0-9_]*
args ::= arg (ws "," ws arg)*
arg ::= name ws "=" ws value
value ::= "\"" [^"\\\n]* "\"" | [0-9]+ ("." [0-9]+)? | "true" | "false"
ws ::= " "*
"""

GBNF_CASES = {
    "array": (GBNF_ARRAY, ["[]", "[1, -2,3 ]", "[\n  7\n]"], ["[1,,2]", "[ 1 2]", "[", "[-]"]),
    "arith": (GBNF_ARITH, ["a=1\n", "(x+2)*y= z\n", "a=1\nb1 = (c)\n"], ["a=1", "=1\n", "1a=2\n", "a=\n"]),
    "chess": (GBNF_CHESS, ["e4", "e4 e5 Nf3 Nc6", "exd5+", "O-O-O#", "e8=Q"], ["e9", "e4 e5 Nf3 Nc6 Bb5", "O-O-"]),
    "left_recursive": (GBNF_LEFT, ["a", "ab,c", "{},{a,{b}}", "{{}}"], ["", ",a", "a,", "{a", "d"]),
}

EBNF_CASES = {
    "tool": (
        EBNF_TOOL,
        ["<call>f()</call>", '<call> get_weather ( city = "Paris" , days = 3 ) </call>', "<call>g(x=true)</call>"],
        ["<call>f(</call>", '<call>f(x="a\nb")</call>', "<call>1f()</call>", "<call>f(x=)</call>"],
    ),
}


def _heights(grammar: Grammar) -> dict[str, int]:
    """Per rule, the smallest derivation tree height (terminals count 0): steers a derivation to an end."""
    heights: dict[str, int] = {}
    changed = True
    while changed:
        changed = False
        for name, alternatives in grammar.rules.items():
            for rhs in alternatives:
                parts = [0 if s.kind == "terminal" else heights.get(s.name) for s in rhs]
                if None in parts:
                    continue
                height = 1 + max(parts, default=0)  # type: ignore[type-var]
                if height < heights.get(name, 1 << 30):
                    heights[name] = height
                    changed = True
    return heights


def random_lexeme(dfa: CompiledRegex, rng: random.Random, max_length: int = 8) -> str:
    """A random string of the automaton's language (ASCII printable characters where possible)."""
    distances = dfa.distances()
    state, out = 0, []
    while True:
        if state in dfa.finals and (rng.random() < 0.35 or len(out) >= max_length or not dfa.transitions[state]):
            return "".join(out)
        moves = list(dfa.transitions[state].items())
        if len(out) >= max_length:
            moves = [m for m in moves if distances[m[1]] < distances[state]] or moves
        symbol, target = rng.choice(moves)
        chars = dfa.chars_of_symbol[symbol]
        printable = [c for c in chars.chars(400) if " " <= c <= "~" or c in "\n\t"]
        out.append(rng.choice(printable) if printable else chars.chars(1)[0])
        state = target


def derive(grammar: Grammar, rng: random.Random, max_depth: int = 7) -> str:
    """A random string of the grammar's language: a random derivation (the shortest alternatives once
    deeper than ``max_depth``), random lexemes, and random %ignore lexemes between them."""
    heights = _heights(grammar)
    dfas = {name: compile_regex(t.pattern) for name, t in grammar.terminals.items() if t.pattern is not None}
    ignore = [dfas[name] for name in grammar.ignore]
    out: list[str] = []

    def lexeme(text: str) -> None:
        if ignore and rng.random() < 0.3:
            out.append(random_lexeme(rng.choice(ignore), rng, 3))
        out.append(text)

    def expand(name: str, depth: int) -> None:
        alternatives = [rhs for rhs in grammar.rules[name] if all(
            s.kind == "terminal" or s.name in heights for s in rhs)]  # fmt: skip
        if depth >= max_depth:
            best = min(1 + max((heights[s.name] for s in rhs if s.kind == "rule"), default=0) for rhs in alternatives)
            alternatives = [
                rhs for rhs in alternatives
                if 1 + max((heights[s.name] for s in rhs if s.kind == "rule"), default=0) == best
            ]  # fmt: skip
        for symbol in rng.choice(alternatives):
            if symbol.kind == "terminal":
                lexeme(random_lexeme(dfas[symbol.name], rng))
            else:
                expand(symbol.name, depth + 1)

    expand(grammar.start, 0)
    if ignore and rng.random() < 0.3:
        out.append(random_lexeme(rng.choice(ignore), rng, 3))
    return "".join(out)


def mutate(text: str, rng: random.Random, alphabet: str) -> str:
    """``text`` with one character deleted, inserted or replaced (characters from ``alphabet``)."""
    i = rng.randrange(len(text) + 1)
    kind = rng.choice(("delete", "insert", "replace")) if text else "insert"
    if kind == "delete" and i < len(text):
        return text[:i] + text[i + 1 :]
    if kind == "replace" and i < len(text):
        return text[:i] + rng.choice(alphabet) + text[i + 1 :]
    return text[:i] + rng.choice(alphabet) + text[i:]
