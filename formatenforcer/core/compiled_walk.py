"""Where the token walk hands a state to the compiled core: the one hook (called by walk.allowed_mask).

A state is walked in C when the compiled backend is active and the state is a plain automaton state
(``CharacterParser.automaton_state``: today the states of a RegexParser). The mask is bit-identical to the
Python walk's (tests/test_native_walk.py); end-of-sequence is added by the caller, as for the Python walk.

A state that loops over a wide class (``FreeRun``: any character but a few, as inside a JSON string or
``.*``) hands C the vocabulary's precomputed row of the tokens made of that class (``native_run``, the same
table the Python walk ORs in, core/run_tables.py): C starts from that row and walks only where a token may
leave the run for a character some state accepts.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import backend
from .automaton import native_automaton
from .cache_release import register_memo
from .charset import CharSet
from .flat_trie import flat_trie
from .machine import STRING_BODY_CHARS

_CLASS_BYTES: dict[CharSet, bytes | None] = {}
"""A wide class -> its ASCII characters as C reads them (16 bytes); None for a class that misses some
non-ASCII character (no run is handed over for it)."""
register_memo(_CLASS_BYTES.clear)  # emptied when a burst of enforcers ends (core/cache_release.py)

INSIDE_CAP = 512
"""Automaton states whose inside row and exits are kept (``_inside``): 16 KB each on a 128k vocabulary."""
_INSIDE: dict[tuple, tuple] = {}
"""(trie, automaton, content state, ascii escapes) by identity -> (trie, automaton, row, exits): the tokens that
stay in the body of a string over that automaton from that state, and where the others leave it
(``Machine.inside``). The automata are shared by language across schemas, so every schema's date-time reads
the same entries."""
register_memo(_INSIDE.clear)


def _class_bytes(chars: CharSet) -> bytes | None:
    hit = _CLASS_BYTES.get(chars, b"")
    if hit == b"":
        hit = None
        if chars.contains_interval(0x80, 0xD7FF) and chars.contains_interval(0xE000, 0x10FFFF):
            bits = sum(1 << byte for byte in range(128) if chars.ascii[byte])
            hit = bits.to_bytes(16, "little")
        if len(_CLASS_BYTES) >= 1024:
            _CLASS_BYTES.clear()
        _CLASS_BYTES[chars] = hit
    return hit


def native_run(vocabulary: Any, state: Any) -> tuple[np.ndarray, bytes, int, int] | None:
    """The ``run`` argument of ``walk_mask`` / ``walk_lexeme`` for ``state`` (from a whole character, not at a
    SentencePiece start): the vocabulary's row of the tokens made of at most ``max_length`` characters of its
    free run's class, the class's ASCII characters, 2 (every non-ASCII character is in the class) and the
    limit; None when the state has no free run, the run may end the value part-way (``ends_inside``), or its
    class is narrow (then the row would hold few tokens, and the walk takes them as it meets them)."""
    run = state.free_run()
    if run is None or run.ends_inside:
        return None
    ascii_bits = _class_bytes(run.chars)
    if ascii_bits is None:
        return None
    mask = vocabulary.free_run_table(run.chars).runs_upto(run.max_length)
    if mask is None:
        return None
    return mask, ascii_bits, 2, -1 if run.max_length is None else run.max_length


def compiled_mask(vocabulary: Any, state: Any, pending: bytes, at_start: bool) -> np.ndarray | None:
    """The packed mask of the tokens below the root that ``state`` accepts (``at_start``: the first token of
    a SentencePiece output, whose leading space is dropped), computed in C; None where the Python walk must
    answer (backend off, or a state that is not a plain automaton state)."""
    if not backend.active():
        return None
    machine = state.machine_state()
    if machine is not None:
        return None if at_start else _machine_tokens(vocabulary, machine[0], machine[1], pending)[0]
    found = state.automaton_state()
    if found is None:
        return None
    automaton = native_automaton(found[0])
    if automaton is None:
        return None
    mask = np.empty((vocabulary.size + 31) // 32, dtype=np.int32)
    run = None if (pending or at_start or not automaton.wide_run(found[1])) else native_run(vocabulary, state)
    backend.native.walk_mask(flat_trie(vocabulary), automaton, found[1], pending, at_start, mask, run)  # type: ignore[union-attr]
    return mask


def _machine_tokens(vocabulary: Any, program: Any, state: bytes, pending: bytes) -> tuple[np.ndarray, bool]:
    """The tokens a JSON machine state accepts (end-of-sequence aside), from one call into C, and whether there
    is any; for a state of several ways (a union of objects being read), the tokens some way accepts, each
    way's mask computed on its own so that each takes its string body's row."""
    trie = flat_trie(vocabulary)
    plan = program.plan(trie, state)
    row = exits = None
    if type(plan) is tuple and type(plan[0]) is bytes:  # several ways: each way's mask, or-ed
        mask, some = _machine_tokens(vocabulary, program, plan[0], pending)
        for way in plan[1:]:
            more, any_more = _machine_tokens(vocabulary, program, way, pending)
            mask |= more
            some = some or any_more
        return mask, some
    if plan is not None and not pending:
        if type(plan) is int:  # a string's body: the row of the tokens that stay in it, then its exits
            row = vocabulary.free_run_table(STRING_BODY_CHARS).runs_upto(None if plan < 0 else plan)
        else:  # an automaton string's body: its state's inside row, then its exits
            row, exits = _inside(trie, program, state, plan)
    mask = np.empty((vocabulary.size + 31) // 32, dtype=np.int32)
    return mask, program.mask(trie, state, pending, mask, row, exits)


def _inside(trie: Any, program: Any, state: bytes, key: tuple[int, int, int]) -> tuple[np.ndarray, bytes]:
    """The inside row and exits of an automaton string's body (``Machine.inside``), kept per automaton state."""
    index, content, ascii_escapes = key
    automaton = program.automata[index]
    ident = (id(trie), id(automaton), content, ascii_escapes)
    hit = _INSIDE.get(ident)
    if hit is None or hit[0] is not trie or hit[1] is not automaton:
        if len(_INSIDE) >= INSIDE_CAP:
            _INSIDE.clear()
        row, exits = program.inside(trie, state)
        hit = _INSIDE[ident] = (trie, automaton, np.frombuffer(row, dtype=np.int32), exits)
    return hit[2], hit[3]


def machine_mask(vocabulary: Any, state: Any, pending: bytes, at_start: bool) -> tuple[np.ndarray, bool] | None:
    """The whole mask of a JSON machine state (``machine_state``), end-of-sequence included, and whether it
    allows any token, without the Python walk's hooks; None at a SentencePiece output's first token (the
    Python walk answers there) or when the compiled backend is off. The walk in C is bounded by the
    vocabulary's size: no budget is kept."""
    if not backend.active() or (at_start and vocabulary.strip_leading_space):
        return None
    program, data = state.machine_state()
    mask, some = _machine_tokens(vocabulary, program, data, pending)
    if not pending and state.can_end():
        mask |= vocabulary.eos_mask
        some = True
    return mask, some
