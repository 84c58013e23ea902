"""The one-pass pattern builder (formatenforcer/parsers/regex_build.py) against interegular and Python's ``re``.

Its automata must accept exactly the language interegular's do (same ASCII reading of ``\\d \\w \\s``), so
which builder ran never changes a mask. Equivalence is decided exactly, by walking both automata in step
over one representative per symbol class (plus a character neither names)."""

from __future__ import annotations

import random
import re
import time
from typing import Any

import interegular
import pytest
from interegular.fsm import anything_else

from formatenforcer.core.errors import RegexError
from formatenforcer.parsers import fsm_crawl, regex_build
from formatenforcer.parsers.regex import RegexParser, compile_regex


def _difference(a, b) -> str | None:  # noqa: ANN001 - interegular FSMs
    """A shortest-first witness string accepted by exactly one of the two automata, or None if equal."""
    chars = {c for fsm in (a, b) for c in fsm.alphabet if c is not anything_else}
    outside = next(chr(x) for x in range(0x10000, 0x10FFFF) if chr(x) not in chars)
    reps = sorted(chars) + [outside]
    seen = {(a.initial, b.initial)}
    layer = [(a.initial, b.initial, "")]
    while layer:
        nxt = []
        for sa, sb, text in layer:
            if (sa in a.finals) != (sb in b.finals):
                return text
            for c in reps:
                na = a.map.get(sa, {}).get(a.alphabet[c]) if sa is not None else None
                nb = b.map.get(sb, {}).get(b.alphabet[c]) if sb is not None else None
                if (na is not None or nb is not None) and (na, nb) not in seen:
                    seen.add((na, nb))
                    nxt.append((na, nb, text + c))
        layer = nxt
    return None


FIXED = [
    r"[A-Z]{3}", r"INV-[0-9]{4}-[0-9]{5}", r"(?:[0-9a-f]{2}:){5}[0-9a-f]{2}", r"a{,3}", r"a{2,}", r"(a|b)*abb",
    r"[^\d\s]+", r"[\w.-]+@[\w-]+\.\w{2,}", r"x*?y+?z??", r"(?P<n>ab)+c", r"", r"a|", r"(|a)b",
    r"[\x00-\x1f]", r".\n?", r"[-a]", r"[a-]", r"\.\*\+", r"(ab){2,3}(cd)?", r"((a|b){1,2}c){0,2}", r"[\S\s]",
    r"[^\S]", r"\W+\D*", r"[a\]-]", r"(?:(?:[0-9])+[\x2e](?:[0-9])+)", r"[\t-\r ]+", r"(a*)*", r"(a?){3}",
    r"(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])(\.(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])){3}",
]  # fmt: skip


@pytest.mark.parametrize("pattern", FIXED)
def test_same_language_as_interegular(pattern: str) -> None:
    ours = regex_build.build_fsm(pattern)
    theirs = interegular.parse_pattern(pattern).to_fsm()
    assert _difference(ours, theirs) is None


_ATOMS = ["a", "b", "c", "-", ".", r"\d", r"\w", r"\s", r"\D", "[ab]", "[^a]", "[a-c0-2]", r"[\d-]", r"\.", r"\x41"]
_QUANTIFIERS = ["", "", "", "*", "+", "?", "{2}", "{0,2}", "{1,}", "{,2}", "*?", "{1,3}?"]


def _random_pattern(rng: random.Random, depth: int = 0) -> str:
    parts = []
    for _ in range(rng.randint(1, 3)):
        if depth < 2 and rng.random() < 0.3:
            inner = "|".join(_random_pattern(rng, depth + 1) for _ in range(rng.randint(1, 3)))
            atom = rng.choice(["(", "(?:"]) + inner + ")"
        else:
            atom = rng.choice(_ATOMS)
        parts.append(atom + rng.choice(_QUANTIFIERS))
    return "".join(parts)


def _their_fsm(pattern: str, cpu_seconds: float = 0.05) -> Any:
    """interegular's automaton of ``pattern``, or None where it refuses the syntax or needs more than
    ``cpu_seconds`` of this thread's CPU time (most patterns take under 0.02 s, a few minutes: nested
    repetitions). Its deadline is wall time, so a build stopped before it had that much CPU (a loaded
    machine) runs again with four times the wall time, and one that took more CPU is dropped: which
    patterns are compared does not depend on the load."""
    wall = cpu_seconds
    for _ in range(5):
        began = time.thread_time()
        try:
            with fsm_crawl.deadline(wall):
                fsm = interegular.parse_pattern(pattern).to_fsm()
        except fsm_crawl.CrawlTimeout:
            if time.thread_time() - began >= 0.9 * cpu_seconds:
                return None
            wall *= 4
            continue
        except Exception:  # noqa: BLE001 - syntax interegular refuses: nothing to compare
            return None
        return fsm if time.thread_time() - began <= cpu_seconds else None
    return None


def test_random_patterns_same_language_and_agree_with_re() -> None:
    rng = random.Random(20261122)
    compared = 0
    for _ in range(250):
        pattern = _random_pattern(rng)
        theirs = _their_fsm(pattern)
        if theirs is None:
            continue
        ours = regex_build.build_fsm(pattern)
        witness = _difference(ours, theirs)
        assert witness is None, (pattern, witness)
        compiled = re.compile(pattern)
        parser = RegexParser(pattern)
        texts = random.Random(pattern)  # (apart from the patterns' draws: the same patterns whatever is compared)
        for _ in range(20):
            text = "".join(texts.choice("abc-.A0 1_\n") for _ in range(texts.randint(0, 6)))
            state = parser
            for ch in text:
                if ch not in state.allowed_characters():
                    state = None
                    break
                state = state.add_character(ch)
            assert (state is not None and state.can_end()) == bool(compiled.fullmatch(text)), (pattern, text)
        compared += 1
    assert compared > 200


def test_closing_bracket_first_in_a_class_is_literal_as_in_re() -> None:
    # interegular reads "[]a]" as an empty class then "a]"; Python (and this builder) as the class {']', 'a'}
    parser = RegexParser("[]a]+")
    assert "]" in parser.allowed_characters() and "a" in parser.allowed_characters()
    assert "]" not in RegexParser("[^]a]").allowed_characters()


def test_unicode_escapes_interegular_lacks_are_read() -> None:
    parser = RegexParser(r"[\u0100-\u017f]{1,3}")
    assert "\u0101" in parser.allowed_characters() and "a" not in parser.allowed_characters()


@pytest.mark.parametrize("pattern", [r"a*+", r"(?i)abc", r"(?=a)a", r"a{", r"\0", r"[[:alpha:]]"])
def test_syntax_outside_the_subset_is_left_to_interegular(pattern: str) -> None:
    with pytest.raises(regex_build.Unhandled):
        regex_build.build_fsm(pattern)


def test_exponential_pattern_stops_at_the_deadline() -> None:
    with pytest.raises(TimeoutError):
        regex_build.build_fsm("(a|b)*a(a|b){18}", expired=lambda: True)


def test_compiled_regex_uses_the_builder_for_translated_patterns() -> None:
    compiled = compile_regex(r"(?:[\x2d0-9a-z])+[\x3a](?:[\x2aA-Za-z]){2,5}")
    parser = RegexParser(compiled)
    for ch in "ab-1:*Z":
        assert ch in parser.allowed_characters()
        parser = parser.add_character(ch)
    assert parser.can_end()


@pytest.mark.parametrize(
    "pattern",
    ["a**", "(?P<n>a)(?P<n>b)", "(?P<1>a)", "[z-a]", "a{3,2}", "(a", "a)", "[a", r"\q", "*a", "a|*", "x{2}{3}"],
)
def test_patterns_re_refuses_are_refused(pattern: str) -> None:
    # re.compile runs only when the builder leaves a pattern to interegular: the builder must not accept these
    with pytest.raises(re.error):
        re.compile(pattern)
    with pytest.raises(RegexError, match="invalid regular expression"):
        compile_regex(pattern)
