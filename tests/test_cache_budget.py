"""The memory budget of a Vocabulary's shared caches (issue 18): eviction under a small budget never changes
a mask (one thread and eight), the accounting matches what the caches hold, and a dropped parser's own
caches are freed with it. Real Llama 3 vocabulary; schemas teacher-forced a few tokens into valid instances."""

from __future__ import annotations

import gc
import json
import threading
import types
import weakref
from pathlib import Path

import numpy as np
import pytest

from formatenforcer import JsonSchemaParser, TokenEnforcer, Vocabulary
from formatenforcer.core import backend, cache_release
from formatenforcer.core.cache_budget import CacheBudget, approx_bytes, default_cache_bytes
from formatenforcer.jsonschema import compile as compile_module

from . import tokenizers_fixtures as tf

CASES = Path(__file__).resolve().parent.parent / "benchmarks" / "cases"
POSITIONS = 5


@pytest.fixture(autouse=True, scope="module")
def _python_walk():
    """These are the Python walk's caches: the schemas run on it, not on the compiled JSON machine (whose
    states hold no walk of their own to budget)."""
    before = backend.machine_active() or not backend.active()
    backend.use_machine(False)
    yield
    backend.use_machine(before)


def _cases() -> list[tuple[object, object]]:
    cases = []
    for path in sorted(CASES.glob("*.json"))[:6]:
        data = json.loads(path.read_text(encoding="utf-8"))
        cases.extend((c["schema"], c["instance"]) for c in (data if isinstance(data, list) else [data]))
    for i in range(4):  # distinct small schemas: bounds, patterns and key names of their own
        cases.append(({"type": "integer", "minimum": i, "maximum": 1000 + i}, 7 + i))
        cases.append(({"type": "string", "pattern": f"^k{i}-[a-z]+$"}, f"k{i}-abc"))
        closed = {"type": "object", "properties": {f"p{i}": {"type": "number"}}, "required": [f"p{i}"]}
        cases.append((closed, {f"p{i}": 1.5}))
        cases.append(({"type": "object", "properties": {"s": {"type": "string"}}}, {"s": f"x{i} y"}))
    return cases


def _fresh(like: Vocabulary, cache_bytes: int) -> Vocabulary:
    """A new vocabulary over the same tokens and trie, with empty caches under its own budget."""
    made = Vocabulary(like.token_bytes, like.eos_token_ids, size=like.size, trie=like.trie, cache_bytes=cache_bytes)
    made.encode = like.encode
    return made


def _masks(vocabulary: Vocabulary, schema: object, ids: list[int], check=None) -> list[bytes]:  # noqa: ANN001
    enforcer = TokenEnforcer(vocabulary, JsonSchemaParser(schema))
    position, out = enforcer.start, []
    for token in [*ids[: POSITIONS - 1], None]:
        out.append(np.asarray(enforcer.mask(position)).tobytes())
        if check is not None:
            check(vocabulary.cache_budget)
        if token is None:
            break
        position = enforcer.step(position, token)
        assert position is not None
    return out


def _entries(budget: CacheBudget) -> list[int]:
    return [entry[1] for cache in budget._caches for entry in cache._data.values()]


def _within(budget: CacheBudget) -> None:
    """The accounting adds up, and the caches hold no more than the limit (or one entry alone above it)."""
    sizes = _entries(budget)
    assert sum(sizes) == budget.used == sum(used for _, used in budget.usage().values())
    assert budget.used <= budget.limit or len(sizes) == 1 or max(sizes) > budget.limit * 0.75


@pytest.fixture(scope="module")
def cases_and_ids(llama3_tokenizer):  # noqa: ANN001, ANN201
    cases = _cases()
    return [(schema, llama3_tokenizer.encode(json.dumps(inst), add_special_tokens=False)) for schema, inst in cases]


@pytest.fixture(scope="module")
def unbudgeted(llama3_vocabulary, cases_and_ids):  # noqa: ANN001, ANN201
    vocabulary = _fresh(llama3_vocabulary, 1 << 40)
    masks = [_masks(vocabulary, schema, ids) for schema, ids in cases_and_ids]
    assert vocabulary.cache_budget.evictions == 0
    return vocabulary, masks


def test_a_small_budget_evicts_and_keeps_every_mask(llama3_vocabulary, cases_and_ids, unbudgeted) -> None:  # noqa: ANN001
    full, expected = unbudgeted
    assert full.cache_budget.used > 3 << 20  # the run fills more than the small budget below
    small = _fresh(llama3_vocabulary, 1 << 20)
    got = [_masks(small, schema, ids, _within) for schema, ids in cases_and_ids]
    assert small.cache_budget.evictions > 0
    assert got == expected
    # a second round over the evicted (and partly refilled) caches: recomputed entries give the same masks
    again = [_masks(small, schema, ids, _within) for schema, ids in reversed(cases_and_ids)]
    assert again == expected[::-1]


def test_a_zero_budget_keeps_only_the_newest_entry(llama3_vocabulary, cases_and_ids, unbudgeted) -> None:  # noqa: ANN001
    _, expected = unbudgeted
    empty = _fresh(llama3_vocabulary, 0)
    got = [_masks(empty, schema, ids) for schema, ids in cases_and_ids[:6]]
    assert got == expected[:6]
    assert len(_entries(empty.cache_budget)) <= 1


def test_eight_threads_under_a_small_budget_give_the_masks_of_one(llama3_vocabulary, cases_and_ids, unbudgeted) -> None:  # noqa: ANN001
    _, expected = unbudgeted
    shared = _fresh(llama3_vocabulary, 1 << 20)
    results: list[dict[int, list[bytes]]] = [{} for _ in range(8)]
    errors: list[BaseException] = []
    barrier = threading.Barrier(8)

    def run(k: int) -> None:
        try:
            # every other case, rotated: each case is taken by four threads at once, in differing orders, and
            # the eight together still work over every case, so the shared caches overflow the budget
            order = list(range(k % 2, len(cases_and_ids), 2))
            order = order[k * 5 % len(order) :] + order[: k * 5 % len(order)]
            barrier.wait()
            for i in order:
                results[k][i] = _masks(shared, *cases_and_ids[i])
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    assert shared.cache_budget.evictions > 0
    assert all(len(results[k]) == (len(cases_and_ids) + 1 - k % 2) // 2 for k in range(8))
    assert [(k, i) for k in range(8) for i in results[k] if results[k][i] != expected[i]] == []
    _within(shared.cache_budget)


def test_a_dropped_parser_frees_its_caches(llama3_vocabulary, cases_and_ids) -> None:  # noqa: ANN001
    vocabulary = _fresh(llama3_vocabulary, 1 << 30)
    schema, ids = cases_and_ids[0]
    parser = JsonSchemaParser(schema)
    enforcer = TokenEnforcer(vocabulary, parser)
    position = enforcer.start
    for token in ids[:3]:
        enforcer.mask(position)
        position = enforcer.step(position, token)
    enforcer.mask(position)
    own = vocabulary.format_caches.get(parser)
    assert own is not None and len(own.masks) > 0
    masks = [weakref.ref(mask) for mask in own.masks.values()]  # held by the parser's own caches only
    watched = [weakref.ref(parser), weakref.ref(enforcer), *masks]
    del parser, enforcer, position, own
    gc.collect()
    assert [ref() for ref in watched] == [None] * len(watched)
    assert len(vocabulary.format_caches) == 0


def test_setting_a_lower_limit_evicts_down_to_it(llama3_vocabulary, cases_and_ids) -> None:  # noqa: ANN001
    vocabulary = _fresh(llama3_vocabulary, 1 << 30)
    for schema, ids in cases_and_ids[:8]:
        _masks(vocabulary, schema, ids)
    budget = vocabulary.cache_budget
    before = budget.used
    assert before > 1 << 20
    budget.limit = 1 << 20
    assert budget.used <= int((1 << 20) * 0.75) and budget.evictions > 0
    _within(budget)
    budget.clear()
    assert budget.used == 0 and _entries(budget) == []


def test_budget_settings_are_checked(monkeypatch) -> None:  # noqa: ANN001
    for bad in (-1, 1.5, "1", True):
        with pytest.raises(ValueError, match="cache budget"):
            CacheBudget(bad)  # type: ignore[arg-type]
    monkeypatch.setenv("FORMATENFORCER_CACHE_MB", "64")
    assert default_cache_bytes() == 64 << 20
    assert Vocabulary.from_tokens(["a", "b"]).cache_budget.limit == 64 << 20
    monkeypatch.setenv("FORMATENFORCER_CACHE_MB", "lots")
    with pytest.raises(ValueError, match="FORMATENFORCER_CACHE_MB"):
        default_cache_bytes()
    monkeypatch.delenv("FORMATENFORCER_CACHE_MB")
    assert default_cache_bytes() == 256 << 20


def test_sizes_count_arrays_and_ids_but_not_the_trie(llama3_vocabulary) -> None:  # noqa: ANN001
    mask = np.zeros(4008, dtype=np.int32)
    assert approx_bytes(mask) >= mask.nbytes
    assert approx_bytes(mask[:10]) < 200  # a view owns no data
    ids = list(range(1000, 2000))
    assert 30_000 <= approx_bytes(ids) <= 50_000
    node = llama3_vocabulary.trie[ord('"')]
    assert approx_bytes((mask, [(None, [], node)])) < mask.nbytes + 1000  # the vocabulary's node is shared


def test_from_transformers_sets_the_budget_of_the_memoised_vocabulary(llama3_tokenizer) -> None:  # noqa: ANN001
    vocabulary = Vocabulary.from_transformers(llama3_tokenizer, tf.LLAMA3_EOS)
    kept = vocabulary.cache_budget.limit
    try:
        again = Vocabulary.from_transformers(llama3_tokenizer, tf.LLAMA3_EOS, cache_bytes=32 << 20)
        assert again is vocabulary and vocabulary.cache_budget.limit == 32 << 20
    finally:
        vocabulary.cache_budget.limit = kept


def _number_contexts(root: object) -> list[object]:
    """The NumberContext objects reachable from ``root`` (the lexeme cache's entries and their end states)."""
    from formatenforcer.jsonschema.schema.number_bounds import NumberContext

    found, seen, stack = [], set(), [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, (type, types.ModuleType, types.FunctionType, np.ndarray, Vocabulary)):
            continue
        seen.add(id(obj))
        if isinstance(obj, NumberContext):
            found.append(obj)
            continue
        stack.extend(gc.get_referents(obj))
    return found


def test_a_dropped_schema_leaves_no_number_memos_in_shared_walks(llama3_vocabulary, llama3_tokenizer) -> None:  # noqa: ANN001
    # the vocabulary's lexeme walks outlive the schema that made them (another schema with the same bounds
    # reuses them) and keep its number context through their end states: its memos go with the schema
    vocabulary = _fresh(llama3_vocabulary, 1 << 30)
    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 3, "maximum": 123456}}}
    ids = llama3_tokenizer.encode(json.dumps({"n": 98765}), add_special_tokens=False)
    parser = JsonSchemaParser(schema)
    enforcer = TokenEnforcer(vocabulary, parser)
    position, first = enforcer.start, []
    for token in [*ids[: POSITIONS - 1], None]:
        first.append(np.asarray(enforcer.mask(position)).tobytes())
        position = enforcer.step(position, token) if token is not None else position
    # the number contexts of "any value" (an extra key's value) belong to no schema: every schema shares them
    shared = {id(c) for c in compile_module._ANY_NUMBERS}
    held = [c for c in _number_contexts(vocabulary.lexeme_cache._data) if id(c) not in shared]
    assert held and sum(len(c.feasible) for c in held) > 100  # the walk of the number filled its memo
    del parser, enforcer, position
    gc.collect()
    held = [c for c in _number_contexts(vocabulary.lexeme_cache._data) if id(c) not in shared]
    assert held, "the cache no longer holds the number context: nothing left to check"
    assert [(len(c.feasible), len(c.charsets)) for c in held] == [(0, 0)] * len(held)  # memos emptied
    assert _masks(vocabulary, schema, ids) == first  # a new parser reusing those walks: the same masks


def test_the_end_of_a_burst_empties_the_number_memos_every_schema_shares(llama3_vocabulary, llama3_tokenizer) -> None:  # noqa: ANN001
    # "any value" is one state per config for every schema (compile.any_value_start): no schema's drop empties
    # its number memos, the end of a burst of enforcers does (core/cache_release.py)
    vocabulary = _fresh(llama3_vocabulary, 1 << 30)
    ids = llama3_tokenizer.encode(json.dumps({"extra": 98765.25}), add_special_tokens=False)
    _masks(vocabulary, {"type": "object"}, ids)
    shared = compile_module._ANY_NUMBERS
    assert shared and sum(len(c.feasible) + len(c.charsets) for c in shared) > 0  # the walk filled them
    cache_release.sweep()
    assert [(len(c.feasible), len(c.charsets)) for c in shared] == [(0, 0)] * len(shared)


def _walked(vocabulary: Vocabulary, schema: object, ids: list[int]) -> tuple[TokenEnforcer, list[bytes]]:
    enforcer = TokenEnforcer(vocabulary, JsonSchemaParser(schema))
    position, out = enforcer.start, []
    for token in ids[: POSITIONS - 1]:
        out.append(np.asarray(enforcer.mask(position)).tobytes())
        position = enforcer.step(position, token)
    out.append(np.asarray(enforcer.mask(position)).tobytes())
    return enforcer, out


_BURST_SCRIPT = """
import gc, json, sys
sys.path.insert(0, sys.argv[1])
from formatenforcer import Vocabulary
from formatenforcer.core import backend, cache_release, charset
from formatenforcer.parsers import regex
from tests import tokenizers_fixtures as tf
from tests.test_cache_budget import _cases, _walked, _within

tokenizer = tf.llama3_tokenizer()
vocabulary = Vocabulary.from_transformers(tokenizer, tf.LLAMA3_EOS, cache_bytes=1 << 40)
budget = vocabulary.cache_budget
cases = [(schema, tokenizer.encode(json.dumps(inst), add_special_tokens=False)) for schema, inst in _cases()]
gc.collect()
sweeps = cache_release.sweeps()
alive, expected = [], []
for i in range(cache_release.BURST + 16):  # a burst, all alive at once
    schema, ids = cases[i % len(cases)]
    enforcer, masks = _walked(vocabulary, schema, ids)
    alive.append(enforcer)
    expected.append(masks)
filled = budget.used > 1 << 20 and len(regex._CACHE) > 0 and len(charset._OF_MEMO) > 0
del alive, enforcer
gc.collect()
_within(budget)
after = {"live": cache_release.live_count(), "emptied": [budget.used, len(regex._CACHE), len(charset._OF_MEMO)]}
again = [_walked(vocabulary, schema, ids)[1] for schema, ids in cases[: len(expected)]]
print(json.dumps({
    "filled": filled, "swept": cache_release.sweeps() > sweeps, "released": budget.released, **after,
    "same_masks": again == expected[: len(again)] and len(again) > 40,
}))
"""


def test_the_end_of_a_burst_frees_what_only_dropped_enforcers_used() -> None:
    """In a fresh interpreter (no other test's enforcer alive, whose birth would keep every later entry): a
    burst of live enforcers, dropped, leaves the budget and the module memos empty, and the masks computed
    again from empty caches are the same."""
    import subprocess
    import sys

    root = str(Path(__file__).resolve().parent.parent)
    done = subprocess.run([sys.executable, "-c", _BURST_SCRIPT, root], capture_output=True, text=True, timeout=600,
                          cwd=root, env={**__import__("os").environ, "HF_HUB_OFFLINE": "1"})  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["filled"] and found["swept"] and found["released"] > 0
    assert found["live"] == 0 and found["emptied"] == [0, 0, 0]  # none alive: every entry and memo emptied
    assert found["same_masks"]


def test_enforcers_made_and_dropped_one_at_a_time_keep_the_shared_caches(
    llama3_vocabulary, cases_and_ids, monkeypatch
) -> None:  # noqa: ANN001
    """Fewer than ``RETIRED`` enforcers made and dropped one at a time make no sweep."""
    from formatenforcer.core import cache_release

    vocabulary = _fresh(llama3_vocabulary, 1 << 40)
    budget = vocabulary.cache_budget
    gc.collect()
    monkeypatch.setitem(cache_release._state, "retired", 0)  # (other tests' dropped enforcers count too)
    assert cache_release.BURST + 16 < cache_release.RETIRED
    sweeps = cache_release.sweeps()
    for i in range(cache_release.BURST + 16):
        schema, ids = cases_and_ids[i % len(cases_and_ids)]
        _walked(vocabulary, schema, ids)
    gc.collect()
    assert cache_release.sweeps() == sweeps
    assert budget.released == 0 and budget.used > 1 << 20


_OVERLAP_SCRIPT = """
import gc, json, sys
from collections import deque
sys.path.insert(0, sys.argv[1])
from formatenforcer import Vocabulary
from formatenforcer.core import backend, cache_release, enforcer as enforcer_module
from formatenforcer.core.position import Position
from formatenforcer.core.walk import allowed_mask
from tests import tokenizers_fixtures as tf
from tests.test_cache_budget import _cases, _walked, _within

cache_release.RETIRED, cache_release._recent = 10**9, deque(maxlen=8)  # (RECENT = 8)
tokenizer = tf.llama3_tokenizer()
vocabulary = Vocabulary.from_transformers(tokenizer, tf.LLAMA3_EOS, cache_bytes=1 << 40)
budget = vocabulary.cache_budget
cases = [(schema, tokenizer.encode(json.dumps(inst), add_special_tokens=False)) for schema, inst in _cases()]
expected = [_walked(vocabulary, schema, ids)[1] for schema, ids in cases]  # no sweep: RETIRED out of reach
gc.collect()
cache_release.sweep()
cache_release.RETIRED = 32
checks = []
original = cache_release.sweep

def checked(keep_recent=False):
    births = sorted(cache_release._live.values())
    cut = min(births[0], cache_release._recent[0])
    kept = {(c.name, k) for c in budget._caches for k, e in c._data.items() if e[2] >= cut}
    original(keep_recent)
    left = {(c.name, k) for c in budget._caches for k in c._data}
    checks.append({"keep_recent": keep_recent, "live": len(births), "kept": kept <= left})

cache_release.sweep = checked
calls = [0]

def counted(*args):
    calls[0] += 1
    return allowed_mask(*args)

sweeps, released, most_live, same, recomputed = cache_release.sweeps(), budget.released, 0, True, []
previous = None
for i in range(4 * cache_release.RETIRED + 5):
    schema, ids = cases[i % len(cases)]
    current, masks = _walked(vocabulary, schema, ids)  # made while the previous one lives
    same = same and masks == expected[i % len(cases)]
    most_live = max(most_live, cache_release.live_count())
    swept = cache_release.sweeps()
    previous = current  # the previous one goes: a sweep may come now, the current one alive
    if cache_release.sweeps() > swept:  # its masks stay its parser's: a fresh start position recomputes none
        enforcer_module.allowed_mask = counted
        current.mask(Position(current.parser))
        enforcer_module.allowed_mask = allowed_mask
        recomputed.append(calls[0])
del previous, current
gc.collect()
_within(budget)
print(json.dumps({
    "sweeps": cache_release.sweeps() - sweeps, "checks": checks, "released": budget.released - released,
    "most_live": most_live, "same_masks": same, "recomputed": recomputed,
}))
"""


def test_overlapping_enforcers_sweep_every_retired_and_keep_what_live_and_recent_ones_use() -> None:
    """In a fresh interpreter: enforcers made each while the previous one lives (never more than two alive,
    so no burst ever ends) make a sweep every ``RETIRED`` dropped ones; each keeps every entry used since the
    oldest live enforcer's birth or the ``RECENT``-th latest one's, drops the rest, and the masks are those of
    a run without sweeps; a live enforcer's masks stay its parser's own (after a sweep, its start mask from a
    fresh position is a cache hit: no walk)."""
    import subprocess
    import sys

    root = str(Path(__file__).resolve().parent.parent)
    done = subprocess.run([sys.executable, "-c", _OVERLAP_SCRIPT, root], capture_output=True, text=True, timeout=600,
                          cwd=root, env={**__import__("os").environ, "HF_HUB_OFFLINE": "1"})  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["most_live"] <= 2
    assert found["sweeps"] == 4 and all(c["keep_recent"] and c["kept"] for c in found["checks"])
    assert found["released"] > 0 and found["same_masks"]
    assert found["recomputed"] == [0] * found["sweeps"]


def test_a_sweep_that_finds_the_lock_taken_waits_for_the_next_insert() -> None:
    budget = CacheBudget(1 << 30)
    cache = budget.cache("test")
    cache.put("old", b"x" * 100)
    cache.put("newer", b"y" * 100)
    stamp = cache._data["newer"][2]  # entries last used before it go
    with budget._lock:  # as when a finalizer interrupts the budget's own code
        budget.drop_unused_since(stamp)
        assert "old" in cache and budget.released == 0
    cache.put("newest", b"z")
    assert "old" not in cache and "newer" in cache and "newest" in cache and budget.released == 1
    _within(budget)
    budget.drop_unused_since(stamp + 10**9)  # lock free: at once
    assert len(cache) == 0 and budget.used == 0
