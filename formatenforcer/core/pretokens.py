"""Pre-token boundaries: where a tokenizer's pre-tokenizer cuts text, as proof that no token spans a point.

A byte-level BPE tokenizer (GPT-2, Llama 3, Qwen, SmolLM2) first splits text into pre-tokens with a regular
expression (letters, a digit group, a punctuation run, whitespace) and then merges bytes inside each piece
only: no token of its output crosses a cut. Jump-forward uses that to hold back fewer tokens (forced.py): a
vocabulary token starting inside the forced text and reaching past its end can only be written if no cut
falls inside it, and ``{"`` followed by a letter is always cut as ``{"`` | ``w...``, so Llama 3's ``"w``
cannot replace the forced ``{"`` there.

Where a cut falls between the forced text and what follows depends on what follows. The split patterns of
these tokenizers decide a cut from the text before it and at most one character after it (greedy runs of a
character class, and a one-character lookahead ``\\s+(?!\\S)``), and a pattern match never looks behind its
start. So the cuts up to the end of the forced text are those of the text from the start of the piece that
before the one holding the token's first character, followed by the continuation's first character: ``boundary_within``
checks them with that character followed by a few probes of the next one (end of text, a letter, a digit, a
space, a newline, punctuation), and answers yes only if every probe has a cut there. Answers are cached.

Only tokenizers whose pieces map one to one onto the text are used: a Hugging Face fast tokenizer with a
pre-tokenizer and no normalizer. Added tokens are matched before pre-tokenization and may span cuts, so a
text holding one, or a token that could be one, is never ruled out.
"""

from __future__ import annotations

from typing import Any

_PROBES = ("", "a", "0", " ", "\n", ".")
_CACHE_LIMIT = 1 << 16


class PreTokens:
    """The cut points of one tokenizer's pre-tokenizer (``of(tokenizer)`` builds it, None where unusable)."""

    __slots__ = ("_split", "added", "_cache")

    def __init__(self, split: Any, added: tuple[bytes, ...]) -> None:
        self._split = split  # ``pre_tokenize_str``: text -> [(piece, (start, end))], offsets in characters
        self.added = added
        """The texts of the tokenizer's added tokens (UTF-8), which the pre-tokenizer never sees."""
        self._cache: dict[tuple[str, int, int, str], bool] = {}

    def cuts(self, text: str) -> list[int]:
        """Character offsets where a piece starts (0 excluded)."""
        return [start for _, (start, _end) in self._split(text) if start > 0]

    def holds_added(self, data: bytes) -> bool:
        return any(added in data for added in self.added)

    def boundary_within(self, text: str, first: int, last: int, following: str) -> bool:
        """Whether, whatever comes after ``text + following``, a cut falls at a character offset p with
        ``first < p <= last`` (offsets into ``text``; ``text`` starts at a piece start; ``following`` is
        one character)."""
        key = (text, first, last, following)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        answer = True
        for probe in _PROBES:
            if not any(first < p <= last for p in self.cuts(text + following + probe)):
                answer = False
                break
        if len(self._cache) >= _CACHE_LIMIT:
            self._cache.clear()
        self._cache[key] = answer
        return answer

    @staticmethod
    def safe_start(cuts: list[int], offset: int) -> int:
        """A piece start at or before character ``offset`` of a text cut at ``cuts`` that no continuation of
        the text moves:
        the start of the piece before the one holding ``offset`` (a cut's place may depend on the character
        after it, which for the last piece may be past the end of ``text``)."""
        starts = [0] + [cut for cut in cuts if cut <= offset]
        return starts[-2] if len(starts) >= 2 else 0


def of(tokenizer: Any) -> PreTokens | None:
    """The pre-token cuts of a Hugging Face fast tokenizer, or None when they cannot be read exactly (a slow
    tokenizer, no pre-tokenizer, or a normalizer that changes the text before it is split)."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None or backend.normalizer is not None or backend.pre_tokenizer is None:
        return None
    try:
        added = tuple(token.content.encode("utf-8") for token in backend.get_added_tokens_decoder().values())
    except Exception:  # noqa: BLE001 - an old tokenizers release: no proof, no relaxation
        return None
    pre_tokenizer = backend.pre_tokenizer
    return PreTokens(pre_tokenizer.pre_tokenize_str, tuple(a for a in added if a))
