"""The inside rows of automaton strings on the compiled JSON machine: the same masks as the full walk.

In the body of a string over an automaton (a pattern, a format, an enum), ``Machine.inside`` gives the
tokens that stay in the body and the places where the others leave it; core/compiled_walk.py keeps them per
automaton state and ``Machine.mask`` walks only below those exits. These tests compare that mask with the
machine's full walk at every position inside such strings, on real tokenizers and on random tries, and feed
``mask`` wrong exits.
"""

from __future__ import annotations

import random
import struct

import numpy as np
import pytest

from formatenforcer import JsonSchemaParser
from formatenforcer.core import backend
from formatenforcer.core.flat_trie import flat_trie

from .test_machine import _random_trie, _states_along, _twin

pytestmark = pytest.mark.skipif(backend.native is None, reason="the compiled core is not built or is switched off")

SCHEMAS = [
    ({"type": "string", "format": "date-time"}, ['"2024-03-18T09:41:27.5+02:00"', '"1999-12-31t23:59:60Z"']),
    ({"type": "string", "pattern": "^[a-z0-9]+(-[a-z0-9]+)*$"}, ['"my-slug-01"']),
    ({"type": "string", "pattern": "^[a-zé\\n]{1,6}$"}, ['"aé\\nb"', '"\\u00e9\\u000a"']),
    ({"enum": ["red", "green", 'blu"e', "x\u00e9"]}, ['"green"', '"blu\\"e"', '"x\\u00e9"']),
    ({"type": "object", "properties": {"d": {"type": "string", "format": "date"}, "u": {"format": "uri"}}},
     ['{"d":"2024-02-29","u":"https://a.example/x?y=1#z"}']),
    ({"type": "string", "format": "email"}, ['"ana.carvalho+news@example.com"']),  # (under a maximum length)
    ({"type": "string", "pattern": "^[a-z.]+@[a-z]+$", "maxLength": 400}, ['"abc.def@example"']),
]  # fmt: skip


def _both(program, trie, data):
    words = (trie.vocab_size + 31) // 32
    walked, taken = np.zeros(words, dtype=np.int32), np.zeros(words, dtype=np.int32)
    some = program.mask(trie, data, b"", walked)
    row, exits = program.inside(trie, data)
    assert len(exits) % 12 == 0
    assert program.mask(trie, data, b"", taken, np.frombuffer(row, dtype=np.int32), exits) is some
    assert some is bool(walked.any())  # (mask returns whether any token is in it)
    return walked, taken


def _inside_states(schema, texts, trie):
    """The states along ``texts`` for which ``inside`` answers over ``trie`` (a maximum length far enough)."""
    parser = JsonSchemaParser(schema)
    out = []
    for state in _states_along(_twin(parser), texts):
        program, data = state.machine_state()
        if program.inside_key(trie, data) is not None:
            out.append((program, data))
    return out


@pytest.mark.parametrize(("schema", "texts"), SCHEMAS)
def test_inside_rows_give_the_full_walks_mask(vocabularies, schema, texts):
    for name in ("llama3", "smollm2", "sentencepiece"):
        trie = flat_trie(vocabularies[name])
        states = _inside_states(schema, texts, trie)
        assert states
        for program, data in states:
            walked, taken = _both(program, trie, data)
            assert np.array_equal(walked, taken), (name, data.hex())


def test_inside_rows_on_random_tries():
    """Tries of arbitrary bytes (split and invalid UTF-8, empty tokens): the same masks, nothing written past
    the row (the sanitizer build faults on a bad access)."""
    for seed in range(4):
        trie = _random_trie(seed)
        for program, data in [s for schema, texts in SCHEMAS for s in _inside_states(schema, texts, trie)]:
            walked, taken = _both(program, trie, data)
            assert np.array_equal(walked, taken)


def test_a_maximum_length_within_reach_walks_whole(llama3_vocabulary):
    """Near its maximum length, a capped string's body is walked whole: ``inside`` does not answer there."""
    trie = flat_trie(llama3_vocabulary)
    parser = JsonSchemaParser({"type": "string", "pattern": "^[a-z]+$", "maxLength": 12})
    program, data = _twin(parser).add_text('"abc').machine_state()
    assert program.inside_key(trie, data) is None
    with pytest.raises(ValueError, match="not the body"):
        program.inside(trie, data)


def test_wrong_exits_and_states_are_value_errors(llama3_vocabulary):
    trie = flat_trie(llama3_vocabulary)
    program, data = _inside_states(*SCHEMAS[0], trie)[3]
    row, exits = program.inside(trie, data)
    words = (trie.vocab_size + 31) // 32
    out = np.zeros(words, dtype=np.int32)
    row = np.frombuffer(row, dtype=np.int32)
    for bad in (struct.pack("<3i", trie.nodes, 0, 34), struct.pack("<3i", 0, 10**6, 34),
                struct.pack("<3i", 0, 0, 65), struct.pack("<3i", -1, 0, 92), b"\0" * 8):  # fmt: skip
        with pytest.raises(ValueError):
            program.mask(trie, data, b"", out, row, bad)
    with pytest.raises(ValueError, match="exits come with their row"):
        program.mask(trie, data, b"", out, None, exits)
    with pytest.raises(ValueError, match="row"):
        program.mask(trie, data, b"", out, row[:-1], exits)
    start = program.start()
    assert program.inside_key(trie, start) is None
    assert program.plan(trie, start) is None and program.plan(trie, data)[1:] == program.inside_key(trie, data)[1:]
    for bad in (b"", b"\0" * 10, data[:-4], data + b"\1" * 4):
        with pytest.raises(ValueError, match="not a state"):
            program.plan(trie, bad)
    with pytest.raises(ValueError, match="not the body of a string over an automaton"):
        program.inside(trie, start)
    with pytest.raises(ValueError, match="row is taken only"):
        program.mask(trie, start, b"", out, row, exits)
    rng = random.Random(2)
    for _ in range(200):  # random exits inside the bounds: run, never fault
        words3 = [(rng.randrange(trie.nodes), rng.randrange(3), rng.choice([34, 92])) for _ in range(5)]
        program.mask(trie, data, b"", out, row, b"".join(struct.pack("<3i", *w) for w in words3))
