"""``format: regex`` as a string content automaton: the ECMA-262 syntax (formats/regex_syntax.py) with ``minLength``,
``maxLength`` and excluded values, and free runs for the string walk.

``maxLength`` needs to know how far a state is from a valid ending. ``completion_cost`` follows one fixed
choice per state (close the group, end the class, finish the escape with its largest allowed digit, append a
missing group...), so the cost of a state is one more than the cost of the state its choice leads to: a
character is offered only if the state after it can still finish within the room left, and then its own
choice can, so no length-limited walk dead-ends. ``minLength`` is met by going on (a plain character always
can come at the end); an excluded string is left by going on past it (so excluded values and ``maxLength``
together are refused when compiling).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable

from ...core.charset import EMPTY, CharSet
from ...parsers.choice import CharTrie
from ..ecma.classes import PROPERTY_NAMES
from .content import JSON_STRING_CHARS, Content, FreeContent
from .regex_syntax import (
    ATOM,
    ATOM_NUL,
    BACKREF,
    BRACE,
    CHARS,
    CLS,
    CLS_DASH,
    CLS_NUL,
    CLS_START,
    DIGITS,
    ESC,
    ESC_C,
    ESC_K,
    ESC_P,
    ESC_U,
    GLT,
    GNAME,
    GQ,
    KNAME,
    NAME_PART,
    NAME_START,
    PAREN,
    PLAIN,
    PNAME,
    SEQUENCE,
    SYNTAX,
    AllowedChars,
)

_FREE_PLAIN = PLAIN & JSON_STRING_CHARS
_FREE_CLASS = CHARS & JSON_STRING_CHARS - CharSet.of("\\]-")
_FIXED = {ESC_C: "Z", ESC_U: "{", ESC_K: "<", ESC_P: "{", CLS_START: "]", CLS: "]", CLS_NUL: "]", CLS_DASH: "]"}
_NEVER = 1 << 30
_MEMO_LIMIT = 200_000


def _choice(s: tuple) -> str | None:
    """The character the canonical completion writes next from the (not accepting) syntax state ``s``."""
    mode, aux, stack, groups, names, need, named = s
    missing = sorted(named - names)
    if mode in SEQUENCE:
        if mode == PAREN:
            return "?" if missing and need <= groups + 1 else ")"
        return ")" if stack else "("
    fixed = _FIXED.get(mode)
    if fixed is not None:
        return fixed
    if mode == GQ:
        return "<" if missing else ":"
    if mode == GLT:
        return missing[0][0] if missing else "="
    if mode in (GNAME, KNAME):
        if aux is None:
            return None  # a free run's stand-in: it never finishes (see RegexSyntaxContent.free)
        if mode == KNAME and not aux:
            return "a"
        if mode == GNAME and missing and missing[0].startswith(aux) and missing[0] != aux:
            return missing[0][len(aux)]
        return ">" if SYNTAX.step(s, ">") is not None else "_"
    if mode == ESC:
        return "u" if aux[0] == "h" else "n"
    if mode == PNAME:
        text = aux[1]
        if SYNTAX.step(s, "}") is not None:
            return "}"
        return next(n for n in PROPERTY_NAMES if n.startswith(text))[len(text)]
    if mode == BRACE:
        if aux[0] is None:
            return "0"
        return "}" if SYNTAX.step(s, "}") is not None else "9"
    # hex digits (\x, \uHHHH, \u{...}): close when possible, else the largest digit that can still finish
    if SYNTAX.step(s, "}") is not None:
        return "}"
    return max((c for c in "0123456789ABCDEF" if SYNTAX.step(s, c) is not None), key=lambda c: int(c, 16))


def completion_cost(s: tuple, memo: dict[tuple, int]) -> int:
    """Characters the canonical completion needs from syntax state ``s`` (``_NEVER`` for a stand-in)."""
    path: list[tuple] = []
    cost = 0
    while True:
        hit = memo.get(s)
        if hit is not None:
            cost = hit
            break
        if SYNTAX.accepting(s):
            break
        ch = _choice(s)
        if ch is None:
            cost = _NEVER
            break
        path.append(s)
        s = SYNTAX.step(s, ch)  # type: ignore[assignment]
    if len(memo) > _MEMO_LIMIT:
        memo.clear()
    for state in reversed(path):
        cost = min(cost + 1, _NEVER)
        memo[state] = cost
    return cost


def completion(s: tuple) -> str:
    """The canonical completion itself (for tests and error messages)."""
    out = []
    while not SYNTAX.accepting(s):
        ch = _choice(s)
        if ch is None:
            raise ValueError("a free run's stand-in state has no completion")
        out.append(ch)
        s = SYNTAX.step(s, ch)  # type: ignore[assignment]
    return "".join(out)


class RegexSyntaxContent(Content):
    """``format: regex``; state ``(syntax state, count, trie node)``: count capped at ``low`` when there is
    no ``high``; trie node -1 once the text left every excluded string."""

    __slots__ = ("low", "high", "trie", "_allowed", "_costs", "_cap")

    def __init__(self, low: int = 0, excluded: Iterable[str] = (), high: int | None = None) -> None:
        self.low, self.high = low, high
        self._cap = high if high is not None else low
        self.trie = CharTrie(sorted(excluded))
        self._allowed = AllowedChars(SYNTAX)
        self._costs: dict[tuple, int] = {}

    def start(self) -> tuple:
        return (SYNTAX.start(), 0, 0 if self.trie.choices else -1)

    def _fits(self, syntax: tuple, count: int) -> bool:
        return self.high is None or count + completion_cost(syntax, self._costs) <= self.high

    def step(self, state: tuple, ch: str) -> tuple | None:
        syntax, count, node = state
        nxt = SYNTAX.step(syntax, ch)
        if nxt is None or not self._fits(nxt, count + 1):
            return None
        if node >= 0:
            node = self.trie.children[node].get(ch, -1)
        return (nxt, min(count + 1, self._cap), node)

    def allowed(self, state: tuple) -> CharSet:
        syntax, count, _ = state
        chars = self._allowed(syntax)
        if self.high is None or not chars:
            return chars
        # every non-ASCII character leads to the same kind of state (an atom, a class member, a range's end)
        ascii_ok = [chr(c) for lo, hi in chars.intervals if lo < 128 for c in range(lo, min(hi, 127) + 1)
                    if self._fits(SYNTAX.step(syntax, chr(c)), count + 1)]  # type: ignore[arg-type]  # fmt: skip
        out = CharSet.of(ascii_ok)
        rest = chars - CharSet([(0, 127)])
        if rest and self._fits(SYNTAX.step(syntax, chr(rest.intervals[0][0])), count + 1):  # type: ignore[arg-type]
            out = out | rest
        return out if out else EMPTY

    def charset_key(self, state: tuple) -> Hashable:
        return state[0] if self.high is None else (state[0], state[1])

    def accepting(self, state: tuple) -> bool:
        syntax, count, node = state
        return count >= self.low and (node < 0 or not self.trie.terminal[node]) and SYNTAX.accepting(syntax)

    def value_ident(self) -> Hashable:
        return ("ecma-regex", self.low, self.high, tuple(self.trie.choices))

    def free(self, state: tuple) -> FreeContent | None:
        """Runs of characters after which the state does not depend on which ones were read: plain pattern
        characters (not digits right after ``\\0`` or a back-reference, which they would extend) leave the
        state "after an atom". Inside a class and a group name the state remembers the last character (a
        range's lower end) or the name (duplicates, references); there the run ends in a stand-in that
        accepts a subset (FreeRun's contract): a ``-`` after a run may only be literal (``]`` next), a
        ``>`` after a run of name characters is refused, so such tokens are left out, not wrongly let in
        (with ``maxLength`` the name stand-in could not be measured: no run there)."""
        syntax, count, node = state
        if node >= 0:
            return None
        mode, aux, stack, groups = syntax[:4]
        tail = syntax[2:]
        if mode in SEQUENCE:
            if mode == PAREN:
                tail = ((*stack, True), groups + 1, *syntax[4:])
            chars = _FREE_PLAIN - DIGITS if mode in (ATOM_NUL, BACKREF) else _FREE_PLAIN
            target = (ATOM, None, *tail)
        elif mode in (CLS_START, CLS, CLS_NUL):
            chars = _FREE_CLASS - DIGITS if mode == CLS_NUL else _FREE_CLASS
            chars = chars - CharSet.of("^") if mode == CLS_START else chars
            target = (CLS, "e", *tail)
        elif mode in (GLT, GNAME) and self.high is None:
            chars, target = (NAME_START if mode == GLT else NAME_PART), (GNAME, None, *tail)
        elif mode == KNAME and self.high is None:
            chars, target = (NAME_START if aux == "" else NAME_PART), (KNAME, None, *tail)
        else:
            return None
        limit = None
        if self.high is not None:
            limit = self.high - count - completion_cost(target, self._costs)
            if limit <= 0:
                return None
        cap = self._cap

        def after(n: int) -> tuple:
            return state if n == 0 else (target, min(count + n, cap), -1)

        return chars, limit, after


__all__ = ["RegexSyntaxContent", "completion", "completion_cost"]
