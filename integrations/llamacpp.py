"""llama-cpp-python integration: a logits processor built from the GGUF model's own vocabulary.

Usage::

    from llama_cpp import Llama, LogitsProcessorList
    from formatenforcer import JsonSchemaParser
    from formatenforcer.integrations.llamacpp import FormatEnforcerLogitsProcessor

    llm = Llama(model_path="model.gguf")
    processor = FormatEnforcerLogitsProcessor(llm, JsonSchemaParser(schema))
    llm.create_chat_completion(messages, logits_processor=LogitsProcessorList([processor]))

llama-cpp-python calls each processor as ``processor(input_ids, scores) -> scores`` once per sampled token,
with ``input_ids`` the whole sequence so far (prompt included) and ``scores`` the ``(n_vocab,)`` float32 logits.
The processor learns the prompt from its first call and feeds only later tokens to the format. A call whose
sequence is not the previous one plus one token starts a new generation, so one processor may serve
successive calls (one processor per concurrent call: it holds one sequence's state). There is no batch to
fill (``fill_bitmasks``): llama-cpp-python calls a logits processor with one sequence's ids and ``(n_vocab,)``
scores, so each call needs exactly one mask.

Token bytes come from llama.cpp itself (``llama_token_to_piece`` on the model's vocabulary, without the
special-token rendering), so no transformers tokenizer is needed; control tokens add no text and are never
allowed. End tokens are every id llama.cpp treats as end of generation (``llama_vocab_is_eog``: EOS, EOT,
``<|im_end|>``...), which is what llama-cpp-python stops on. The Vocabulary is built once per loaded model.

GBNF, llama.cpp's own grammar format, goes through the same processor: ``grammar_logits_processor(llm,
grammar)`` takes the GBNF text or a ``llama_cpp.LlamaGrammar`` (what ``grammar=`` takes) and enforces it
with ``GrammarParser``, so a program moving off ``grammar=`` keeps its grammar files unchanged::

    processors = grammar_logits_processor(llm, LlamaGrammar.from_file("grammars/arithmetic.gbnf"))
    llm.create_completion(prompt, logits_processor=processors)
"""

from __future__ import annotations

import ctypes
import logging
import threading
import weakref
from collections.abc import Iterable
from typing import Any

import numpy as np

from formatenforcer import CharacterParser, TokenEnforcer, Vocabulary, apply_bitmask

logger = logging.getLogger("formatenforcer.llamacpp")

INSTALL_HINT = "llama-cpp-python is not installed: pip install 'formatenforcer[llamacpp]'"


def _llama_cpp() -> Any:
    try:
        import llama_cpp
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(INSTALL_HINT) from exc
    return llama_cpp


def token_bytes_of(llm: Any) -> tuple[list[bytes | None], list[int]]:
    """(the bytes each token adds, with None for tokens that add none; the end-of-generation ids) of a
    ``llama_cpp.Llama`` model, read from llama.cpp's vocabulary."""
    llama_cpp = _llama_cpp()
    vocab = llm._model.vocab  # the llama_vocab pointer; llama-cpp-python has no public accessor for it
    count = llama_cpp.llama_vocab_n_tokens(vocab)
    size = 64
    buffer = ctypes.create_string_buffer(size)
    data: list[bytes | None] = []
    eog: list[int] = []
    for token in range(count):
        if llama_cpp.llama_vocab_is_eog(vocab, token):
            eog.append(token)
        n = llama_cpp.llama_token_to_piece(vocab, token, buffer, size, 0, False)
        if n < 0:  # the piece is longer than the buffer: -n is the length needed
            size = -n
            buffer = ctypes.create_string_buffer(size)
            n = llama_cpp.llama_token_to_piece(vocab, token, buffer, size, 0, False)
        data.append(buffer.raw[:n] if n > 0 else None)
    return data, eog


_VOCABULARIES: weakref.WeakKeyDictionary[Any, dict[tuple[int, ...] | None, Vocabulary]] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def vocabulary_from_llama(llm: Any, eos_token_ids: Iterable[int] | None = None) -> Vocabulary:
    """The Vocabulary of a ``llama_cpp.Llama``, built once per loaded model (and EOS set).

    ``eos_token_ids`` defaults to every end-of-generation id of the model."""
    key = tuple(sorted(eos_token_ids)) if eos_token_ids is not None else None
    model = llm._model
    with _LOCK:
        hit = _VOCABULARIES.get(model, {}).get(key)
    if hit is not None:
        return hit
    data, eog = token_bytes_of(llm)
    vocabulary = Vocabulary(data, key if key is not None else eog, size=max(len(data), int(llm.n_vocab())))
    vocabulary.name = "llama.cpp vocabulary"
    with _LOCK:
        _VOCABULARIES.setdefault(model, {})[key] = vocabulary
    return vocabulary


class FormatEnforcerLogitsProcessor:
    """A llama-cpp-python logits processor that keeps generation inside ``parser``'s format.

    ``llm``: the ``llama_cpp.Llama`` (or a Vocabulary built for it). Raises nothing during generation: a
    token outside the format (only possible if another processor chose it) is logged and from then on only
    end-of-generation is allowed."""

    def __init__(self, llm: Any, parser: CharacterParser, *, eos_token_ids: Iterable[int] | None = None) -> None:
        vocabulary = llm if isinstance(llm, Vocabulary) else vocabulary_from_llama(llm, eos_token_ids)
        self.vocabulary = vocabulary
        self.enforcer = TokenEnforcer(vocabulary, parser)
        self._start = self.enforcer.matcher().position
        self._prompt: np.ndarray | None = None
        self._last_length = -1
        self._position = self._start
        self._broken = False

    def _begin(self, ids: np.ndarray) -> None:
        self._prompt = ids.copy()
        self._position = self._start
        self._broken = False

    def __call__(self, input_ids: np.ndarray, scores: np.ndarray) -> np.ndarray:
        ids = np.asarray(input_ids)
        length = len(ids)
        prompt = self._prompt
        if prompt is None or length != self._last_length + 1 or not np.array_equal(ids[: len(prompt)], prompt):
            self._begin(ids)  # a new generation: everything so far is its prompt
        elif not self._broken:
            token = int(ids[-1])
            moved = self.enforcer.step(self._position, token)
            if moved is None:
                logger.warning("formatenforcer: token %d is outside the format; allowing only end tokens", token)
                self._broken = True
            else:
                self._position = moved
        self._last_length = length
        mask = self.vocabulary.eos_mask if self._broken else self.enforcer.mask(self._position)
        # llama-cpp-python hands a strided view into its token-data records: mask a contiguous copy, return it
        out = np.array(scores, dtype=np.float32, copy=True)
        return apply_bitmask(out, mask)


def logits_processor_list(llm: Any, parser: CharacterParser, **kwargs: Any) -> Any:
    """``LogitsProcessorList([FormatEnforcerLogitsProcessor(llm, parser)])``, ready for ``logits_processor=``."""
    llama_cpp = _llama_cpp()
    return llama_cpp.LogitsProcessorList([FormatEnforcerLogitsProcessor(llm, parser, **kwargs)])


def grammar_parser(grammar: Any) -> CharacterParser:
    """``GrammarParser`` of GBNF text or of a ``llama_cpp.LlamaGrammar`` (its text, read as GBNF as llama.cpp
    reads it). Raises GrammarError naming the rule and line for a grammar that cannot be enforced."""
    from formatenforcer import GrammarParser

    text = getattr(grammar, "_grammar", grammar)  # LlamaGrammar keeps its GBNF text; no public accessor
    if not isinstance(text, str):
        raise TypeError(f"grammar must be GBNF text or a llama_cpp.LlamaGrammar, not {type(grammar).__name__}")
    return GrammarParser(text, "gbnf")


def grammar_logits_processor(llm: Any, grammar: Any, **kwargs: Any) -> Any:
    """``logits_processor_list`` for a GBNF grammar (text or ``llama_cpp.LlamaGrammar``), in place of
    llama-cpp-python's ``grammar=``."""
    return logits_processor_list(llm, grammar_parser(grammar), **kwargs)


__all__ = [
    "FormatEnforcerLogitsProcessor",
    "grammar_logits_processor",
    "grammar_parser",
    "logits_processor_list",
    "token_bytes_of",
    "vocabulary_from_llama",
]
