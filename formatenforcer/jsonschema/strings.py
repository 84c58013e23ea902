"""The JSON string parser: quotes, every escape (``\\uXXXX`` and surrogate pairs), no raw control characters.

Decoded characters go to a content automaton (formats/content.py), so ``"\\u0041"`` and ``"A"`` are the same string to
``pattern``, ``enum`` or ``maxLength``. An escape is allowed only when the character it can still produce is
one the content allows: hex digits are narrowed digit by digit to the allowed code-point ranges, and a high
surrogate only when a matching supplementary character is allowed, so no escape can lead to a dead end.

Inside the body, when the content loops over every string character, ``free_run`` hands the enforcer the
shared ``JSON_STRING_CHARS`` table, so most steps inside long strings never walk the vocabulary trie.
"""

from __future__ import annotations

from collections.abc import Hashable

from ..core.cache_release import register_memo
from ..core.charset import ANY, EMPTY, CharSet
from ..core.hooks import FreeRun, LexemeTables
from ..core.protocol import CharacterParser, MemoAllowed
from .formats.content import JSON_STRING_CHARS, Content

OPEN, BODY, ESCAPE, HEX, LOW_BACKSLASH, LOW_U, LOW_HEX, DONE = range(8)
SIMPLE_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
"""The escapes that stand for one character: letter -> the character."""
_HEX_DIGITS = "0123456789abcdefABCDEF"
_QUOTE = CharSet.of('"')
_BACKSLASH = CharSet.of("\\")
_U = CharSet.of("u")
_BODY_EXTRA = CharSet.of('"\\')
_BODY_SETS: dict[tuple[CharSet, bool, CharSet], CharSet] = {}
register_memo(_BODY_SETS.clear)  # emptied when a burst of enforcers ends (core/cache_release.py)
"""(decoded characters allowed, may close, escapable) -> the raw body characters: contents built per schema
position (a key's next letters) ask for the same few sets, each three set operations to build."""
_ESCAPE_SETS: dict[tuple, CharSet] = {}
register_memo(_ESCAPE_SETS.clear)
"""(phase, escape progress, decoded characters allowed, escapable) -> the characters allowed in the escape."""
NON_ASCII_ESCAPES = ANY - CharSet([(0x20, 0x7E)])
"""What ``\\uXXXX`` may spell by default: everything but printable ASCII (see JsonConfig.ascii_escapes)."""


def _unit_allowed(allowed: CharSet, lo: int, hi: int) -> bool:
    """Whether a first UTF-16 code unit in [lo, hi] can still decode to an allowed character."""
    if allowed.intersects_interval(lo, hi):
        return True
    hs_lo, hs_hi = max(lo, 0xD800), min(hi, 0xDBFF)
    if hs_lo > hs_hi:
        return False
    return allowed.intersects_interval(0x10000 + (hs_lo - 0xD800) * 0x400, 0x10000 + (hs_hi - 0xD800) * 0x400 + 0x3FF)


def _low_allowed(allowed: CharSet, high: int, lo: int, hi: int) -> bool:
    lo, hi = max(lo, 0xDC00), min(hi, 0xDFFF)
    if lo > hi:
        return False
    base = 0x10000 + (high - 0xD800) * 0x400 - 0xDC00
    return allowed.intersects_interval(base + lo, base + hi)


def body_characters(decodable: CharSet, accepting: bool, escapable: CharSet) -> CharSet:
    """The raw characters allowed in a string's body when the content allows ``decodable`` next and may
    close (``accepting``): those characters as themselves, the closing quote, and the backslash when some
    escape can spell an allowed character."""
    ident = (decodable, accepting, escapable)
    out = _BODY_SETS.get(ident)
    if out is None:
        out = decodable & JSON_STRING_CHARS
        if accepting:
            out = out | _QUOTE
        if decodable & escapable or any(d in decodable for d in SIMPLE_ESCAPES.values()):
            out = out | _BACKSLASH
        if len(_BODY_SETS) >= 4096:
            _BODY_SETS.clear()  # rare: rebuilt on demand
        _BODY_SETS[ident] = out
    return out


def escape_characters(decodable: CharSet, escapable: CharSet) -> CharSet:
    """The characters allowed right after a backslash when the content allows ``decodable`` next: the simple
    escapes that spell an allowed character, and ``u`` when some allowed character may be escaped."""
    out = [c for c, decoded in SIMPLE_ESCAPES.items() if decoded in decodable]
    return CharSet.of(out + (["u"] if decodable & escapable else []))


class StringParser(MemoAllowed):
    """One JSON string whose decoded characters obey ``content``."""

    __slots__ = ("_content", "_phase", "_state", "_aux", "_allowed", "_key", "_escapable")
    SCALAR_LEXEME = True

    def __init__(self, content: Content, phase: int = OPEN, state: Hashable = None, aux: Hashable = None,
                 escapable: CharSet = ANY) -> None:  # fmt: skip
        self._content = content
        self._escapable = escapable
        self._phase = phase
        self._state = content.start() if state is None else state
        self._aux = aux
        self._allowed: CharSet | None = None
        self._key: Hashable | None = None

    @property
    def content_state(self) -> Hashable:
        return self._state

    def _with(self, phase: int, state: Hashable, aux: Hashable = None) -> StringParser:
        return StringParser(self._content, phase, state, aux, self._escapable)

    def _decoded(self, ch: str) -> StringParser | None:
        nxt = self._content.step(self._state, ch)
        return None if nxt is None else self._with(BODY, nxt)

    def plain_body(self, text: str) -> bool:
        """Whether this string is in its body and ``text`` holds only characters that are read there one
        by one through the content (no quote, backslash or control character): ``add_text`` then steps the
        content alone."""
        return self._phase == BODY and '"' not in text and "\\" not in text and (not text or min(text) >= " ")

    def add_text(self, text: str) -> StringParser | None:  # type: ignore[override]
        # the fold of add_character, without a state per character where the text is plain body text
        if not self.plain_body(text):
            return super().add_text(text)  # type: ignore[return-value]
        return self.add_body_text(text)

    def add_body_text(self, text: str) -> StringParser | None:
        """``add_text`` of a text ``plain_body`` admits (not checked again): the content alone steps it."""
        if not text:
            return self
        state = self._content.step_text(self._state, text)
        return None if state is None else self._with(BODY, state)

    def add_character(self, ch: str) -> StringParser | None:
        phase = self._phase
        if phase == BODY:
            if ch == '"':
                return self._with(DONE, self._state) if self._content.accepting(self._state) else None
            if ch == "\\":
                return self._with(ESCAPE, self._state) if _BACKSLASH & self.allowed_characters() else None
            if ch not in JSON_STRING_CHARS:
                return None
            return self._decoded(ch)
        if phase == OPEN:
            return self._with(BODY, self._state) if ch == '"' else None
        if ch not in self.allowed_characters():
            return None
        if phase == ESCAPE:
            if ch == "u":
                return self._with(HEX, self._state, (0, 0))
            return self._decoded(SIMPLE_ESCAPES[ch])
        if phase == HEX:
            value, count = self._aux
            value = value * 16 + int(ch, 16)
            if count < 3:
                return self._with(HEX, self._state, (value, count + 1))
            if 0xD800 <= value <= 0xDBFF:
                return self._with(LOW_BACKSLASH, self._state, value)
            return self._decoded(chr(value))
        if phase == LOW_BACKSLASH:
            return self._with(LOW_U, self._state, self._aux)
        if phase == LOW_U:
            return self._with(LOW_HEX, self._state, (self._aux, 0, 0))
        if phase == LOW_HEX:
            high, value, count = self._aux
            value = value * 16 + int(ch, 16)
            if count < 3:
                return self._with(LOW_HEX, self._state, (high, value, count + 1))
            return self._decoded(chr(0x10000 + (high - 0xD800) * 0x400 + (value - 0xDC00)))
        return None

    def _compute_allowed(self) -> CharSet:
        phase, content = self._phase, self._content
        if phase == OPEN:
            return _QUOTE
        if phase == DONE:
            return EMPTY
        if phase == BODY:
            return content.body_charset(self._state, self._body_charset)
        if phase == LOW_BACKSLASH:
            return _BACKSLASH
        if phase == LOW_U:
            return _U
        return content.body_charset(self._state, self._escape_charset, (phase, self._aux, self._escapable))

    def _escape_charset(self) -> CharSet:
        """The characters allowed inside an escape (after the backslash, or a ``\\u`` hex digit), memoised by
        what they depend on: every schema's keys ask for the same few (the content's own memo is per
        content, and the hex digits' cost sixteen interval tests each)."""
        decodable = self._content.allowed(self._state)
        ident = (self._phase, self._aux, decodable, self._escapable)
        hit = _ESCAPE_SETS.get(ident)
        if hit is None:
            if len(_ESCAPE_SETS) >= 4096:
                _ESCAPE_SETS.clear()  # rare: rebuilt on demand
            hit = _ESCAPE_SETS[ident] = self._escape_set(decodable)
        return hit

    def _escape_set(self, decodable: CharSet) -> CharSet:
        """``_escape_charset``, computed: ``decodable`` the decoded characters the content allows next."""
        phase = self._phase
        if phase == ESCAPE:
            return escape_characters(decodable, self._escapable)
        decodable = decodable & self._escapable
        if phase == HEX:
            value, count = self._aux
            width = 16 ** (3 - count)
            ok = []
            for c in _HEX_DIGITS:
                lo = (value * 16 + int(c, 16)) * width
                if _unit_allowed(decodable, lo, lo + width - 1):
                    ok.append(c)
            return CharSet.of(ok)
        high, value, count = self._aux
        width = 16 ** (3 - count)
        ok = []
        for c in _HEX_DIGITS:
            lo = (value * 16 + int(c, 16)) * width
            if _low_allowed(decodable, high, lo, lo + width - 1):
                ok.append(c)
        return CharSet.of(ok)

    def _body_charset(self) -> CharSet:
        content = self._content
        return body_characters(content.allowed(self._state), content.accepting(self._state), self._escapable)

    def can_end(self) -> bool:
        return self._phase == DONE

    def key(self) -> Hashable:
        if self._key is None:
            self._key = ("str", self._content.ident(), self._phase, self._state, self._aux, self._escapable is ANY)
        return self._key

    def lexeme_key(self, horizon: int) -> Hashable:
        if self._phase == BODY:
            far = self._content.far_state(self._state, horizon)
            if far is not None:
                return ("str", self._content.ident(), BODY, far, self._aux, self._escapable is ANY)
        return self.key()

    def first_char_split(self) -> tuple[CharacterParser, bytes] | None:
        if self._phase != BODY:
            return None
        split = self._content.first_char_split(self._state)
        if split is None:
            return None
        twin_state, exceptions = split
        # a quote closes and a backslash escapes (the escaped character may be an exception): both stay here
        return self._with(BODY, twin_state), exceptions + b'"\\'

    def shared_lexeme_key(self, horizon: int) -> Hashable | None:
        ident = self._content.value_ident()
        if ident is None:
            ident = self._content.state_ident(self._state) if self._phase == BODY else None
            return None if ident is None else ("str", ident, BODY, None, self._aux, self._escapable is ANY)
        state = self._state
        if self._phase == BODY:
            state = self._content.far_state(state, horizon) or state
        return ("str", ident, self._phase, state, self._aux, self._escapable is ANY)

    def lexeme_tables(self) -> tuple[LexemeTables, int] | None:
        if self._phase != BODY:
            return None
        built = self._content.string_tables(self._escapable)
        if built is None:
            return None
        tables, index = built
        number = index.get(self._state)
        return None if number is None else (tables, number)

    def lexeme_automaton(self) -> tuple[Hashable, frozenset[int]] | None:
        points = self._content.class_points()
        ident = self._content.value_ident()
        if points is None or ident is None or self._phase in (HEX, LOW_BACKSLASH, LOW_U, LOW_HEX):
            return None  # inside an escape's hex digits: thousands of states, walked by Python from there
        return ("str", ident, self._phase, self._state, self._aux, self._escapable is ANY), points

    def free_run(self) -> FreeRun | None:
        if self._phase != BODY:
            return None
        free = self._content.free(self._state)
        if free is None:
            return None
        chars, room, after = free
        content = self._content
        escapable = self._escapable
        return FreeRun(chars, room, lambda n: StringParser(content, BODY, after(n), None, escapable))

    def __repr__(self) -> str:
        return f"StringParser(phase={self._phase}, state={self._state!r})"
