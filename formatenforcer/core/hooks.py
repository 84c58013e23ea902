"""The walk hooks: optional shortcuts a parser offers the token walk (listed in protocol.py).

None of them changes which tokens are allowed; each lets the walk reuse work. A parser that offers none is
walked character by character over the vocabulary trie, which is always exact. The JSON parsers offer them
all: ``FreeRun`` inside strings and whitespace, ``Lexeme`` for the scalar values and the spaced value starts
inside containers, ``first_char_split`` for keys of open objects, ``alternatives`` for unions.
The ``nested_*`` helpers carry a child's hook up through a container that only passes characters to it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import TYPE_CHECKING, Any

from .charset import CharSet

if TYPE_CHECKING:
    from .protocol import CharacterParser


class FreeRun:
    """A promise about a parser state ``s``: every string ``w`` of characters from ``chars`` with
    ``len(w) <= max_length`` (None: no limit) is accepted from ``s`` — and every longer run of them is refused,
    since the enforcer never looks at tokens with a longer run —, and ``after(len(w))`` stands for
    ``s.add_text(w)``: it has the same key, or — when the real state depends on *which* characters were read
    (a JSON key that might name a known property) — it is a stand-in that accepts a subset of what the real
    state accepts. The enforcer uses ``after`` only to check what follows the run inside a token, so a
    stand-in can make a mask smaller, never admit a token that ``add_character`` would refuse.

    ``ends_inside`` is True when the state may end part-way through the run (a number's digits: ``12`` may be
    followed by ``,``). A lexeme walk then records an end at every exit of the run, and a checked one (where
    every end is decided by the full state, tokens ending there included) walks instead of taking the run.

    Read-only by convention: a plain class with slots, because a walk makes one for every state it enters and
    a frozen dataclass's ``__init__`` costs twice as much."""

    __slots__ = ("chars", "max_length", "after", "ends_inside")

    def __init__(self, chars: CharSet, max_length: int | None, after: Callable[[int], CharacterParser],
                 ends_inside: bool = False) -> None:  # fmt: skip
        self.chars, self.max_length, self.after, self.ends_inside = chars, max_length, after, ends_inside

    def __repr__(self) -> str:
        return f"FreeRun({self.chars!r}, max_length={self.max_length}, ends_inside={self.ends_inside})"


class Lexeme:
    """See ``CharacterParser.lexeme``: ``resume(s)`` is the full state once ``inner`` has become ``s``; the
    contract is ``full.add_text(w) == resume(inner.add_text(w))`` for every ``w`` that ``inner`` accepts, and
    where ``inner`` refuses a character but may end, ``resume`` of it reads that character as the full state
    would (the container finishes the value and goes on).

    ``checked_ends``: True when ``resume`` may refuse a state where ``inner`` ends (returns None): then the
    tokens that end exactly where ``inner`` may end are kept out of the cached inner mask and decided by
    ``resume``.

    ``finish`` (optional): for a state ``s`` of ``inner`` that may end, the full state once the inner value
    has ended there (None: the full state refuses that ending), which reads every text whose first character
    ``s`` refuses as the full state does. The walk below a point where a number ended then starts from it,
    so the container's own lexeme (the punctuation after a value) takes over instead of the full state.

    Read-only by convention: a plain class with slots, like ``FreeRun`` (every new grammar state a walk meets
    makes one)."""

    __slots__ = ("inner", "resume", "checked_ends", "finish")

    def __init__(
        self,
        inner: CharacterParser,
        resume: Callable[[CharacterParser], CharacterParser | None],
        checked_ends: bool = False,
        finish: Callable[[CharacterParser], CharacterParser | None] | None = None,
    ) -> None:
        self.inner, self.resume, self.checked_ends, self.finish = inner, resume, checked_ends, finish

    def __repr__(self) -> str:
        return f"Lexeme({self.inner!r}, checked_ends={self.checked_ends})"


class LexemeTables:
    """A lexeme's automaton over characters, built by its parser for the compiled walk (``lexeme_tables``).

    Characters are split into classes, the intervals ``class_lo[i]..class_hi[i]`` (sorted, disjoint; class
    ``i`` is interval ``i``), which every state treats alike. ``transitions`` holds ``states * classes`` int32
    (-1: refused) — a character is taken exactly when the parser state allows it and ``add_character`` takes
    it to the state numbered there. ``ends[s]`` is 1 where the lexeme has ended (the state may end and
    allows nothing more); ``frontier[s]`` is 1 for a state the tables do not follow (the walk hands it back
    to the Python walk). Per state, its allowed characters as sorted intervals
    (``allow_lo/allow_hi[allow_start[s]:allow_start[s + 1]]``; none for frontier and ended states), for the
    first bytes of a character split across tokens. ``state_of(s)`` makes the parser state numbered ``s``.
    ``compiled`` is the core's slot for what it builds from the tables once."""

    __slots__ = (
        "class_lo", "class_hi", "transitions", "ends", "frontier", "allow_start", "allow_lo", "allow_hi",
        "state_of", "compiled",
    )  # fmt: skip

    def __init__(
        self,
        class_lo: Sequence[int],
        class_hi: Sequence[int],
        transitions: Any,
        ends: bytes,
        frontier: bytes,
        allow_start: Sequence[int],
        allow_lo: Sequence[int],
        allow_hi: Sequence[int],
        state_of: Callable[[int], CharacterParser],
    ) -> None:
        self.class_lo, self.class_hi, self.transitions = class_lo, class_hi, transitions
        self.ends, self.frontier = ends, frontier
        self.allow_start, self.allow_lo, self.allow_hi = allow_start, allow_lo, allow_hi
        self.state_of = state_of
        self.compiled: Any = None


class WalkHooks:
    """The hooks' defaults: no shortcut. ``CharacterParser`` inherits them."""

    __slots__ = ()

    SCALAR_LEXEME = False
    """True for states that read one scalar value on their own (a JSON string or number): a container may
    hand the vocabulary walk such a state alone (see ``lexeme``). A free run of it that passes points where
    it could end must say so (``FreeRun.ends_inside``)."""

    STEPS_MEMOISED = False
    """True for states that memoise their own ``add_character`` (a step asked twice is one look-up): the walk
    then asks them directly rather than keeping its own memo of their steps (a key and an entry per step)."""

    def free_run(self) -> FreeRun | None:
        """A FreeRun shortcut if this state loops over a large character class, else None."""
        return None

    def lexeme(self) -> Lexeme | None:
        """Optional: when the next characters are read by an inner scalar state (a JSON string or number
        nested in containers) that the containers only pass through, that inner state and how to put a state
        of it back in place. The enforcer then walks the vocabulary with the small inner state alone, caches
        that walk by the inner state's key (the same key recurs at every position of its kind), and walks
        with the full state only from the points where the inner value can end."""
        return None

    def lexeme_key(self, horizon: int) -> Hashable:
        """For caching the walk of a lexeme's inner state: a key equal for states that accept the same
        continuations of up to ``horizon`` characters (a token's length), e.g. a string far from its
        ``maxLength`` whatever its exact length. Defaults to ``key()``."""
        return self.key()

    def first_char_split(self) -> tuple[CharacterParser, bytes] | None:
        """Optional: ``(twin, exceptions)`` such that for every first character whose UTF-8 lead byte is not
        in ``exceptions`` (lead bytes), this state and ``twin`` go to states with equal keys. Inside a key
        of an open object, every character off the trie of names leads to the same state: the walk for
        ``twin`` is cached once and reused from every position in a name, and only the few exception
        characters are walked from here."""
        return None

    def alternatives(self) -> tuple[CharacterParser, ...] | None:
        """Optional: states whose languages together are exactly this state's (a union's live branches,
        carried up through the containers around it), so a mask can be the OR of theirs. Each branch then
        uses its own cached walks (a key of an object inside ``anyOf`` reuses that object's key walk),
        where walking the union as one state would step every branch at every trie node."""
        return None

    def shared_lexeme_key(self, horizon: int) -> Hashable | None:
        """Like ``lexeme_key`` but equal across formats (built from values, never from ``id()``), so the
        walk can be cached per vocabulary and reused by every schema that reaches the same inner state (a
        plain string, an email); None when the state has no such key."""
        return None

    def lexeme_automaton(self) -> tuple[Hashable, frozenset[int]] | None:
        """Optional, for a lexeme's inner state whose reachable states are few: ``(key, points)``, a key by
        value (equal for equal states of any schema, like ``shared_lexeme_key``) and the code points where
        this parser's treatment of a character may change (each starts an interval of characters that every
        reachable state treats alike). The compiled core then explores the states into an automaton once
        and walks the lexeme in C (core/lexeme_automaton.py). The walk stops where a state may end, so a
        state that may end must read nothing more (a closed string); otherwise the lexeme is not explored."""
        return None

    def lexeme_tables(self) -> tuple[LexemeTables, int] | None:
        """Optional, like ``lexeme_automaton`` but for a lexeme whose automaton the parser builds itself,
        cheaper than exploring it state by state (a JSON key over the trie of its names): the tables and
        the number of this state in them. The tables are built once and shared by every state they hold."""
        return None

    def lexeme_dfa(self) -> tuple[object, int, Callable[[int], CharacterParser]] | None:
        """Optional, for a lexeme's inner state that is one regex automaton and nothing else (a grammar's
        terminal): ``(dfa, state number, state_of)``, where ``state_of(n)`` is the inner state in automaton
        state ``n`` once it has read a character. The lexeme may end wherever the automaton accepts after a
        character, and may read on from there; the compiled core walks it below a trie node in C with those
        end points (core/lexeme_automaton.py, ``compiled_below``)."""
        return None

    def machine_state(self) -> tuple[object, bytes] | None:
        """Optional: ``(machine, state bytes)`` when this state is a state of a compiled pushdown machine
        (``_native.Machine``: a JSON document, core/machine.py), so the compiled core computes the whole mask
        in one call, without a parser step per trie node."""
        return None

    def compiled_twin(self) -> CharacterParser | None:
        """Optional: a state that accepts exactly the same texts as this one and that the compiled core runs
        alone (``machine_state``), where the compiled backend is active and the format is covered; the
        enforcer then starts from it. None: this state is its own."""
        return None

    def automaton_state(self) -> tuple[object, int] | None:
        """Optional: ``(dfa, state number)`` when this state is a state of a deterministic automaton over
        characters (a ``CompiledRegex``) and nothing else, so the compiled core can walk the vocabulary with
        that automaton alone, without a parser step per trie node (formatenforcer/core/compiled_walk.py)."""
        return None


def walk_lexeme(state: CharacterParser) -> Lexeme | None:
    """``state.lexeme()``, or for a bare scalar state (a top-level string or number, a branch of a top-level
    union) the state itself with nothing around it to resume: its walk is then the shared cached one."""
    lexeme = state.lexeme()
    if lexeme is None and state.SCALAR_LEXEME:
        return Lexeme(state, _same_state)
    return lexeme


def _same_state(state: CharacterParser) -> CharacterParser:
    return state


def nested_lexeme(
    child: CharacterParser,
    wrap: Callable[[CharacterParser], CharacterParser],
    finished: Callable[[CharacterParser], CharacterParser | None] | None = None,
) -> Lexeme | None:
    """The lexeme of a container whose next characters all go to ``child``: the child's own lexeme with
    ``wrap`` (put the child back in the container) added to its resume, or the child itself when it is a
    scalar (``SCALAR_LEXEME``). ``finished(c)``, when given, is the container once its value ``c`` has ended
    (see ``Lexeme.finish``): the finish of a scalar child; a nested lexeme's own finish is wrapped."""
    inner = child.lexeme()
    if inner is not None:
        resume, finish = inner.resume, inner.finish

        def resumed(state: CharacterParser) -> CharacterParser | None:
            back = resume(state)  # None: the child refuses its inner value ending here (a key not allowed)
            return None if back is None else wrap(back)

        wrapped = None
        if finish is not None:

            def wrapped(state: CharacterParser) -> CharacterParser | None:
                back = finish(state)
                return None if back is None else wrap(back)

        return Lexeme(inner.inner, resumed, checked_ends=inner.checked_ends, finish=wrapped)
    if child.SCALAR_LEXEME:
        return Lexeme(child, wrap, finish=finished)
    return None


def nested_first_char_split(
    child: CharacterParser, wrap: Callable[[CharacterParser], CharacterParser]
) -> tuple[CharacterParser, bytes] | None:
    """The first-character split of a container whose next characters all go to ``child``: the child's
    twin put back in the container, with the child's exceptions (see ``CharacterParser.first_char_split``)."""
    split = child.first_char_split()
    return None if split is None else (wrap(split[0]), split[1])


def nested_alternatives(
    child: CharacterParser, wrap: Callable[[CharacterParser], CharacterParser]
) -> tuple[CharacterParser, ...] | None:
    """The alternatives of a container whose next characters all go to ``child``: each of the child's
    branches put back in the container (see ``CharacterParser.alternatives``)."""
    branches = child.alternatives()
    return None if branches is None else tuple(wrap(branch) for branch in branches)
