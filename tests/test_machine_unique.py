"""``uniqueItems`` over strings on the compiled JSON machine: the Python parsers' answers, exactly.

The machine (core/_machine.c) keeps a uniqueItems array's seen items as decoded code points after its frames
and refuses the quote that would close a seen item; over an enum's words it also refuses every character
after which only seen words are left, and the comma when every word has been seen. The Python parsers (the
reference) exclude the seen values from the next item's schema. These tests drive both through documents
built to meet seen items (repeats, prefixes, escapes, characters beyond ASCII) and compare every allowed
set, refusal and token mask; and they feed the C side wrong programs and states.
"""

from __future__ import annotations

import json
import random
import struct

import numpy as np
import pytest

from formatenforcer import JsonSchemaParser
from formatenforcer.core import backend
from formatenforcer.core.walk import advance, allowed_mask

from .test_machine import _force, _same_masks, _twin, force_cases_with

pytestmark = pytest.mark.skipif(backend.native is None, reason="the compiled core is not built or is switched off")

WORDS = ["a", "ab", "abc", "b", "é", "é😀", "x\ny", 'q"', "", "ba"]
UNIQUE = [
    {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
    {"type": "array", "items": {"type": "string", "minLength": 1}, "uniqueItems": True, "maxItems": 6},
    {"type": "array", "items": {"enum": WORDS}, "uniqueItems": True},
    {"type": "array", "items": {"enum": ["red", "green", "blue"]}, "uniqueItems": True, "minItems": 1},
    {
        "type": "object",
        "properties": {
            "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
            "n": {"type": "integer"},
        },
    },
    {"type": "array", "items": {"type": "array", "items": {"enum": ["a", "b", "c"]}, "uniqueItems": True}},
]


def _spell(text: str, rng: random.Random) -> str:
    """``text`` as a JSON string body, some characters beyond printable ASCII spelled as ``\\u`` escapes."""
    out = []
    for ch in text:
        plain = json.dumps(ch, ensure_ascii=False)[1:-1]
        if rng.random() < 0.5 and not 0x20 <= ord(ch) <= 0x7E and ord(ch) <= 0xFFFF:  # (printable ASCII: never)
            out.append(f"\\u{ord(ch):04x}")
        elif rng.random() < 0.5 and ord(ch) > 0xFFFF:
            pair = ch.encode("utf-16-be")
            out.append(f"\\u{pair[0]:02x}{pair[1]:02x}\\u{pair[2]:02x}{pair[3]:02x}")
        else:
            out.append(plain)
    return "".join(out)


def _check(reference, machine):
    assert machine.allowed_characters() == reference.allowed_characters()
    assert machine.can_end() == reference.can_end()
    for probe in '"\\,]azé😀\n':
        assert (machine.add_character(probe) is None) == (reference.add_character(probe) is None), probe


def _feed(reference, machine, text: str):
    """Both stepped through ``text`` with the same answers at every character; None where the reference
    refuses a character (the machine must refuse it too)."""
    for ch in text:
        _check(reference, machine)
        reference, machine = reference.add_character(ch), machine.add_character(ch)
        assert (reference is None) == (machine is None), ch
        if reference is None:
            return None
    return reference, machine


def _document(reference, machine, rng: random.Random, pool: list[str]):
    """An array of items drawn from ``pool`` (so items repeat and prefix each other), each item's closing
    quote tried: where it would repeat a seen item both refuse it and the item goes on with more text."""
    reference, machine = _feed(reference, machine, "[")
    for index in range(rng.randint(1, 7)):
        if index:
            after = _feed(reference, machine, ",")
            if after is None:  # (every word of an enum seen)
                break
            reference, machine = after
        body = _spell(rng.choice(pool), rng)
        stepped = _feed(reference, machine, '"' + body)
        if stepped is None:  # a word left with nothing new after it
            return
        reference, machine = stepped
        for extra in ["", *"zyx"]:
            closed = _feed(reference, machine, extra + '"')
            if closed is not None:
                reference, machine = closed
                break
            if extra:
                more = _feed(reference, machine, extra)
                if more is None:
                    return
                reference, machine = more
        else:
            return
    _feed(reference, machine, "]")


@pytest.mark.parametrize("schema", UNIQUE[:4])
def test_documents_that_meet_seen_items_character_by_character(schema):
    parser = JsonSchemaParser(schema)
    rng = random.Random(11)
    for _ in range(40):
        _document(parser, _twin(parser), rng, [*WORDS, "red", "re", "green", "blue"])


def test_an_enum_runs_out_of_words():
    parser = JsonSchemaParser(UNIQUE[3])
    machine = _twin(parser)
    for text in ('["red","green","blue"', '["blue","red"', '["gr'):
        assert _feed(parser, machine, text) is not None
    assert machine.add_text('["red","green","blue",') is None
    assert machine.add_text('["red","green","blue"]') is not None
    assert machine.add_text('["red","red"') is None
    assert machine.add_text('["red","re') is None
    assert machine.add_text('["red","\\u0072ed"') is None
    assert machine.add_text('["red","gre') is not None


def test_items_read_within_one_token(llama3_vocabulary, llama3_tokenizer):
    """Tokens that close an item, open the next and close it again (``","``, ``a","a``): the walk keeps the
    item it just closed among the seen ones for the rest of the token."""
    for schema in UNIQUE:
        parser = JsonSchemaParser(schema)
        for items in (["a", "a2", "ab", "b"], ["é", "e", "é😀"], ["red", "green", "blue"], ['q"', "x\ny", "a"]):
            if "properties" in schema:
                value = {"tags": items, "n": 1}
            else:
                value = [items, items[:1]] if "items" in schema["items"] else items
            text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
            try:
                _force(llama3_vocabulary, llama3_tokenizer, parser, text)
            except AssertionError:
                if parser.add_text(text) is not None:  # (a document the schema refuses is not a test)
                    raise


def test_masks_at_seen_prefixes(llama3_vocabulary):
    """Masks inside items that are prefixes of seen ones, on both sides of an escape and a split character."""
    for schema in UNIQUE[:4]:
        parser = JsonSchemaParser(schema)
        texts = ('["a","ab","', '["a","ab","a', '["ab","a","ab', '["é","', '["é😀","é', '["red","g', '["b","ba","b')
        for text in texts:
            reference, machine = parser.add_text(text), _twin(parser).add_text(text)
            assert (reference is None) == (machine is None), text
            if reference is None:
                continue
            _same_masks(llama3_vocabulary, reference, machine)
            for pending in (b"\xc3", b"\xf0\x9f"):
                if advance(reference, b"", pending) is not None:
                    _same_masks(llama3_vocabulary, reference, machine, pending)


@pytest.mark.parametrize("name", ["llama3", "smollm2", "sentencepiece"])
def test_random_token_walks_prefer_seen_items(vocabularies, name):
    """Random token walks that pick tokens spelling a seen item's next characters when they may."""
    vocabulary = vocabularies[name]
    rng = random.Random(5)
    for schema in UNIQUE:
        parser = JsonSchemaParser(schema)
        for _ in range(2):
            reference, machine, pending = parser, _twin(parser), b""
            written = b""
            for _ in range(30):
                mask = allowed_mask(vocabulary, reference, pending, False, {})
                _same_masks(vocabulary, reference, machine, pending)
                ids = [int(t) for t in np.flatnonzero(np.unpackbits(mask.view(np.uint8), bitorder="little"))]
                ids = [t for t in ids if vocabulary.token_bytes[t]]
                if not ids:
                    break
                seen = [json.dumps(w, ensure_ascii=False)[1:].encode() for w in WORDS + ["red", "green"]]
                echo = [t for t in ids if any(s.startswith(vocabulary.token_bytes[t]) for s in seen)]
                data = vocabulary.token_bytes[rng.choice(echo if echo and rng.random() < 0.7 else ids)]
                stepped, moved = advance(reference, pending, data), advance(machine, pending, data)
                assert stepped is not None and moved is not None and stepped[1] == moved[1]
                reference, pending, machine = stepped[0], stepped[1], moved[0]
                written += data
            assert machine.can_end() == reference.can_end(), written


def test_the_benchmark_cases_with_unique_strings(llama3_vocabulary, llama3_tokenizer):
    assert force_cases_with(llama3_vocabulary, llama3_tokenizer, "uniqueItems") >= 3


def test_unique_items_over_other_items_stay_on_the_python_parsers():
    for items in ({"type": "integer"}, {"type": "string", "maxLength": 3}, {"type": "string", "pattern": "^a+$"}):
        assert JsonSchemaParser({"type": "array", "items": items, "uniqueItems": True}).compiled_twin() is None
    tuple_schema = {"type": "array", "prefixItems": [{"type": "string"}], "uniqueItems": True}
    assert JsonSchemaParser(tuple_schema).compiled_twin() is None


def test_wrong_item_words_are_a_value_error():
    machine = _twin(JsonSchemaParser(UNIQUE[2]))
    program = machine._machine
    state = machine.add_text('["a","ab","b').machine_state()[1]
    for bad in (
        state[:-4],  # a word short
        state + struct.pack("<i", 0x61),  # a word too many
        state[:-4] + struct.pack("<i", 0xD800),  # a surrogate
        state[:-4] + struct.pack("<i", -5),
    ):
        with pytest.raises(ValueError, match="not a state"):
            program.step(bad, b"c")
    rng = random.Random(9)
    for _ in range(300):
        data = bytearray(state)
        at = rng.randrange(len(data))
        data[at] = rng.randrange(256)
        try:
            program.step(bytes(data), b'"')
            program.allowed(bytes(data))
            program.can_end(bytes(data))
        except ValueError:
            pass


def test_wrong_unique_programs_are_refused():
    program = _twin(JsonSchemaParser(UNIQUE[2]))._machine
    code = bytearray(program.code)
    rng = random.Random(4)
    refused = 0
    for _ in range(300):
        mutated = bytearray(code)
        at = rng.randrange(len(code) // 4)
        mutated[4 * at : 4 * at + 4] = struct.pack("<i", rng.choice([-1, 0, 1, 2, 3, 1 << 30, rng.randint(-9, 99)]))
        try:
            machine = backend.native.Machine(bytes(mutated), program.automata)
        except ValueError:
            refused += 1
            continue
        state = machine.start()
        for ch in '["a","ab","b","é"]':
            after = machine.step(state, ch.encode())
            if after is None:
                break
            machine.allowed(after)
            state = after
    assert refused > 0
