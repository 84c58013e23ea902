"""``RegexContent.satisfiable`` (the build-time "does any text fit the lengths" check, a search from the start)
agrees with the mask's own answer from the whole-automaton distance table, on patterns and formats."""

from __future__ import annotations

import pytest

from formatenforcer.jsonschema.formats.content import RegexContent
from formatenforcer.jsonschema.formats.patterns import format_automaton
from formatenforcer.parsers.regex import compile_regex

PATTERNS = ["[a-z]{3,5}", "a|bcdefgh", "(ab)+c", "x*", "[0-9]{4}-[0-9]{2}", "(foo|ba(r|z)+)q{2,3}", "abc"]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_satisfiable_matches_distances(pattern: str) -> None:
    dfa = compile_regex(pattern)
    for low in range(0, 4):
        for high in [None, *range(0, 12)]:
            content = RegexContent(dfa, low, high)
            expected = content._can_finish(0, low, high)
            assert content.satisfiable() == expected, (pattern, low, high)


@pytest.mark.parametrize("name", ["email", "date", "date-time", "ipv4", "uuid", "hostname"])
def test_satisfiable_on_formats(name: str) -> None:
    found = format_automaton(name)
    dfa = compile_regex(found) if isinstance(found, str) else found
    shortest = dfa.distances()[0]
    for high in (shortest - 1, shortest, shortest + 1):
        assert RegexContent(dfa, 0, high).satisfiable() == (high >= shortest)
