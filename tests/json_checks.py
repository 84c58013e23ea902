"""Token-level checks for the JSON tests that reuse one TokenEnforcer per format (its mask cache is what makes
running hundreds of instances per schema affordable); same contract as ``checking.accepts_text``."""

from __future__ import annotations

from typing import Any

from formatenforcer import TokenEnforcer, Vocabulary
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


_BY_BYTES: dict[int, tuple[Vocabulary, list[int], list[bytes]]] = {}

SPOT_CHECK = 29
"""``mask_and_step_at`` steps every 29th token it could skip, and asserts it refused."""


def _by_bytes(vocabulary: Vocabulary) -> tuple[list[int], list[bytes]]:
    """The vocabulary's ids sorted by their bytes (each token right after the tokens that are its prefixes),
    and each id's bytes; kept per vocabulary."""
    kept = _BY_BYTES.get(id(vocabulary))
    if kept is None or kept[0] is not vocabulary:
        texts = [vocabulary.text_of(token) for token in range(vocabulary.size)]
        kept = (vocabulary, sorted(range(vocabulary.size), key=texts.__getitem__), texts)
        _BY_BYTES[id(vocabulary)] = kept
    return kept[1], kept[2]


def step_over_every_token(enforcer: TokenEnforcer, position: Any) -> set[int]:
    """The ids the step accepts at ``position``, each of the vocabulary's tokens stepped (``_moved``, see
    ``mask_and_step_at``)."""
    step = enforcer._moved
    return {token for token in range(enforcer.vocabulary.size) if step(position, token) is not None}


def mask_and_step_at(enforcer: TokenEnforcer, position: Any) -> tuple[set[int], set[int]]:
    """The ids in the mask at ``position`` and the ids the step accepts there, over the whole vocabulary: a
    test of mask = step compares the two.

    The step reads a token's bytes left to right, so a token that starts with the bytes of a token it refused
    is refused too: such a token is not stepped, unless it is in the mask (every token of the mask is
    stepped), and every ``SPOT_CHECK``-th of them is stepped anyway and must be refused. That leaves ~1-2k
    steps of the 128k a full pass takes on Llama 3 (10-15x less time); ``step_over_every_token`` is the full
    pass, and tests/test_mask_equals_step.py checks that the two agree.

    Each token goes through ``TokenEnforcer._moved``, the step that ``step`` memoises on the position and
    makes canonical: it accepts the same tokens, without keeping a canonical position for each of the ~120k
    tokens a key or a string takes (computing their places was a quarter to half of this check's time)."""
    mask = set(ids_of(enforcer.mask(position)))
    step_of = enforcer._moved
    order, texts = _by_bytes(enforcer.vocabulary)
    eos = enforcer.vocabulary.eos_token_ids
    step: set[int] = set()
    refused: list[bytes] = []  # refused tokens' bytes, each a prefix of the one above it
    skipped = 0
    for token in order:
        data = texts[token]
        while refused and not data.startswith(refused[-1]):
            refused.pop()
        if refused and token not in mask and token not in eos:
            skipped += 1
            if skipped % SPOT_CHECK == 0:
                assert step_of(position, token) is None, f"{refused[-1]!r} refused, {data!r} accepted"
            continue
        if step_of(position, token) is not None:
            step.add(token)
        elif data and token not in eos:
            refused.append(data)
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
