"""Token-level checks for the JSON tests that reuse one TokenEnforcer per format (its mask cache is what makes
running hundreds of instances per schema affordable); same contract as ``checking.accepts_text``."""

from __future__ import annotations

from typing import Any

from formatenforcer import TokenEnforcer
from formatenforcer.core.bitmask import ids_of


def accepts_tokens(enforcer: TokenEnforcer, tokenizer: Any, text: str) -> tuple[bool, str]:
    """The natural tokenization of ``text`` is allowed token by token (each in the mask and accepted), and
    end-of-sequence is allowed at the end. Returns (ok, reason)."""
    matcher = enforcer.matcher()
    ids = tokenizer.encode(text, add_special_tokens=False)
    for i, token in enumerate(ids):
        mask = matcher.mask()
        if not (int(mask[token >> 5]) >> (token & 31)) & 1:
            return False, f"token #{i} {tokenizer.convert_ids_to_tokens([token])} not in the mask"
        if not matcher.accept_token(token):
            return False, f"token #{i} {tokenizer.convert_ids_to_tokens([token])} in the mask but refused"
    eos = enforcer.vocabulary.eos_token_ids[0]
    if not (int(matcher.mask()[eos >> 5]) >> (eos & 31)) & 1 or not matcher.accept_token(eos):
        return False, "end-of-sequence refused at the end"
    return True, ""


def mask_and_step_at(enforcer: TokenEnforcer, position: Any) -> tuple[set[int], set[int]]:
    """The ids in the mask at ``position`` and the ids the step accepts there, over the whole vocabulary: a
    test of mask = step compares the two."""
    mask = set(ids_of(enforcer.mask(position)))
    step = {token for token in range(enforcer.vocabulary.size) if enforcer.step(position, token) is not None}
    return mask, step


def mask_and_step(enforcer: TokenEnforcer, tokenizer: Any, prefix: str) -> tuple[set[int], set[int]]:
    """``mask_and_step_at`` after stepping ``prefix``'s natural tokenization from the start (asserting each
    token is taken)."""
    position = enforcer.start
    for token in tokenizer.encode(prefix, add_special_tokens=False):
        position = enforcer.step(position, token)
        assert position is not None, prefix
    return mask_and_step_at(enforcer, position)


def char_walk(parser: Any, rng: Any, max_chars: int = 400, end_bias: float = 0.3) -> tuple[str, bool]:
    """A random walk one character at a time: at each state a random allowed character (a random interval,
    then a random code point in it; quotes, brackets and digits as likely as letters), ending when allowed
    with probability ``end_bias``. Asserts there is always a way on (no dead end) and that every offered
    character is accepted. Returns (text, finished)."""
    state = parser
    out: list[str] = []
    for _ in range(max_chars):
        if state.can_end() and rng.random() < end_bias:
            return "".join(out), True
        allowed = state.allowed_characters()
        if not allowed:
            assert state.can_end(), f"dead end after {''.join(out)!r}"
            return "".join(out), True
        lo, hi = allowed.intervals[rng.randrange(len(allowed.intervals))]
        ch = chr(rng.randint(lo, min(hi, lo + 300)))
        nxt = state.add_character(ch)
        assert nxt is not None, f"offered {ch!r} refused after {''.join(out)!r}"
        out.append(ch)
        state = nxt
    return "".join(out), False


def assert_accepts_exactly(parser: Any, valid: list[str], invalid: list[str]) -> None:
    """Every text of ``valid`` is accepted character by character, none of ``invalid`` is."""
    for text in valid:
        assert parser.accepts(text), text
    for text in invalid:
        assert not parser.accepts(text), text
