"""The memory budget of a format's build (``JsonConfig.build_megabytes``, ``GrammarParser``'s and
``RegexParser``'s ``build_megabytes``): an automaton whose states explode is stopped once the process has
grown by the budget, with ``BuildMemoryError`` at construction, and nothing it left behind refuses a later
build with room for it.

The explosive builds run in a fresh interpreter: the budget is measured as growth of the process's resident
memory, and a test worker that has freed memory earlier can grow into it without its resident size moving."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from formatenforcer import BuildMemoryError, FormatError, GrammarParser, JsonConfig, JsonSchemaParser, RegexParser
from formatenforcer.core.budget import resident_bytes

ROOT = Path(__file__).resolve().parent.parent

_SCRIPT = r"""
import json, sys, time
from formatenforcer import BuildMemoryError, GrammarParser, JsonConfig, JsonSchemaParser, RegexParser
from formatenforcer.core.budget import resident_bytes

def explosive(letters):
    a, b = letters
    return f"({a}|{b})*{a}({a}|{b}){{15}}"  # a subset construction of 2^16 states, ~70 MB, ~1 s

cases = {
    "json": lambda mb: JsonSchemaParser({"type": "string", "pattern": "^" + explosive("ab") + "$"},
                                        config=JsonConfig(build_megabytes=mb, build_seconds=None)),
    "json-nested": lambda mb: JsonSchemaParser(
        {"type": "object", "properties": {"x": {"type": "array", "items": {"pattern": "^" + explosive("cd") + "$"}}}},
        config=JsonConfig(build_megabytes=mb, build_seconds=None)),
    "regex": lambda mb: RegexParser(explosive("ef"), build_megabytes=mb),
    "grammar": lambda mb: GrammarParser("start: X\nX: /" + explosive("gh") + "/", "lark", build_megabytes=mb,
                                        build_seconds=None),
}
build = cases[sys.argv[1]]
before = resident_bytes()
try:
    build(16)
    out = ["built"]
except BuildMemoryError as error:
    out = ["refused", str(error), (resident_bytes() - before) / 2**20]
out.append(type(build(None)).__name__)  # with no budget it builds: the budget was the reason
print(json.dumps(out))
"""


@pytest.mark.parametrize(
    ("name", "setting"),
    [("json", "JsonConfig.build_megabytes"), ("json-nested", "JsonConfig.build_megabytes"),
     ("regex", "RegexParser(build_megabytes=...)"), ("grammar", "GrammarParser(build_megabytes=...)")],
)  # fmt: skip
def test_an_explosive_automaton_is_stopped_at_the_budget(name, setting) -> None:
    # one interpreter per build: memory freed by an earlier build would be grown into unseen
    run = subprocess.run([sys.executable, "-c", _SCRIPT, name], capture_output=True, text=True, cwd=ROOT,
                         timeout=600)  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    outcome, message, grown, unbounded = json.loads(run.stdout.strip().splitlines()[-1])
    assert outcome == "refused"
    assert message == f"the format needed more than its memory budget of 16 MB to build ({setting})"
    # stopped near the budget (read once a millisecond), not after the whole ~70 MB automaton
    assert grown < 16 + 30, grown
    assert unbounded in ("JsonSchemaParser", "RegexParser", "GrammarParser")


def test_real_formats_build_well_within_the_default() -> None:
    before = resident_bytes()
    JsonSchemaParser(
        {"type": "object", "properties": {"mail": {"type": "string", "format": "email"},
                                          "site": {"type": "string", "format": "uri"},
                                          "code": {"type": "string", "pattern": "^[A-Z]{2}-[0-9]{4,8}$"}}},
        config=JsonConfig(build_megabytes=256),
    )  # fmt: skip
    GrammarParser('start: "a" NAME\nNAME: /[a-z]+/', "lark", build_megabytes=64)
    RegexParser(r"\d{4}-\d{2}-\d{2}", build_megabytes=16)
    if before is not None:
        assert (resident_bytes() - before) / 2**20 < 256


@pytest.mark.parametrize(
    ("value", "error", "words"),
    [(0, ValueError, "positive"), (-5, ValueError, "positive"), (float("inf"), ValueError, "finite"),
     (float("nan"), ValueError, "positive"), ("64", TypeError, "number of megabytes"), (True, TypeError, "bool")],
)  # fmt: skip
def test_a_bad_memory_budget_is_refused(value, error, words) -> None:
    with pytest.raises(error, match="JsonConfig.build_megabytes") as caught:
        JsonConfig(build_megabytes=value)
    assert words in str(caught.value) or words == "bool"
    with pytest.raises(error, match="GrammarParser's build_megabytes"):
        GrammarParser('start: "a"', "lark", build_megabytes=value)
    with pytest.raises(error, match="RegexParser's build_megabytes"):
        RegexParser("a", build_megabytes=value)


def test_the_error_is_a_format_error() -> None:
    assert issubclass(BuildMemoryError, FormatError)
