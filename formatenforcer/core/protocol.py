"""The character-level parser protocol every format is built on.

A parser object *is* an immutable state: feeding it a character returns a new state and leaves the old one
untouched, so the token walk can branch from one state into many without copying. Four methods make the
contract, and every format implements them:

    add_character(ch)    -> the state after ``ch``, or None if ``ch`` is refused here
    allowed_characters() -> a CharSet that holds every character ``add_character`` accepts (exact, not a guess)
    can_end()            -> whether the text read so far is a complete instance of the format
    key()                -> a hashable value; two states with equal keys accept exactly the same continuations

``add_text`` and ``accepts`` follow from them. Everything else a parser may offer is a walk hook (hooks.py):
an optional shortcut that lets the token walk skip work, never a change in which tokens are allowed:

    free_run()                  a FreeRun: any run of characters from a set leads to a state known without
                                reading it (inside a JSON string, ``.*`` in a regex): answered from tables
    lexeme()                    a Lexeme: the inner scalar state a container passes its next characters to,
                                walked alone and cached by its key
    lexeme_key(horizon)         the key of a lexeme's inner state, equal for states alike within ``horizon``
    shared_lexeme_key(horizon)  the same, equal across formats: the walk is cached per vocabulary
    first_char_split()          a twin state that stands for this one after any first character off a few
    alternatives()              the live branches of a union, carried up through the containers around it
    lexeme_automaton()          (key by value, code points) of a lexeme explored into an automaton for C
    lexeme_tables()             (LexemeTables, state number) of a lexeme whose parser builds its automaton
    lexeme_dfa()                (dfa, state number, state_of) of a lexeme that is one regex automaton
    automaton_state()           (dfa, state number) of a plain automaton state: walked by the compiled core
    SCALAR_LEXEME               class flag: a state that reads one scalar value on its own
    STEPS_MEMOISED              class flag: a state whose ``add_character`` memoises its own answers
"""

from __future__ import annotations

from collections.abc import Hashable

from .charset import CharSet
from .hooks import FreeRun, Lexeme, WalkHooks

__all__ = ["CharacterParser", "FreeRun", "Lexeme"]


class CharacterParser(WalkHooks):
    """Base class of every parser state. Subclasses implement the four abstract methods; the walk hooks
    they inherit (hooks.py) default to no shortcut."""

    __slots__ = ()

    def add_character(self, ch: str) -> CharacterParser | None:
        """The state after reading ``ch``; None when the format refuses ``ch`` here."""
        raise NotImplementedError

    def allowed_characters(self) -> CharSet:
        """Exactly the characters ``add_character`` accepts in this state."""
        raise NotImplementedError

    def can_end(self) -> bool:
        """Whether the text read so far is a complete instance of the format."""
        raise NotImplementedError

    def key(self) -> Hashable:
        """Identifies the state: equal keys accept exactly the same continuations (used for caching)."""
        raise NotImplementedError

    def add_text(self, text: str) -> CharacterParser | None:
        """The state after reading every character of ``text``; None as soon as one is refused."""
        state: CharacterParser | None = self
        for ch in text:
            state = state.add_character(ch)
            if state is None:
                return None
        return state

    def accepts(self, text: str) -> bool:
        """Whether ``text`` read from this state is a complete instance of the format."""
        if not isinstance(text, str):
            raise TypeError(f"accepts() takes a str, not {type(text).__name__}")
        state = self.add_text(text)
        return state is not None and state.can_end()


class MemoAllowed(CharacterParser):
    """A state that computes its allowed characters on the first ask (``_compute_allowed``) and keeps them
    in its ``_allowed`` slot (None until then): string and container states are asked again and again by
    the walk, and their set depends on several fields. Subclasses declare ``_allowed`` in their slots."""

    __slots__ = ()

    def allowed_characters(self) -> CharSet:
        allowed = self._allowed  # type: ignore[attr-defined]
        if allowed is None:
            allowed = self._allowed = self._compute_allowed()  # type: ignore[attr-defined]
        return allowed

    def _compute_allowed(self) -> CharSet:
        """The characters ``add_character`` accepts, computed once per state."""
        raise NotImplementedError
