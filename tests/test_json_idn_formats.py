"""``idn-hostname`` and ``idn-email`` (formatenforcer/jsonschema/formats_idn*.py, jsonschema/formats/idn/email.py).

Finished strings are judged by an independent reference built on the ``idna`` package (``idna.alabel`` per
label, RFC 5893's rule across labels, the 253-octet name); seeded random walks pick allowed characters
(favouring the ones with contextual and bidi rules, and taking the free runs' shortcuts) and must never dead
end; the Llama 3 tokenizer's natural tokenizations of valid names pass token by token.
"""

from __future__ import annotations

import json
import random
import re
import unicodedata

import idna
import numpy as np
import pytest

from formatenforcer import JsonSchemaParser, TokenEnforcer
from formatenforcer.jsonschema.formats.idn.classes import backward_ok
from formatenforcer.jsonschema.formats.idn.email import IdnEmailContent, idn_email_ok
from formatenforcer.jsonschema.formats.idn.hostname import IdnHostnameContent, _digits_viable
from formatenforcer.jsonschema.formats.idn.label import idn_hostname_ok, viable
from formatenforcer.jsonschema.formats.idn.length import (
    _digit_steps,
    _digits,
    _digits_by_loop,
    a_length,
    a_length_appended,
    a_length_bound,
    a_lengths_with_basics,
)
from formatenforcer.jsonschema.formats.idn.tables import DOTS, tables

from .json_checks import accepts_tokens

# characters with rules of their own, right-to-left ones, marks, a dot of each kind
FAVOURITES = ("al0-.\u00b7\u0375\u05f3\u05d0\u0628\u0660\u06f0\u200c\u200d\u094d\u0915\u30fb\u3041\u4e00"
              "\u03b1\u0301\u0300\u1161\u1100\u00e9\u0627\u064a\u1820\u05b0\u3002\uff61")  # fmt: skip


def reference(text: str) -> bool:
    """idna's verdict: every label through ``idna.alabel`` (ASCII labels lowercased, as idna does), and
    in a name holding a right-to-left label every label satisfying the bidi rule (RFC 5893 section 2)."""
    total, facts = 0, []
    for label in re.split(f"[{DOTS}]", text):
        if not label:
            return False
        try:
            a_label = idna.alabel(label.lower() if label.isascii() else label)
            u_label = idna.ulabel(a_label).lower() if label.isascii() else label
        except (idna.IDNAError, UnicodeError, ValueError):
            return False
        total += len(a_label) + 1
        try:
            bidi_ok = idna.core.check_bidi(u_label, check_ltr=True)
        except idna.IDNAError:
            bidi_ok = False
        facts.append((any(unicodedata.bidirectional(c) in ("R", "AL", "AN") for c in u_label), bidi_ok))
    if any(rtl for rtl, _ in facts) and not all(ok for _, ok in facts):
        return False
    return total - 1 <= 253


VALID = [
    "실례.테스트",
    "xn--ihqwcrb4cv8a8dqg056pqjye",
    "l\u00b7l",
    "\u03b1\u0375\u03b2",
    "\u05d0\u05f3\u05d1",
    "\u30fb\u3041",
    "\u0628\u0660\u0628",
    "\u0915\u094d\u200d\u0937",
    "\u0628\u064a\u200c\u0628\u064a",
    "a\u3002b",
    "münchen.de",
    "\u00e9\u00e9",
    "a" * 63,
    "παράδειγμα" * 5 + "πα\uff0ecom",
    "Host.Example",
]
INVALID = [
    "\u302e실례.테스트",
    "a" * 64,
    "xn--X",
    "XN--aa---o47jg78q",
    "hello-",
    "\u0300hello",
    "a\u00b7l",
    "\u03b1\u0375S",
    "def\u30fbabc",
    "\u0628\u0660\u06f0",
    "\u200d\u0937",
    "0a.\u05d0",
    "a\u05d0",
    "\u00fc" * 60,
    "a..b",
    "example.",
    "e\u0301",
    "xn--7a",
    "Müller.de",
    "ab--c",
    "\u3002",
]


@pytest.mark.parametrize("text, expected", [(t, True) for t in VALID] + [(t, False) for t in INVALID])
def test_character_by_character(text, expected):
    assert reference(text) is expected
    assert idn_hostname_ok(text) is expected
    parser = JsonSchemaParser({"type": "string", "format": "idn-hostname"})
    assert parser.accepts(json.dumps(text, ensure_ascii=False)) is expected
    assert parser.accepts(json.dumps(text)) is expected  # \uXXXX escapes


def test_a_length_is_the_codecs():
    rng = random.Random(5)
    starts = [0xE0, 0x3B1, 0x5D0, 0x4E00, 0xAC00, 0x1F600, 0x20000, 0x300]
    for _ in range(3000):
        text = "".join(chr(rng.choice(starts) + rng.randrange(60)) if rng.random() < 0.6 else rng.choice("ab-0")
                       for _ in range(rng.randint(1, 30)))  # fmt: skip
        if not text.isascii():
            assert a_length(text) == 4 + len(text.encode("punycode")), text


def test_capitals_stay_out_of_labels_with_non_ascii_characters():
    # an ASCII label allows capitals; a label with the same summary but a non-ASCII character must not
    content = IdnHostnameContent()
    state = content.start()
    for ch in "ab-":
        state = content.step(state, ch)
    assert "E" in content.allowed(state)
    state = content.start()
    for ch in "m\u00fc-":
        state = content.step(state, ch)
    assert "E" not in content.allowed(state) and content.step(state, "E") is None


def test_a_length_appended_is_a_length():
    rng = random.Random(9)
    starts = [0xE0, 0x3B1, 0x5D0, 0x4E00, 0xAC00, 0x1F600, 0x20000, 0x300, 0x400]
    for _ in range(1500):
        text = "".join(chr(rng.choice(starts) + rng.randrange(200)) if rng.random() < 0.8 else rng.choice("ab0")
                       for _ in range(rng.randint(1, 40)))  # fmt: skip
        ch = chr(rng.choice(starts) + rng.randrange(200)) if rng.random() < 0.9 else "a"
        assert a_length_appended(text, ch) == a_length(text + ch), (text, ch)


def test_a_length_appended_below_the_highest_is_a_length():
    # the encoder resumed part-way: a code point of the label itself, one between two of them, the lowest
    rng = random.Random(10)
    starts = [0xE0, 0x3B1, 0x5D0, 0x4E00, 0x300]
    for _ in range(400):
        text = "".join(chr(rng.choice(starts) + rng.randrange(60)) if rng.random() < 0.8 else rng.choice("ab0")
                       for _ in range(rng.randint(1, 50)))  # fmt: skip
        own = sorted({ord(c) for c in text if not c.isascii()})
        if not own:
            continue
        for cp in {rng.choice(own), rng.randrange(128, own[-1] + 1), own[0], own[-1], 128}:
            assert a_length_appended(text, chr(cp)) == a_length(text + chr(cp)), (text, cp)


def test_a_lengths_with_basics_replay_a_length():
    rng = random.Random(8)
    starts = [0xE0, 0x3B1, 0x5D0, 0x4E00, 0xAC00, 0x1F600, 0x20000, 0x300, 0x400]
    for _ in range(400):
        text = "".join(chr(rng.choice(starts) + rng.randrange(200)) if rng.random() < 0.8 else rng.choice("ab0")
                       for _ in range(rng.randint(1, 40)))  # fmt: skip
        if not text.isascii():
            assert a_lengths_with_basics(text, 25) == [a_length(text + "a" * k) for k in range(26)], text


def test_digits_by_thresholds_are_the_encoders():
    rng = random.Random(5)
    for _ in range(20000):
        q, bias = rng.randrange(10 ** rng.randrange(1, 40)), rng.randrange(0, 800)
        assert _digits(q, bias) == _digits_by_loop(q, bias), (q, bias)
    for bias in (0, 1, 25, 26, 72, 300):  # every threshold and its neighbours
        for q in sorted({t + d for t in _digit_steps(bias) for d in (-1, 0, 1) if t + d >= 0}):
            assert _digits(q, bias) == _digits_by_loop(q, bias), (q, bias)


def test_digit_runs_taken_at_once_are_each_viable():
    # labels up to the length limit, below the digits and above them, left-to-right and right-to-left, with
    # and without digits of the other run; every digit a run lets through passes its own check, and a run
    # is let through at once somewhere
    rng = random.Random(4)
    starts, special = [0xE0, 0x3B1, 0x5D0, 0x628, 0x4E00], tables().special
    taken = 0
    for _ in range(600):
        label = "".join(chr(rng.choice(starts) + rng.randrange(24)) if rng.random() < 0.85
                        else rng.choice(["a", "0", "\u0661", "\u06f1"]) for _ in range(rng.randint(1, 60)))  # fmt: skip
        done, domain = rng.choice([0, 150, 190]), rng.choice([(False, False), (True, False)])
        sure = _digits_viable(label, done, domain, True, special)
        for ch in sure:
            assert backward_ok(label, ch) and viable(label + ch, done, domain, True), (label, ch)
        taken += len(sure)
    assert taken > 100


def test_a_length_bound_holds_for_every_completion():
    # completions meant to hurt: code points between and equal to the label's own, the lowest, the highest
    # allowed, basic ones; the bound must hold for each (and be exact with nothing appended)
    rng = random.Random(12)
    highest, witness = tables().max_code_point, 0x3041
    starts = [0xE0, 0x3B1, 0x5D0, 0x4E00, 0xAC00, 0x1F600, 0x20000, 0x300, 0x400, 0x3040]
    for _ in range(1500):
        label = "".join(chr(rng.choice(starts) + rng.randrange(120)) if rng.random() < 0.8 else rng.choice("ab0")
                        for _ in range(rng.randint(0, 30)))  # fmt: skip
        count = rng.randint(0, 6)
        caps = (highest,) * count + ((witness,) if rng.random() < 0.5 else ())
        bound = a_length_bound(label, caps)
        if label and not label.isascii():
            assert a_length_bound(label, ()) == a_length(label), label
        own = [ord(c) for c in label if not c.isascii()] or [0x100]
        for _ in range(8):
            picks = []
            for cap in caps[: rng.randint(0, len(caps))]:
                near = rng.choice(own) + rng.randint(-2, 2)
                cp = rng.choice([128, 129, cap, cap - 1, near, rng.randrange(128, cap + 1), 97])
                picks.append(chr(cp if cp == 97 else min(max(cp, 128), cap)))
            assert a_length(label + "".join(picks)) <= bound, (label, picks, bound)


def test_a_length_bound_grows_with_the_unknown_characters():
    # the anchors of the mixed runs (formats_idn_runs.run_room) rest on it: room for n characters is room
    # for fewer
    rng = random.Random(21)
    highest, witness = tables().max_code_point, 0x3041
    for _ in range(300):
        label = "".join(chr(0x3B1 + rng.randrange(25)) if rng.random() < 0.7 else chr(0x4E00 + rng.randrange(9000))
                        for _ in range(rng.randint(1, 30)))  # fmt: skip
        bounds = [a_length_bound(label, (highest,) * n + (witness,)) for n in range(12)]
        assert bounds == sorted(bounds), (label, bounds)


def test_long_greek_label_offers_a_mixed_run():
    # 20 Greek letters (29 octets of A-label): the bound by counts stopped the mixed runs after 4 non-ASCII
    # characters; the bound on the label's own code points keeps them (a run of 4) and class-based masks
    content = IdnHostnameContent()
    state = content.start()
    for ch in "παράδειγμα" * 2:
        state = content.step(state, ch)
    run = content.free(state)
    assert run is not None and run[1] >= 4 and "\u4e00" in run[0] and "\u03b1" in run[0] and "a" in run[0]
    # a token of the run is read one character at a time, each checked against the allowed set (the UTF-8
    # lead bytes): every state inside the run must allow every character of the run
    rng = random.Random(4)
    pool = [chr(c) for lo, hi in run[0].intervals for c in (lo, hi, (lo + hi) // 2)] + list("αβγ十五中a7")
    for _ in range(200):
        inside = state
        for ch in rng.choices(pool, k=rng.randint(1, run[1])):
            assert ch in content.allowed(inside), (ch, inside)
            inside = content.step(inside, ch)
            assert inside is not None
            follow = content.free(inside)  # what is left of the run inside it is offered there too
            assert follow is None or not (follow[0] - content.allowed(inside))
    finished = [t for t in (_walk(content, rng, reference, "παράδειγμα" * 2) for _ in range(15)) if t is not None]
    assert len(finished) >= 8


@pytest.mark.slow
def test_long_greek_label_token_walks_end_valid(llama3_tokenizer, llama3_vocabulary):
    # token by token from inside a 20-letter Greek label: every mask non-empty, every pick accepted, every
    # finished walk a valid idn-hostname (idna's verdict), some of them through the mixed run's tokens
    enforcer = TokenEnforcer(llama3_vocabulary, JsonSchemaParser({"type": "string", "format": "idn-hostname"}))
    prefix = '"' + "παράδειγμα" * 2
    start = llama3_tokenizer.encode(prefix, add_special_tokens=False)
    endings = 0
    for seed in range(6):
        rng = random.Random(seed)
        matcher = enforcer.matcher()
        for token in start:
            assert matcher.accept_token(token)
        pieces = []
        for _ in range(10):
            allowed = np.array(matcher.allowed_token_ids())
            assert allowed.size
            # favour tokens that end the string, so walks finish
            enders = [t for t in allowed.tolist() if llama3_vocabulary.text_of(t).rstrip().endswith(b'"')]
            token = int(rng.choice(enders) if enders and rng.random() < 0.3 else allowed[rng.randrange(allowed.size)])
            if token in llama3_vocabulary.eos_token_ids:
                break
            assert matcher.accept_token(token)
            pieces.append(llama3_vocabulary.text_of(token))
            if matcher.is_finished():
                break
        text = (prefix.encode() + b"".join(pieces)).decode("utf-8", "replace").strip()  # root whitespace aside
        if text.endswith('"') and len(text) > 1:
            endings += 1
            assert reference(json.loads(text)), text
    assert endings >= 3


def _walk(content, rng: random.Random, check, prefix: str = ""):  # noqa: ANN001
    """A seeded walk over the content automaton from ``prefix``: allowed characters (favourites half of the
    time, free runs a fifth of it); no dead end, every offered character accepted. Returns the text or None
    if unfinished."""
    state, out = content.start(), [prefix]
    for ch in prefix:
        state = content.step(state, ch)
    for _ in range(300):
        allowed = content.allowed(state)
        assert allowed or content.accepting(state), f"dead end after {''.join(out)!r}"
        if content.accepting(state) and (rng.random() < 0.04 or not allowed):
            text = "".join(out)
            assert check(text), (text, [hex(ord(c)) for c in text])
            return text
        run = content.free(state)
        if run is not None and rng.random() < 0.2:
            # the FreeRun promise: any run of the class up to the limit is accepted by the real state, and
            # the stand-in after it accepts only what the real state accepts (checked at the end)
            chars, limit, after = run
            assert not (chars - allowed)
            n = rng.randint(1, min(limit, 6))
            pool = [c for c in FAVOURITES if c in chars] + ["a", "\u4e00", "\u0436", "\u00e9", "7"]
            word = "".join(rng.choice([c for c in pool if c in chars]) for _ in range(n))
            real = state
            for ch in word:
                # a token is read through the allowed sets too (its UTF-8 lead bytes), not only by stepping
                assert ch in content.allowed(real), f"run {word!r} not allowed after {''.join(out)!r}"
                real = content.step(real, ch)
                assert real is not None, f"run {word!r} refused after {''.join(out)!r}"
            out.append(word)
            # as inside a token, a few characters from the stand-in: the real state must accept them too
            stand_in = after(n)
            for _ in range(rng.randint(0, 3)):
                if content.accepting(stand_in):
                    assert content.accepting(real), ("".join(out), stand_in)
                offered = content.allowed(stand_in)
                if not offered:
                    break
                lo, hi = offered.intervals[rng.randrange(len(offered.intervals))]
                ch = chr(rng.randint(lo, hi))
                assert ch in content.allowed(real), ("".join(out), ch)  # as a token is read
                stand_in, real = content.step(stand_in, ch), content.step(real, ch)
                assert stand_in is not None and real is not None, ("".join(out), ch)
                out.append(ch)
            state = real
            continue
        favourites = [c for c in FAVOURITES if c in allowed]
        if favourites and rng.random() < 0.5:
            ch = rng.choice(favourites)
        else:
            lo, hi = allowed.intervals[rng.randrange(len(allowed.intervals))]
            ch = chr(rng.randint(lo, hi))
        nxt = content.step(state, ch)
        assert nxt is not None, f"offered {ch!r} refused after {''.join(out)!r}"
        out.append(ch)
        state = nxt
    return None


@pytest.mark.parametrize("seed", range(3))
def test_hostname_walks_finish_valid(seed):
    content, rng = IdnHostnameContent(), random.Random(seed)
    finished = [t for t in (_walk(content, rng, reference) for _ in range(12)) if t is not None]
    assert len(finished) >= 8
    assert any(not t.isascii() for t in finished)


def _email_reference(text: str) -> bool:
    local, _, domain = text.rpartition("@")
    if len(local.encode("utf-8", "surrogatepass")) > 64 or not local:
        return False
    dot_atom = re.fullmatch(r"(?:[A-Za-z0-9!#$%&'*+/=?^_`{|}~\-]|[^\x00-\x7f])+"
                            r"(?:\.(?:[A-Za-z0-9!#$%&'*+/=?^_`{|}~\-]|[^\x00-\x7f])+)*", local)  # fmt: skip
    quoted = re.fullmatch(r'"(?:[ !#-\[\]-~]|[^\x00-\x7f]|\\[ -~])*"', local)
    return bool(dot_atom or quoted) and idn_hostname_ok(domain, nfc=False)


def test_email_walks_finish_valid():
    content, rng = IdnEmailContent(), random.Random(11)
    finished = [t for t in (_walk(content, rng, _email_reference) for _ in range(12)) if t is not None]
    assert len(finished) >= 6
    assert all(idn_email_ok(t) for t in finished)


@pytest.mark.parametrize("text, expected", [
    ("실례@실례.테스트", True), ("joe.bloggs@example.com", True), ('"δοκιμή"@example.com', True),
    ("user@cafe\u0301.com", True), ("\uffff@example.com", True), ("\U0001d54f@example.com", True),
    ("a" * 64 + "@example.com", True), ("a" * 65 + "@example.com", False), ("2962", False),
    ("user\uff20example.com", False), ("a.@example.com", False), ("a@b..c", False), ('"a\\"@b', False),
])  # fmt: skip
def test_email_character_by_character(text, expected):
    assert idn_email_ok(text) is expected
    parser = JsonSchemaParser({"type": "string", "format": "idn-email"})
    assert parser.accepts(json.dumps(text, ensure_ascii=False)) is expected


@pytest.mark.parametrize("schema", [
    {"format": "idn-hostname", "maxLength": 20}, {"format": "idn-email", "pattern": "a"},
    {"allOf": [{"format": "idn-hostname"}, {"format": "hostname"}]}, {"not": {"format": "idn-email"}},
])  # fmt: skip
def test_combinations_are_refused(schema):
    from formatenforcer.core.errors import UnsupportedSchemaError

    with pytest.raises(UnsupportedSchemaError):
        JsonSchemaParser({"type": "string", **schema})


def test_enum_filtered_by_the_format():
    parser = JsonSchemaParser({"format": "idn-hostname", "enum": ["실례.테스트", "a\u05d0", "ok"]})
    assert parser.accepts('"실례.테스트"') and parser.accepts('"ok"') and not parser.accepts('"a\u05d0"')


@pytest.mark.slow  # about a minute and a half: first masks build free-run tables under many trie nodes
def test_llama3_tokens(llama3_tokenizer, llama3_vocabulary):
    enforcer = TokenEnforcer(llama3_vocabulary, JsonSchemaParser({"type": "string", "format": "idn-hostname"}))
    for text in ["münchen.de", "실례.테스트", "\u0915\u094d\u200d\u0937"]:
        ok, why = accepts_tokens(enforcer, llama3_tokenizer, json.dumps(text, ensure_ascii=False))
        assert ok, (text, why)
    for text in ["a\u05d0", "0a.\u05d0", "\u00fc" * 60]:
        assert not accepts_tokens(enforcer, llama3_tokenizer, json.dumps(text, ensure_ascii=False))[0], text
    # token walks from inside a Greek label: every mask non-empty, every pick accepted, finished walks valid
    start = llama3_tokenizer.encode('"παρά', add_special_tokens=False)
    for seed in range(2):
        rng = random.Random(seed)
        matcher = enforcer.matcher()
        for token in start:
            assert matcher.accept_token(token)
        pieces = []
        for _ in range(6):
            allowed = np.array(matcher.allowed_token_ids())
            assert allowed.size
            token = int(allowed[rng.randrange(allowed.size)])
            if token in llama3_vocabulary.eos_token_ids:
                break
            assert matcher.accept_token(token)
            pieces.append(llama3_vocabulary.text_of(token))
            if matcher.is_finished():
                break
        text = ('"παρά'.encode() + b"".join(pieces)).decode("utf-8", "replace")
        if text.endswith('"') and len(text) > 1:
            assert reference(json.loads(text)), text


def test_a_length_from_the_label_without_its_highest_code_point_is_the_codecs():
    # a label whose highest code point occurs once is measured from the label without it
    # (length._encoder_end): every prefix of labels with rising runs, then a few lower or basic characters
    rng = random.Random(14)
    checked = 0
    for _ in range(600):
        head = "".join(rng.choice("ab0\u00e9\u03b1\u05d0\u4e00") for _ in range(rng.randint(0, 8)))
        rising = "".join(chr(cp) for cp in sorted({rng.randrange(0x80, 0x30000) for _ in range(rng.randint(1, 8))}))
        text = head + rising + "".join(rng.choice("a0\u00e9\u03b1") for _ in range(rng.randint(0, 3)))
        for end in range(1, len(text) + 1):
            if not text[:end].isascii():
                assert a_length(text[:end]) == 4 + len(text[:end].encode("punycode")), text[:end]
                checked += 1
    assert checked > 3000
