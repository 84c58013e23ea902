"""``GrammarParser``: a context-free grammar as a character-level parser state (see formatenforcer/parser.py).

A state is a set of *configurations*, each "a lexeme of terminal ``t`` is in progress, its automaton in
state ``q``, and it started after the lexemes that led to Earley set ``s``" — a triple ``(s, t, q)`` — plus
the Earley sets at which a new lexeme may start now (``fresh``: where the last lexeme may have just ended).
Reading a character moves every triple's automaton, starts the lexemes the fresh sets expect (contextual
lexing: only terminals the parse can use there, and the %ignore ones), and, wherever a lexeme can end
after the character, adds the Earley set after it as fresh. A lexeme that could end or go on (``a`` of
``[a-z]+``) keeps both, so the language is exactly the grammar's however its lexemes may be split.

Nothing is allocated twice: Earley sets are interned (earley.py), states are interned by key per grammar and
memoise their own transitions, so a vocabulary walk that meets a state again pays a dict look-up.

For the token walk a state offers two hooks. ``alternatives()`` splits a state holding several
configurations into one state per configuration (their languages' union is the state's), and a state that
is one lexeme in progress offers ``lexeme()``: the terminal's automaton state alone (``TerminalState``),
whose vocabulary walk is cached by value and shared by every position, grammar and schema that reaches it —
valid when no character that continues the lexeme could also start the next one, so the lexeme is read
longest-first; otherwise the state is walked whole.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable

from ..core.budget import checked_megabytes, checked_seconds
from ..core.charset import EMPTY, CharSet, union_memo
from ..core.errors import GrammarError
from ..core.hooks import nested_lexeme
from ..core.protocol import CharacterParser, FreeRun, Lexeme
from ..parsers.build_budget import build_budget, over_budget
from ..parsers.regex import CompiledRegex
from .earley import CompiledGrammar, EarleySet
from .gbnf_text import read_gbnf
from .ir import Grammar
from .json_lexer import ParserLexer
from .lark_text import read_lark

SYNTAXES = ("lark", "gbnf", "ebnf")
_INTERNED = 1 << 16
"""States kept per grammar for reuse (a plain dict, cleared when full)."""

_RUN_MIN_CHARS = 8
"""A lexeme's run must have at least this many characters to be answered from the run tables."""

_LOOP_CHARS = 256
"""A looping state's run characters are looked for among at most this many first characters of its terminal."""

Triple = tuple  # (EarleySet, lexer id, automaton state; -1: the lexeme has read nothing yet)


def detect_syntax(text: str) -> str:
    """As vLLM decides: a grammar containing ``::=`` is EBNF/GBNF, anything else Lark."""
    return "gbnf" if "::=" in text else "lark"


def read_grammar(text: str, syntax: str | None = None) -> Grammar:
    """The neutral form of ``text`` in ``syntax`` (``"lark"``, ``"gbnf"``, ``"ebnf"``; None: detected)."""
    if not isinstance(text, str):
        raise GrammarError(f"a grammar must be a string, not {type(text).__name__}")
    chosen = detect_syntax(text) if syntax is None else syntax
    if chosen not in SYNTAXES:
        raise GrammarError(f"unknown grammar syntax {syntax!r}: expected one of {', '.join(SYNTAXES)}")
    if chosen == "lark":
        return read_lark(text)
    return read_gbnf(text, chosen)


class _Compiled:
    """What every state of one GrammarParser shares: the Earley grammar and the interned states."""

    __slots__ = ("earley", "states", "epoch", "charsets", "run_chars", "absorbing", "__weakref__")

    def __init__(self, earley: CompiledGrammar) -> None:
        self.earley = earley
        self.charsets: dict[tuple, CharSet] = {}  # unions of allowed characters (GrammarState.allowed_characters)
        self.run_chars: dict[tuple, CharSet] = {}  # a lexeme's run characters by what follows it (_find_run)
        self.absorbing: dict[tuple, bool] = {}  # see _absorbed
        self.states: dict[Hashable, GrammarState] = {}
        self.epoch = 0
        """Bumped when the intern table is cleared: states then drop their transition memos when next
        stepped, so the memo chain from the start state does not keep every state ever made alive."""

    def state(self, active: frozenset, fresh: frozenset) -> GrammarState:
        key = (active, fresh)
        found = self.states.get(key)
        if found is None:
            if len(self.states) >= _INTERNED:
                self.states.clear()
                self.epoch += 1
            found = self.states[key] = GrammarState(self, active, fresh)
        return found

    def stepped(self, active: frozenset) -> GrammarState:
        """The state a character leads to, with these configurations: its fresh sets are ``_ended(active)``,
        made only when first asked for (see ``GrammarState._fresh``). Interned by ``active`` alone, apart
        from the states made with their fresh sets given (``state``); equal states made both ways read the
        same language and have the same key."""
        found = self.states.get(active)
        if found is None:
            if len(self.states) >= _INTERNED:
                self.states.clear()
                self.epoch += 1
            found = self.states[active] = GrammarState(self, active, None)
        return found

    def release(self) -> None:
        """Drops what ties this grammar's states and Earley sets into reference cycles (the intern table,
        each state's memos, each set's memo of the sets after it), so they are freed as soon as nothing else
        holds them rather than left to a full pass of the cycle collector. Called when the parser object
        is gone (``GrammarParser``); states still held elsewhere keep working and rebuild what they need."""
        states = list(self.states.values())
        self.states.clear()
        self.epoch += 1
        for state in states:
            state._next, state._run, state._lexeme = None, False, False
        self.earley.release()


class GrammarState(CharacterParser):
    """A state of a grammar's parser (see the module notes). Made by ``GrammarParser`` and its steps."""

    __slots__ = ("_compiled", "_active", "_fresh_sets", "_key", "_next", "_epoch", "_charset", "_lexeme", "_run",
                 "__weakref__")  # fmt: skip
    STEPS_MEMOISED = True  # (``_next``)

    def __init__(self, compiled: _Compiled, active: frozenset, fresh: frozenset | None) -> None:
        self._compiled = compiled
        self._active = active
        self._fresh_sets = fresh
        # made on first use (a state made for a walk is often never stepped nor keyed): fewer containers
        # for the cycle collector to visit
        self._key: tuple | None = None
        self._next: dict[str, GrammarState | None] | None = None
        self._epoch = compiled.epoch
        self._charset: CharSet | None = None
        self._lexeme: Lexeme | None | bool = False
        self._run: FreeRun | None | bool = False

    @property
    def _fresh(self) -> frozenset:
        """The Earley sets at which a new lexeme may start now. A state a character leads to makes them
        (``_ended``: the set after each lexeme that may end here) when first asked: a walk that only asks
        whether a token's last character is read never needs them, nor the Earley scans they take."""
        found = self._fresh_sets
        if found is None:
            found = self._fresh_sets = _ended(self._compiled.earley, self._active)
        return found

    def add_character(self, ch: str) -> GrammarState | None:
        memo = self._next
        if memo is None or self._epoch != self._compiled.epoch:
            memo = self._next = {}
            self._epoch = self._compiled.epoch
        found = memo.get(ch, False)
        if found is not False:
            return found  # type: ignore[return-value]
        earley = self._compiled.earley
        dfas = earley.dfas
        moved: set[Triple] = set()
        for s, lexer, q in self._active:
            target = dfas[lexer].step(q if q >= 0 else 0, ch)
            if target is not None:
                moved.add((s, lexer, target))
        for s in self._fresh:
            for lexer, target in s.starts(ch):
                moved.add((s, lexer, target))
        if moved:
            found = self._compiled.stepped(frozenset(moved))
        else:
            found = None
        if len(memo) < 256:
            memo[ch] = found
        return found

    def allowed_characters(self) -> CharSet:
        found = self._charset
        if found is None:
            found = self._charset = self._allowed()
        return found

    def _allowed(self) -> CharSet:
        """``allowed_characters`` where not made yet (written without comprehensions: those would make the
        names they read cells at every call)."""
        dfas = self._compiled.earley.dfas
        if not self._fresh and len(self._active) == 1:  # one lexeme (a branch of ``alternatives``)
            ((_, lexer, q),) = self._active
            return dfas[lexer].charset(q if q > 0 else 0)
        parts = set()
        for _, lexer, q in self._active:
            parts.add(dfas[lexer].charset(q if q > 0 else 0))
        for s in self._fresh:
            parts.add(s.start_chars())
        parts.discard(EMPTY)
        # the same few unions recur at every position: each is built once per grammar
        return union_memo(self._compiled.charsets, tuple(sorted(parts, key=_by_intervals)))

    def can_end(self) -> bool:
        for s in self._fresh:
            if s.accepting:
                return True
        return False

    def key(self) -> Hashable:
        """Names each lexeme in progress by the set after it rather than the set it started in: a lexeme's
        start set matters only through the set its end leads to (``scan``), so states whose lexemes lead to
        the same sets read the same language, wherever their lexemes started, and share their walks."""
        found = self._key
        if found is None:
            active = frozenset((s.scan(lexer), lexer, q) for s, lexer, q in self._active)
            found = self._key = ("grammar", id(self._compiled), active, self._fresh)
        return found

    def alternatives(self) -> tuple[CharacterParser, ...] | None:
        """One state per configuration (see the module notes): a lexeme in progress (with the set after it
        when it may end now), each lexeme a fresh set may start, and the end of the text where it may."""
        if len(self._active) + len(self._fresh) <= 1 and not (self._fresh and not self._active):
            return None
        earley, compiled = self._compiled.earley, self._compiled
        branches: list[CharacterParser] = []
        covered = set()
        for s, lexer, q in self._active:
            after = None
            if q >= 0 and q in earley.finals[lexer]:
                after = s.scan(lexer)
                covered.add(after)
            active, fresh = frozenset(((s, lexer, q),)), frozenset(() if after is None else (after,))
            # (this state itself when it is that one configuration: it may have been made by a step, not here)
            branches.append(self if active == self._active and fresh == self._fresh else compiled.state(active, fresh))
        for s in self._fresh:
            if s in covered:
                continue
            for lexer in s.lexers():
                branches.append(compiled.state(frozenset(((s, lexer, -1),)), frozenset()))
            if s.accepting:
                branches.append(_END)
        if len(branches) == 1 and branches[0] is self:
            if not self._fresh:
                return None
            # one lexeme that may end here: it going on (one character at least), each lexeme the set after
            # it may start and the end of the text, so each is answered from its terminal's cached walk
            ((s, lexer, q),) = self._active
            (after,) = self._fresh
            branches = [compiled.state(self._active, _NOTHING)]
            for lexer in after.lexers():  # (a loop: a generator would make ``after`` a cell at every call)
                branches.append(compiled.state(frozenset(((after, lexer, -1),)), _NOTHING))
            if after.accepting:
                branches.append(_END)
        return tuple(branches)

    def free_run(self) -> FreeRun | None:
        """The run of the one lexeme in progress (an identifier's letters, a string's body, whitespace) over
        the characters that only that lexeme can read here (none of them starts the next one), so after ``n``
        of them the state is known: that lexeme further on, with the set after it where it may end."""
        found = self._run
        if found is False:
            found = self._run = self._find_run()
        return found  # type: ignore[return-value]

    def _find_run(self) -> FreeRun | None:
        if len(self._active) != 1:
            return None
        ((s, lexer, q),) = self._active
        earley, compiled = self._compiled.earley, self._compiled
        dfa, finals = earley.dfas[lexer], earley.finals[lexer]
        run = dfa.run(max(q, 0))
        if run is None:
            return self._loop_run(s, lexer, q)
        following = s.scan(lexer)
        if self._fresh and self._fresh != {following}:
            return None
        key = (lexer, max(q, 0), following.expected)  # the run's own characters depend on these alone
        chars = compiled.run_chars.get(key)
        if chars is None:
            if len(compiled.run_chars) >= _INTERNED:
                compiled.run_chars.clear()
            chars = compiled.run_chars[key] = run.chars - following.start_chars()
        if chars.size() < _RUN_MIN_CHARS:
            return None
        chain = run.chain
        ends_inside = _ends_inside(chain, run.loops, finals)
        if ends_inside and not run.loops:
            return None  # (see TerminalState.free_run)
        return FreeRun(chars, run.max_length, _RunAfter(self, s, lexer, chain, following), ends_inside)

    def _loop_run(self, s: EarleySet, lexer: int, q: int) -> FreeRun | None:
        """The run of a state that reads some characters back into itself: its one lexeme has ended and can
        read nothing more (``-`` of ``atom: "-" atom``), the set after it is the set it started in (a
        right-recursive chain keeps one set, ``EarleySet.chain_base``), and a character that starts only
        this terminal there, into this very automaton state, leads to this same state again. Llama 3's
        runs of dashes are then answered from the run tables, as an identifier's letters are."""
        earley, compiled = self._compiled.earley, self._compiled
        dfa = earley.dfas[lexer]
        if q < 0 or isinstance(dfa, ParserLexer) or q not in earley.finals[lexer] or dfa.transitions[q]:
            return None
        if len(self._fresh) != 1 or s not in self._fresh or s.scan(lexer) is not s:
            return None
        key = ("loop", lexer, q, s.expected)  # what starts where depends on the expected terminals alone
        chars = compiled.run_chars.get(key)
        if chars is None:
            if len(compiled.run_chars) >= _INTERNED:
                compiled.run_chars.clear()
            chars = compiled.run_chars[key] = _looping(dfa, s, lexer, q)
        if not chars:
            return None
        return FreeRun(chars, None, _Same(self), self.can_end())

    def lexeme(self) -> Lexeme | None:
        found = self._lexeme
        if found is False:
            found = self._lexeme = self._find_lexeme()
        return found  # type: ignore[return-value]

    def _find_lexeme(self) -> Lexeme | None:
        if len(self._active) != 1:
            return None
        ((s, lexer, q),) = self._active
        earley, q0 = self._compiled.earley, (q if q > 0 else 0)
        after = None
        if self._fresh:
            after = s.scan(lexer)
            if self._fresh != {after}:
                return None
        if isinstance(earley.dfas[lexer], ParserLexer):
            return self._json_lexeme(s, lexer, q0)
        ending = q >= 0 and q in earley.finals[lexer]
        if ending and self._fresh:
            return None  # the lexeme may end here: split (``alternatives``), not walked whole past its end
        if earley.final_chars(lexer, q0):  # (else it reads nothing past an end: no overlap)
            if after is None:
                after = s.scan(lexer)
            if earley.ends_overlap(lexer, q0, after) and not _absorbed(self._compiled, s, lexer, q, after):
                return None  # a character could go on with this lexeme or start the next: both are kept
        dfa = earley.dfas[lexer]
        # a lexeme that may end here but has no set after it (the branch of it going on, ``alternatives``)
        # is a terminal that has not read its next character: it may not end before reading one
        inner = TerminalState.of(dfa, q0, q >= 0 and not ending)
        return Lexeme(inner, _Resume(self._compiled, s, lexer, q, after))

    def _json_lexeme(self, s: EarleySet, lexer: int, q: int) -> Lexeme | None:
        """Inside a ``%json`` value that cannot end yet: the JSON state's own lexeme (a string or number
        nested in its containers), put back into this grammar state. Not offered where the value may end
        (the grammar's next lexeme could start there) nor for a bare scalar value (it may end inside)."""
        json_lexer = self._compiled.earley.dfas[lexer]
        state = json_lexer.states[q]  # type: ignore[union-attr]
        if q == 0 or state.can_end() or self._fresh:  # (q 0: the document start, which may be a bare scalar)
            return None
        inner = state.lexeme()
        if inner is None:
            return None
        compiled, after = self._compiled, s.scan(lexer)
        ended, empty = frozenset((after,)), frozenset()

        def wrap(value: CharacterParser) -> CharacterParser:
            number = json_lexer.number(value)  # type: ignore[union-attr]
            return compiled.state(frozenset(((s, lexer, number),)), ended if value.can_end() else empty)

        return nested_lexeme(state, wrap)

    def __repr__(self) -> str:
        names = self._compiled.earley.terminal_names
        active = ", ".join(f"{names[lexer]}@{q}" for _, lexer, q in self._active)
        return f"GrammarState(active=[{active}], fresh={len(self._fresh)}, can_end={self.can_end()})"


_NOTHING: frozenset = frozenset()


class _RunAfter:
    """``FreeRun.after`` of a grammar state whose one lexeme (of ``lexer``, started after set ``s``) runs
    along ``chain``: the state after ``n`` run characters, with ``after`` (the set after the lexeme) fresh
    where it may end. A small object rather than a closure: one container for the cycle collector to
    visit instead of a function, its cells and their tuple."""

    __slots__ = ("start", "s", "lexer", "chain", "after")

    def __init__(self, start: GrammarState, s: EarleySet, lexer: int, chain: tuple, after: EarleySet) -> None:
        self.start, self.s, self.lexer, self.chain, self.after = start, s, lexer, chain, after

    def __call__(self, n: int) -> CharacterParser:
        if n == 0:
            return self.start
        chain, compiled = self.chain, self.start._compiled
        state = chain[min(n, len(chain) - 1)]
        ended = frozenset((self.after,)) if state in compiled.earley.finals[self.lexer] else _NOTHING
        return compiled.state(frozenset(((self.s, self.lexer, state),)), ended)


class _Same:
    """``FreeRun.after`` of a state that each run character leads back to (``GrammarState._loop_run``)."""

    __slots__ = ("state",)

    def __init__(self, state: GrammarState) -> None:
        self.state = state

    def __call__(self, n: int) -> CharacterParser:
        return self.state


class _Resume:
    """``Lexeme.resume`` of a grammar state whose one lexeme (of ``lexer``, after set ``s``, automaton state
    ``q``) is walked as its terminal alone: the grammar state once that terminal has read on, with ``after``
    (the set after the lexeme, None until first needed) fresh where it may end (a small object rather than a
    closure, like ``_RunAfter``)."""

    __slots__ = ("compiled", "s", "lexer", "q", "after")

    def __init__(self, compiled: _Compiled, s: EarleySet, lexer: int, q: int, after: EarleySet | None) -> None:
        self.compiled, self.s, self.lexer, self.q, self.after = compiled, s, lexer, q, after

    def __call__(self, inner: CharacterParser) -> CharacterParser | None:
        s, lexer, compiled = self.s, self.lexer, self.compiled
        state = inner._state if inner.__class__ is TerminalState else -1  # type: ignore[attr-defined]
        if state < 0 or not inner._started:  # type: ignore[attr-defined]
            return compiled.state(frozenset(((s, lexer, self.q),)), _NOTHING)
        if state not in compiled.earley.finals[lexer]:
            return compiled.state(frozenset(((s, lexer, state),)), _NOTHING)
        after = self.after
        if after is None:
            after = self.after = s.scan(lexer)
        return compiled.state(frozenset(((s, lexer, state),)), frozenset((after,)))


def _ends_inside(chain: tuple, loops: bool, finals: frozenset) -> bool:
    """Whether a run along ``chain`` (looping at its last state when ``loops``) may end the lexeme after
    one of its characters."""
    return any(state in finals for state in chain[1:]) or (loops and chain[-1] in finals)


def _looping(dfa: CompiledRegex, s: EarleySet, lexer: int, q: int) -> CharSet:
    """The characters that start only terminal ``lexer`` at ``s``, into automaton state ``q`` (see
    ``GrammarState._loop_run``; apart from it, whose every call would make the names read here cells)."""
    first, alone = dfa.charset(0), ((lexer, q),)
    looping = [ch for ch in first.chars()] if first.size() <= _LOOP_CHARS else []
    looping = [ch for ch in looping if s.starts(ch) == alone]
    return CharSet.of(looping) if looping else EMPTY


def _by_intervals(charset: CharSet) -> tuple:
    return charset.intervals


def _ended(earley: CompiledGrammar, moved: set[Triple]) -> frozenset:
    """The sets where a new lexeme may start after this character: the sets of the lexemes that may end
    here merged into one (they end at the same position), and the sets an %ignore lexeme ending here leaves
    as they were."""
    finals, count = earley.finals, earley.terminal_count
    scanned, ended = set(), set()
    for s, lexer, q in moved:
        if q in finals[lexer]:
            if lexer < count:
                scanned.add(s.scan(lexer))
            else:
                ended.add(s)
    if scanned:
        ended.add(earley.merge(frozenset(scanned)))
    return frozenset(ended)


def _absorbed(compiled: _Compiled, s: EarleySet, lexer: int, q: int, after: EarleySet) -> bool:
    """Whether every split of this lexeme is the same configuration as reading it whole: an %ignore run
    (``[ \\t]+``) that ends and starts again is one run. True when the lexeme leaves the Earley set as it
    is, and each character that could start a new lexeme at a point where this one may end starts only
    this terminal, in the automaton state that going on would reach."""
    if after is not s:
        return False
    # past that, what starts where depends on the set's expected terminals alone: memoised by them
    key = (lexer, max(q, 0), after.expected)
    found = compiled.absorbing.get(key)
    if found is None:
        if len(compiled.absorbing) >= _INTERNED:
            compiled.absorbing.clear()
        found = compiled.absorbing[key] = _absorbs(compiled.earley, lexer, max(q, 0), after)
    return found


def _absorbs(earley: CompiledGrammar, lexer: int, q: int, after: EarleySet) -> bool:
    """``_absorbed`` past its first test, for a lexeme of ``lexer`` in automaton state ``q``."""
    dfa, finals = earley.dfas[lexer], earley.finals[lexer]
    seen, todo = {q}, [q]
    while todo:
        current = todo.pop()
        if current in finals:
            overlap = dfa.charset(current) & after.start_chars()
            if overlap.size() > 256:
                return False
            for ch in overlap.chars():
                if after.starts(ch) != ((lexer, dfa.step(current, ch)),):
                    return False
        for target in dfa.transitions[current].values():
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return True


class _EndState(CharacterParser):
    """The end of the text and nothing more: the branch of a state that may end here (``alternatives``)."""

    __slots__ = ()

    def add_character(self, ch: str) -> None:
        return None

    def allowed_characters(self) -> CharSet:
        return EMPTY

    def can_end(self) -> bool:
        return True

    def key(self) -> Hashable:
        return ("grammar-end",)


_END = _EndState()


class TerminalState(CharacterParser):
    """One terminal's automaton alone, in state ``_state``; ``_started`` once it has read a character (a
    lexeme is never empty). The inner state of ``GrammarState.lexeme``: its key is the automaton's value,
    so its vocabulary walks are shared by every grammar using the same terminal."""

    __slots__ = ("_dfa", "_state", "_started", "_key", "_next")
    STEPS_MEMOISED = True  # (``_next``)

    _MEMO: dict[Hashable, TerminalState] = {}

    def __init__(self, dfa: CompiledRegex, state: int, started: bool) -> None:
        self._dfa, self._state, self._started = dfa, state, started
        self._key = ("terminal", dfa.ident, state, started)
        self._next: dict[str, TerminalState | None] = {}

    @classmethod
    def of(cls, dfa: CompiledRegex, state: int, started: bool) -> TerminalState:
        key = (dfa.ident, state, started)
        found = cls._MEMO.get(key)
        if found is None or found._dfa is not dfa:
            if len(cls._MEMO) >= _INTERNED:
                cls._MEMO.clear()
            found = cls._MEMO[key] = cls(dfa, state, started)
        return found

    def add_character(self, ch: str) -> TerminalState | None:
        found = self._next.get(ch, False)
        if found is False:
            target = self._dfa.step(self._state, ch)
            found = None if target is None else TerminalState.of(self._dfa, target, True)
            if len(self._next) < 256:
                self._next[ch] = found
        return found  # type: ignore[return-value]

    def allowed_characters(self) -> CharSet:
        return self._dfa.charset(self._state)

    def can_end(self) -> bool:
        return self._started and self._state in self._dfa.finals

    def key(self) -> Hashable:
        return self._key

    def shared_lexeme_key(self, horizon: int) -> Hashable | None:
        return self._key

    def lexeme_dfa(self) -> tuple[CompiledRegex, int, Callable[[int], CharacterParser]]:
        return self._dfa, self._state, self._read_on

    def _read_on(self, state: int) -> TerminalState:
        """This terminal in automaton state ``state`` after a character (``lexeme_dfa``)."""
        return TerminalState.of(self._dfa, state, True)

    def free_run(self) -> FreeRun | None:
        run = self._dfa.run(self._state)
        if run is None:
            return None
        dfa, chain, finals = self._dfa, run.chain, self._dfa.finals
        ends_inside = _ends_inside(chain, run.loops, finals)
        if ends_inside and not run.loops:
            # a bounded run promises that longer runs are refused, but the lexeme may end inside it and the
            # next one go on with the same characters (``[a-z]`` then ``[a-z0-9_]*``): walked instead
            return None

        def after(n: int) -> TerminalState:
            return self if n == 0 else TerminalState.of(dfa, run.state_after(n), True)

        return FreeRun(run.chars, run.max_length, after, ends_inside)


class GrammarParser(GrammarState):
    """Accepts exactly the language of a context-free grammar written in Lark, GBNF or EBNF.

    ``syntax`` is ``"lark"``, ``"gbnf"`` or ``"ebnf"``; None detects it as vLLM does (text containing ``::=``
    is GBNF/EBNF, anything else Lark). Ambiguous, left-recursive and empty rules are fine (an Earley
    recognizer over lexemes; see docs/grammars.md). A grammar that cannot be enforced exactly raises
    ``GrammarError`` here, naming the rule and line; generation itself never fails. ``build_seconds`` bounds
    the whole build (None: no limit), else ``BuildTimeoutError``; each terminal's automaton also stops at
    its own limit (5 s, a ``GrammarError`` naming it), cut to what is left of the budget. ``build_megabytes``
    bounds how much the process's resident memory may grow meanwhile (None: no limit), else
    ``BuildMemoryError`` (see ``JsonConfig.build_megabytes``)."""

    __slots__ = ("grammar", "syntax")

    def __init__(
        self,
        grammar: str,
        syntax: str | None = None,
        *,
        build_seconds: float | None = 60.0,
        build_megabytes: float | None = 1024.0,
    ) -> None:
        checked_seconds(build_seconds, "GrammarParser's build_seconds")
        checked_megabytes(build_megabytes, "GrammarParser's build_megabytes")
        with build_budget(build_seconds, "GrammarParser(build_seconds=...)", build_megabytes,
                          "GrammarParser(build_megabytes=...)"):  # fmt: skip
            neutral = read_grammar(grammar, syntax)
            compiled = _Compiled(CompiledGrammar(neutral))
            over_budget()
        super().__init__(compiled, frozenset(), frozenset((compiled.earley.root,)))
        # (the parser holds no cycle of its own, so it dies at once; at interpreter exit there is nothing to do)
        weakref.finalize(self, compiled.release).atexit = False
        self.grammar = grammar
        self.syntax = neutral.syntax

    def __repr__(self) -> str:
        return f"GrammarParser(syntax={self.syntax!r}, rules={len(self._compiled.earley.rule_names)})"
