"""A terminal whose lexemes are the JSON texts valid under a JSON Schema (``%json {...}`` in a Lark grammar).

The recognizer treats every terminal as an automaton with integer states (parser.py's triples hold them), so
a schema terminal presents its ``JsonSchemaParser`` states the same way: each state met is numbered once by
its key, and ``step``, ``charset`` and ``finals`` answer from the numbered states. Number 0 is the schema's
start. The JSON side keeps all its own machinery: every keyword ``JsonSchemaParser`` enforces, its layout
(``JsonConfig``), and its walk hooks, which ``GrammarState.lexeme`` hands on so JSON strings inside a grammar
reuse the same cached string walks as plain JSON.
"""

from __future__ import annotations

from collections.abc import Hashable

from ..core.charset import CharSet
from ..core.protocol import CharacterParser


class _Finals:
    """``state in finals``: whether the numbered JSON state may end (the value is complete)."""

    __slots__ = ("_lexer",)

    def __init__(self, lexer: ParserLexer) -> None:
        self._lexer = lexer

    def __contains__(self, state: object) -> bool:
        return isinstance(state, int) and state >= 0 and self._lexer.states[state].can_end()


class ParserLexer:
    """A schema terminal: ``JsonSchemaParser`` states, numbered (see the module notes)."""

    def __init__(self, parser: CharacterParser, label: str) -> None:
        self.parser = parser
        self.ident: Hashable = ("json-terminal", label, id(parser))
        self.states: list[CharacterParser] = [parser]
        self._numbers: dict[Hashable, int] = {parser.key(): 0}
        self._steps: list[dict[str, int | None]] = [{}]
        self.finals = _Finals(self)

    def number(self, state: CharacterParser) -> int:
        """The number of ``state`` (equal keys: one number)."""
        key = state.key()
        found = self._numbers.get(key)
        if found is None:
            found = self._numbers[key] = len(self.states)
            self.states.append(state)
            self._steps.append({})
        return found

    def step(self, state: int, ch: str) -> int | None:
        steps = self._steps[state]
        found = steps.get(ch, -1)
        if found == -1:
            after = self.states[state].add_character(ch)
            found = None if after is None else self.number(after)
            if len(steps) < 256:
                steps[ch] = found
        return found

    def charset(self, state: int) -> CharSet:
        return self.states[state].allowed_characters()

    def run(self, state: int) -> None:
        return None  # JSON's own runs are reached through its lexemes (GrammarState.lexeme)
