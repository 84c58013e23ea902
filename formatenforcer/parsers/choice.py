"""One of a list of literal strings, as a character trie shared by every state.

A state is a node of the trie of choices: one integer. Unicode is handled per character, so choices with
emoji or accented letters work like any other (the enforcer splits characters into bytes where tokens do).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable

from ..core.cache_release import register_memo
from ..core.charset import CharSet
from ..core.errors import FormatError
from ..core.protocol import CharacterParser


class CharTrie:
    """A character trie of strings, read-only once built: node 0 is the root, ``children[node]`` maps a
    character to a node, ``terminal[node]`` says a string ends there, ``charsets[node]`` is the CharSet of
    the characters leaving it. Shared by ChoiceParser and the JSON parsers (enums, property names)."""

    __slots__ = ("children", "terminal", "charsets", "choices")

    def __init__(self, words: Iterable[str]) -> None:
        self.choices = list(words)
        self.children: list[dict[str, int]] = [{}]
        self.terminal: list[bool] = [False]
        for text in self.choices:
            node = 0
            for ch in text:
                nxt = self.children[node].get(ch)
                if nxt is None:
                    nxt = len(self.children)
                    self.children[node][ch] = nxt
                    self.children.append({})
                    self.terminal.append(False)
                node = nxt
            self.terminal[node] = True
        self.charsets = _LazyCharsets(self.children)


class _LazyCharsets:
    """``charsets[node]`` built on first use: a schema's tries are built when it is compiled, but most of
    their nodes are never reached, and the time to first mask should not pay for them."""

    __slots__ = ("_children", "_built")

    def __init__(self, children: list[dict[str, int]]) -> None:
        self._children = children
        self._built: dict[int, CharSet] = {}

    def __getitem__(self, node: int) -> CharSet:
        hit = self._built.get(node)
        if hit is None:
            edges = self._children[node]
            hit = self._built[node] = _charset_of("".join(sorted(edges)))
        return hit

    def __len__(self) -> int:
        return len(self._children)


_MEMO: dict[str, CharSet] = {}
register_memo(_MEMO.clear)  # emptied when a burst of enforcers ends (core/cache_release.py)


def _charset_of(chars: str) -> CharSet:
    """CharSet.of, memoised by the characters (nodes of names and enums repeat the same few sets)."""
    hit = _MEMO.get(chars)
    if hit is None:
        if len(_MEMO) > 4096:
            _MEMO.clear()
        hit = _MEMO[chars] = CharSet.of(chars)
    return hit


class ChoiceParser(CharacterParser):
    """Accepts exactly one of ``choices`` (a prefix of a longer choice may still end if it is a choice)."""

    __slots__ = ("_trie", "_node")

    def __init__(self, choices: Iterable[str] | CharTrie, _node: int = 0) -> None:
        if isinstance(choices, CharTrie):
            self._trie = choices
        else:
            if isinstance(choices, str):
                raise FormatError("ChoiceParser takes a list of strings, not a single string")
            if not isinstance(choices, Iterable):
                raise TypeError(f"ChoiceParser takes an iterable of strings, not {type(choices).__name__}")
            listed = list(choices)
            if not listed:
                raise FormatError("ChoiceParser needs at least one choice")
            for i, choice in enumerate(listed):
                if not isinstance(choice, str):
                    raise FormatError(f"choice #{i} is {type(choice).__name__}, not a string: {choice!r}")
            self._trie = CharTrie(listed)
        self._node = _node

    def add_character(self, ch: str) -> ChoiceParser | None:
        nxt = self._trie.children[self._node].get(ch)
        return None if nxt is None else ChoiceParser(self._trie, nxt)

    def allowed_characters(self) -> CharSet:
        return self._trie.charsets[self._node]

    def can_end(self) -> bool:
        return self._trie.terminal[self._node]

    def key(self) -> Hashable:
        return ("choice", id(self._trie), self._node)

    def __repr__(self) -> str:
        return f"ChoiceParser({self._trie.choices!r}, node={self._node})"
