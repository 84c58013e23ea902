"""The time budget of a schema's build (``JsonConfig.build_seconds``): a build past it stops with
``BuildTimeoutError`` at construction, an automaton's own limit is cut to what is left of the budget, and a
build cut short leaves nothing behind that changes a later build's masks."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from formatenforcer import (
    BuildTimeoutError,
    FormatEnforcerError,
    FormatError,
    GrammarParser,
    JsonConfig,
    JsonSchemaParser,
    RegexParser,
    TokenEnforcer,
)

from .test_regex_deadline import wide_union


def _many_patterns(count: int, salt: str) -> dict:
    """An object with ``count`` string properties, each under a pattern of its own (each one automaton)."""
    properties = {f"p{i}": {"type": "string", "pattern": f"^[a-z]{{{i % 7 + 1}}}{salt}{i}(ab|cd)*[0-9]+$"}
                  for i in range(count)}  # fmt: skip
    return {"type": "object", "properties": properties, "required": ["p0", "p1"]}


def test_a_schema_past_its_budget_is_refused_at_construction() -> None:
    schema = _many_patterns(400, "q")
    with pytest.raises(BuildTimeoutError, match=r"budget of 0\.001 s \(JsonConfig\.build_seconds\)") as caught:
        JsonSchemaParser(schema, config=JsonConfig(build_seconds=0.001))
    assert isinstance(caught.value, FormatError) and isinstance(caught.value, FormatEnforcerError)
    JsonSchemaParser(schema)  # the default budget builds it


def test_builds_cut_short_leave_later_masks_exact(llama3_tokenizer, llama3_vocabulary) -> None:
    schema = _many_patterns(60, "r")
    instance = {f"p{i}": f"{'a' * (i % 7 + 1)}r{i}abcd42" for i in range(60)}
    tokens = llama3_tokenizer.encode(json.dumps(instance), add_special_tokens=False)
    reference = TokenEnforcer(llama3_vocabulary, JsonSchemaParser(schema))
    expected = [reference.mask(reference.position_after(tokens[:i])) for i in range(0, len(tokens) + 1, 7)]
    cut = 0
    for seconds in (1e-6, 1e-4, 5e-4, 2e-3, 1e-2):
        other = _many_patterns(60, "r")  # equal schemas, new objects: module memos keyed by value are shared
        try:
            JsonSchemaParser(other, config=JsonConfig(build_seconds=seconds))
        except BuildTimeoutError:
            cut += 1
    assert cut >= 1
    again = TokenEnforcer(llama3_vocabulary, JsonSchemaParser(_many_patterns(60, "r")))
    got = [again.mask(again.position_after(tokens[:i])) for i in range(0, len(tokens) + 1, 7)]
    assert all(np.array_equal(a, b) for a, b in zip(got, expected))


_HOSTILE = """
import sys, time
sys.path.insert(0, sys.argv[1])
from formatenforcer import BuildTimeoutError, JsonConfig, JsonSchemaParser
from test_regex_deadline import wide_union
started = time.monotonic()
try:
    JsonSchemaParser({"type": "string", "pattern": wide_union(250, salt=3)}, config=JsonConfig(build_seconds=0.5))
    print("built", time.monotonic() - started)
except Exception as error:
    print(type(error).__name__, time.monotonic() - started)
"""


def test_an_automaton_stops_at_the_budget_not_at_its_own_limit() -> None:
    """A pattern whose automaton would run to its own 5 s limit stops when the schema's 0.5 s budget ends
    (in a fresh interpreter, as tests/test_regex_deadline.py measures its limit)."""
    folder = str(Path(__file__).resolve().parent)
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", _HOSTILE, folder], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    outcome, seconds = done.stdout.split()
    assert outcome == "BuildTimeoutError", done.stdout
    assert float(seconds) < 0.5 + 2.0, seconds  # the shared machine's slack; the automaton's own limit is 5 s
    assert time.monotonic() - started < 60


@pytest.mark.parametrize("value", [0, -1, float("inf"), float("nan"), "5", True])
def test_a_bad_budget_is_refused(value) -> None:
    with pytest.raises((TypeError, ValueError), match="build_seconds"):
        JsonConfig(build_seconds=value)


def test_no_budget_is_allowed() -> None:
    assert JsonSchemaParser({"type": "integer"}, config=JsonConfig(build_seconds=None)).accepts("12")


_GRAMMAR_TERMINALS = 400


def _many_terminals(salt: str) -> str:
    names = [f"T{i}" for i in range(_GRAMMAR_TERMINALS)]
    lines = ["start: " + " | ".join(names)]
    lines += [f"T{i}: /[a-z]{{{i % 5 + 1}}}{salt}{i}(ab|cd)*[0-9]+/" for i in range(_GRAMMAR_TERMINALS)]
    return "\n".join(lines) + "\n"


def test_a_grammar_past_its_budget_is_refused_at_construction() -> None:
    grammar = _many_terminals("g")
    with pytest.raises(BuildTimeoutError, match=r"GrammarParser\(build_seconds=\.\.\.\)"):
        GrammarParser(grammar, build_seconds=0.001)
    parser = GrammarParser(grammar)  # the default budget builds it
    assert parser.accepts("aaag2abcd7") and not parser.accepts("aaag2abc7")


def test_a_regex_parser_under_a_budget() -> None:
    with pytest.raises(BuildTimeoutError, match=r"RegexParser\(build_seconds=\.\.\.\)"):
        RegexParser(wide_union(250, salt=11), build_seconds=0.05)
    assert RegexParser("[a-z]+@[a-z]+", build_seconds=5).accepts("ab@cd")
    for bad, error in ((0, ValueError), ("1", TypeError), (float("inf"), ValueError)):
        with pytest.raises(error, match="build_seconds"):
            RegexParser("[a-z]+", build_seconds=bad)
        with pytest.raises(error, match="build_seconds"):
            GrammarParser('start: "x"\n', build_seconds=bad)


def test_no_timeout_lands_after_a_build_cut_short() -> None:
    """A budget that is nearly spent when an automaton's guarded block starts must not leave its timer
    firing into the caller's code afterwards (it once did, every 50 ms, forever)."""
    for salt in range(21, 25):
        with pytest.raises(BuildTimeoutError):
            RegexParser(wide_union(250, salt=salt), build_seconds=0.05)
        until = time.monotonic() + 0.12  # (the timer raises again every 50 ms: two chances)
        while time.monotonic() < until:  # Python code after the build: a stray CrawlTimeout would land here
            sum(range(1000))


_HAMMER = """
import time
from formatenforcer.parsers import fsm_crawl
from formatenforcer.parsers.fsm_crawl import CrawlTimeout
fsm_crawl._REFIRE = 0.01  # a timer left behind raises again every 10 ms (50 ms in the library)
late = 0
for i in range(60):
    try:
        with fsm_crawl.deadline(0.002):
            until = time.monotonic() + 0.0015 + (i % 6) * 0.0002  # the guarded block starts near the end
            while time.monotonic() < until:
                pass
            try:
                with fsm_crawl.interruptible():
                    end = time.monotonic() + 0.01
                    while time.monotonic() < end:
                        sum(range(100))
            except CrawlTimeout:
                pass
        end = time.monotonic() + 0.025
        while time.monotonic() < end:
            sum(range(100))
    except CrawlTimeout:
        late += 1
print("late", late)
"""


def test_a_guarded_block_entered_at_its_deadline_leaves_no_timer_behind() -> None:
    """Guarded blocks entered just before, at and after their deadline, 60 times: the timeout lands inside
    the block or not at all, never in the code after it (in a fresh interpreter, with a time limit: the
    timer that outlived its block refired every 50 ms and this loop never ended). The timer's refire is set
    to 10 ms there, so the 25 ms of Python code after each block outlasts two of them."""
    done = subprocess.run([sys.executable, "-c", _HAMMER], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["late", "0"], done.stdout
