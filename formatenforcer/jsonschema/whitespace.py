"""Whitespace between JSON tokens: a tiny automaton per policy, its state one small int.

Containers keep the state of the current whitespace run in their own state and reset it at every token.
"""

from __future__ import annotations

from ..core.charset import EMPTY, CharSet
from ..core.errors import FormatError
from ..parsers.regex import compile_regex
from .config import JsonConfig

JSON_WHITESPACE = CharSet.of(" \t\n\r")
WHITESPACE_CHARS = frozenset(" \t\n\r")
"""The same characters as a set of str, for a membership test without a call: ``Whitespace.step`` refuses
every other character, whatever the policy."""


class Whitespace:
    """Steps a whitespace run. State 0 is "no whitespace read yet" for every policy."""

    __slots__ = ("_cap", "_dfa")

    def __init__(self, config: JsonConfig) -> None:
        self._dfa = None
        self._cap = 0
        if config.whitespace_pattern is not None:
            dfa = compile_regex(config.whitespace_pattern)
            if 0 not in dfa.finals:
                raise FormatError("JsonConfig.whitespace_pattern must match the empty string")
            for state in range(len(dfa.transitions)):
                if dfa.charset(state) - JSON_WHITESPACE:
                    raise FormatError("JsonConfig.whitespace_pattern may only match JSON whitespace")
            self._dfa = dfa
        elif config.whitespace == "flexible":
            self._cap = config.max_whitespace

    def value_ident(self) -> tuple:
        """Equal for equal policies of different schemas (for walks shared across schemas)."""
        return ("ws", self._cap, None if self._dfa is None else self._dfa.pattern)

    def allowed(self, state: int) -> CharSet:
        """Whitespace characters that may come next in the run."""
        if self._dfa is not None:
            return self._dfa.charset(state)
        return JSON_WHITESPACE if state < self._cap else EMPTY

    def step(self, state: int, ch: str) -> int | None:
        """The run state after ``ch``, or None."""
        if self._dfa is not None:
            return self._dfa.step(state, ch)
        return state + 1 if state < self._cap and ch in JSON_WHITESPACE else None

    def room(self, state: int) -> int:
        """How many more whitespace characters the run may take when any of them may come in any order
        (the flexible policy: a free run of that length); 0 otherwise."""
        return self._cap - state if self._dfa is None and state < self._cap else 0

    def can_stop(self, state: int) -> bool:
        """Whether the run may end here (a token may follow)."""
        return self._dfa is None or state in self._dfa.finals
