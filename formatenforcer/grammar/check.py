"""The construction-time checks of a grammar in the neutral form: every error is found here, none later.

A grammar is refused (``GrammarError``, one line naming the rule or terminal and its line) when a symbol is
undefined, a rule cannot be reached from the start rule, a terminal's regular expression does not compile
(or matches nothing), a rule derives no string at all (unproductive: every alternative needs itself or
another such rule), or the whole grammar accepts nothing. What passes has no dead ends: every rule the
recognizer can predict derives some string, and every terminal automaton is pruned to live states, so every
prefix the parser accepts can be completed.
"""

from __future__ import annotations

from ..core.errors import FormatEnforcerError, GrammarError, RegexError
from ..parsers.build_budget import over_budget
from ..parsers.regex import CompiledRegex, compile_regex
from .ir import Grammar, Symbol
from .json_lexer import ParserLexer

MAX_PRODUCTIONS = 200_000
"""A grammar that expands into more alternatives than this (a huge repeat of rules) is refused."""


def check_symbols(grammar: Grammar) -> None:
    """Undefined symbols, unreachable user rules, and the size limit."""
    total = sum(len(alternatives) for alternatives in grammar.rules.values())
    if total > MAX_PRODUCTIONS:
        raise GrammarError(f"grammar expands into {total} alternatives, more than the limit of {MAX_PRODUCTIONS}")
    if grammar.start not in grammar.rules:
        raise GrammarError(f"{grammar.syntax.upper() or 'the'} grammar has no rule '{grammar.start}' to start from")
    for name, alternatives in grammar.rules.items():
        for rhs in alternatives:
            for symbol in rhs:
                table = grammar.rules if symbol.kind == "rule" else grammar.terminals
                if symbol.name not in table:
                    raise GrammarError(f"{grammar.describe(name)} uses the undefined {symbol.kind} '{symbol.name}'")
    for name in grammar.ignore:
        if name not in grammar.terminals:
            raise GrammarError(f"%ignore names the undefined terminal '{name}'")
    reached = reachable(grammar)
    for name in grammar.rules:
        if name not in reached and name not in grammar.origin:
            raise GrammarError(f"{grammar.describe(name)} is never used: it cannot be reached from '{grammar.start}'")


def reachable(grammar: Grammar) -> set[str]:
    """The rules reachable from the start rule."""
    seen, todo = {grammar.start}, [grammar.start]
    while todo:
        for rhs in grammar.rules[todo.pop()]:
            for symbol in rhs:
                if symbol.kind == "rule" and symbol.name not in seen:
                    seen.add(symbol.name)
                    todo.append(symbol.name)
    return seen


def compile_terminals(grammar: Grammar) -> dict[str, CompiledRegex | ParserLexer | None]:
    """Each used terminal's automaton (None for a declared terminal with no definition), or GrammarError."""
    used = {symbol.name for symbol in grammar.symbols() if symbol.kind == "terminal"} | set(grammar.ignore)
    out: dict[str, CompiledRegex | ParserLexer | None] = {}
    for name in sorted(used):
        pattern, schema = grammar.terminals[name].pattern, grammar.terminals[name].schema
        if schema is not None:
            from ..jsonschema import JsonSchemaParser  # the JSON layer only when a grammar embeds a schema

            try:
                out[name] = ParserLexer(JsonSchemaParser(schema), name)
            except FormatEnforcerError as error:
                raise GrammarError(f"{grammar.describe(name, 'terminal')}: %json schema: {error}") from None
            continue
        if pattern is None:
            out[name] = None
            continue
        over_budget()  # (the grammar's whole build budget, GrammarParser(build_seconds=...))
        try:
            out[name] = compile_regex(pattern)
        except RegexError as error:
            over_budget()  # an automaton cut short by the whole budget: that budget is the reason
            raise GrammarError(f"{grammar.describe(name, 'terminal')}: {error}") from None
    return out


def check_productive(grammar: Grammar, dfas: dict[str, CompiledRegex | ParserLexer | None]) -> set[str]:
    """The productive rules (those deriving some string); GrammarError for an unproductive user rule."""

    def produces(symbol: Symbol) -> bool:
        if symbol.kind == "terminal":
            return dfas.get(symbol.name) is not None
        return symbol.name in productive

    productive: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, alternatives in grammar.rules.items():
            if name not in productive and any(all(produces(s) for s in rhs) for rhs in alternatives):
                productive.add(name)
                changed = True
    for name in sorted(grammar.rules, key=lambda name: name in grammar.origin):  # the user's own rules first
        if name not in productive:
            declared = [
                s.name for rhs in grammar.rules[name] for s in rhs if s.kind == "terminal" and dfas.get(s.name) is None
            ]
            why = f"it needs the declared terminal '{declared[0]}', which has no definition" if declared else (
                "every alternative needs a rule that never finishes")  # fmt: skip
            if name == grammar.start:
                raise GrammarError(f"the grammar accepts no string at all: {grammar.describe(name)} derives nothing "
                                   f"({why})")  # fmt: skip
            raise GrammarError(f"{grammar.describe(name)} derives no string at all ({why})")
    return productive
