"""The decoded characters of an object key: the trie of the named keys still available, united with the
automaton of extra keys, refusing any prefix from which the key could no longer close (``_live``).

Split from objects.py, which builds one ``KeyContent`` per (available names, extras open, extra keys seen)
and reads ``ctx`` (an ``ObjectContext``) for the names' trie, their masks and whether extra texts are kept.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Hashable
from typing import TYPE_CHECKING

import numpy as np

from ..core.charset import EMPTY, CharSet
from .formats.content import Content, FreeContent, LengthContent
from .string_tables import ContentDfa, class_edges, string_tables

if TYPE_CHECKING:
    from .objects import ObjectContext


class PartialText:
    """The text of an extra key read partly in a free run (see KeyContent.free): ``head``, then ``gap``
    characters the run does not name, then ``tail``. Equal stand-ins are equal (they are in state keys)."""

    __slots__ = ("head", "gap", "tail")

    def __init__(self, head: str, gap: int, tail: str = "") -> None:
        self.head, self.gap, self.tail = head, gap, tail

    def __add__(self, ch: str) -> PartialText:
        return PartialText(self.head, self.gap, self.tail + ch)

    def widened(self, n: int) -> PartialText:
        """After ``n`` more unnamed characters (the known tail joins the gap)."""
        return PartialText(self.head, self.gap + len(self.tail) + n)

    def may_equal(self, text: str) -> bool:
        """Whether some filling of the gap spells ``text``."""
        head, tail = self.head, self.tail
        return len(text) == len(head) + self.gap + len(tail) and text.startswith(head) and text.endswith(tail)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PartialText):
            return False
        return (self.head, self.gap, self.tail) == (other.head, other.gap, other.tail)

    def __hash__(self) -> int:
        return hash(("partial", self.head, self.gap, self.tail))

    def __repr__(self) -> str:
        return f"<key text {self.head!r} + {self.gap} + {self.tail!r}>"


class _UnknownText:
    """The key text of a free-run stand-in that cannot close the key (see KeyContent.free)."""

    __slots__ = ()

    def __add__(self, ch: str) -> _UnknownText:
        return self

    def __repr__(self) -> str:
        return "<unknown key text>"


_UNKNOWN_TEXT = _UnknownText()


class KeyContent(Content):
    """Decoded characters of a key: the trie of available named keys united with the extra-key automaton.
    State: (trie node or -1, extra-automaton state or None, text so far when an extra key's text is kept)."""

    __slots__ = ("ctx", "available", "extras", "seen_extras", "shared", "_live_memo", "_tables")

    def __init__(
        self,
        ctx: ObjectContext,
        available: int,
        extras: Content | None,
        seen_extras: frozenset | int,
        shared: bool = False,
    ) -> None:
        self.ctx, self.available, self.extras, self.seen_extras = ctx, available, extras, seen_extras
        self.shared = shared
        self._live_memo: dict[tuple, bool] = {}
        self._tables: dict[CharSet, tuple | None] = {}

    def ident(self) -> Hashable:
        return (id(self.ctx), self.available, self.extras is not None, self.seen_extras, self.shared)

    def start(self) -> tuple:
        keep = self.extras is not None and self.ctx.track_extra_text
        return (0, None if self.extras is None else self.extras.start(), "" if keep else None)

    def step(self, state: tuple, ch: str) -> tuple | None:
        node, extra, text = state
        trie = self.ctx.trie
        node = trie.children[node].get(ch, -1) if node >= 0 else -1
        if extra is not None:
            extra = self.extras.step(extra, ch)
        if extra is None and (node < 0 or not self.ctx.subtree[node] & self.available):
            return None
        if text is not None:
            text = text + ch
        state = (node, extra, text)
        return state if extra is None or self._live(state) else None

    def allowed(self, state: tuple) -> CharSet:
        node, extra, _ = state
        out = EMPTY
        if node >= 0:
            trie, subtree = self.ctx.trie, self.ctx.subtree
            ok = [ch for ch, child in trie.children[node].items() if subtree[child] & self.available]
            out = CharSet.of(ok) if ok else EMPTY
        if extra is not None:
            out = out | self.extras.allowed(extra)
            dead = [ch for ch in self._on_excluded(state) if ch in out and self.step(state, ch) is None]
            if dead:
                out = out - CharSet.of(dead)
        return out

    def string_tables(self, escapable: CharSet) -> tuple | None:
        hit = self._tables.get(escapable, False)
        if hit is False:
            dfa = self._dfa()
            hit = self._tables[escapable] = None if dfa is None else string_tables(self, dfa, escapable)
        return hit

    def _dfa(self) -> ContentDfa | None:
        """This key's automaton as arrays (see string_tables.py), read off the trie of names, when any other
        text is an extra key whose text is not kept (the shared automaton of an open object: built once per
        object, and its walks from the start are the costly ones, over every token that may begin a key).
        Other keys (names only, an extra-key pattern, texts kept) are explored or walked, which for a few
        names costs less than building their tables."""
        if not self._any_text():
            return None
        children = self.ctx.trie.children
        chars = {ch for edges in children for ch in edges}
        edges = class_edges({p for ch in chars for p in (ord(ch), ord(ch) + 1)})
        column = {ch: bisect_right(edges, ord(ch)) - 1 for ch in chars}
        nodes = len(children)
        extra = self.extras.start()  # type: ignore[union-attr]
        off = nodes  # off every name: any text goes on as an extra key
        table = np.full((nodes + 1, len(edges) - 1), off, dtype=np.int32)
        for node, edges_out in enumerate(children):
            for ch, child in edges_out.items():
                table[node, column[ch]] = child
        decodable = [self.extras.allowed(extra)] * (nodes + 1)  # type: ignore[union-attr]
        values = [(node, extra, None) for node in range(nodes)] + [(-1, extra, None)]
        accepting = [self.accepting(value) for value in values]
        return ContentDfa(edges, table, accepting, decodable, values)

    def _any_text(self) -> bool:
        """Whether every key text is allowed, as a name or as an extra key whose text is not kept: then a
        text off every name (``_live`` always holds) is followed by the extra-key automaton alone."""
        extras = self.extras
        return (
            isinstance(extras, LengthContent)
            and extras.high is None
            and extras.low == 0
            and not self.ctx.track_extra_text
        )

    def state_ident(self, state: tuple) -> Hashable | None:
        # off every name, an any-text key reads like any plain string: its walks are every schema's
        if state[0] < 0 and state[2] is None and self._any_text():
            return ("key off the names", self.extras.value_ident(), state[1])  # type: ignore[union-attr]
        return None

    def _on_excluded(self, state: tuple) -> set[str]:
        """The next characters that keep the text a prefix of a text the extra-key automaton may not close
        on: a property name (never an extra key) or an extra key already seen (when texts are kept)."""
        node, _, text = state
        out = set(self.ctx.trie.children[node]) if node >= 0 else set()
        if isinstance(text, str) and isinstance(self.seen_extras, frozenset):
            out.update(
                seen[len(text)]
                for seen in self.seen_extras
                if isinstance(seen, str) and len(seen) > len(text) and seen.startswith(text)
            )
        return out

    def _live(self, state: tuple) -> bool:
        """Whether the key can still close from ``state``. The extra-key automaton alone always can (its
        dead states are pruned); what can strand it is that every way on spells a name that is unavailable
        here, or an extra key already seen (``{"ab": 1, "a`` when only "ab" is allowed). Those texts are
        finitely many, so this follows only the characters that stay on them (memoised per state)."""
        node, extra, text = state
        seen = self.seen_extras
        if node < 0 and not (isinstance(text, str) and isinstance(seen, frozenset) and seen):
            return True  # off every name, no seen key to avoid: the extra-key automaton can finish
        hit = self._live_memo.get(state)
        if hit is not None:
            return hit
        if isinstance(text, (PartialText, _UnknownText)) or self.accepting(state):
            live = True
        elif node >= 0 and self.ctx.subtree[node] & self.available:
            live = True
        else:
            following = self._on_excluded(state)
            chars = self.extras.allowed(extra)
            if chars - CharSet.of(following) if following else chars:
                live = True  # a character that leaves every excluded text: the extra key can finish
            else:
                live = any(ch in chars and self.step(state, ch) is not None for ch in following)
        self._live_memo[state] = live
        return live

    def first_char_split(self, state: tuple) -> tuple[tuple, bytes] | None:
        """In the shared automaton of an open object, a character off the trie of names leads to the
        off-trie state whatever name was being followed: that state is the twin, and the lead bytes of the
        trie's characters here are the exceptions. A lead byte is shared by many characters (``标`` leads
        with E6 like most of a thousand CJK characters): they are walked from the real state, correct and
        only slower, and every character with another lead byte is off the names."""
        node, extra, text = state
        if not self.shared or node < 0 or text is not None:
            return None
        return (-1, extra, None), bytes(sorted({ch.encode("utf-8")[0] for ch in self.ctx.trie.children[node]}))

    def charset_key(self, state: tuple) -> Hashable:
        text = state[2] if self.seen_extras and isinstance(self.seen_extras, frozenset) else None
        return (state[0], state[1], self.accepting(state), text)

    def named(self, state: tuple) -> int | None:
        node = state[0]
        return self.ctx.terminal_of.get(node) if node >= 0 else None

    def accepting(self, state: tuple) -> bool:
        name = self.named(state)
        if name is not None:
            return bool(self.available >> name & 1)
        _, extra, text = state
        if extra is None or not self.extras.accepting(extra):
            return False
        if text is _UNKNOWN_TEXT:
            return False  # a stand-in that does not know what the run read (see free)
        if isinstance(text, PartialText):
            # a free-run stand-in (see free): it closes unless the text might repeat a key already seen
            return not any(isinstance(seen, PartialText) or text.may_equal(seen) for seen in self.seen_extras)
        if text is None or not self.seen_extras:
            return True
        if any(isinstance(seen, PartialText) for seen in self.seen_extras):
            return False  # (a stand-in's later key in the same token: it might repeat the unknown text)
        return text not in self.seen_extras

    def free(self, state: tuple) -> FreeContent | None:
        """A free run once the key has left every named key: from there on only the extra-key automaton's
        state matters, and it promises its own run. Exact when the key's text is not kept. When it is
        (``track_extra_text``, for ``minProperties``), ``after(n)`` is a stand-in whose text has a gap of
        ``n`` unnamed characters (``PartialText``), exact as long as no key already seen extends the text
        read so far (the only thing the text decides then is that it is new); where a key already seen
        might be spelled by the run, or a bounded extra-key automaton might strand the key on texts already
        seen, no run is offered and the key is walked character by character. Where the text chooses the
        value's schema (``patternProperties``), the stand-in does not know the text and refuses to close
        the key: a subset of the real state, as parser.FreeRun allows (a token that closes such a key after
        a run is left out of the mask, though the step takes it; walking those keys exactly costs 25 times
        more per mask)."""
        node, extra, text = state
        if node >= 0 or extra is None:
            return None
        inner = self.extras.free(extra)
        if inner is None:
            return None
        chars, room, after = inner
        if text is None:
            return chars, room, lambda n: (-1, after(n), None)
        if text is not _UNKNOWN_TEXT and ((room is not None and self.seen_extras) or self._may_repeat(text)):
            return None  # (for patterned keys too: a run must never spell a key already seen)
        if not self.ctx.plain_extras:
            return chars, room, lambda n: (-1, after(n), _UNKNOWN_TEXT) if n else state
        if isinstance(text, PartialText):
            return chars, room, lambda n: (-1, after(n), text.widened(n)) if n else state
        return chars, room, lambda n: (-1, after(n), PartialText(text, n)) if n else state

    def exact_free(self, state: tuple) -> bool:
        """Whether ``free(state)``, where it offers a run, leads to the state its characters do (the key's
        text is not kept) rather than to a stand-in that does not know them (``PartialText``,
        ``_UNKNOWN_TEXT``)."""
        return state[2] is None

    def _may_repeat(self, text: str | PartialText) -> bool:
        """Whether a key already seen might be ``text`` followed by more characters."""
        head, known = (
            (text, len(text)) if isinstance(text, str) else (text.head, len(text.head) + text.gap + len(text.tail))
        )
        for seen in self.seen_extras:  # type: ignore[union-attr]
            if not isinstance(seen, str) or (len(seen) > known and seen.startswith(head)):
                return True
        return False


__all__ = ["KeyContent"]
