"""The crawl that replaces interegular's builds the very same automata (state numbering included), and stops
a hostile pattern at the deadline without sys.settrace."""

from __future__ import annotations

import time

import interegular
import interegular.fsm as fsm_module
import pytest

from formatenforcer.core.errors import RegexError
from formatenforcer.jsonschema.formats.patterns import FORMAT_PATTERNS
from formatenforcer.parsers import fsm_crawl
from formatenforcer.parsers.regex import CompiledRegex

PATTERNS = [
    r"[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}",
    r"([0-9A-F]{2}:){5}[0-9A-F]{2}",
    r"(a|ab)*c?(d|e|f){2,4}",
    r"[^\"\\]*",
    r"(cat|dog|cattle)(s|es)?|x+y*",
    FORMAT_PATTERNS["date"],
    FORMAT_PATTERNS["ipv4"],
]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_same_automaton_as_interegular(pattern, monkeypatch):
    fsm_crawl.install()
    ours = interegular.parse_pattern(pattern).to_fsm()
    monkeypatch.setattr(fsm_module, "crawl", fsm_crawl.ORIGINAL_CRAWL)
    theirs = interegular.parse_pattern(pattern).to_fsm()
    assert ours.initial == theirs.initial and ours.finals == theirs.finals
    assert ours.map == theirs.map and ours.alphabet == theirs.alphabet


def test_products_are_the_same_as_interegular(monkeypatch):
    """Intersections and differences crawl dict-valued product states."""
    fsm_crawl.install()
    a, b = (interegular.parse_pattern(p).to_fsm() for p in (r"[a-z0-9.]+@[a-z]+\.[a-z]{2,3}", r"[a-c]+@.*"))
    ours = [(a & b).map, (a - b).map, (a | b).map]
    monkeypatch.setattr(fsm_module, "crawl", fsm_crawl.ORIGINAL_CRAWL)
    a, b = (interegular.parse_pattern(p).to_fsm() for p in (r"[a-z0-9.]+@[a-z]+\.[a-z]{2,3}", r"[a-c]+@.*"))
    assert ours == [(a & b).map, (a - b).map, (a | b).map]


def test_hostile_pattern_stops_at_the_deadline(monkeypatch):
    """A subset construction with 2^18 states: refused with a clear error, near the limit, not hung."""
    from formatenforcer.parsers import regex

    monkeypatch.setattr(regex, "COMPILE_SECONDS", 1.0)
    started = time.monotonic()
    with pytest.raises(RegexError, match="too complex"):
        CompiledRegex("(a|b)*a(a|b){18}")
    assert time.monotonic() - started < 10


def test_no_deadline_outside_formatenforcer():
    """Without a deadline the crawl never interrupts other users of interegular in the process."""
    fsm_crawl.install()
    assert getattr(fsm_crawl._local, "end", None) is None
    assert interegular.parse_pattern("(x|y){3}").to_fsm().accepts("xyx")
