"""The compiled entry points fed random automata, random tries and random token sequences: the masks match a
plain per-token model, malformed arrays raise ValueError, and nothing crashes or leaks. (.ci/sanitize.sh runs
this file and test_native_walk.py against a build with AddressSanitizer and UndefinedBehaviorSanitizer.)"""

from __future__ import annotations

import os
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from formatenforcer.core import backend
from formatenforcer.core.flat_trie import arrays

native = backend.native
pytestmark = pytest.mark.skipif(native is None, reason="the compiled core is not built or is switched off")

MAX_CP = 0x10FFFF
BYTES = [0x20, 0x41, 0x61, 0x7A, 0x80, 0x9F, 0xA0, 0xBF, 0xC2, 0xC3, 0xDF, 0xE0, 0xE4, 0xED, 0xEF, 0xF0, 0xF4, 0xF5,
         0xFF, 0x8F, 0x90, 0x98, 0xB8]  # fmt: skip


CUTS = [
    0,
    0x20,
    0x41,
    0x61,
    0x7B,
    0x80,
    0xE0,
    0x100,
    0x800,
    0x4E00,
    0xD800,
    0xE000,
    0x10000,
    0x1F600,
    0x1F650,
    0x110000,
]


def random_tokens(rng: random.Random, count: int) -> list[bytes | None]:
    """Short tokens over bytes that make whole, split and invalid UTF-8 characters (some empty or None)."""
    out: list[bytes | None] = []
    for _ in range(count):
        roll = rng.random()
        if roll < 0.05:
            out.append(None)
        elif roll < 0.35:
            text = "".join(rng.choice("ab é中😀\n") for _ in range(rng.randint(1, 9)))
            data = text.encode()
            cut = rng.randint(0, len(data))
            out.append(data[cut:] if rng.random() < 0.5 else data[:cut] or data)
        else:
            out.append(bytes(rng.choice(BYTES) for _ in range(rng.randint(1, 8))))
    return out


def random_automaton(rng: random.Random) -> dict:
    """Random classes over code points (ASCII, Latin, CJK, emoji, surrogates, the top), a random table, and
    per state the characters of the classes it moves on (as the regex export computes them)."""
    cuts = sorted({rng.choice(CUTS) for _ in range(rng.randint(2, 10))})
    classes = rng.randint(1, 4)
    lows, highs, ids = [], [], []
    for lo, nxt in zip(cuts, cuts[1:]):
        cls = rng.randint(-1, classes - 1)
        if cls >= 0:
            lows.append(lo)
            highs.append(nxt - 1)
            ids.append(cls)
    states = rng.randint(1, 8)
    table = np.array([[rng.randint(-1, states - 1) for _ in range(classes)] for _ in range(states)], dtype=np.int32)
    if rng.random() < 0.6:  # a counted repeat: a chain of states moving on one group of classes
        group = rng.sample(range(classes), rng.randint(1, classes))
        for state in range(states - 1):
            table[state, group] = state + 1
        table[states - 1, group] = rng.choice([-1, states - 1, rng.randint(-1, states - 1)])
    return automaton_parts(rng, lows, highs, ids, table)


def automaton_parts(rng: random.Random, lows: list, highs: list, ids: list, table: np.ndarray) -> dict:
    """``native.Automaton``'s arguments for classes (``lows``/``highs``/``ids``, -1: no class) and a states x
    classes table: per state the characters of the classes it moves on (as the regex export computes them),
    and random accepting states."""
    states, classes = table.shape
    allow_start, allow_lo, allow_hi = [0], [], []
    for state in range(states):
        intervals = []
        for lo, hi, cls in zip(lows, highs, ids):
            if cls >= 0 and table[state, cls] >= 0:  # minus the surrogates, which are never characters
                for a, b in ((lo, min(hi, 0xD7FF)), (max(lo, 0xE000), hi)):
                    if a <= b:
                        if intervals and intervals[-1][1] + 1 >= a:
                            intervals[-1] = (intervals[-1][0], b)
                        else:
                            intervals.append((a, b))
        allow_lo.extend(a for a, _ in intervals)
        allow_hi.extend(b for _, b in intervals)
        allow_start.append(len(allow_lo))
    return {
        "class_lo": np.array(lows, dtype=np.int32),
        "class_hi": np.array(highs, dtype=np.int32),
        "class_id": np.array(ids, dtype=np.int32),
        "transitions": table.reshape(-1),
        "accepting": np.array([rng.randint(0, 1) for _ in range(states)], dtype=np.uint8),
        "allow_start": np.array(allow_start, dtype=np.int32),
        "allow_lo": np.array(allow_lo, dtype=np.int32),
        "allow_hi": np.array(allow_hi, dtype=np.int32),
        "classes": classes,
    }


def _class(parts: dict, cp: int) -> int:
    for lo, hi, cls in zip(parts["class_lo"], parts["class_hi"], parts["class_id"]):
        if lo <= cp <= hi:
            return int(cls)
    return -1


def _prefix_ok(parts: dict, state: int, prefix: bytes) -> bool:
    """Whether a character of ``state`` starts with ``prefix``, by binary search over each allowed interval's
    code points (UTF-8 keeps code-point order), not by the walk's interval arithmetic."""
    start, end = parts["allow_start"][state], parts["allow_start"][state + 1]
    for lo, hi in zip(parts["allow_lo"][start:end], parts["allow_hi"][start:end]):
        lo, hi = int(lo), int(hi)
        while lo < hi:  # the first code point whose encoding is not below the prefix
            mid = (lo + hi) // 2
            if _encode(mid)[: len(prefix)] < prefix:
                lo = mid + 1
            else:
                hi = mid
        if _encode(lo).startswith(prefix) and len(_encode(lo)) > len(prefix):
            return True
    return False


def _encode(cp: int) -> bytes:
    return chr(cp).encode("utf-8", "surrogatepass")


def model_accepts(parts: dict, state: int, pending: bytes, data: bytes) -> bool:
    """A token's fate by feeding its bytes one at a time (the per-token rule the walk implements)."""
    table = parts["transitions"].reshape(-1, parts["classes"])
    for byte in data:
        if pending:
            pending += bytes([byte])
            size = {0xC: 2, 0xD: 2, 0xE: 3, 0xF: 4}.get(pending[0] >> 4, 0)
            if len(pending) < size:
                if not 0x80 <= byte <= 0xBF or not _prefix_ok(parts, state, pending):
                    return False
                continue
            try:
                cp = ord(pending.decode("utf-8"))
            except UnicodeDecodeError:
                return False
            pending = b""
        elif byte < 0x80:
            cp = byte
        else:
            if not (0xC2 <= byte <= 0xF4) or not _prefix_ok(parts, state, bytes([byte])):
                return False
            pending = bytes([byte])
            continue
        cls = _class(parts, cp)
        if cls < 0 or table[state, cls] < 0:
            return False
        state = int(table[state, cls])
    return True


def trie_of(tokens: list[bytes | None]):
    lengths = np.array([len(t) if t else 0 for t in tokens], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    return native.Trie.from_tokens(b"".join(t for t in tokens if t), offsets, len(tokens))


def compiled(trie, automaton, state: int, pending: bytes, at_start: bool) -> set[int]:
    out = np.full((trie.vocab_size + 31) // 32 + 1, -1, dtype=np.int32)  # the word past the row stays untouched
    native.walk_mask(trie, automaton, state, pending, at_start, out)
    assert out[-1] == -1
    bits = np.unpackbits(out[:-1].view(np.uint8), bitorder="little")
    return {int(i) for i in np.flatnonzero(bits)}


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_random_automata_and_tries_match_the_model(seed):
    rng = random.Random(seed)
    tokens = random_tokens(rng, rng.randint(0, 40))
    parts = random_automaton(rng)
    trie = trie_of(tokens)
    automaton = native.Automaton(**parts)
    for _ in range(4):
        state = rng.randrange(len(parts["accepting"]))
        pending = rng.choice(
            [b"", b"", b"\xc3", b"\xe4", b"\xe4\xb8", b"\xf0\x9f", b"\xf0\x9f\x98", b"\xed"]
            + [b"\xe0\x80", b"\xed\xa0", b"\xf4\x90", b"\xf0\x80\x80", b"\xe4\xc3"]
        )
        at_start = rng.random() < 0.3
        expected = set()
        for token_id, data in enumerate(tokens):
            if not data:
                continue
            if model_accepts(parts, state, pending, data):
                expected.add(token_id)
            elif at_start and data[:1] == b" " and model_accepts(parts, state, b"", data[1:]):
                expected.add(token_id)
        assert compiled(trie, automaton, state, pending, at_start) == expected, (tokens, parts, state, pending)


def model_lexeme(parts: dict, state: int, stop: bytes, data: bytes) -> tuple[bool, tuple[int, int] | None]:
    """A token's fate in a lexeme walk: whether it is in the mask, and where it stopped (bytes read, state)
    when it reached a state whose stop byte is set (the per-token rule ``walk_lexeme`` implements)."""
    for cut in range(1, len(data) + 1):
        if not model_accepts(parts, state, b"", data[:cut]):
            return False, None
        reached = _state_after(parts, state, data[:cut])  # (None inside a character)
        if reached is not None and stop[reached]:
            return stop[reached] == 1 and cut == len(data), (cut, reached)
    return True, None


def _state_after(parts: dict, state: int, data: bytes) -> int | None:
    """The state after whole characters (None when ``data`` ends inside one)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    table = parts["transitions"].reshape(-1, parts["classes"])
    for ch in text:
        state = int(table[state, _class(parts, ord(ch))])
    return state


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_random_lexeme_walks_match_the_model(seed):
    """``walk_lexeme`` with random stop bytes (go on, stop, stop with the tokens left to the caller) and
    random first-byte filters: the mask and the stop points equal the per-token model's."""
    rng = random.Random(seed)
    tokens = random_tokens(rng, rng.randint(0, 40))
    parts = random_automaton(rng)
    trie = trie_of(tokens)
    states = len(parts["accepting"])
    flat = arrays(trie)
    for _ in range(4):
        state = rng.randrange(states)
        stop = bytes(rng.choice([0, 0, 1, 2]) for _ in range(states))
        # a stop state reads nothing more (a closed string, a state the tables do not follow): its row refuses
        table = parts["transitions"].reshape(states, -1).copy()
        table[[s for s in range(states) if stop[s]]] = -1
        parts = {**parts, "transitions": table.reshape(-1)}
        automaton = native.Automaton(**parts)
        first = bytes(rng.sample(BYTES, rng.randint(0, 6))) if rng.random() < 0.5 else None
        expected, points = set(), set()
        for token_id, data in enumerate(tokens):
            if not data or stop[state] or (first is not None and data[0] not in first):
                continue
            inside, stopped = model_lexeme(parts, state, stop, data)
            if inside:
                expected.add(token_id)
            if stopped is not None:
                cut, reached = stopped
                longer = any(t and len(t) > cut and t[:cut] == data[:cut] for t in tokens)
                if stop[reached] == 2 or longer:
                    points.add((data[:cut], reached))
        out = np.full((trie.vocab_size + 31) // 32 + 1, -1, dtype=np.int32)
        args = (trie, automaton, state, stop, out) if first is None else (trie, automaton, state, stop, out, first)
        raw = native.walk_lexeme(*args)
        assert out[-1] == -1
        bits = np.unpackbits(out[:-1].view(np.uint8), bitorder="little")
        assert {int(i) for i in np.flatnonzero(bits)} == expected, (tokens, parts, state, stop, first)
        got = set()
        for node, reached, depth in np.frombuffer(raw, dtype=np.int32).reshape(-1, 3).tolist():
            token = tokens[int(flat["tok_ids"][flat["tok_start"][node]])]
            got.add((token[:depth], reached))
        assert got == points, (tokens, parts, state, stop, first)


_LEAD_CHARS: dict[int, tuple[int, int]] = {}


def _lead_chars(lead: int) -> tuple[int, int] | None:
    """The code points (lowest, highest) whose UTF-8 encoding starts with ``lead``, found by encoding every
    character once; None when no character does."""
    if not _LEAD_CHARS:
        for cp in range(0x80, MAX_CP + 1):
            if 0xD800 <= cp <= 0xDFFF:
                continue
            first = _encode(cp)[0]
            lo, _ = _LEAD_CHARS.get(first, (cp, cp))
            _LEAD_CHARS[first] = (lo, cp)
    return _LEAD_CHARS.get(lead)


def _leaves(parts: dict, state: int, byte: int) -> bool:
    """Whether an edge on ``byte`` leaves the automaton in ``state`` (``walk_lexeme_below``'s rule): an ASCII
    byte it refuses, or the lead byte of characters it does not all accept."""
    if byte < 0x80:
        cls = _class(parts, byte)
        return cls < 0 or parts["transitions"].reshape(-1, parts["classes"])[state, cls] < 0
    span = _lead_chars(byte)
    if span is None:
        return False
    need = span[0]
    start, end = parts["allow_start"][state], parts["allow_start"][state + 1]
    for lo, hi in sorted(zip(parts["allow_lo"][start:end].tolist(), parts["allow_hi"][start:end].tolist())):
        if lo <= need <= hi:
            need = hi + 1
    return need <= span[1]


ASCII_CUTS = [0x00, 0x0A, 0x0B, 0x20, 0x22, 0x23, 0x41, 0x5C, 0x5D, 0x61, 0x7B]


def automaton_with_a_run(rng: random.Random, limit: int) -> tuple[dict, bytes]:
    """A random automaton whose state 0 has a wide free run, as a FreeRun promises it: classes cut inside
    ASCII and one class for every non-ASCII character; the run's class is a group of classes holding that
    one, which loops on state 0 (``limit`` -1) or moves along a chain 0, 1, ..., limit whose last state
    refuses it (runs of at most ``limit`` characters) or, half the time, loops on it (longer runs go on:
    the row stops at the limit all the same, and the walk must find the longer tokens itself). Returns the
    parts and the class's ASCII characters (16 bytes, as ``run`` takes them)."""
    cuts = sorted({0, 0x80, *rng.sample(ASCII_CUTS, rng.randint(1, 6))})
    classes = rng.randint(2, 5)
    lows = [*cuts, 0x80][: len(cuts)]
    highs = [nxt - 1 for nxt in cuts[1:]] + [MAX_CP]
    ids = [rng.randint(-1, classes - 1) for _ in cuts[:-1]] + [0]
    group = sorted({0, *rng.sample(range(classes), rng.randint(0, classes - 1))})
    states = max(limit + 1, rng.randint(1, 6))
    table = np.array([[rng.randint(-1, states - 1) for _ in range(classes)] for _ in range(states)], dtype=np.int32)
    if limit < 0:
        table[0, group] = 0
    else:
        for state in range(limit):
            table[state, group] = state + 1
        table[limit, group] = -1 if rng.random() < 0.5 else limit
    bits = 0
    for lo, hi, cls in zip(lows, highs, ids):
        if cls in group:
            for cp in range(lo, min(hi, 0x7F) + 1):
                bits |= 1 << cp
    return automaton_parts(rng, lows, highs, ids, table), bits.to_bytes(16, "little")


def run_row(tokens: list[bytes | None], ascii_bits: bytes, limit: int, words: int) -> np.ndarray:
    """The free-run row: the tokens made of class characters only (a trailing incomplete character counts
    as one, any valid start of a non-ASCII character being one of the class), at most ``limit`` of them."""
    bits = int.from_bytes(ascii_bits, "little")
    row = np.zeros(words, dtype=np.uint32)
    for token_id, data in enumerate(tokens):
        if not data:
            continue
        text, tail = data, b""
        for cut in range(0, 4):
            try:
                text = (data[: len(data) - cut] if cut else data).decode("utf-8")
                tail = data[len(data) - cut :] if cut else b""
                break
            except UnicodeDecodeError:
                continue
        else:
            continue
        if tail and (len(tail) >= {0xC: 2, 0xD: 2, 0xE: 3, 0xF: 4}.get(tail[0] >> 4, 0) or not _valid_start(tail)):
            continue
        if all(ord(ch) >= 0x80 or bits >> ord(ch) & 1 for ch in text):
            if limit < 0 or len(text) + (1 if tail else 0) <= limit:
                row[token_id >> 5] |= np.uint32(1 << (token_id & 31))
    return row.view(np.int32)


def _valid_start(tail: bytes) -> bool:
    """Whether ``tail`` starts the UTF-8 encoding of some character (not a surrogate): completed with each
    second byte that the leads E0, ED, F0 and F4 treat apart, then continuation bytes."""
    size = {0xC: 2, 0xD: 2, 0xE: 3, 0xF: 4}.get(tail[0] >> 4, 0)
    for second in (0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF):
        data = (tail + bytes([second]) + b"\x80" * size)[:size]
        try:
            data.decode("utf-8")
            return True
        except UnicodeDecodeError:
            continue
    return False


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_random_lexeme_walks_below_nodes_match_the_model(seed):
    """``walk_lexeme_below`` from random trie nodes (each with a random filter of its edges) with random stop
    bytes, 3 among them (the lexeme may end there and read on): the mask and the points equal the per-token
    model's, a point of stop 3 where some token goes on with an edge that leaves the automaton there."""
    rng = random.Random(seed)
    tokens = random_tokens(rng, rng.randint(1, 40))
    parts = random_automaton(rng)
    trie = trie_of(tokens)
    states = len(parts["accepting"])
    flat = arrays(trie)
    texts = [t for t in tokens if t]
    if not texts:
        return
    for _ in range(4):
        state = rng.randrange(states)
        stop = bytes(rng.choice([0, 0, 1, 2, 3, 3]) for _ in range(states))
        table = parts["transitions"].reshape(states, -1).copy()
        table[[s for s in range(states) if stop[s] in (1, 2)]] = -1  # those read nothing more; 3 reads on
        # each state's allowed characters follow its new row, as an export computes them (a stale list would
        # let a state "read every" character its row now refuses, which no real automaton does)
        fresh = automaton_parts(random.Random(seed), parts["class_lo"].tolist(), parts["class_hi"].tolist(),
                                parts["class_id"].tolist(), table)  # fmt: skip
        parts = {
            **parts,
            "transitions": table.reshape(-1),
            **{k: fresh[k] for k in ("allow_start", "allow_lo", "allow_hi")},
        }
        automaton = native.Automaton(**parts)
        starts = []
        for _ in range(rng.randint(1, 3)):
            text = rng.choice(texts)
            prefix = text[: rng.randrange(len(text))]
            first = bytes(rng.sample(BYTES, rng.randint(0, 6))) if rng.random() < 0.5 else None
            starts.append((prefix, first))
        if rng.random() < 0.5:
            starts = [(prefix, None) for prefix, _ in starts]
        expected, points = set(), set()
        for prefix, first in starts:
            for token_id, data in enumerate(tokens):
                if not data or len(data) <= len(prefix) or not data.startswith(prefix) or stop[state] in (1, 2):
                    continue
                if first is not None and data[len(prefix)] not in first:
                    continue
                rest, inside = data[len(prefix) :], True
                for cut in range(1, len(rest) + 1):
                    if not model_accepts(parts, state, b"", rest[:cut]):
                        inside = False
                        break
                    reached = _state_after(parts, state, rest[:cut])  # (None inside a character)
                    if reached is None:
                        continue
                    here = data[: len(prefix) + cut]
                    below = [t[len(here)] for t in texts if len(t) > len(here) and t.startswith(here)]
                    if stop[reached] == 3:
                        if any(_leaves(parts, reached, byte) for byte in below):
                            points.add((here, reached))
                    elif stop[reached]:
                        inside = stop[reached] == 1 and cut == len(rest)
                        if stop[reached] == 2 or below:
                            points.add((here, reached))
                        break
                if inside:
                    expected.add(token_id)
        pairs = np.array([x for prefix, _ in starts for x in (_node_of(flat, prefix), len(prefix))], dtype=np.int32)
        if starts[0][1] is None and all(first is None for _, first in starts):
            firsts, first_starts = b"", b""
        else:
            chosen = [bytes(range(256)) if first is None else first for _, first in starts]
            firsts = b"".join(chosen)
            first_starts = np.concatenate([[0], np.cumsum([len(c) for c in chosen])]).astype(np.int32)
        out = np.full((trie.vocab_size + 31) // 32 + 1, -1, dtype=np.int32)
        raw = native.walk_lexeme_below(trie, automaton, state, stop, out, pairs, firsts, first_starts)
        assert out[-1] == -1
        bits = np.unpackbits(out[:-1].view(np.uint8), bitorder="little")
        assert {int(i) for i in np.flatnonzero(bits)} == expected, (tokens, parts, state, stop, starts)
        got = set()
        for node, reached, depth in np.frombuffer(raw, dtype=np.int32).reshape(-1, 3).tolist():
            token = tokens[int(flat["tok_ids"][flat["tok_start"][node]])]
            got.add((token[:depth], reached))
        assert got == points, (tokens, parts, state, stop, starts)


def _node_of(flat: dict, path: bytes) -> int:
    """The flat trie node reached by ``path`` from the root."""
    node = 0
    for byte in path:
        lo, hi = int(flat["edge_start"][node]), int(flat["edge_start"][node + 1])
        node = next(int(flat["edge_child"][e]) for e in range(lo, hi) if flat["edge_byte"][e] == byte)
    return node


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_walks_with_a_free_run_match_the_model(seed):
    """``walk_mask`` and ``walk_lexeme`` handed a free run (its precomputed row and class, unbounded or
    counted, as core/compiled_walk.py hands them): the mask equals the per-token model's, and a lexeme
    walk's mask and stop points equal the same walk's without the run."""
    rng = random.Random(seed)
    tokens = random_tokens(rng, rng.randint(0, 40))
    tokens += ["é" * rng.randint(1, 6) + "ab", "中文😀\n".encode()[: rng.randint(1, 9)], b'a"b', b"ab\n\n"]
    tokens = [t.encode() if isinstance(t, str) else t for t in tokens]
    limit = rng.choice([-1, -1, 1, 2, 3, 5])
    parts, ascii_bits = automaton_with_a_run(rng, limit)
    trie = trie_of(tokens)
    automaton = native.Automaton(**parts)
    words = (trie.vocab_size + 31) // 32
    row = run_row(tokens, ascii_bits, limit, words)
    run = (row, ascii_bits, 2, limit)
    expected = {token_id for token_id, data in enumerate(tokens) if data and model_accepts(parts, 0, b"", data)}
    in_row = {int(i) for i in np.flatnonzero(np.unpackbits(row.view(np.uint8), bitorder="little"))}
    assert in_row <= expected, "the row holds only accepted tokens (the FreeRun promise)"
    out = np.full(words + 1, -1, dtype=np.int32)
    native.walk_mask(trie, automaton, 0, b"", False, out[:-1], run)
    assert out[-1] == -1
    got = {int(i) for i in np.flatnonzero(np.unpackbits(out[:-1].view(np.uint8), bitorder="little"))}
    assert got == expected, (tokens, parts, limit)
    states = len(parts["accepting"])
    for _ in range(3):
        stop = bytes(rng.choice([0, 0, 0, 1, 2]) if s else 0 for s in range(states))
        table = parts["transitions"].reshape(states, -1).copy()
        table[[s for s in range(states) if stop[s]]] = -1
        lexeme = native.Automaton(**{**parts, "transitions": table.reshape(-1)})
        with_run, without = np.empty(words, dtype=np.int32), np.empty(words, dtype=np.int32)
        points = native.walk_lexeme(trie, lexeme, 0, stop, with_run, None, run)
        assert points == native.walk_lexeme(trie, lexeme, 0, stop, without)
        assert np.array_equal(with_run, without), (tokens, parts, limit, stop)


ENDS = {  # how a chain ends: the targets of (a or b, the newline, a non-ASCII character) from its last state
    "refuses": (-1, -1, -1),
    "loops": ("last", -1, "last"),
    "leaves": ("next", -1, "next"),
    "other class": (-1, "next", -1),
    "half": (-1, -1, "next"),
    "split": ("last", -1, "next"),
}


@pytest.mark.parametrize("end", sorted(ENDS))
@pytest.mark.parametrize("length", [1, 2, 3, 5])
def test_counted_runs_match_the_model(length, end):
    """Chains of states moving on a group of classes ({n} and {0,n} repeats), ending in each way a run can
    end, over tokens of every length made of those classes and others: the walk's whole-subtree shortcut."""
    rng = random.Random(length * 10 + len(end))
    alphabet = ["a", "b", "é", "😀", "\n"]
    tokens: list[bytes | None] = []
    for size in range(1, 9):
        for _ in range(40):
            tokens.append("".join(rng.choice(alphabet) for _ in range(size)).encode())
    tokens += [t[:-1] for t in tokens if t and t[-1] >= 0x80][:50]  # ending inside a character
    spans = {0: [(0x61, 0x62)], 1: [(0x0A, 0x0A)], 2: [(0x80, 0xD7FF), (0xE000, 0x10FFFF)]}
    intervals = sorted((lo, hi, cls) for cls, pairs in spans.items() for lo, hi in pairs)
    states = length + 2
    table = np.full((states, 3), -1, dtype=np.int32)
    for state in range(length):
        table[state, [0, 2]] = state + 1
    for cls, target in enumerate(ENDS[end]):
        table[length, cls] = {"last": length, "next": length + 1}.get(target, -1)  # type: ignore[arg-type]
    table[length + 1, [0, 2]] = length + 1
    allow_start, allow_lo, allow_hi = [0], [], []
    for state in range(states):
        for lo, hi, cls in intervals:
            if table[state, cls] >= 0:
                allow_lo.append(lo)
                allow_hi.append(hi)
        allow_start.append(len(allow_lo))
    parts = {
        "class_lo": np.array([lo for lo, _, _ in intervals], dtype=np.int32),
        "class_hi": np.array([hi for _, hi, _ in intervals], dtype=np.int32),
        "class_id": np.array([cls for _, _, cls in intervals], dtype=np.int32), "transitions": table.reshape(-1),
        "accepting": np.ones(states, dtype=np.uint8), "allow_start": np.array(allow_start, dtype=np.int32),
        "allow_lo": np.array(allow_lo, dtype=np.int32), "allow_hi": np.array(allow_hi, dtype=np.int32), "classes": 3,
    }  # fmt: skip
    trie = trie_of(tokens)
    automaton = native.Automaton(**parts)
    for state in range(states):
        expected = {i for i, data in enumerate(tokens) if data and model_accepts(parts, state, b"", data)}
        assert compiled(trie, automaton, state, b"", False) == expected, (length, end, state)


def _mutations(parts: dict, rng: random.Random) -> list[tuple[str, object]]:
    """(name, bad value) pairs: truncated, out of range, unsorted, wrong item sizes, not a buffer."""
    out = []
    for name, value in parts.items():
        if isinstance(value, int):
            out.extend([(name, 0), (name, -1), (name, value + 1)])
            continue
        if len(value):
            out.append((name, value[:-1]))
            bad = value.copy()
            bad[rng.randrange(len(bad))] = rng.choice([-5, 2**31 - 1, 0x110000]) if bad.dtype != np.uint8 else 7
            out.append((name, bad))
            out.append((name, value.tobytes() + b"\x00"))
        out.append((name, 12345))
    return out


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_malformed_buffers_raise_value_error(seed):
    rng = random.Random(seed)
    tokens = random_tokens(rng, rng.randint(1, 30))
    trie = trie_of(tokens)
    trie_parts = {**arrays(trie), "vocab_size": trie.vocab_size}
    for name, bad in _mutations(trie_parts, rng):
        try:
            made = native.Trie(**{**trie_parts, name: bad})
        except ValueError:
            continue
        automaton = native.Automaton(**random_automaton(rng))  # still valid: the walk must run
        compiled(made, automaton, 0, b"", True)
    parts = random_automaton(rng)
    for name, bad in _mutations(parts, rng):
        try:
            made = native.Automaton(**{**parts, name: bad})
        except ValueError:
            continue
        compiled(trie, made, 0, b"\xe4", False)


def test_walk_arguments_are_checked():
    rng = random.Random(7)
    trie = trie_of(random_tokens(rng, 50))
    automaton = native.Automaton(**random_automaton(rng))
    words = (trie.vocab_size + 31) // 32
    good = np.zeros(words, dtype=np.int32)
    for state in (-1, automaton.states, 2**40):
        with pytest.raises((ValueError, OverflowError)):
            native.walk_mask(trie, automaton, state, b"", False, good)
    for pending in (b"a", b"\x80", b"\xe4\xb8\xad", b"\xf0\x9f\x98\x80", b"\xff"):
        with pytest.raises(ValueError):
            native.walk_mask(trie, automaton, 0, pending, False, good)
    with pytest.raises(ValueError):
        native.walk_mask(trie, automaton, 0, b"", False, np.zeros(words - 1, dtype=np.int32))
    with pytest.raises(ValueError):
        native.walk_mask(trie, automaton, 0, b"", False, np.zeros(words * 4 + 1, dtype=np.uint8)[1:])
    with pytest.raises(TypeError):
        native.walk_mask(trie, automaton, 0, b"", False, bytes(words * 4))
    with pytest.raises(TypeError):
        native.walk_mask(automaton, trie, 0, b"", False, good)
    stop = bytes(automaton.states)
    for bad_stop in (stop[:-1], stop + b"\x00", b"\x03" * automaton.states):
        with pytest.raises(ValueError):
            native.walk_lexeme(trie, automaton, 0, bad_stop, good)
    with pytest.raises(TypeError):
        native.walk_lexeme(trie, automaton, 0, stop, good, 5)
    bits = bytes(16)
    for bad_run in ((good[:-1], bits, 2, -1), (good, bits[:-1], 2, -1), (good, bits, 3, -1), (good, bits, 2, -2),
                    (np.zeros(words * 4 + 1, dtype=np.uint8)[1:], bits, 2, -1)):  # fmt: skip
        with pytest.raises(ValueError):
            native.walk_mask(trie, automaton, 0, b"", False, good, bad_run)
        with pytest.raises(ValueError):
            native.walk_lexeme(trie, automaton, 0, stop, good, None, bad_run)
    for bad_run in ([good, bits, 2, -1], (good, "x" * 16, 2, -1), (good, bits, 2)):
        with pytest.raises(TypeError):
            native.walk_mask(trie, automaton, 0, b"", False, good, bad_run)
    with pytest.raises(ValueError):  # a run starts on a whole character, never at a SentencePiece start
        native.walk_mask(trie, automaton, 0, b"", True, good, (good, bits, 2, -1))
    with pytest.raises(ValueError):
        native.walk_mask(trie, automaton, 0, b"\xc3", False, good, (good, bits, 2, -1))
    with pytest.raises(ValueError):
        native.walk_lexeme(trie, automaton, 0, stop, good, b"a", (good, bits, 2, -1))
    offsets = np.array([0, 2, 1], dtype=np.int64)
    with pytest.raises(ValueError):
        native.Trie.from_tokens(b"abc", offsets, 2)
    with pytest.raises(ValueError):
        native.Trie.from_tokens(b"abc", np.array([0, 1, 9], dtype=np.int64), 2)
    with pytest.raises(ValueError):
        native.Trie.from_tokens(b"abc", np.array([0, 1, 2], dtype=np.int64), 1)


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="reads the resident size from /proc")
def test_no_leak_over_100000_masks():
    rng = random.Random(3)
    trie = trie_of(random_tokens(rng, 200))
    automaton = native.Automaton(**random_automaton(rng))
    out = np.zeros((trie.vocab_size + 31) // 32, dtype=np.int32)
    pendings = [b"", b"\xe4", b"\xf0\x9f"]
    for i in range(10_000):
        native.walk_mask(trie, automaton, i % automaton.states, pendings[i % 3], i % 2 == 0, out)
    before = _rss()
    for i in range(100_000):
        native.walk_mask(trie, automaton, i % automaton.states, pendings[i % 3], i % 2 == 0, out)
    grown = _rss() - before
    assert grown < 1 << 20, f"resident size grew by {grown} bytes over 100,000 masks"


def _python_texts(tokens: list[bytes]):
    from formatenforcer.core.run_tables import TokenTexts

    return TokenTexts(enumerate(tokens))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.binary(max_size=7), max_size=60))
def test_decoded_token_texts_match_the_python_reading(tokens):
    """``decode_tokens`` keeps, splits and drops tokens exactly as TokenTexts' Python constructor does, on
    arbitrary bytes: invalid UTF-8, overlong forms, surrogates, truncated characters, empty tokens."""
    from formatenforcer.core.run_tables import TokenTexts

    expected = _python_texts(tokens)
    got = TokenTexts.decoded(tokens, native)
    assert got.ids.tolist() == expected.ids.tolist()
    assert got.lengths.tolist() == expected.lengths.tolist()
    assert got.code_points.tolist() == expected.code_points.tolist()
    assert [got.text(r) for r in range(len(got.ids))] == [expected.text(r) for r in range(len(expected.ids))]
    assert [got.tail(r) for r in range(len(got.ids))] == [expected.tail(r) for r in range(len(expected.ids))]


def test_decode_tokens_checks_its_offsets():
    blob = b"abc"
    for offsets in ([0, 4], [1, 2], [0, 2, 1], [0]):
        arr = np.array(offsets, dtype=np.int64)
        if offsets == [0]:
            assert native.decode_tokens(blob, arr)[0] == b""  # no tokens
            continue
        with pytest.raises(ValueError):
            native.decode_tokens(blob, arr)
    with pytest.raises(ValueError):
        native.decode_tokens(blob, np.array([0, 1, 2], dtype=np.int32))  # not int64


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.binary(max_size=7), max_size=60),
    st.lists(st.tuples(st.integers(0, 0x10FFFF), st.integers(0, 300)), max_size=6),
)
def test_class_runs_match_the_python_count(tokens, spans):
    """``class_runs`` (C) counts each token's leading class characters and decides whether it stays in the
    class, trailing partial character included, exactly as the numpy count and CharSet.allows_utf8_prefix."""
    from formatenforcer.core.charset import CharSet
    from formatenforcer.core.run_tables import TokenTexts

    chars = CharSet([(lo, min(lo + width, 0x10FFFF)) for lo, width in spans])
    compiled = TokenTexts.decoded(tokens, native)
    python = _python_texts(tokens)
    run, whole = compiled.class_runs(chars)
    expected_run, expected_whole = python.class_runs(chars)
    assert run.tolist() == expected_run.tolist()
    assert whole.tolist() == expected_whole.tolist()


def test_class_runs_checks_its_arrays():
    texts = np.array([97, 98], dtype=np.int32)
    one = np.zeros(1, dtype=np.int64)
    args = [texts, one, np.array([2], dtype=np.int64), np.zeros(1, dtype=np.uint8), np.zeros(1, dtype=np.uint32),
            np.array([97], dtype=np.int32), np.array([98], dtype=np.int32), np.zeros(1, dtype=np.int64),
            np.zeros(1, dtype=np.uint8)]  # fmt: skip
    native.class_runs(*args)
    assert args[7][0] == 2 and args[8][0] == 1
    bad = list(args)
    bad[2] = np.array([3], dtype=np.int64)  # past the code points
    with pytest.raises(ValueError):
        native.class_runs(*bad)
    bad = list(args)
    bad[5], bad[6] = np.array([98, 97], dtype=np.int32), np.array([98, 97], dtype=np.int32)  # unsorted
    with pytest.raises(ValueError):
        native.class_runs(*bad)
    bad = list(args)
    bad[7] = np.zeros(2, dtype=np.int64)  # output of the wrong size
    with pytest.raises(ValueError):
        native.class_runs(*bad)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 300), st.lists(st.integers(0, 10**6), max_size=80))
def test_set_ids_matches_a_python_packing(words, raw):
    """``set_ids`` (the compiled half of run_tables.pack_ids) sets exactly the bits a Python loop sets, on top
    of what the row holds; an id past the row is refused before anything is written."""
    width = words * 32
    ids = [i % width for i in raw]
    start = np.random.default_rng(len(raw)).integers(-(2**31), 2**31, size=words, dtype=np.int64).astype(np.int32)
    row = start.copy()
    native.set_ids(row, ids)
    expected = start.view(np.uint32).copy()
    for i in ids:
        expected[i >> 5] |= np.uint32(1 << (i & 31))
    assert np.array_equal(row.view(np.uint32), expected)
    before = row.copy()
    with pytest.raises(ValueError, match="outside"):
        native.set_ids(row, [*ids, width])
    with pytest.raises(ValueError, match="outside"):
        native.set_ids(row, [-1, *ids])
    with pytest.raises(TypeError):
        native.set_ids(row, [*ids, 1.0])
    with pytest.raises(OverflowError):
        native.set_ids(row, [2**70])
    assert np.array_equal(row, before)  # nothing written by a refused call


def test_set_ids_refuses_read_only_and_strided_rows():
    row = np.zeros(4, dtype=np.int32)
    row.flags.writeable = False
    with pytest.raises((ValueError, BufferError)):
        native.set_ids(row, [1])
    with pytest.raises((ValueError, BufferError)):
        native.set_ids(np.zeros(8, dtype=np.int32)[::2], [1])
    with pytest.raises(ValueError, match="int32"):
        native.set_ids(np.zeros(4, dtype=np.int64), [1])
    with pytest.raises(TypeError):
        native.set_ids(np.zeros(4, dtype=np.int32), (1, 2))


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 300), st.integers(0, 9), st.lists(st.integers(0, 10**6), max_size=40), st.booleans())
def test_or_rows_matches_numpy(words, count, raw, zeros):
    """``or_rows`` (the compiled half of run_tables.pack_rows) writes the OR of the rows with the ids set,
    whatever ``out`` held, leaves the rows alone, and says whether any bit is set; a bad id or row is
    refused before anything is written. It reads the rows four per pass: up to nine rows are two full
    passes and part of a third."""
    width = words * 32
    rng = np.random.default_rng(words * 7 + count)
    if zeros:
        rows = [np.zeros(words, dtype=np.int32) for _ in range(count)]
    else:
        rows = [rng.integers(-(2**31), 2**31, size=words, dtype=np.int64).astype(np.int32) for _ in range(count)]
    for row in rows[::2]:
        row.flags.writeable = False  # cached rows are read-only: read, never written
    ids = [i % width for i in raw]
    kept = [row.copy() for row in rows]
    out = rng.integers(-(2**31), 2**31, size=words, dtype=np.int64).astype(np.int32)  # garbage: overwritten
    nonempty = native.or_rows(out, ids, rows)
    expected = np.zeros(words, dtype=np.uint32)
    for row in rows:
        expected |= row.view(np.uint32)
    for i in ids:
        expected[i >> 5] |= np.uint32(1 << (i & 31))
    assert np.array_equal(out.view(np.uint32), expected)
    assert nonempty is bool(expected.any())
    assert all(np.array_equal(a, b) for a, b in zip(rows, kept))
    before = out.copy()
    with pytest.raises(ValueError, match="outside"):
        native.or_rows(out, [*ids, width], rows)
    with pytest.raises(ValueError, match="outside"):
        native.or_rows(out, [-1], rows)
    with pytest.raises(TypeError):
        native.or_rows(out, [*ids, 1.0], rows)
    with pytest.raises(ValueError, match="rows"):
        native.or_rows(out, ids, [*rows, np.zeros(words + 1, dtype=np.int32)])
    with pytest.raises(ValueError, match="rows"):
        native.or_rows(out, ids, [*rows, np.zeros(words, dtype=np.int64)])
    with pytest.raises(ValueError, match="itself"):
        native.or_rows(out, ids, [*rows, out])
    with pytest.raises((ValueError, BufferError)):
        native.or_rows(out, ids, [*rows, np.zeros(2 * max(words, 2), dtype=np.int32)[::2]])
    with pytest.raises(TypeError):
        native.or_rows(out, ids, [*rows, "not a row"])
    assert np.array_equal(out, before)  # nothing written by a refused call


def test_or_rows_refuses_read_only_outputs_and_non_lists():
    out = np.zeros(4, dtype=np.int32)
    out.flags.writeable = False
    with pytest.raises((ValueError, BufferError)):
        native.or_rows(out, [], [])
    with pytest.raises(ValueError, match="int32"):
        native.or_rows(np.zeros(4, dtype=np.int64), [], [])
    with pytest.raises(TypeError):
        native.or_rows(np.zeros(4, dtype=np.int32), (1,), [])
    with pytest.raises(TypeError):
        native.or_rows(np.zeros(4, dtype=np.int32), [], (np.zeros(4, dtype=np.int32),))
    empty = np.full(4, -1, dtype=np.int32)
    assert native.or_rows(empty, [], []) is False and not empty.any()  # no row, no id: a zero row


def _same_trie(built, reference) -> bool:
    if built.__class__ is not reference.__class__:
        return False
    if reference.__class__ is not dict:
        return built == reference
    return list(built) == list(reference) and all(_same_trie(built[k], reference[k]) for k in reference)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.none(), st.binary(max_size=6), st.sampled_from([b"a", b"ab", b"abc", b"b"])), max_size=80))
def test_dict_trie_from_the_flat_trie_is_the_inserted_one(tokens):
    """``Trie.as_dicts`` builds the dicts ``trie.build`` does, key order included: prefixes of each other,
    duplicates (an id tuple), tokens left out (None, empty), leaves as bare ids."""
    from formatenforcer.core.flat_trie import build_flat_trie
    from formatenforcer.core.trie import build

    flat = build_flat_trie(tokens, len(tokens) + 3)
    assert _same_trie(flat.as_dicts(), build(tokens))


def test_no_leak_over_many_dict_tries():
    rng = random.Random(5)
    trie = trie_of(random_tokens(rng, 300))
    for _ in range(200):
        trie.as_dicts()
    before = _rss()
    for _ in range(2_000):
        trie.as_dicts()
    grown = _rss() - before
    assert grown < 1 << 20, f"resident size grew by {grown} bytes over 2,000 builds"


_SPELLING = "ĠĊĉ!aZ~¡¬®ÿĀĎŃńĠĠ"  # the table's characters, then some outside it
_OUTSIDE = " \x00\x7f\xad中😀Ņ"


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.none(), st.text(alphabet=_SPELLING + _OUTSIDE, max_size=8)), max_size=40))
def test_spelled_bytes_match_piece_bytes(pieces):
    """``spelled_bytes`` reads a piece as ``piece_bytes`` does when every character is in the byte-level
    table, and answers None for the others (and for None), which the caller then reads as plain text."""
    from formatenforcer.core import token_texts

    got = native.spelled_bytes(pieces, token_texts._BYTE_LEVEL_TABLE)
    for piece, data in zip(pieces, got, strict=True):
        if piece is None or any(ch not in token_texts._BYTE_LEVEL for ch in piece):
            assert data is None
        else:
            assert data == token_texts.piece_bytes(piece, "byte-level", lambda _: "", 0)


def test_spelled_bytes_checks_its_arguments():
    from formatenforcer.core import token_texts

    table = token_texts._BYTE_LEVEL_TABLE
    with pytest.raises(TypeError, match="piece 1 is bytes"):
        native.spelled_bytes(["a", b"a"], table)
    with pytest.raises(TypeError):
        native.spelled_bytes(("a",), table)
    with pytest.raises(ValueError, match="int16"):
        native.spelled_bytes(["a"], b"\x00\x01\x02")
    assert native.spelled_bytes(["a", "é"], b"") == [None, None]  # an empty table spells nothing
    bad = np.array([-1, 300, 65], dtype=np.int16).tobytes()  # entries past a byte are not bytes
    assert native.spelled_bytes(["\x01", "\x02", "\x00"], bad) == [None, b"A", None]
