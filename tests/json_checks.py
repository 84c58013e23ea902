"""Token-level checks for the JSON tests that reuse one TokenEnforcer per format (its mask cache is what makes
running hundreds of instances per schema affordable); same contract as ``checking.accepts_text``."""

from __future__ import annotations

from typing import Any

from formatenforcer import TokenEnforcer


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
