"""``hostname`` A-labels (``xn--``): punycode and IDNA2008 (formatenforcer/jsonschema/formats/idn/a_labels.py).

The label check is compared with the ``idna`` package's ``ulabel`` on random labels; the parser is checked
character by character, token by token with the Llama 3 tokenizer, and by seeded random walks steered into
``xn--`` labels (never a dead end, every finished walk a valid hostname within the length limits).
"""

from __future__ import annotations

import json
import random

import idna
import numpy as np
import pytest

from formatenforcer import JsonSchemaParser, TokenEnforcer
from formatenforcer.jsonschema.formats.idn.a_labels import WITNESS_EXTRA, valid_a_label_text, witness
from formatenforcer.jsonschema.formats.patterns import format_matches

from .json_checks import accepts_tokens

LDH = "abcdefghijklmnopqrstuvwxyz0123456789-"
# code points from scripts with and without contextual and bidi rules, marks, joiners, disallowed ones
SAMPLE_CODE_POINTS = [0xE0, 0xDF, 0x3C2, 0x3B1, 0x375, 0x5D0, 0x5F3, 0x5F4, 0x627, 0x660, 0x6F0, 0x94D, 0x915,
                      0x200C, 0x200D, 0x30FB, 0x3042, 0x30A2, 0x4E00, 0x302E, 0x300, 0x903, 0x488, 0xB7, 0x41,
                      0xAC00, 0x1F600, 0x2126]  # fmt: skip


def reference(text: str) -> bool:
    try:
        return not idna.ulabel("xn--" + text).isascii()
    except (idna.IDNAError, UnicodeError, ValueError):
        return False


def test_label_check_agrees_with_idna_ulabel():
    rng = random.Random(17)
    texts = []
    for _ in range(3000):
        chars = [chr(rng.choice(SAMPLE_CODE_POINTS)) for _ in range(rng.randint(1, 4))]
        chars += rng.choices("abl-", k=rng.randint(0, 3))
        rng.shuffle(chars)
        texts.append("".join(chars).encode("punycode").decode("ascii"))
    texts += ["".join(rng.choices(LDH, k=rng.randint(1, 12))) for _ in range(3000)]
    texts += [t[:i] + rng.choice(LDH) + t[i + 1 :] for t in texts[:2000] for i in [rng.randrange(len(t))]]
    assert sum(map(reference, texts)) > 500  # the sample holds plenty of valid labels
    assert [t for t in texts if valid_a_label_text(t.lower()) is not reference(t)] == []


def test_every_text_has_a_witness_within_the_bound():
    # the shortcut "any LDH character is fine while WITNESS_EXTRA characters fit" rests on this
    rng = random.Random(2)
    for length in range(60):
        for _ in range(40):
            text = "".join(rng.choices(LDH, k=length))
            found = witness(text)
            assert found is not None and found.startswith(text) and reference(found), text
            assert len(found) - len(text) <= WITNESS_EXTRA, text


VALID = [
    "xn--9n2bp8q.xn--9t4b11yi5a",
    "xn--zca29lwxobi7a",
    "xn--qmbc",
    "xn--ll-0ea",
    "xn--wva3je",
    "xn--4dbc5h",
    "xn--k8j5u",
    "xn--vek778f",
    "xn--ngba1o",
    "xn--0-gyc",
    "xn--11b2ezcw70k",
    "xn--ngba5hb2804a",
    "XN--ZCA29LWXOBI7A",
    "www.xn--mnchen-3ya.de",
    "a--b.com",
]
INVALID = [
    "xn--X",
    "xn--07jt112bpxg.xn--9t4b11yi5a",
    "xn--hello-txk",
    "xn--chb89f",
    "xn--al-0ea",
    "xn--l-gda",
    "xn--S-jib3p",
    "xn--5db1e",
    "xn--defabc-k64e",
    "xn--vek",
    "xn--ngb6iyr",
    "xn--02b508i",
    "XN--aa---o47jg78q",
    "xn--",
    "xn---bbk",
    "xn--abc",
    "xn--mnchen-3ya.xn--zz",
]


@pytest.mark.parametrize("text, expected", [(t, True) for t in VALID] + [(t, False) for t in INVALID])
def test_character_by_character(text, expected):
    parser = JsonSchemaParser({"type": "string", "format": "hostname"})
    assert parser.accepts(json.dumps(text)) is expected
    assert format_matches("hostname", text) is expected
    enum = JsonSchemaParser({"format": "hostname", "enum": [text, "ok.example"]})
    assert enum.accepts(json.dumps(text)) is expected


def _walk(parser, rng: random.Random) -> tuple[str, bool]:  # noqa: ANN001
    """A character walk that starts most labels with ``xn--`` when it may, then picks at random."""
    state, out = parser.add_text('"'), []
    for _ in range(300):
        allowed = state.allowed_characters()
        assert allowed, f"dead end after {''.join(out)!r}"
        options = [chr(c) for lo, hi in allowed.intervals for c in range(lo, hi + 1)]
        label = "".join(out).split(".")[-1]
        steer = "xn--"[len(label)] if len(label) < 4 and "xn--".startswith(label.lower()) else None
        if state.can_end() and rng.random() < 0.05:
            ch = '"'
        elif steer in options and rng.random() < 0.9:
            ch = steer
        else:
            ch = rng.choice(options)
        nxt = state.add_character(ch)
        assert nxt is not None, f"offered {ch!r} refused after {''.join(out)!r}"
        if ch == '"':
            return "".join(out), True
        out.append(ch)
        state = nxt
    return "".join(out), False


@pytest.mark.parametrize("schema", [{}, {"maxLength": 12}, {"minLength": 30, "maxLength": 40}, {"maxLength": 70}])
def test_walks_into_a_labels_never_dead_end(schema):
    parser = JsonSchemaParser({"type": "string", "format": "hostname", **schema})
    rng = random.Random(23)
    finished = a_labels = 0
    for _ in range(15):
        text, done = _walk(parser, rng)
        if done:
            finished += 1
            a_labels += "xn--" in text.lower()
            assert format_matches("hostname", text), text
            assert schema.get("minLength", 0) <= len(text) <= schema.get("maxLength", 253), text
    assert finished >= 10 and a_labels >= 5


def test_llama3_tokens(llama3_tokenizer, llama3_vocabulary):
    enforcer = TokenEnforcer(llama3_vocabulary, JsonSchemaParser({"type": "string", "format": "hostname"}))
    for text in ["xn--9n2bp8q.xn--9t4b11yi5a", "xn--ngba5hb2804a", "www.xn--mnchen-3ya.de"]:
        ok, why = accepts_tokens(enforcer, llama3_tokenizer, json.dumps(text))
        assert ok, (text, why)
    for text in ["xn--X", "xn--hello-txk", "xn--vek"]:
        assert not accepts_tokens(enforcer, llama3_tokenizer, json.dumps(text))[0], text
    # token walks from inside an A-label: every mask non-empty, every pick accepted, finished walks valid
    start = llama3_tokenizer.encode('"xn--', add_special_tokens=False)
    for seed in range(3):
        rng = random.Random(seed)
        matcher = enforcer.matcher()
        for token in start:
            assert matcher.accept_token(token)
        pieces = []
        for _ in range(12):
            allowed = np.array(matcher.allowed_token_ids())
            assert allowed.size
            token = int(allowed[rng.randrange(allowed.size)])
            if token in llama3_vocabulary.eos_token_ids:
                break
            assert matcher.accept_token(token)
            pieces.append(llama3_vocabulary.text_of(token))
            if matcher.is_finished():
                break
        text = (b'"xn--' + b"".join(pieces)).decode()
        if text.endswith('"') and len(text) > 1:
            assert format_matches("hostname", json.loads(text)), text
