"""Reasoning mode: free text up to an end marker (``</think>``), then the answer in the format.

Reasoning models (DeepSeek-R1, Qwen3) think in free text before they answer; the format must hold for the
answer only. ``ReasoningParser(answer)`` reads:

    [start marker]  thinking (any text without the end marker)  end marker  [up to max_gap whitespace]  answer

The start marker is optional by default: DeepSeek-R1's template puts ``<think>`` in the prompt, so the output
starts inside the thinking, while Qwen3 writes it itself; ``optional=False`` requires it (``start=None``: no
start marker at all). The end marker is required, and once it is read the state *becomes* the answer's state
(a whitespace gap first: Qwen3 writes ``</think>\\n\\n{...}``), so the answer keeps all its own mask caches.

The mask while thinking costs a copy, not a walk: a thinking state promises a free run (``FreeRun``) over
every character except the end marker's first one (and the next one it waits for), so the enforcer takes the
vocabulary's precomputed row of such tokens and walks only the few tokens holding those characters: a token
that contains the end marker is allowed exactly when what follows the marker in it starts a valid answer.

The marker may be plain text or one token of the vocabulary. A marker the tokenizer declares *special* is
left out of a ``Vocabulary`` (special tokens are never allowed); ``with_marker_tokens`` puts it back.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Any

from ..core.charset import ANY, CharSet
from ..core.errors import FormatError
from ..core.hooks import FreeRun
from ..core.protocol import CharacterParser
from .combinators import UnionParser

_WHITESPACE = CharSet.of(" \t\r\n")


class _Spec:
    """What every state of one ReasoningParser shares: the markers, the end marker's KMP table, the answer."""

    __slots__ = ("start", "end", "optional", "answer", "max_gap", "fallback", "run_chars", "__weakref__")

    def __init__(self, answer: CharacterParser, start: str | None, end: str, optional: bool, max_gap: int) -> None:
        self.answer, self.start, self.end, self.optional, self.max_gap = answer, start, end, optional, max_gap
        fallback = [0] * len(end)  # KMP: the longest proper border of end[: i + 1]
        border = 0
        for i in range(1, len(end)):
            while border and end[i] != end[border]:
                border = fallback[border - 1]
            if end[i] == end[border]:
                border += 1
            fallback[i] = border
        self.fallback = fallback
        # per matched length k: the characters that lead back to k = 0 whatever was read (a free run)
        self.run_chars = [ANY - CharSet.of({end[0], end[k]}) for k in range(len(end))]

    def advance(self, matched: int, ch: str) -> int:
        """Characters of the end marker matched after reading ``ch`` with ``matched`` matched before."""
        end = self.end
        while matched and ch != end[matched]:
            matched = self.fallback[matched - 1]
        return matched + 1 if ch == end[matched] else 0

    def matched_after(self, text: str) -> int:
        matched = 0
        for ch in text:
            matched = self.advance(matched, ch)
        return matched


class ReasoningParser(CharacterParser):
    """Free thinking text until ``end``, then ``answer_parser``'s format (see module doc).

    ``start``: the marker that may open the thinking (None: none); ``optional``: whether the output may start
    inside the thinking without it; ``max_gap``: whitespace characters allowed between the end marker and the
    answer."""

    __slots__ = ("_spec", "_stage", "_count", "__weakref__")

    _START, _THINK, _GAP = 0, 1, 2

    def __init__(
        self,
        answer_parser: CharacterParser,
        start: str | None = "<think>",
        end: str = "</think>",
        optional: bool = True,
        max_gap: int = 4,
    ) -> None:
        if not isinstance(answer_parser, CharacterParser):
            raise FormatError(f"ReasoningParser needs a CharacterParser answer, not {type(answer_parser).__name__}")
        if not isinstance(end, str) or not end:
            raise FormatError("ReasoningParser: the end marker must be a non-empty string")
        if start is not None and (not isinstance(start, str) or not start):
            raise FormatError("ReasoningParser: the start marker must be a non-empty string or None")
        if not isinstance(max_gap, int) or max_gap < 0:
            raise FormatError(f"ReasoningParser: max_gap must be an int >= 0, not {max_gap!r}")
        self._spec = _Spec(answer_parser, start, end, bool(optional) or start is None, max_gap)
        self._stage, self._count = (self._START, 0) if start is not None else (self._THINK, 0)

    def _with(self, stage: int, count: int) -> ReasoningParser:
        state = ReasoningParser.__new__(ReasoningParser)
        state._spec, state._stage, state._count = self._spec, stage, count
        return state

    @property
    def answer_parser(self) -> CharacterParser:
        return self._spec.answer

    def _after_end(self) -> CharacterParser:
        spec = self._spec
        return self._with(self._GAP, 0) if spec.max_gap else spec.answer

    def add_character(self, ch: str) -> CharacterParser | None:
        spec, stage, count = self._spec, self._stage, self._count
        if stage == self._THINK:
            matched = spec.advance(count, ch)
            return self._after_end() if matched == len(spec.end) else self._with(self._THINK, matched)
        if stage == self._START:
            start = spec.start or ""
            if ch == start[count]:
                if count + 1 == len(start):
                    return self._with(self._THINK, 0)
                return self._with(self._START, count + 1)
            if not spec.optional:
                return None
            matched = spec.matched_after(start[:count] + ch)  # the output started inside the thinking
            return self._after_end() if matched == len(spec.end) else self._with(self._THINK, matched)
        # the gap between the end marker and the answer
        answer = spec.answer.add_character(ch)
        gap = self._with(self._GAP, count + 1) if ch in _WHITESPACE and count < spec.max_gap else None
        if answer is not None and gap is not None:
            return UnionParser([gap, answer])
        return answer if answer is not None else gap

    def allowed_characters(self) -> CharSet:
        spec = self._spec
        if self._stage == self._THINK or (self._stage == self._START and spec.optional):
            return ANY
        if self._stage == self._START:
            return CharSet.of((spec.start or "")[self._count])
        allowed = spec.answer.allowed_characters()
        return allowed | _WHITESPACE if self._count < spec.max_gap else allowed

    def can_end(self) -> bool:
        return self._stage == self._GAP and self._spec.answer.can_end()

    def key(self) -> Hashable:
        return ("reasoning", id(self._spec), self._stage, self._count)

    def free_run(self) -> FreeRun | None:
        """While thinking, a run of characters that cannot advance the end marker leads back to "nothing of
        the marker matched": the tokens made only of them are one precomputed row (see module doc)."""
        spec = self._spec
        if self._stage == self._THINK:
            chars = spec.run_chars[self._count]
        elif self._stage == self._START and spec.optional and self._count == 0:
            chars = spec.run_chars[0] - CharSet.of((spec.start or "")[0])
        else:
            return None
        thinking = self._with(self._THINK, 0)
        return FreeRun(chars, None, lambda n: self if n == 0 else thinking)

    def __repr__(self) -> str:
        stage = ("start", "thinking", "gap")[self._stage]
        return f"ReasoningParser({stage}, {self._count}, end={self._spec.end!r})"


def marker_token_ids(tokenizer: Any, markers: Iterable[str]) -> dict[int, str]:
    """The ids of the markers that the tokenizer holds as single tokens (special or not)."""
    found: dict[int, str] = {}
    vocab_size = len(tokenizer)
    for marker in markers:
        token_id = tokenizer.convert_tokens_to_ids(marker)
        if isinstance(token_id, int) and 0 <= token_id < vocab_size and token_id != tokenizer.unk_token_id:
            found[token_id] = marker
    return found


def with_marker_tokens(vocabulary: Any, tokenizer: Any, markers: Iterable[str] = ("<think>", "</think>")) -> Any:
    """``vocabulary`` with the marker tokens that the tokenizer declares special given their text, so the
    format can allow them (a special token is otherwise never allowed); the same vocabulary when none is
    special. The copy rebuilds the trie (about a second for 128k tokens)."""
    from ..core.vocabulary import Vocabulary

    missing = {
        token_id: marker
        for token_id, marker in marker_token_ids(tokenizer, markers).items()
        if token_id not in vocabulary.eos_token_ids and not vocabulary.text_of(token_id)
    }
    if not missing:
        return vocabulary
    data = list(vocabulary.token_bytes)
    for token_id, marker in missing.items():
        data[token_id] = marker.encode("utf-8")
    copy = Vocabulary(
        data,
        vocabulary.eos_token_ids,
        size=vocabulary.size,
        strip_leading_space=vocabulary.strip_leading_space,
        name=f"{vocabulary.name} + markers",
        cache_bytes=vocabulary.cache_budget.limit,
    )
    copy.encode = vocabulary.encode
    return copy
