"""exllamav2 integration: an ``ExLlamaV2Filter`` that keeps generation inside a format.

Usage::

    from exllamav2.generator import ExLlamaV2DynamicJob, ExLlamaV2Sampler
    from formatenforcer import JsonSchemaParser
    from formatenforcer.integrations.exllamav2 import FormatEnforcerFilter

    flt = FormatEnforcerFilter(model, tokenizer, JsonSchemaParser(schema))
    job = ExLlamaV2DynamicJob(
        input_ids=..., max_new_tokens=200, filters=[flt], stop_conditions=[tokenizer.eos_token_id]
    )

The filter protocol (exllamav2 0.3): ``begin(prefix)`` at the start of a generation, ``feed(token)`` after each
sampled token, ``next() -> (pass_tokens, end_tokens)`` before each sample; the sampler intersects the pass
sets of all filters, unions their end sets, asserts that something passes, and stops the job when the
sampled token is an end token. ``clone()`` copies the filter for another job. Here a filter's state is one
immutable ``Position`` over a shared TokenEnforcer, so ``clone`` is a pointer copy and clones never interfere.
There is no batch to fill (``fill_bitmasks``): a filter belongs to one job and answers for one sequence (the
sampler refuses filters on a batch of more than one); the dynamic generator already runs the filters of its
jobs together, calling each one's ``next()`` on its own thread pool during the forward pass
(``use_background_worker``), where the compiled walks overlap as they do on the library's pool.

Token bytes come from the exllamav2 tokenizer itself (its ``tokenizer.json`` model, via the ``tokenizers``
library it wraps): byte-level BPE pieces are mapped back through the byte-to-character table, SentencePiece
pieces through ``▁`` and ``<0xNN>``; added tokens marked special are never allowed. No transformers needed.
The vocabulary is built once per tokenizer object and the enforcer once per (tokenizer, parser).

End tokens: the tokenizer's EOS and the generation config's ``eos_token_id`` list, offered (as pass and end
tokens) exactly when the text so far completes the format.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections import OrderedDict
from collections.abc import Hashable, Iterable
from typing import Any

from formatenforcer import (
    CharacterParser,
    TokenEnforcer,
    Vocabulary,
    VocabularyError,
    mask_token_ids,
    token_bytes_from_pieces,
)
from formatenforcer.integrations._lazy import lazy_classes

logger = logging.getLogger("formatenforcer.exllamav2")

INSTALL_HINT = "exllamav2 is not installed: pip install 'formatenforcer[exllamav2]'"


def token_bytes_of(tokenizer: Any) -> list[bytes | None]:
    """The exact bytes each id of an ``ExLlamaV2Tokenizer`` adds to the text (None: never generated).

    Raises VocabularyError when the recovered texts disagree with the tokenizer's own decoding."""
    model = tokenizer.tokenizer_model
    hf = getattr(model, "hf_tokenizer", None)
    if hf is None:
        raise VocabularyError(f"{type(model).__name__}: expected exllamav2's tokenizer.json model (exllamav2>=0.3)")
    size = max(model.vocab_size(), int(getattr(tokenizer, "actual_vocab_size", 0) or 0))
    special = set(getattr(tokenizer, "extended_id_to_piece", {}))
    literal = dict(getattr(tokenizer, "unspecial_id_to_piece", {}))

    def decode_one(token_id: int) -> str:
        return hf.decode([token_id], skip_special_tokens=False)

    pieces: list[str | bytes | None] = []
    for token_id in range(size):
        if token_id in special:
            pieces.append(None)
        elif token_id in literal:
            pieces.append(literal[token_id].encode("utf-8"))
        else:
            pieces.append(hf.id_to_token(token_id) if token_id < model.vocab_size() else None)
    return token_bytes_from_pieces(pieces, str(hf.decoder), decode_one)


def eos_ids_of(tokenizer: Any) -> list[int]:
    """The tokenizer's EOS plus every ``eos_token_id`` in the model's generation config."""
    ids = set()
    if getattr(tokenizer, "eos_token_id", None) is not None:
        ids.add(int(tokenizer.eos_token_id))
    config = getattr(tokenizer, "config", None)
    generation = getattr(config, "generation_config", None) or {}
    ids.update(int(i) for i in (generation.get("eos_token_id") or ()))
    return sorted(ids)


_VOCABULARIES: weakref.WeakKeyDictionary[Any, dict[tuple[int, ...], Vocabulary]] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def vocabulary_from_exllamav2(tokenizer: Any, eos_token_ids: Iterable[int] | None = None) -> Vocabulary:
    """The Vocabulary of an ``ExLlamaV2Tokenizer``, built once per tokenizer object (and EOS set)."""
    eos = tuple(sorted(eos_token_ids)) if eos_token_ids is not None else tuple(eos_ids_of(tokenizer))
    with _LOCK:
        hit = _VOCABULARIES.get(tokenizer, {}).get(eos)
    if hit is not None:
        return hit
    vocabulary = Vocabulary(token_bytes_of(tokenizer), eos)
    vocabulary.name = "exllamav2 tokenizer"
    with _LOCK:
        _VOCABULARIES.setdefault(tokenizer, {})[eos] = vocabulary
    return vocabulary


class _IdLists:
    """Allowed-id lists by position key, shared by a filter and its clones (bounded LRU): exllamav2 wants
    Python collections, and turning a 49k-bit mask into a list is the costly part of ``next()``."""

    def __init__(self, max_size: int = 512) -> None:
        self.items: OrderedDict[Hashable, list[int]] = OrderedDict()
        self.max_size = max_size
        self.lock = threading.Lock()

    def get(self, enforcer: TokenEnforcer, position: Any) -> list[int]:
        key = (position.cache_key(), position.finished)
        with self.lock:
            hit = self.items.get(key)
            if hit is not None:
                self.items.move_to_end(key)
                return hit
        ids = mask_token_ids(enforcer.mask(position))
        with self.lock:
            self.items[key] = ids
            if len(self.items) > self.max_size:
                self.items.popitem(last=False)
        return ids


def _make_filter_class() -> type:
    try:
        from exllamav2.generator.filters import ExLlamaV2Filter
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(INSTALL_HINT) from exc

    class FormatEnforcerFilter(ExLlamaV2Filter):
        """Allows exactly the tokens that keep the text inside ``parser``'s format.

        ``model`` may be None where only the tokenizer is needed. ``eos_token_ids`` defaults to the tokenizer's
        EOS plus the generation config's. Raises VocabularyError if the tokenizer's texts cannot be recovered;
        nothing during generation (a token outside the format is logged and only end tokens are offered)."""

        def __init__(
            self,
            model: Any,
            tokenizer: Any,
            parser: CharacterParser,
            *,
            eos_token_ids: Iterable[int] | None = None,
            vocabulary: Vocabulary | None = None,
        ) -> None:
            super().__init__(model, tokenizer)
            self.vocabulary = vocabulary or vocabulary_from_exllamav2(tokenizer, eos_token_ids)
            self.enforcer = TokenEnforcer(self.vocabulary, parser)
            self._lists = _IdLists()
            self.position = self.enforcer.matcher().position
            self.broken = False

        def clone(self, c: Any = None) -> FormatEnforcerFilter:
            """A copy at the same position that shares the compiled format (positions are immutable)."""
            if c is None:
                c = FormatEnforcerFilter.__new__(FormatEnforcerFilter)
            super().clone(c)
            c.vocabulary = self.vocabulary
            c.enforcer = self.enforcer
            c._lists = self._lists
            c.position = self.position
            c.broken = self.broken
            return c

        def begin(self, prefix_str: str = "") -> None:
            """Starts the format. ``prefix_str`` (text exllamav2 reports as already generated) is ignored:
            the format covers the tokens fed from here on."""
            self.position = self.enforcer.matcher().position
            self.broken = False
            self.sequence_str = ""

        def feed(self, token: Any) -> None:
            """Advances by the sampled token (an int or a one-element tensor)."""
            token_id = int(token.item() if hasattr(token, "item") else token)
            if self.broken:
                return
            moved = self.enforcer.step(self.position, token_id)
            if moved is None:
                logger.warning("formatenforcer: token %d is outside the format; offering only end tokens", token_id)
                self.broken = True
                return
            self.position = moved

        def next(self) -> tuple[list[int], list[int]]:
            """(tokens allowed next, those among them that end the job: the EOS ids once the format is complete)."""
            eos = list(self.vocabulary.eos_token_ids)
            if self.broken:
                return eos, eos
            allowed = self._lists.get(self.enforcer, self.position)
            ends = [t for t in eos if self.enforcer.step(self.position, t) is not None]
            return allowed, ends

        def use_background_worker(self) -> bool:
            """True: computing a mask is CPU work that exllamav2 can overlap with the next forward pass."""
            return True

    FormatEnforcerFilter.__module__ = __name__
    FormatEnforcerFilter.__qualname__ = "FormatEnforcerFilter"
    return FormatEnforcerFilter


__getattr__ = lazy_classes(globals(), {"FormatEnforcerFilter": _make_filter_class})
"""Defines the engine-derived classes on first access (see _lazy.py): importing this module imports no engine."""


__all__ = [
    "FormatEnforcerFilter",  # noqa: F822 - defined on first access by __getattr__
    "eos_ids_of",
    "token_bytes_of",
    "vocabulary_from_exllamav2",
]
