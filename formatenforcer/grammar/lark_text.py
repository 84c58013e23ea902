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

import json
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


def _cut_json(text: str) -> tuple[str, dict[str, object]]:
    """``text`` with every ``%json {...}`` replaced by a declared placeholder terminal (lark's loader does
    not know ``%json``), and the schemas by placeholder name."""
    schemas: dict[str, object] = {}
    out: list[str] = []
    position = 0
    for found in re.finditer(r"%json\b\s*", text):
        if found.start() < position:
            continue
        begin = found.end()
        line = text.count("\n", 0, found.start()) + 1
        if not text.startswith("{", begin):
            raise GrammarError(f"Lark grammar (line {line}): %json must be followed by a JSON Schema object {{...}}")
        end = _matching_brace(text, begin)
        if end is None:
            raise GrammarError(f"Lark grammar (line {line}): the %json schema's '{{' is never closed")
        try:
            schema = json.loads(text[begin:end])
        except ValueError as error:
            raise GrammarError(f"Lark grammar (line {line}): the %json schema is not JSON: {error}") from None
        name = f"_JSON_SCHEMA_{len(schemas)}"
        schemas[name] = schema
        out.append(text[position : found.start()])
        out.append(name)
        position = end
    out.append(text[position:])
    declared = "".join(f"\n%declare {name}" for name in schemas)
    return "".join(out) + declared, schemas


def _matching_brace(text: str, begin: int) -> int | None:
    """The index just past the ``}`` closing the ``{`` at ``begin`` (JSON strings skipped), or None."""
    depth, i, inside = 0, begin, False
    while i < len(text):
        ch = text[i]
        if inside:
            if ch == "\\":
                i += 1
            elif ch == '"':
                inside = False
        elif ch == '"':
            inside = True
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return None


def read_lark(text: str, start: str = "start") -> Grammar:
    """The neutral form of a Lark grammar whose start rule is ``start``; ``%json {...}`` (a JSON Schema, as
    llguidance writes it) makes a terminal whose lexemes are the JSON texts valid under that schema."""
    original = text
    text, schemas = _cut_json(text)
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
        grammar.terminals.setdefault(name, Terminal(name, None, schemas.get(name)))
    names = set(grammar.rules) | set(grammar.terminals) | user_rules
    grammar.lines = _definition_lines(original, names)
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
