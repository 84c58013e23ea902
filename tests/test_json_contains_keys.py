"""Keys inside the items of an array with ``contains`` (issue #18): the tracker reads each key with the item,
and rides along the item's run.

A tracker reading a key whose text is not kept (an open object) has an exact run: the mask equals the step.
Where the key's text is kept (``patternProperties``, ``minProperties``) the key's run is a stand-in that does
not know the text; under ``patternProperties`` it refuses to close a key part-way through a token
(``KeyContent.free``), so tokens such as ``<<"`` after a run are left out of the mask though the step takes
them. A tracker's stand-in rides along too: under an item whose own key is such a stand-in the mask is then
the same as the array's without ``contains``; under an item's exact run it could leave out only a token that
ends the item after a run inside its key (where the match is counted), which Llama 3 has none of along these
walks. Under ``maxContains`` such a tracker becomes unknown after a run (``UNKNOWN_TRACKER``), and the item may
not end in that token: again no token of Llama 3 along these walks is left out, and none the cap forbids is let
in (the walks reach the cap, so later items must not match). Before, the whole vocabulary was walked
character by character at every such key (~7-10 s a mask on Llama 3, which stopped the 100,000-step fuzz job
once a mask took over its 60 s budget under load; ~4 s a mask under ``maxContains`` until the unknown
tracker).

Every mask of a token walk is checked against the step (``mask_and_step_at``) on Llama 3, with a CPU-time
guard against the character-by-character walk hanging; the fast suite checks a few positions inside keys.
"""

from __future__ import annotations

import time

import pytest

from formatenforcer import JsonSchemaParser, TokenEnforcer, Vocabulary
from formatenforcer.core.bitmask import ids_of

from .json_checks import mask_and_step_at

PATTERNED = {
    "type": "object",
    "properties": {},
    "additionalProperties": {"const": 15},
    "patternProperties": {"^p_": {"type": "null"}},
}
SCHEMAS = {
    # found by the 100,000-step token job: every mask inside a key of the second item took ~10 s
    "patterned": {"type": "array", "items": PATTERNED, "contains": PATTERNED, "minItems": 2},
    # the same under two ``contains`` (one tracker each, both reading the key)
    "patterned-twice": {
        "type": "array",
        "items": PATTERNED,
        "contains": PATTERNED,
        "allOf": [{"contains": {"type": "object", "minProperties": 1}}],
    },
    # exact runs: an open object's key text is not kept
    "open": {"type": "array", "items": {"type": "object"}, "contains": {"type": "object", "required": ["x"]}},
    # keys counted towards minProperties: the text is kept, as a text with a gap (``PartialText``)
    "counted": {
        "type": "array",
        "items": {"type": "object", "minProperties": 1},
        "contains": {"type": "object", "minProperties": 2},
    },
    # a tracker's stand-in under an item's exact run: it could leave out only a token that ends the item
    # after a run inside its key, and none of Llama 3's does along these walks
    "patterned-in-open": {"type": "array", "items": {"type": "object"}, "contains": PATTERNED},
    "counted-in-open": {
        "type": "array",
        "items": {"type": "object"},
        "contains": {"type": "object", "minProperties": 1},
    },
    # the same trackers under a cap: an unknown tracker after a run inside a key
    "capped": {"type": "array", "items": PATTERNED, "contains": PATTERNED, "maxContains": 2},
    "capped-patterned-in-open": {"type": "array", "items": {"type": "object"}, "contains": PATTERNED, "maxContains": 1},
    "capped-counted-in-open": {
        "type": "array",
        "items": {"type": "object"},
        "contains": {"type": "object", "minProperties": 1},
        "maxContains": 1,
    },
    "capped-counted": {
        "type": "array",
        "items": {"type": "object", "minProperties": 1},
        "contains": {"type": "object", "minProperties": 2},
        "maxContains": 1,
    },
}
TEXTS = {
    "patterned": '[{"p_":null},{"<<.notifyDataS":15}]',
    "patterned-twice": '[{"p_":null},{"<<.notifyDataS":15}]',
    "open": '[{"ab<<.notifyDataS":1},{"x":2}]',
    "counted": '[{"ab<<.notifyDataS":1,"ab<<.notifyDataT":1}]',
    "patterned-in-open": '[{"p_":null},{"<<.notifyDataS":15}]',
    "counted-in-open": '[{"ab<<.notifyDataS":1},{"x":2}]',
    # (a key is tracked while the matches are below the cap: the items after the cap must not match)
    "capped": '[{"p_":null},{"<<.notifyDataS":15}]',
    "capped-patterned-in-open": '[{"<<.notifyDataS":16},{"p_":null},{"ab<<.notifyDataS":16}]',
    "capped-counted-in-open": '[{},{"ab<<.notifyDataS":1},{}]',
    "capped-counted": '[{"ab<<.notifyDataS":1,"ab<<.notifyDataT":1},{"ab<<.notifyDataS":2}]',
}
EXACT = {
    "open",
    "counted",
    "patterned-in-open",
    "counted-in-open",
    "capped-patterned-in-open",
    "capped-counted-in-open",
    "capped-counted",
}
"""Cases whose masks equal the step; the others leave out tokens that close a key after a run."""

WITHOUT_CONTAINS = {
    "patterned": {"type": "array", "items": PATTERNED, "minItems": 2},
    "patterned-twice": {"type": "array", "items": PATTERNED},
    "capped": {"type": "array", "items": PATTERNED},
}
"""The same arrays without ``contains``: the same masks inside the keys of the texts."""

FAST = {
    "patterned": ('[{"p_":null},{"<<.notify',),
    "open": ('[{"ab<<.notifyDataS":1},{"',),
    "capped-patterned-in-open": ('[{"<<.notify',),
}
"""The positions the fast suite checks, inside keys (a position inside a key steps ~123k tokens of Llama 3
that the mask holds: ~3-10 CPU-s); the full suite checks every position of every case."""

MASK_CPU_GUARD = 120.0
"""CPU seconds a mask may take before the test fails instead of hanging (a hang guard, not a speed check:
the character-by-character walk these keys had took ~10)."""


def _positions(tokenizer, name: str) -> list[tuple[int, str]]:  # noqa: ANN001
    """Each token of the case's text, with the text before it."""
    ids = tokenizer.encode(TEXTS[name], add_special_tokens=False)
    return [(token, tokenizer.decode(ids[:i])) for i, token in enumerate(ids)]


def _inside_a_key(prefix: str) -> bool:
    """Whether the text ends inside a key (after the opening quote of a key, before its closing one)."""
    return prefix.count('"') % 2 == 1 and prefix[prefix.rfind('"') - 1] in "{,"


def _check_walk(tokenizer, vocabulary, name: str, fast: bool) -> None:  # noqa: ANN001
    """Checks the fast positions of ``name``, or (not ``fast``) those and every third other position, the
    third chosen by the case (each check steps the whole vocabulary: seconds under a tracker)."""
    enforcer = TokenEnforcer(vocabulary, JsonSchemaParser(SCHEMAS[name]))
    plain = TokenEnforcer(vocabulary, JsonSchemaParser(WITHOUT_CONTAINS[name])) if name in WITHOUT_CONTAINS else None
    position, plain_position, checked = enforcer.start, None if plain is None else plain.start, 0
    offset = sorted(SCHEMAS).index(name) % 3
    chosen = [prefix in FAST.get(name, ()) or (not fast and index % 3 == offset)
              for index, (_, prefix) in enumerate(_positions(tokenizer, name))]  # fmt: skip
    for (token, prefix), check in zip(_positions(tokenizer, name), chosen):
        if check:
            started = time.process_time()
            enforcer.mask(position)
            assert time.process_time() - started < MASK_CPU_GUARD, prefix
            mask, step = mask_and_step_at(enforcer, position)
            assert token in mask, prefix
            assert not mask - step, (prefix, [tokenizer.decode([t]) for t in sorted(mask - step)[:10]])
            missing = [tokenizer.decode([t]) for t in sorted(step - mask)]
            if name in EXACT:
                assert not missing, (prefix, missing[:10])
            else:
                # only tokens that close the key after a run (``<<"``, ``."``): the stand-in's subset
                assert _inside_a_key(prefix) or not missing, (prefix, missing[:10])
                assert all('"' in text for text in missing), (prefix, [t for t in missing if '"' not in t][:10])
            if plain is not None and _inside_a_key(prefix):
                assert mask == set(ids_of(plain.mask(plain_position))), prefix
            checked += 1
        position = enforcer.step(position, token)
        assert position is not None, prefix
        if plain is not None:
            plain_position = plain.step(plain_position, token)
            assert plain_position is not None, prefix
    assert checked == sum(chosen) and checked > 0


@pytest.mark.parametrize("name", sorted(FAST))
def test_masks_inside_keys_agree_with_the_step(llama3_tokenizer, llama3_vocabulary, name: str) -> None:
    _check_walk(llama3_tokenizer, llama3_vocabulary, name, fast=True)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_masks_along_the_walk_agree_with_the_step(llama3_tokenizer, llama3_vocabulary, name: str) -> None:
    _check_walk(llama3_tokenizer, llama3_vocabulary, name, fast=False)


def test_a_capped_tracker_past_a_key_run_never_lets_in_an_item_the_cap_forbids() -> None:
    """Under ``maxContains`` a tracker whose key run is a stand-in becomes unknown after the run, and the item
    may not end in that token. Llama 3 and SmolLM2 have no token that closes a key after a run and ends the
    item, so these tokens are made up: at ``[{"ab`` (no match yet, cap 1) the token that ends a matching item
    and writes a second match is refused by both the mask and the step (a tracker that lost the match in the
    run would have let it in), and the mask leaves out the two the step takes past the item's end."""
    tokens = ["<eos>", *'[]{}",:_abcdpnul0156', "cd", 'cd":15}', 'cd":15}]', 'cd":16}]', 'cd":15},{"p_":null}]',
              'cd":16},{"p_":null}]', "null"]  # fmt: skip
    vocabulary = Vocabulary.from_tokens(tokens, eos_token_ids=[0])
    schema = {"type": "array", "items": {"type": "object"}, "contains": PATTERNED, "maxContains": 1}
    enforcer = TokenEnforcer(vocabulary, JsonSchemaParser(schema))
    position = enforcer.start
    for ch in '[{"ab':
        position = enforcer.step(position, tokens.index(ch))
        assert position is not None, ch
    assert position.state.free_run() is not None  # the mask rides the item's run here
    mask = {tokens[t] for t in ids_of(enforcer.mask(position))}
    step = {text for t, text in enumerate(tokens) if t and enforcer.step(position, t) is not None}
    assert 'cd":15},{"p_":null}]' not in step | mask  # two matches: over the cap
    assert {"cd", 'cd":15}'} <= mask
    assert mask <= step
    assert step - mask == {'cd":15}]', 'cd":16},{"p_":null}]'}
