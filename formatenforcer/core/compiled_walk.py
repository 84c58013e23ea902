"""Where the token walk hands a state to the compiled core: the one hook (called by walk.allowed_mask).

A state is walked in C when the compiled backend is active and the state is a plain automaton state
(``CharacterParser.automaton_state``: today the states of a RegexParser). The mask is bit-identical to the
Python walk's (tests/test_native_walk.py); end-of-sequence is added by the caller, as for the Python walk.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import backend
from .automaton import native_automaton
from .flat_trie import flat_trie


def compiled_mask(vocabulary: Any, state: Any, pending: bytes, at_start: bool) -> np.ndarray | None:
    """The packed mask of the tokens below the root that ``state`` accepts (``at_start``: the first token of
    a SentencePiece output, whose leading space is dropped), computed in C; None where the Python walk must
    answer (backend off, or a state that is not a plain automaton state)."""
    if not backend._active:
        return None
    found = state.automaton_state()
    if found is None:
        return None
    automaton = native_automaton(found[0])
    if automaton is None:
        return None
    mask = np.empty((vocabulary.size + 31) // 32, dtype=np.int32)
    backend.native.walk_mask(flat_trie(vocabulary), automaton, found[1], pending, at_start, mask)  # type: ignore[union-attr]
    return mask
