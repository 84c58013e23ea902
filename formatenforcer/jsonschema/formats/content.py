"""What the *decoded* characters of a JSON string may be: small automata the string parser steps through.

The string parser (strings.py) handles quotes and escapes and feeds each decoded character here; a content
automaton answers which decoded characters may come next (exactly, and only those from which the string can
still be completed), whether the string may close, and, when it loops over every character, a free run.

    LengthContent    any characters, minLength/maxLength (state: count, capped)
    RegexContent     a pattern or format DFA together with lengths (state: DFA state, count)
    TrieContent      one of a list of strings (enum, const, property names) (state: trie node)
    ExcludeContent   any string except a few (``not`` of const/enum) (state: count, trie node)

Lengths count code points, so an escape such as ``\\u00e9`` is one character.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import TYPE_CHECKING

from ...core.automaton import class_points
from ...core.cache_release import register_memo
from ...core.charset import ANY, EMPTY, CharSet
from ...core.machine import STRING_BODY_CHARS
from ...parsers.choice import CharTrie
from ...parsers.regex import CompiledRegex

if TYPE_CHECKING:
    from ...core.hooks import LexemeTables

JSON_STRING_CHARS = STRING_BODY_CHARS
"""The characters a JSON string may hold unescaped: one shared set, so a vocabulary builds one table for it."""

_MISSING = object()

FreeContent = tuple[CharSet, "int | None", Callable[[int], Hashable]]


class Content:
    """Interface of a content automaton; states are small hashable values."""

    __slots__ = ("_body",)

    def body_charset(self, state: Hashable, compute: Callable[[], CharSet], phase: Hashable = None) -> CharSet:
        """The raw characters allowed in a string body at ``state``, memoised per automaton (they repeat).
        ``phase``: the string parser's phase and escape progress when inside an escape (None in the body)."""
        try:
            memo = self._body
        except AttributeError:
            memo = self._body = {}
        key = self.charset_key(state) if phase is None else (phase, self.charset_key(state))
        hit = memo.get(key)
        if hit is None:
            hit = memo[key] = compute()
        return hit

    def charset_key(self, state: Hashable) -> Hashable:
        """What of ``state`` the allowed characters depend on."""
        return state

    def ident(self) -> Hashable:
        """Identifies the automaton inside parser keys (its id: automata live as long as their schema)."""
        return id(self)

    def value_ident(self) -> Hashable | None:
        """An identity by value, equal for equal automata of different schemas (so their lexeme walks can
        be cached per vocabulary), or None when the automaton has none."""
        return None

    def state_ident(self, state: Hashable) -> Hashable | None:
        """For a content without a ``value_ident``: an identity by value of ``state`` alone, when everything
        that can follow it is the same for every content with that identity (so a string's walk from there
        can be cached per vocabulary); None otherwise."""
        return None

    def class_points(self) -> frozenset[int] | None:
        """The code points where ``step`` and ``allowed`` may change their answer (each starts an interval
        of characters treated alike in every state), for the compiled walk of a string over this content
        (core/lexeme_automaton.py); None when the content is not explored into an automaton."""
        return None

    def string_tables(self, escapable: CharSet) -> tuple[LexemeTables, dict[Hashable, int]] | None:
        """The tables of a JSON string over this content for the compiled lexeme walk, and the number of
        each content state's body state in them, when the content builds them directly (see
        jsonschema/string_tables.py); None otherwise."""
        return None

    def start(self) -> Hashable:
        raise NotImplementedError

    def step(self, state: Hashable, ch: str) -> Hashable | None:
        raise NotImplementedError

    def step_text(self, state: Hashable, text: str) -> Hashable | None:
        """The state after every character of ``text`` (``step`` folded); None as soon as one is refused. A
        content whose steps compose in closed form overrides it (a string body's token reads one call)."""
        step = self.step
        for ch in text:
            state = step(state, ch)
            if state is None:
                return None
        return state

    def allowed(self, state: Hashable) -> CharSet:
        raise NotImplementedError

    def accepting(self, state: Hashable) -> bool:
        raise NotImplementedError

    def free(self, state: Hashable) -> FreeContent | None:
        return None

    def first_char_split(self, state: Hashable) -> tuple[Hashable, bytes] | None:
        """See CharacterParser.first_char_split, for the decoded characters of a string."""
        return None

    def far_state(self, state: Hashable, horizon: int) -> Hashable | None:
        """A stand-in for ``state`` in lexeme cache keys when no run of ``horizon`` characters can reach a
        length limit from it (so the exact count cannot change what a token does); None: use the state."""
        return None


class LengthContent(Content):
    """Any characters, between ``low`` and ``high`` of them. The count is capped where it stops mattering."""

    __slots__ = ("low", "high", "_cap")

    def __init__(self, low: int = 0, high: int | None = None) -> None:
        self.low, self.high = low, high
        self._cap = high if high is not None else low

    def start(self) -> int:
        return 0

    def step(self, state: int, ch: str) -> int | None:
        if self.high is not None and state >= self.high:
            return None
        return min(state + 1, self._cap)

    def step_text(self, state: int, text: str) -> int | None:
        # ``step`` n times: with a bound, each step needs the count below it (the cap is the bound, so the
        # count is exact); without one, the count only climbs to its cap
        count = state + len(text)
        if self.high is not None:
            return count if count <= self.high else None
        return min(count, self._cap)

    def allowed(self, state: int) -> CharSet:
        return ANY if self.high is None or state < self.high else EMPTY

    def accepting(self, state: int) -> bool:
        return state >= self.low

    def value_ident(self) -> Hashable:
        return ("length", self.low, self.high)

    def far_state(self, state: int, horizon: int) -> Hashable | None:
        if self.high is None or state < self.low or self.high - state < horizon:
            return None
        return "far"

    def free(self, state: int) -> FreeContent | None:
        room = None if self.high is None else self.high - state
        if room == 0:
            return None
        cap = self._cap
        return JSON_STRING_CHARS, room, lambda n: min(state + n, cap)


_SATISFIABLE: dict[tuple[Hashable, int, int | None], bool] = {}
_CLASS_POINTS: dict[Hashable, frozenset[int]] = {}
register_memo(_SATISFIABLE.clear)  # emptied when a burst of enforcers ends (core/cache_release.py)
register_memo(_CLASS_POINTS.clear)  # emptied when a burst of enforcers ends (core/cache_release.py)
"""Per pattern automaton (``dfa.ident``): its ``class_points``."""
_EXPLORED_STATES = 256
"""Contents whose states (pattern states times counted lengths) are more than this stay on the Python walk."""
_JSON_POINTS = frozenset({0, 0x20, 0xD800, 0xE000, *(p for c in '"\\/bfnrtu' for p in (ord(c), ord(c) + 1))})
"""(automaton ident, low, high) -> ``RegexContent.satisfiable``, shared by every schema (bounded)."""


class RegexContent(Content):
    """A DFA (pattern or format) plus lengths: a character is allowed when a final state stays reachable
    within the remaining length budget (checked by breadth-first layers, memoised)."""

    __slots__ = ("dfa", "low", "high", "_cap", "_memo", "_allowed", "_run_chars", "_free_memo")

    def __init__(self, dfa: CompiledRegex, low: int = 0, high: int | None = None) -> None:
        self.dfa, self.low, self.high = dfa, low, high
        self._cap = high if high is not None else low
        self._memo: dict[tuple[int, int, int | None], bool] = {}
        self._allowed: dict[tuple[int, int], CharSet] = {}
        self._run_chars: dict[int, CharSet] = {}
        self._free_memo: dict[tuple[int, int], FreeContent | None] = {}

    def _can_finish(self, state: int, low: int, high: int | None) -> bool:
        low = max(low, 0)
        if high is not None and high < low:
            return False
        if low == 0 and high is None:
            return True  # the DFA is pruned: every state reaches a final one
        if low == 0:
            return self.dfa.distances()[state] <= high  # the shortest way to a final state fits
        key = (state, low, high)
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        finals, transitions = self.dfa.finals, self.dfa.transitions
        layer = frozenset((state,))
        seen: set[frozenset[int]] = set()
        step, result = 0, False
        while high is None or step <= high:
            if step >= low:
                if layer & finals:
                    result = True
                    break
                if layer in seen:
                    break
                seen.add(layer)
            layer = frozenset(t for s in layer for t in transitions[s].values())
            if not layer:
                break
            step += 1
        self._memo[key] = result
        return result

    def satisfiable(self) -> bool:
        """Whether some text within the lengths matches (asked once, at build time). With only an upper
        length this is a breadth-first search from the start that stops at the first final state, not
        ``distances()`` over the whole automaton: that table is for the mask, built when a mask first needs
        it (a large format automaton's takes milliseconds, and the time to first mask should not pay it).
        Memoised by the automaton's language (``dfa.ident``) and the lengths: schemas repeat formats."""
        key = (self.dfa.ident, self.low, self.high)
        hit = _SATISFIABLE.get(key)
        if hit is None:
            hit = self._satisfiable()
            if len(_SATISFIABLE) >= 1024:
                _SATISFIABLE.clear()
            _SATISFIABLE[key] = hit
        return hit

    def _satisfiable(self) -> bool:
        low, high = max(self.low, 0), self.high
        if low > 0 or high is None:
            return self._can_finish(0, low, high)
        finals, transitions = self.dfa.finals, self.dfa.transitions
        layer, seen = [0], {0}
        for _ in range(high + 1):
            if any(state in finals for state in layer):
                return True
            nxt = []
            for state in layer:
                for target in transitions[state].values():
                    if target not in seen:
                        seen.add(target)
                        nxt.append(target)
            if not nxt:
                return False
            layer = nxt
        return False

    def start(self) -> tuple[int, int]:
        return (0, 0)

    def step(self, state: tuple[int, int], ch: str) -> tuple[int, int] | None:
        dfa_state, count = state
        target = self.dfa.step(dfa_state, ch)
        if target is None:
            return None
        count = count + 1
        if not self._can_finish(target, self.low - count, None if self.high is None else self.high - count):
            return None
        return (target, min(count, self._cap))

    def allowed(self, state: tuple[int, int]) -> CharSet:
        hit = self._allowed.get(state)
        if hit is None:
            dfa_state, count = state
            intervals: list[tuple[int, int]] = []
            count += 1
            high = None if self.high is None else self.high - count
            for symbol, target in self.dfa.transitions[dfa_state].items():
                if self._can_finish(target, self.low - count, high):
                    intervals.extend(self.dfa.chars_of_symbol[symbol].intervals)
            hit = CharSet(intervals) if intervals else EMPTY
            self._allowed[state] = hit
        return hit

    def accepting(self, state: tuple[int, int]) -> bool:
        return state[0] in self.dfa.finals and state[1] >= self.low

    def value_ident(self) -> Hashable:
        return ("regex", self.dfa.ident, self.low, self.high)

    def class_points(self) -> frozenset[int] | None:
        # the pattern's symbol boundaries, and where a JSON string treats characters apart: the controls,
        # the quote, the backslash and the escape letters; None for automata too big to explore cheaply
        # (a format's thousands of states, or a length limit multiplying the states)
        if len(self.dfa.transitions) * (self._cap + 1) > _EXPLORED_STATES:
            return None
        points = _CLASS_POINTS.get(self.dfa.ident)
        if points is None:
            if len(_CLASS_POINTS) >= 1024:
                _CLASS_POINTS.clear()
            points = _CLASS_POINTS[self.dfa.ident] = frozenset(class_points(self.dfa) | _JSON_POINTS)
        return points

    def far_state(self, state: tuple[int, int], horizon: int) -> Hashable | None:
        dfa_state, count = state
        if self.high is None or count < self.low:
            return None
        if self.high - count - horizon < self.dfa.max_distance():
            return None
        return (dfa_state, "far")

    def free(self, state: tuple[int, int]) -> FreeContent | None:
        """The DFA's uniform run from this state (a loop such as ``.*`` or a counted chain such as
        ``[0-9]{4}``), cut where the length limits would refuse a longer one. Memoised per state."""
        hit = self._free_memo.get(state, _MISSING)
        if hit is _MISSING:
            hit = self._free_memo[state] = self._free(state)
        return hit

    def _free(self, state: tuple[int, int]) -> FreeContent | None:
        dfa_state, count = state
        run = self.dfa.run(dfa_state)
        if run is None:
            return None
        chars = self._run_chars.get(dfa_state)
        if chars is None:
            chars = JSON_STRING_CHARS if not (JSON_STRING_CHARS - run.chars) else run.chars & JSON_STRING_CHARS
            self._run_chars[dfa_state] = chars
        if chars.size() < 8:
            return None
        limit = run.max_length
        low, high = self.low, self.high
        if high is not None:
            limit = high - count if limit is None else min(limit, high - count)
        chain = run.chain
        if low <= count and high is not None:
            # every prefix of the run must leave room for the shortest way to a final state
            distances = self.dfa.distances()
            for n in range(1, min(len(chain) - 1, limit) + 1):
                if distances[chain[n]] > high - count - n:
                    limit = n - 1
                    break
            else:
                if run.loops:
                    limit = min(limit, high - count - distances[chain[-1]])
        elif low > count:
            # every prefix of the run must keep a final state reachable within the length limits
            last = len(chain) - 1 if limit is None else limit
            for n in range(1, last + 1):
                remaining = None if high is None else high - count - n
                if not self._can_finish(run.state_after(n), low - count - n, remaining):
                    limit = n - 1
                    break
        if limit is not None and limit <= 0:
            return None
        cap = self._cap
        if run.loops and len(chain) == 1 and count >= cap:
            return chars, limit, lambda n: state
        return chars, limit, lambda n: (run.state_after(n), min(count + n, cap))


class TrieContent(Content):
    """Exactly one of ``words``."""

    __slots__ = ("_words", "_trie")

    def __init__(self, words: Iterable[str]) -> None:
        self._words = tuple(words)
        self._trie: CharTrie | None = None

    @property
    def trie(self) -> CharTrie:
        """The trie of the words, built when the string is first read (most enums of a schema are not
        reached by its first mask, which should not pay for them)."""
        trie = self._trie
        if trie is None:
            trie = self._trie = CharTrie(sorted(self._words))
        return trie

    def start(self) -> int:
        return 0

    def step(self, state: int, ch: str) -> int | None:
        return self.trie.children[state].get(ch)

    def allowed(self, state: int) -> CharSet:
        return self.trie.charsets[state]

    def accepting(self, state: int) -> bool:
        return self.trie.terminal[state]


class ExcludeContent(Content):
    """At least ``low`` characters of any kind, except the strings in ``excluded``. No upper length, so
    a string equal to an excluded one can always go on: no dead end."""

    __slots__ = ("low", "trie")

    def __init__(self, excluded: Iterable[str], low: int = 0) -> None:
        self.low = low
        self.trie = CharTrie(excluded)

    def start(self) -> tuple[int, int]:
        return (0, 0)

    def step(self, state: tuple[int, int], ch: str) -> tuple[int, int]:
        count, node = state
        nxt = -1 if node < 0 else self.trie.children[node].get(ch, -1)
        return (min(count + 1, self.low), nxt)

    def free(self, state: tuple[int, int]) -> FreeContent | None:
        """Once the text has left every excluded string, any characters follow: an exact free run."""
        count, node = state
        if node >= 0:
            return None
        low = self.low
        return JSON_STRING_CHARS, None, lambda n: (min(count + n, low), -1)

    def first_char_split(self, state: tuple[int, int]) -> tuple[tuple[int, int], bytes] | None:
        """Any first character off the trie of excluded strings leaves them all: the twin has left them
        already; the lead bytes of the trie's characters here are the exceptions (characters sharing a lead
        byte with one of them are walked from the real state: correct, only slower)."""
        count, node = state
        if node < 0:
            return None
        return (count, -1), bytes(sorted({ch.encode("utf-8")[0] for ch in self.trie.children[node]}))

    def allowed(self, state: tuple[int, int]) -> CharSet:
        return ANY

    def accepting(self, state: tuple[int, int]) -> bool:
        count, node = state
        return count >= self.low and (node < 0 or not self.trie.terminal[node])
