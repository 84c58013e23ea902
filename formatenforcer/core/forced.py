"""Jump-forward: the text a format fixes from the current position, and the tokens to append for it.

**Forced text.** From a parser state that cannot end and allows exactly one character, every valid
continuation starts with that character (``allowed_characters`` is exact, and every allowed character has a
completion: the no-dead-end guarantee). Stepping while that holds gives the longest text every continuation
starts with. A state that may end allows end-of-sequence besides, so nothing is forced there; a state with
two allowed characters forces nothing either, since both have completions. The text is cached per state key.

**Forced tokens.** The tokens are those the model's own tokenizer would write for that text *in context*:

1. Canonical: ``vocabulary.tokenize`` (the tokenizer the vocabulary was built from; a ``from_tokens``
   vocabulary has no tokenizer and falls back to a greedy longest match over the trie) encodes the last
   generated tokens' text (a lookback window) followed by the forced text.
2. Lookback (the start of the forced run): that encoding must end the generated text exactly on a token
   boundary, and its last ``LOOKBACK`` tokens before that boundary must be the generated ones, or else the
   tokens before it must all be the tokenizer's encoding of the generated text alone.
   Otherwise the previous token would merge with the forced text (``"`` then ``name`` where the tokenizer
   writes ``"name``): nothing is forced there, and the model writes the next token itself. Where the model
   wrote its text in other tokens than its tokenizer would (``",`` then ``"`` for ``","``), the forced
   tokens are still what the tokenizer writes after that text, and are forced.
3. Hold-back (the end of the forced run): the last token is dropped while some vocabulary token starting
   where it starts is a proper extension beyond the forced text that the format allows (the model may want
   ``": "`` where the forced text ends at ``":``), repeated on the token before it. A longer token is not
   counted where the tokenizer's pre-tokenizer cuts the text inside it for every continuation starting
   with the character it reaches past the end (pretokens.py): Llama 3 writes ``{"`` | ``w`` for any
   letter, so its ``"w`` never replaces a forced ``{"`` before a key.

What is left is checked against the matcher (``validate_tokens``), so a forced run is always accepted.
docs/jump-forward.md gives the measured effect of these rules.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from .protocol import CharacterParser
from .trie import IDS, Trie, longest_match
from .walk import advance

if TYPE_CHECKING:
    from .matcher import Matcher
    from .pretokens import PreTokens
    from .vocabulary import Vocabulary

MAX_FORCED_CHARACTERS = 4096
"""The longest forced text computed at once (a guard against a parser that breaks the no-dead-end promise
by looping on one forced character forever; a longer fixed text is forced in several steps)."""
LOOKBACK = 1
"""Generated tokens that the retokenization must leave unchanged before a forced run (see module doc)."""
CONTEXT = 8
"""Generated tokens encoded before the lookback ones, so the window's own start (a SentencePiece dummy
prefix, a digit group cut in the middle) is far from the tokens compared."""
_CACHE_LIMIT = 1 << 16
_EXTENSION_BUDGET = 4096
"""Trie nodes visited at most when looking for an allowed token extending past the forced text; beyond it
the token is held back (the safe answer)."""


def forced_text_of(state: CharacterParser, cache: dict | None = None) -> str:
    """The longest text every valid continuation of ``state`` starts with (empty where ``state`` may end)."""
    key = state.key() if cache is not None else None
    if cache is not None:
        hit = cache.get(key)
        if hit is not None:
            return hit
    chars: list[str] = []
    current: CharacterParser | None = state
    while current is not None and len(chars) < MAX_FORCED_CHARACTERS and not current.can_end():
        intervals = current.allowed_characters().intervals
        if len(intervals) != 1 or intervals[0][0] != intervals[0][1]:
            break
        ch = chr(intervals[0][0])
        current = current.add_character(ch)
        if current is not None:
            chars.append(ch)
    text = "".join(chars)
    if cache is not None:
        if len(cache) >= _CACHE_LIMIT:
            cache.clear()
        cache[key] = text
    return text


def greedy_tokenize(vocabulary: Vocabulary, text: str) -> list[int]:
    """Longest match over the vocabulary trie, left to right (``trie.longest_match``): the tokenization used
    when the vocabulary has no tokenizer (``Vocabulary.from_tokens``). It is what a BPE tokenizer writes for
    most structural text, but not always; give such a vocabulary an ``encode`` function when the model's
    tokenizer is at hand. Empty when some byte starts no token."""
    return longest_match(vocabulary.trie, text.encode("utf-8"))


def forced_tokens_of(matcher: Matcher, lookback: int = LOOKBACK) -> list[int]:
    """The token ids to append now for ``matcher``'s forced text (see module doc); empty when nothing is
    forced or the rules hold everything back."""
    position = matcher.position
    if position.finished or position.pending:
        return []
    text = matcher.forced_text()
    if not text:
        return []
    vocabulary = matcher.enforcer.vocabulary
    history = matcher.generated_tokens
    forced_bytes = text.encode("utf-8")
    window, window_text = _window(vocabulary, history, lookback + CONTEXT)
    if window_text is None:
        return []
    encoded = vocabulary.tokenize(window_text + text)
    boundary = _boundary_from_end(vocabulary, encoded, len(forced_bytes), not history and position.at_start)
    if boundary is None:
        return []
    compared = min(lookback, len(window))
    if compared and list(encoded[boundary - compared : boundary]) != list(window[len(window) - compared :]):
        # The generated tokens differ from the tokenizer's encoding of text + forced text. Either the forced
        # text changes how the text before it is written (nothing is forced), or the model itself wrote that
        # text in other tokens than its tokenizer would (``",`` then ``"``): the forced tokens are then still
        # exactly what the tokenizer writes after that text if they leave its whole encoding unchanged.
        if list(encoded[:boundary]) != list(vocabulary.tokenize(window_text)):
            return []
    if not history and boundary != 0:
        return []
    candidate = list(encoded[boundary:])
    candidate = _hold_back(
        vocabulary, position.state, text, forced_bytes, candidate, history == [] and position.at_start, window_text
    )
    if candidate and matcher.validate_tokens(candidate) != len(candidate):
        return []
    return candidate


def _window(vocabulary: Vocabulary, history: Sequence[int], count: int) -> tuple[list[int], str | None]:
    """The last ``count`` generated tokens (fewer if a UTF-8 character would be cut: the window then starts
    at the character) and their text; (window, None) when no start within reach decodes."""
    start = max(0, len(history) - count)
    while start >= 0:
        window = list(history[start:])
        data = b"".join(vocabulary.text_of(t) for t in window)
        try:
            return window, data.decode("utf-8")
        except UnicodeDecodeError:
            start -= 1
            if start < max(0, len(history) - count - 4):
                break
    return list(history[-count:]), None


def _boundary_from_end(vocabulary: Vocabulary, encoded: Sequence[int], tail: int, at_start: bool) -> int | None:
    """The index in ``encoded`` where its last ``tail`` bytes start, or None when a token spans that point.
    At the start of a SentencePiece output the first token's leading space is not in the text."""
    covered = 0
    index = len(encoded)
    while covered < tail and index > 0:
        index -= 1
        data = vocabulary.text_of(encoded[index])
        if not data:
            return None  # a special or unknown token in the middle of text
        covered += len(data)
    if covered == tail:
        return index
    if (
        at_start
        and index == 0
        and covered == tail + 1
        and vocabulary.strip_leading_space
        and vocabulary.text_of(encoded[0])[:1] == b" "
    ):
        return 0
    return None


def _hold_back(
    vocabulary: Vocabulary,
    state: CharacterParser,
    text: str,
    forced_bytes: bytes,
    candidate: list[int],
    strips_first: bool,
    context: str = "",
) -> list[int]:
    """Cuts the run before the first token that a vocabulary token allowed by the format could replace by
    starting inside it (or where it starts) and reaching past the end of the forced text, unless the
    tokenizer's pre-token cuts prove it cannot (``_spanning_ruled_out``; ``context``: the generated text
    before the forced text)."""
    if not candidate:
        return candidate
    end_state = state.add_text(text)
    if end_state is None:
        return []
    starts: list[int] = []
    offset = 0
    for index, token in enumerate(candidate):
        data = vocabulary.text_of(token)
        if index == 0 and strips_first and vocabulary.strip_leading_space and data[:1] == b" ":
            data = data[1:]
        starts.append(offset)
        offset += len(data)
    cut_proof = _CutProof.of(vocabulary, context, text, strips_first)
    for offset in range(len(forced_bytes)):
        ruled_out = cut_proof.ruled_out_at(offset, forced_bytes) if cut_proof is not None else None
        extends = _extends(_node_at(vocabulary.trie, forced_bytes[offset:]), end_state, ruled_out)
        if not extends and offset == 0 and strips_first and vocabulary.strip_leading_space:
            # the first token of a SentencePiece output carries the space its decoder drops
            extends = _extends(_node_at(vocabulary.trie, b" " + forced_bytes), end_state)
        if extends:  # keep only the tokens that end at or before ``offset``
            return candidate[: bisect_right(starts, offset) - 1]
    return candidate


class _CutProof:
    """Rules out tokens that would span a pre-token cut (pretokens.py) of ``context + text + next``."""

    __slots__ = ("pre", "full", "context_chars", "cuts")

    def __init__(self, pre: PreTokens, full: str, context_chars: int) -> None:
        self.pre, self.full, self.context_chars = pre, full, context_chars
        self.cuts = pre.cuts(full)

    @staticmethod
    def of(vocabulary: Vocabulary, context: str, text: str, strips_first: bool) -> _CutProof | None:
        pre = vocabulary.pre_tokens
        if pre is None or (strips_first and vocabulary.strip_leading_space):
            return None
        full = context + text
        if pre.holds_added(full.encode("utf-8")):
            return None  # an added token is split off before the pre-tokenizer: its cuts prove nothing there
        return _CutProof(pre, full, len(context))

    def ruled_out_at(self, offset: int, forced_bytes: bytes) -> Callable[[str], bool]:
        """For tokens starting at byte ``offset`` of the forced text: whether every token whose part past the
        end starts with character ``ch`` spans a cut (so the tokenizer never writes it)."""
        pre = self.pre
        char = self.context_chars + len(forced_bytes[:offset].decode("utf-8", errors="ignore"))
        start = pre.safe_start(self.cuts, char)
        piece = self.full[start:]
        head = forced_bytes[offset:]

        def ruled_out(ch: str) -> bool:
            prefix = head + ch.encode("utf-8")
            if any(added.startswith(prefix) for added in pre.added):
                return False  # the token could be an added one, which no cut stops
            return pre.boundary_within(piece, char - start, len(piece), ch)

        return ruled_out


def _node_at(trie: Trie, data: bytes) -> Trie | int | None:
    node: Trie | int | None = trie
    for byte in data:
        if node.__class__ is not dict:
            return None
        node = node.get(byte)  # type: ignore[union-attr]
        if node is None:
            return None
    return node


def _extends(node: Trie | int | None, state: CharacterParser, ruled_out: Callable[[str], bool] | None = None) -> bool:
    """Whether some token below ``node`` (strictly: longer than the node's own path) is accepted from
    ``state`` for the bytes past the node. Depth first, pruned by the format at every byte; a token may end
    inside a character, as the walk allows. ``ruled_out(ch)``: the tokens whose bytes past the node start
    with character ``ch`` cannot be written by the tokenizer (skipped; a token ending inside ``ch`` is not)."""
    if node is None or node.__class__ is not dict:
        return False
    stack: list[tuple[Trie | int, CharacterParser, bytes, int, bytes]] = [
        (child, state, b"", byte, b"")
        for byte, child in node.items()
        if byte != IDS  # type: ignore[union-attr]
    ]
    visited = 0
    while stack:
        visited += 1
        if visited > _EXTENSION_BUDGET:
            return True  # undecided within the budget: hold the token back
        child, current, pending, byte, past = stack.pop()
        moved = advance(current, pending, bytes((byte,)))
        if moved is None:
            continue
        if ruled_out is not None and len(past) < 4:
            past += bytes((byte,))
            if len(past) == _utf8_length(past[0]) and ruled_out(past.decode("utf-8", errors="replace")):
                continue
        if child.__class__ is int or IDS in child:  # type: ignore[operator]
            return True
        after, still = moved
        stack.extend((below, after, still, b, past) for b, below in child.items())  # type: ignore[union-attr]
    return False


def _utf8_length(lead: int) -> int:
    """The length of the UTF-8 sequence a lead byte starts (1 for a stray continuation byte)."""
    return 1 if lead < 0xC0 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
