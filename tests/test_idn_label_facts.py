"""formats/idn/label_facts.py: the whole-label IDNA checks read from memoised per-label facts must answer as
idna's own functions do, on the real IDNA tables, for random labels built from the characters whose rules
differ (contextual, right-to-left, numbers, marks, capitals, unassigned), whichever way the memo was filled
(label by label from the start, prefix by prefix as the walk asks, or cold)."""

from __future__ import annotations

import random
import unicodedata

import idna
import pytest
from idna.core import check_bidi, check_hyphen_ok, check_initial_combiner, valid_contextj, valid_contexto
from idna.idnadata import codepoint_classes
from idna.intranges import intranges_contain

from formatenforcer.jsonschema.formats.idn import label as label_module
from formatenforcer.jsonschema.formats.idn import label_facts
from formatenforcer.jsonschema.formats.idn.tables import tables

POOL = (
    "al0-9zA\u00b7\u0375\u03b1\u03b2\u05f3\u05f4\u05d0\u05d1\u05b0\u0628\u064a\u0627\u0660\u0669\u06f0\u06f9"
    "\u200c\u200d\u094d\u0915\u0937\u30fb\u3041\u30a1\u4e08\u0301\u0300\u1161\u1100\u00e9\u00df\u1820\u0f0b"
    "\u3007\u06fd\u0378\u00c0\u0021\u00b2\u0966\u2000\u0483\u200e\u0640\u0f0b\u1b44"
)


def old_rules_ok(label: str, nfc: bool) -> bool:
    """The U-label rules read straight from idna, character by character (label.py before the facts)."""
    if nfc and not unicodedata.is_normalized("NFC", label):
        return False
    t = tables()
    try:
        check_hyphen_ok(label)
        check_initial_combiner(label)
        for pos, ch in enumerate(label):
            if ch.isascii():
                if not ("a" <= ch <= "z" or "0" <= ch <= "9" or ch == "-"):
                    return False
            elif ch not in t.allowed:
                return False
            elif ch in t.special:
                cp = ord(ch)
                if intranges_contain(cp, codepoint_classes["CONTEXTJ"]):
                    if not valid_contextj(label, pos):
                        return False
                elif intranges_contain(cp, codepoint_classes["CONTEXTO"]) and not valid_contexto(label, pos):
                    return False
        check_bidi(label)
    except (idna.IDNAError, ValueError):
        return False
    return True


def old_bidi(label: str, check_ltr: bool) -> bool:
    try:
        return check_bidi(label, check_ltr=check_ltr)
    except (idna.IDNAError, ValueError):
        return False


def random_labels(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    allowed = list(tables().allowed.intervals)
    out = []
    for _ in range(count):
        chars = []
        for _ in range(rng.randint(1, 12)):
            if rng.random() < 0.8:
                chars.append(rng.choice(POOL))
            else:
                lo, hi = rng.choice(allowed)
                chars.append(chr(rng.randint(lo, hi)))
        out.append("".join(chars))
    return out


@pytest.mark.parametrize("order", ["cold", "prefixes"])
def test_facts_answer_as_idna(order: str) -> None:
    label_facts._FACTS.clear()
    labels = random_labels(18 if order == "cold" else 19, 6000)
    checked = rules_true = 0
    for text in labels:
        queries = [text] if order == "cold" else [text[:n] for n in range(1, len(text) + 1)]
        if order == "cold":
            label_facts._FACTS.clear()
        for label in queries:
            for nfc in (True, False):
                assert label_module._u_rules_ok(label, nfc) == old_rules_ok(label, nfc), (label, nfc)
            facts = label_facts.label_facts(label)
            assert facts.rtl == any(unicodedata.bidirectional(c) in ("R", "AL", "AN") for c in label)
            for check_ltr in (False, True):
                assert label_facts.bidi_ok(facts, check_ltr) == old_bidi(label, check_ltr), (label, check_ltr)
            checked += 1
            rules_true += old_rules_ok(label, False)
    # the random labels reach both answers, so the comparison can fail either way
    assert checked >= 6000 and 50 < rules_true < checked - 50


def test_context_rules_against_idna_on_labels_that_pass_the_rest() -> None:
    """Labels of valid characters around each contextual one: the rules decide, so every branch of
    ``contexts_ok`` (katakana middle dot, both digit kinds, joiners, keraia, geresh, middle dot) is met
    both passing and failing."""
    rng = random.Random(7)
    context_chars = "\u00b7\u0375\u05f3\u05f4\u30fb\u0660\u06f0\u200c\u200d"
    neighbours = ("l", "\u03b1", "\u05d0", "\u0628\u064a", "\u3041", "\u30a1", "\u4e08", "\u0915\u094d", "\u0669",
                  "\u06f9", "a")  # fmt: skip
    outcomes: dict[str, set[bool]] = {c: set() for c in context_chars}
    for _ in range(4000):
        middle = rng.choice(context_chars)
        pool = rng.sample(neighbours, 2)  # few kinds in one label, so that some labels pass
        label = "".join(rng.choice(pool) for _ in range(rng.randint(0, 3)))
        label += middle + "".join(rng.choice(pool) for _ in range(rng.randint(0, 3)))
        label_facts._FACTS.clear() if rng.random() < 0.5 else None
        got = label_module._u_rules_ok(label, False)
        assert got == old_rules_ok(label, False), label
        outcomes[middle].add(got)
    assert all(seen == {True, False} for seen in outcomes.values()), outcomes


def test_long_labels_are_refused_as_idna_refuses_them() -> None:
    assert not label_module._u_rules_ok("\u03b1" * (label_facts.MAX_INPUT + 1), False)
    assert label_module._u_rules_ok("\u03b1" * 100, False) == old_rules_ok("\u03b1" * 100, False) is True
