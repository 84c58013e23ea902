"""Lark grammar text into the neutral form (ir.py), read by lark's own grammar loader.

lark (``lark.load_grammar``) parses the text and expands everything that is notation: ``?``/``*``/``+``,
``[...]``, ``~ n..m`` repeats of rules, templates, ``%import`` of its bundled ``common`` grammar, and the
joining of terminal definitions into one regular expression per terminal. What comes back is plain BNF over
named terminals, which maps one to one onto the neutral form. Tree-shaping marks (``?rule``, ``_rule``,
``!rule``, priorities) change lark's parse trees, not the language, so they are dropped.

Two terminals of lark's ``common`` grammar spell their language with a look-behind, which a finite
automaton does not express; their languages are written here without one (``ESCAPED_STRING``: a double
quote, characters other than a newline with every quote and backslash escaped, a double quote).
"""

from __future__ import annotations

import re

from ..core.errors import GrammarError
from .ir import Grammar, Symbol, Terminal, rule, terminal

_AUXILIARY = re.compile(r"^__(.+?)_(?:star|plus|opt|inline)?_?\d+$")

# lark's common.lark joins _STRING_ESC_INNER (".*?" then a look-behind for an even run of backslashes)
_LOOKBEHIND_STRINGS = {
    '".*?(?<!\\\\)(\\\\\\\\)*?"': '"(?:[^"\\\\\\n]|\\\\.)*"',
    "(?:\".*?(?<!\\\\)(\\\\\\\\)*?\"|'.*?(?<!\\\\)(\\\\\\\\)*?')": (
        "(?:\"(?:[^\"\\\\\\n]|\\\\.)*\"|'(?:[^'\\\\\\n]|\\\\.)*')"
    ),
}


def _load(text: str):  # noqa: ANN202 - lark's Grammar
    try:
        from lark import exceptions as lark_exceptions
        from lark.load_grammar import load_grammar
    except ImportError as error:  # a runtime dependency; say so rather than fail with an import trace
        raise GrammarError("reading Lark grammars needs the 'lark' package (pip install 'lark>=1.2')") from error
    try:
        return load_grammar(text, "<grammar>", [], False)[0]
    except (lark_exceptions.LarkError, KeyError, ValueError, AssertionError) as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        line = getattr(error, "line", None)
        where = f" (line {line})" if isinstance(line, int) and line > 0 else ""
        raise GrammarError(f"Lark grammar{where}: {first}") from None


def _definition_lines(text: str, names: set[str]) -> dict[str, int]:
    """The line each name is defined on (``name:``, ``?name:``, ``NAME.2:``), for error messages."""
    lines: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), 1):
        found = re.match(r"\s*[?!]?([A-Za-z_][A-Za-z0-9_]*)\s*(?:\{[^}]*\})?\s*(?:\.-?\d+)?\s*:", line)
        if found and found.group(1) in names and found.group(1) not in lines:
            lines[found.group(1)] = number
    return lines


def read_lark(text: str, start: str = "start") -> Grammar:
    """The neutral form of a Lark grammar whose start rule is ``start``."""
    loaded = _load(text)
    user_rules = {str(definition[0]) for definition in loaded.rule_defs if not definition[1]}  # not templates
    if start not in user_rules:
        raise GrammarError(f"Lark grammar: no rule '{start}' to start from")
    unused = sorted(user_rules - _reachable(loaded, start))
    try:
        terminals, rules, ignore = loaded.compile([start], set())
    except Exception as error:  # lark's GrammarError and friends: undefined names, bad definitions
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise GrammarError(f"Lark grammar: {first}") from None
    grammar = Grammar(start=start, ignore=tuple(ignore), syntax="lark")
    for compiled in rules:
        rhs: list[Symbol] = []
        for symbol in compiled.expansion:
            rhs.append(terminal(symbol.name) if symbol.is_term else rule(symbol.name))
        grammar.rules.setdefault(compiled.origin.name, []).append(tuple(rhs))
    for definition in terminals:
        pattern = definition.pattern.to_regexp()
        pattern = _LOOKBEHIND_STRINGS.get(pattern, pattern)
        grammar.terminals[definition.name] = Terminal(definition.name, pattern)
    for name in _declared(loaded):
        grammar.terminals.setdefault(name, Terminal(name, None))
    names = set(grammar.rules) | set(grammar.terminals) | user_rules
    grammar.lines = _definition_lines(text, names)
    for name in grammar.rules:
        found = _AUXILIARY.match(name)
        if found and name not in grammar.lines:
            grammar.origin[name] = found.group(1)
    for name in grammar.terminals:
        if name not in grammar.lines:
            user = _first_user(grammar, terminal(name))
            if user is not None:
                grammar.origin[name] = user
    if unused:
        raise GrammarError(f"{grammar.describe(unused[0])} is never used: it cannot be reached from '{start}'")
    return grammar


def _declared(loaded) -> list[str]:  # noqa: ANN001 - lark's Grammar
    """Terminals named by ``%declare``: no definition, so no text produces them."""
    return [str(name) for name, definition in loaded.term_defs if definition is None or definition[0] is None]


def _reachable(loaded, start: str) -> set[str]:  # noqa: ANN001 - lark's Grammar
    """User rule names reachable from ``start`` in the loaded (not yet compiled) grammar."""
    bodies = {str(definition[0]): definition[2] for definition in loaded.rule_defs}
    seen, todo = {start}, [start]
    while todo:
        body = bodies.get(todo.pop())
        if body is None:
            continue
        for node in body.iter_subtrees():
            for child in node.children:
                name = getattr(child, "name", None)
                if isinstance(name, str) and name in bodies and name not in seen:
                    seen.add(name)
                    todo.append(name)
                value = str(child) if child.__class__.__name__ == "Token" else None
                if value in bodies and value not in seen:
                    seen.add(value)
                    todo.append(value)
    return seen


def _first_user(grammar: Grammar, symbol: Symbol) -> str | None:
    """The first rule (as the user named it) whose alternatives use ``symbol``."""
    for name, alternatives in grammar.rules.items():
        if any(symbol in rhs for rhs in alternatives):
            return str(grammar.origin.get(name, name))
    return None
