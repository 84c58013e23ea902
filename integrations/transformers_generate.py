"""A constrained generation loop for any Hugging Face causal LM, with jump-forward decoding.

``model.generate`` samples one token per forward pass. Where the format fixes the next text (a required key,
the rest of an enum value, ``"}`` at the end), sampling is waste: ``generate`` here appends the forced tokens
(``Matcher.forced_tokens``: the tokenizer's own tokens for that text, boundary-safe) without sampling, and
feeds them to the model together with the sampled token before them in ONE forward pass over the KV cache.
A run of k forced tokens then costs no step of its own. ``jump_forward=False`` gives plain step-by-step
constrained decoding through the same loop, for comparison.

One sequence at a time (batch size 1); greedy decoding (``temperature=0``) or sampling with temperature,
top-p and a seed; tokens can be streamed to a transformers streamer (``TextStreamer``) or a callback.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from formatenforcer import CharacterParser, TokenEnforcer, Vocabulary, apply_bitmask


@dataclass
class GenerationOutput:
    """What ``generate`` produced. ``token_ids`` are the generated ids (the end-of-sequence id last when the
    model ended); ``forced[i]`` says whether ``token_ids[i]`` was appended by jump-forward."""

    token_ids: list[int]
    forced: list[bool]
    text: str
    forward_passes: int
    finished: bool
    """True when end-of-sequence was generated (the format is complete); False when ``max_new_tokens`` cut it."""
    seconds: float
    prompt_length: int = 0
    steps: list[int] = field(default_factory=list)
    """For each forward pass after the first, how many tokens it was fed (1 sampled + the forced ones)."""

    @property
    def forced_count(self) -> int:
        return sum(self.forced)


def _prompt_ids(inputs: Any) -> list[int]:
    """The prompt ids from a tensor ``(1, n)`` / ``(n,)``, a list of ids, or a dict/BatchEncoding with
    ``input_ids``; a batch of more than one row is refused."""
    if isinstance(inputs, dict) or hasattr(inputs, "keys"):
        if "input_ids" not in inputs:
            raise ValueError("generate: inputs is a mapping without 'input_ids'")
        inputs = inputs["input_ids"]
    if hasattr(inputs, "tolist"):
        inputs = inputs.tolist()
    ids = list(inputs)
    if ids and isinstance(ids[0], list):
        if len(ids) != 1:
            raise ValueError(f"generate runs one sequence at a time; got a batch of {len(ids)} rows")
        ids = ids[0]
    if not ids:
        raise ValueError("generate: the prompt is empty (it needs at least one token)")
    return [int(token) for token in ids]


def _choose(logits: Any, temperature: float, top_p: float, generator: Any) -> int:
    import torch

    if temperature <= 0:
        return int(torch.argmax(logits))
    probs = torch.softmax(logits / temperature, dim=-1)
    if top_p < 1.0:
        ordered, order = torch.sort(probs, descending=True)
        cumulative = torch.cumsum(ordered, dim=-1)
        drop = cumulative - ordered > top_p  # keep the smallest prefix whose mass reaches top_p
        ordered = ordered.masked_fill(drop, 0.0)
        probs = torch.zeros_like(probs).scatter_(0, order, ordered)
    return int(torch.multinomial(probs, 1, generator=generator))


def generate(
    model: Any,
    tokenizer: Any,
    parser: CharacterParser,
    inputs: Any,
    max_new_tokens: int = 256,
    *,
    temperature: float = 0.0,
    top_p: float = 1.0,
    seed: int | None = None,
    jump_forward: bool = True,
    streamer: Any = None,
    callback: Callable[[list[int], bool], None] | None = None,
    vocabulary: Vocabulary | None = None,
    eos_token_ids: Iterable[int] | None = None,
    on_scores: Callable[[Any, Any], None] | None = None,
) -> GenerationOutput:
    """Generates text in ``parser``'s format from ``inputs`` (prompt ids: a ``(1, n)`` tensor, a list, or
    the tokenizer's output dict) with ``model``'s KV cache.

    ``jump_forward``: append the tokens the format forces without sampling, fed to the model in the same
    forward pass as the token before them. ``streamer``: a transformers streamer (``put``/``end``), given the
    prompt first as ``model.generate`` does; ``callback(ids, forced)``: called with each new run of ids.
    ``on_scores(raw, masked)``: the logits of each sampled step before and after the mask, ``(1, vocab)``
    (the CLI's ``--trace``). ``vocabulary`` defaults to the tokenizer's, sized to the model's logits."""
    import torch

    if max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be at least 1, not {max_new_tokens}")
    if temperature < 0:
        raise ValueError(f"temperature must be 0 (greedy) or more, not {temperature}")
    if not 0 < top_p <= 1:
        raise ValueError(f"top_p must be in (0, 1], not {top_p}")
    prompt = _prompt_ids(inputs)
    if vocabulary is None:
        size = max(int(getattr(model.config, "vocab_size", 0) or 0), len(tokenizer))
        eos = list(eos_token_ids) if eos_token_ids is not None else None
        vocabulary = Vocabulary.from_transformers(tokenizer, eos, size=size)
    matcher = TokenEnforcer(vocabulary, parser).matcher()
    eos_ids = set(vocabulary.eos_token_ids)
    generator = None
    if seed is not None:
        generator = torch.Generator(device="cpu").manual_seed(int(seed))
    device = getattr(model, "device", None) or torch.device("cpu")

    generated: list[int] = []
    flags: list[bool] = []
    steps: list[int] = []

    def emit(ids: list[int], forced: bool) -> None:
        generated.extend(ids)
        flags.extend([forced] * len(ids))
        if streamer is not None:
            streamer.put(torch.tensor(ids))
        if callback is not None:
            callback(list(ids), forced)

    def forced_now() -> list[int]:
        if not jump_forward:
            return []
        tokens = matcher.forced_tokens()[: max_new_tokens - len(generated)]
        if tokens and not matcher.accept_tokens(tokens):  # cannot happen: forced_tokens validates them
            raise RuntimeError("formatenforcer: a forced token was refused")
        return tokens

    if streamer is not None:
        streamer.put(torch.tensor([prompt]))
    started = time.perf_counter()
    feed = list(prompt)
    forced = forced_now()
    if forced:
        emit(forced, True)
        feed += forced
    past = None
    passes = 0
    finished = False
    with torch.inference_mode():
        while len(generated) < max_new_tokens:
            if passes:
                steps.append(len(feed))
            output = model(
                input_ids=torch.tensor([feed], device=device),
                past_key_values=past,
                use_cache=True,
            )
            passes += 1
            past = output.past_key_values
            logits = output.logits[0, -1].float()
            raw = logits.clone() if on_scores is not None else None
            apply_bitmask(logits, matcher.mask().copy())  # a writable copy for torch.from_numpy
            if on_scores is not None:
                on_scores(raw[None], logits[None])
            token = _choose(logits, temperature, top_p, generator)
            if not matcher.accept_token(token):  # a masked-out token: only when every logit was -inf
                raise RuntimeError(f"formatenforcer: the model chose token {token}, which the format refuses")
            emit([token], False)
            if token in eos_ids:
                finished = True
                break
            feed = [token]
            forced = forced_now()
            if forced:
                emit(forced, True)
                feed += forced
    seconds = time.perf_counter() - started
    if streamer is not None:
        streamer.end()
    body = generated[:-1] if finished else generated
    text = tokenizer.decode(body, skip_special_tokens=True)
    return GenerationOutput(generated, flags, text, passes, finished, seconds, len(prompt), steps)


def prompt_inputs(tokenizer: Any, messages: Sequence[dict] | str) -> list[int]:
    """Prompt ids for ``generate``: chat ``messages`` through the tokenizer's chat template (with the
    generation prompt), or a plain string as is."""
    if isinstance(messages, str):
        return list(tokenizer(messages)["input_ids"])
    text = tokenizer.apply_chat_template(list(messages), tokenize=False, add_generation_prompt=True)
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])
