"""What the format allowed, step by step: ``generate --trace`` and ``explain``.

``--trace`` wraps the enforcing logits processor between two recorders: the one before it sees the model's
own scores (what the model wanted), the one after it sees the masked scores (how many tokens the format
allowed, and the best of them). Steps where the format overrode the model's first choice are marked ``*``:
that is where output starts to "look wrong" when a prompt and a format disagree. Tokens that jump-forward
appended without a step (the format fixed them) are marked ``+``.

``explain`` needs no model: it feeds a text to the format character by character and reports the first
character refused (with what was allowed there) or whether the text is complete, and with ``--tokens`` it
repeats this per token of a tokenizer, with the number of tokens allowed at each step.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TextIO

import numpy as np

from ..core.protocol import CharacterParser
from ..core.vocabulary import Vocabulary
from .charsets import describe_characters


def token_label(vocabulary: Vocabulary, token_id: int) -> str:
    """A printable label of a token: its exact text as a Python literal, or ``<eos>``/``<special N>``."""
    if token_id in vocabulary.eos_token_ids:
        return "<eos>"
    data = vocabulary.text_of(token_id)
    if not data:
        return f"<special {token_id}>"
    return repr(data.decode("utf-8", errors="backslashreplace"))


@dataclass
class Step:
    allowed: int
    candidates: list[tuple[int, float]]
    model_top: tuple[int, float] = (-1, 0.0)


@dataclass
class TraceRecorder:
    """Records, for row 0 of each generation step, the model's choice and what the format allowed."""

    top: int = 5
    steps: list[Step] = field(default_factory=list)
    _model_top: tuple[int, float] = (-1, 0.0)

    def before(self, input_ids: Any, scores: Any) -> Any:
        probs = _softmax(scores[0])
        best = int(np.argmax(probs))
        self._model_top = (best, float(probs[best]))
        return scores

    def after(self, input_ids: Any, scores: Any) -> Any:
        row = scores[0].detach().float().cpu().numpy()
        allowed = int(np.isfinite(row).sum())
        probs = _softmax(scores[0])
        order = np.argsort(-probs)[: min(self.top, allowed)]
        candidates = [(int(i), float(probs[i])) for i in order]
        self.steps.append(Step(allowed, candidates, self._model_top))
        return scores

    def report(self, vocabulary: Vocabulary, chosen: list[int], out: TextIO, forced: list[bool] | None = None) -> None:
        """Prints one line per generated token; ``chosen`` are the generated ids, ``forced`` marks those that
        jump-forward appended without a step (shown with ``+`` and no scores); the others match the steps."""
        overridden = 0
        sampled = 0
        out.write("step  allowed  chosen (p among allowed)    model's own first choice   other allowed\n")
        steps = iter(self.steps)
        for index, token in enumerate(chosen, start=1):
            if forced is not None and forced[index - 1]:
                out.write(f"{index:>4}+ {'forced':>7}  {token_label(vocabulary, token)[:26]}\n")
                continue
            step = next(steps, None)
            if step is None:
                break
            sampled += 1
            probability = dict(step.candidates).get(token)
            shown = f"{token_label(vocabulary, token)}" + (f" ({probability:.2f})" if probability is not None else "")
            wanted_id, wanted_p = step.model_top
            mark = " "
            if wanted_id != token:
                mark = "*"
                overridden += 1
            wanted = f"{token_label(vocabulary, wanted_id)} ({wanted_p:.2f})"
            others = ", ".join(f"{token_label(vocabulary, i)} {p:.2f}" for i, p in step.candidates if i != token)[:80]
            out.write(f"{index:>4}{mark} {step.allowed:>7}  {shown[:26]:<26}  {wanted[:26]:<26}  {others}\n")
        out.write(f"the format overrode the model's first choice at {overridden} of {sampled} steps (marked *)\n")
        if forced is not None and any(forced):
            out.write(f"{sum(forced)} tokens were forced by the format and appended without a step (marked +)\n")


def _softmax(row: Any) -> np.ndarray:
    values = row.detach().float().cpu().numpy().astype(np.float64)
    finite = np.isfinite(values)
    out = np.zeros_like(values)
    if finite.any():
        shifted = np.where(finite, values - values[finite].max(), -np.inf)
        exp = np.exp(shifted)
        out = exp / exp.sum()
    return out


def _describe_place(text: str, offset: int) -> str:
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return f"offset {offset} (line {line}, column {column})"


def explain_characters(parser: CharacterParser, text: str, out: TextIO) -> bool:
    """Feeds ``text`` to the format; prints where it is refused or whether it is complete. True if complete."""
    state = parser
    for offset, ch in enumerate(text):
        following = state.add_character(ch)
        if following is None:
            out.write(f"refused {ch!r} at {_describe_place(text, offset)}\n")
            out.write(f"  accepted so far: {text[max(0, offset - 60) : offset]!r}\n")
            allowed = state.allowed_characters()
            shown = describe_characters(allowed)
            out.write(f"  the format allowed there: {shown}" + (" or the end" if state.can_end() else "") + "\n")
            return False
        state = following
    if state.can_end():
        out.write(f"complete: all {len(text)} characters accepted and the format may end here\n")
        return True
    out.write(f"incomplete: all {len(text)} characters accepted, but the format cannot end here\n")
    out.write(f"  it continues with: {describe_characters(state.allowed_characters())}\n")
    return False


def explain_tokens(parser: CharacterParser, vocabulary: Vocabulary, token_ids: list[int], out: TextIO) -> bool:
    """The same per token: how many tokens the format allowed at each step and whether this one was among them."""
    from ..core.enforcer import TokenEnforcer

    matcher = TokenEnforcer(vocabulary, parser).matcher()
    out.write("step  allowed  token\n")
    for index, token in enumerate(token_ids, start=1):
        allowed = len(matcher.allowed_token_ids())
        ok = matcher.accept_token(token)
        out.write(f"{index:>4}  {allowed:>7}  {token_label(vocabulary, token)}{'' if ok else '  <- REFUSED'}\n")
        if not ok:
            sample = ", ".join(token_label(vocabulary, i) for i in matcher.allowed_token_ids()[:12])
            out.write(f"  allowed there (first 12 by id): {sample}\n")
            return False
    complete = matcher.can_end()
    out.write("complete: the format may end here\n" if complete else "incomplete: the format cannot end here\n")
    return complete
