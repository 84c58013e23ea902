"""MaskBench's grammar cases (``python benchmarks/maskbench.py --grammars``): each grammar written twice, in
Lark (formatenforcer and llguidance read it) and in EBNF (xgrammar reads it), with texts of its language.

The two notations describe the same language: where the Lark grammar has ``%ignore WS``, the EBNF one puts
``ws`` (zero or more blanks) between every two lexemes, which is what ignoring whitespace between lexemes
means. The tool-call case is ToolCallParser's Hermes grammar (one call, no text before it), with one
``%json`` rule per tool for formatenforcer and llguidance, and for xgrammar the same language built from its
own pieces: the tag strings concatenated with the union of the calls' JSON Schemas. Every text is checked
in the engines' runs (a refused valid token counts as a failure), and ``check()`` below makes sure
formatenforcer reads both notations to the same verdict on every text.
"""

from __future__ import annotations

import json
from typing import Any

SQL_LARK = r"""
start: select (";" select)* ";"?
select: "SELECT" columns "FROM" NAME where? order? limit?
columns: "*" | column ("," column)*
column: NAME | NAME "." NAME | FUNC "(" (NAME | "*") ")"
where: "WHERE" condition
condition: condition ("AND" | "OR") condition | NAME OP value | "(" condition ")" | "NOT" condition
OP: "=" | "!=" | "<" | ">" | "<=" | ">="
value: NUMBER | STRING | NAME
order: "ORDER" "BY" NAME ("ASC" | "DESC")?
limit: "LIMIT" INT
FUNC: "COUNT" | "SUM" | "MAX" | "MIN"
NAME: /[a-z_][a-z0-9_]*/
STRING: /'[^'\n]*'/
NUMBER: /[0-9]+(\.[0-9]+)?/
INT: /[0-9]+/
%ignore /[ \t\n]+/
"""

SQL_EBNF = r"""
root ::= ws select (ws ";" ws select)* (ws ";")? ws
select ::= "SELECT" ws columns ws "FROM" ws name (ws where)? (ws order)? (ws limit)?
columns ::= "*" | column (ws "," ws column)*
column ::= name | name ws "." ws name | func ws "(" ws (name | "*") ws ")"
where ::= "WHERE" ws condition
condition ::= condition ws ("AND" | "OR") ws condition | name ws op ws value
    | "(" ws condition ws ")" | "NOT" ws condition
op ::= "=" | "!=" | "<" | ">" | "<=" | ">="
value ::= number | string | name
order ::= "ORDER" ws "BY" ws name (ws ("ASC" | "DESC"))?
limit ::= "LIMIT" ws int
func ::= "COUNT" | "SUM" | "MAX" | "MIN"
name ::= [a-z_] [a-z0-9_]*
string ::= "'" [^'\n]* "'"
number ::= [0-9]+ ("." [0-9]+)?
int ::= [0-9]+
ws ::= [ \t\n]*
"""

SQL_TEXTS = [
    "SELECT * FROM users",
    "SELECT name, email FROM customers WHERE age >= 21 AND country = 'FR' ORDER BY name ASC LIMIT 50",
    "SELECT COUNT(*) FROM orders WHERE status != 'shipped' OR (total > 100.5 AND NOT paid = 1);",
    "SELECT o.id, c.name FROM orders WHERE customer_id = 7; SELECT MAX(price) FROM products",
]

ARITH_LARK = r"""
?start: sum
?sum: sum ("+" | "-") product | product
?product: product ("*" | "/") atom | atom
?atom: NUMBER | NAME | "(" sum ")" | "-" atom | NAME "(" sum ("," sum)* ")"
NUMBER: /[0-9]+(\.[0-9]+)?/
NAME: /[a-z][a-z0-9]*/
%ignore /[ \t]+/
"""

ARITH_EBNF = r"""
root ::= ws sum ws
sum ::= sum ws ("+" | "-") ws product | product
product ::= product ws ("*" | "/") ws atom | atom
atom ::= number | name | "(" ws sum ws ")" | "-" ws atom | name ws "(" ws sum (ws "," ws sum)* ws ")"
number ::= [0-9]+ ("." [0-9]+)?
name ::= [a-z] [a-z0-9]*
ws ::= [ \t]*
"""

ARITH_TEXTS = [
    "1 + 2 * 3",
    "(price - discount) * quantity / 100 + tax(price, 0.2)",
    "-(a + b) * (c - d) / (e + 1.5) - max(x, y, z) * 2",
]

C_LARK = r"""
start: function+
function: TYPE NAME "(" params? ")" block
params: TYPE NAME ("," TYPE NAME)*
block: "{" statement* "}"
statement: TYPE NAME ("=" expr)? ";"
         | NAME "=" expr ";"
         | "if" "(" expr ")" block ("else" block)?
         | "while" "(" expr ")" block
         | "return" expr? ";"
         | expr ";"
?expr: expr COMPARE sum | sum
?sum: sum ("+" | "-") term | term
?term: term ("*" | "/" | "%") unary | unary
?unary: "-" unary | "!" unary | primary
?primary: INT | NAME | NAME "(" (expr ("," expr)*)? ")" | "(" expr ")"
COMPARE: "==" | "!=" | "<" | ">" | "<=" | ">=" | "&&" | "||"
TYPE: "int" | "void" | "char" | "float"
NAME: /[a-zA-Z_][a-zA-Z0-9_]*/
INT: /[0-9]+/
%ignore /[ \t\n]+/
"""

C_EBNF = r"""
root ::= ws function (ws function)* ws
function ::= type ws name ws "(" ws params? ws ")" ws block
params ::= type ws name (ws "," ws type ws name)*
block ::= "{" (ws statement)* ws "}"
statement ::= type ws name (ws "=" ws expr)? ws ";"
    | name ws "=" ws expr ws ";"
    | "if" ws "(" ws expr ws ")" ws block (ws "else" ws block)?
    | "while" ws "(" ws expr ws ")" ws block
    | "return" (ws expr)? ws ";"
    | expr ws ";"
expr ::= expr ws compare ws sum | sum
sum ::= sum ws ("+" | "-") ws term | term
term ::= term ws ("*" | "/" | "%") ws unary | unary
unary ::= "-" ws unary | "!" ws unary | primary
primary ::= int | name | name ws "(" (ws expr (ws "," ws expr)*)? ws ")" | "(" ws expr ws ")"
compare ::= "==" | "!=" | "<" | ">" | "<=" | ">=" | "&&" | "||"
type ::= "int" | "void" | "char" | "float"
name ::= [a-zA-Z_] [a-zA-Z0-9_]*
int ::= [0-9]+
ws ::= [ \t\n]*
"""

C_TEXTS = [
    "int add(int a, int b) {\n    return a + b;\n}",
    "int gcd(int a, int b) {\n    while (b != 0) {\n        int t = b;\n        b = a % b;\n        a = t;\n    }\n"
    "    return a;\n}",
    "void main() {\n    int x = 10;\n    if (x > 5 && x < 20) {\n        print(gcd(x, 4));\n    } else {\n"
    "        x = x * 2;\n    }\n}",
]

JSON_LARK = r"""
?start: value
?value: object | array | STRING | NUMBER | "true" | "false" | "null"
array: "[" (value ("," value)*)? "]"
object: "{" (pair ("," pair)*)? "}"
pair: STRING ":" value
STRING: /"([^"\\\x00-\x1f]|\\["\\\/bfnrt]|\\u[0-9a-fA-F]{4})*"/
NUMBER: /-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/
%ignore /[ \t\n\r]+/
"""

JSON_EBNF = r"""
root ::= ws value ws
value ::= object | array | string | number | "true" | "false" | "null"
array ::= "[" ws (value (ws "," ws value)*)? ws "]"
object ::= "{" ws (pair (ws "," ws pair)*)? ws "}"
pair ::= string ws ":" ws value
string ::= "\"" char* "\""
char ::= [^"\\\x00-\x1f] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F])
number ::= "-"? ("0" | [1-9] [0-9]*) ("." [0-9]+)? ([eE] [+-]? [0-9]+)?
ws ::= [ \t\n\r]*
"""

JSON_TEXTS = [
    json.dumps({"id": 7, "name": "Ada", "tags": ["math", "poetry"], "active": True}),
    json.dumps({"order": {"items": [{"sku": "A-1", "qty": 2, "price": 9.5}], "note": None}}, indent=2),
    json.dumps([1, -2.5e3, "x\ny", {"a": [], "b": {}}]),
]

TOOLS = [
    {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "days": {"type": "integer", "minimum": 1, "maximum": 14},
                "unit": {"enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city"],
            "additionalProperties": False,
        },
    },
    {
        "name": "search",
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
            "required": ["query"],
            "additionalProperties": False,
        },
    },
]

TOOL_TEXTS = [
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 3, "unit": "celsius"}}\n</tool_call>',
    '<tool_call>\n{"name": "search", "arguments": {"query": "best pizza in Naples", "limit": 5}}\n</tool_call>',
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Zurich"}}\n</tool_call>',
]


def tool_call_schemas() -> list[dict[str, Any]]:
    """One JSON Schema per tool for the whole call object, as ToolCallParser's %json rules hold them."""
    return [
        {
            "type": "object",
            "properties": {"name": {"const": tool["name"]}, "arguments": tool["parameters"]},
            "required": ["name", "arguments"],
            "additionalProperties": False,
        }
        for tool in TOOLS
    ]


def tool_call_lark() -> str:
    from formatenforcer.grammar import tool_call_grammar

    return tool_call_grammar(TOOLS, "hermes", preamble=False, parallel=False)


GRAMMARS: dict[str, tuple[Any, Any, list[str]]] = {
    "sql": (SQL_LARK, SQL_EBNF, SQL_TEXTS),
    "arithmetic": (ARITH_LARK, ARITH_EBNF, ARITH_TEXTS),
    "c_like": (C_LARK, C_EBNF, C_TEXTS),
    "json_grammar": (JSON_LARK, JSON_EBNF, JSON_TEXTS),
    "tool_call": (tool_call_lark, "tool_call", TOOL_TEXTS),
}
"""name -> (Lark text or a function making it, EBNF text or "tool_call" (built from xgrammar's pieces), texts)."""


def grammar_cases() -> list[dict[str, Any]]:
    """One MaskBench case per (grammar, text): ``{"name", "grammar", "lark", "ebnf", "text"}``."""
    cases = []
    for name, (lark, ebnf, texts) in GRAMMARS.items():
        lark_text = lark() if callable(lark) else lark
        for i, text in enumerate(texts):
            cases.append({"name": f"{name}#{i}", "grammar": name, "lark": lark_text, "ebnf": ebnf, "text": text})
    return cases


def xgrammar_grammar(xgrammar: Any, ebnf: str) -> Any:
    """xgrammar's Grammar for a case: its EBNF, or for the tool call the tags around the union of the calls'
    JSON Schemas (any whitespace, as formatenforcer's and llguidance's %json allow)."""
    if ebnf != "tool_call":
        return xgrammar.Grammar.from_ebnf(ebnf)
    calls = [xgrammar.Grammar.from_json_schema(json.dumps(s), any_whitespace=True) for s in tool_call_schemas()]
    return xgrammar.Grammar.concat(
        xgrammar.Grammar.from_ebnf('root ::= "<tool_call>\\n"'),
        xgrammar.Grammar.union(*calls),
        xgrammar.Grammar.from_ebnf('root ::= "\\n</tool_call>"'),
    )


def check() -> None:
    """formatenforcer reads each grammar in both notations and accepts every text under both."""
    from formatenforcer import GrammarParser

    for case in grammar_cases():
        assert GrammarParser(case["lark"], "lark").accepts(case["text"]), case["name"]
        if case["ebnf"] != "tool_call":
            assert GrammarParser(case["ebnf"], "ebnf").accepts(case["text"]), case["name"]


if __name__ == "__main__":
    check()
    print(f"{len(grammar_cases())} grammar cases: both notations accept every text")
