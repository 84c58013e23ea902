"""The neutral grammar form every grammar syntax is read into: plain BNF over rules and regex terminals.

Lark, GBNF and EBNF texts differ in notation only; each reader (``lark_text``, ``gbnf_text``) expands its
operators (``?``, ``*``, ``+``, ``[...]``, repeats) into auxiliary rules and its literals and character
classes into terminals, so the checks (``check``) and the recognizer (``earley``) see one small structure:

    rules      name -> alternatives, each a tuple of symbols (an empty tuple is the empty string)
    terminals  name -> Terminal: a regular expression in Python ``re`` syntax (string literals escaped)
    ignore     terminals that may appear between (and around) the lexemes of the start rule's language

A symbol is ``Symbol(kind, name)`` with ``kind`` "rule" or "terminal": the two namespaces stay apart (GBNF has
no terminals of its own, Lark keeps UPPER and lower names apart anyway). ``origin`` maps an auxiliary rule
or terminal made by a reader to the user's rule it came from, and ``lines`` the user's names to the line
they are defined on, so an error can name what the user wrote.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple


class Symbol(NamedTuple):
    kind: str  # "rule" or "terminal"
    name: str


def rule(name: str) -> Symbol:
    return Symbol("rule", name)


def terminal(name: str) -> Symbol:
    return Symbol("terminal", name)


@dataclass(frozen=True)
class Terminal:
    """A lexeme class: the strings ``re.fullmatch(pattern, s)`` accepts. ``pattern`` None: declared without
    a definition (Lark's ``%declare``), so no text can produce it."""

    name: str
    pattern: str | None


@dataclass
class Grammar:
    """A grammar in the neutral form (see the module notes). Readers build it; nothing changes it after."""

    start: str
    rules: dict[str, list[tuple[Symbol, ...]]] = field(default_factory=dict)
    terminals: dict[str, Terminal] = field(default_factory=dict)
    ignore: tuple[str, ...] = ()
    lines: dict[str, int] = field(default_factory=dict)
    origin: dict[str, str] = field(default_factory=dict)
    syntax: str = ""

    def describe(self, name: str, kind: str = "rule") -> str:
        """``rule 'expr' (line 3)``: the user's name behind ``name`` (an auxiliary rule or an anonymous
        terminal names the rule it was written in) and the line it is defined on."""
        user = self.origin.get(name)
        if user is not None:
            kind, name = "rule", user
        line = self.lines.get(name)
        return f"{kind} '{name}'" + (f" (line {line})" if line else "")

    def symbols(self) -> set[Symbol]:
        """Every symbol used on a right-hand side."""
        return {symbol for alternatives in self.rules.values() for rhs in alternatives for symbol in rhs}
