"""Every row of docs/bad-input.md's table: the input raises (or warns) the error the table names, with the
message it quotes; and a matcher meeting an internal error enters its error state (only end of sequence)
instead of raising into the engine's loop."""

from __future__ import annotations

import builtins
import logging
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import formatenforcer
from formatenforcer import CharacterParser, CharSet, RegexParser, TokenEnforcer, Vocabulary, allocate_bitmask

DOC = Path(__file__).resolve().parent.parent / "docs" / "bad-input.md"
_ROW = re.compile(r"^\| `(?P<code>.+)` \| (?P<kind>raises|warns) `(?P<error>\w+)` \| `(?P<message>.+)` \|$")


def _rows() -> list[tuple[str, str, str, str]]:
    rows = []
    for line in DOC.read_text(encoding="utf-8").splitlines():
        match = _ROW.match(line)
        if match:
            code = match["code"].replace("\\|", "|")
            rows.append((code, match["kind"], match["error"], match["message"].replace("\\|", "|")))
    return rows


ROWS = _rows()


def test_the_table_is_read() -> None:
    table_lines = [line for line in DOC.read_text(encoding="utf-8").splitlines() if line.startswith("| `")]
    assert len(ROWS) == len(table_lines) >= 30  # no row the pattern above skips


@pytest.mark.parametrize(("code", "kind", "error", "message"), ROWS, ids=[r[0][:60] for r in ROWS])
def test_row(code: str, kind: str, error: str, message: str) -> None:
    namespace = {name: getattr(formatenforcer, name) for name in formatenforcer.__all__}
    vocabulary = Vocabulary.from_tokens(["<eos>", "a", "b", "[", "]"], eos_token_ids=[0])
    namespace.update(vocabulary=vocabulary, matcher=TokenEnforcer(vocabulary, formatenforcer.JsonParser()).matcher())
    expected = namespace.get(error) or getattr(builtins, error)
    if kind == "warns":
        with pytest.warns(expected) as record:
            eval(code, namespace)  # noqa: S307 - the documented expressions
        assert any(message in str(w.message) for w in record), [str(w.message) for w in record]
        return
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an error must not come as a warning first
        with pytest.raises(expected) as raised:
            eval(code, namespace)  # noqa: S307
    assert type(raised.value).__module__.startswith(("formatenforcer", "builtins")), type(raised.value)
    assert message in str(raised.value), str(raised.value)


class _Broken(CharacterParser):
    """A user's own parser with a bug: it raises on the character 'b' (the extension point is public)."""

    def __init__(self, text: str = "") -> None:
        self.text = text

    def add_character(self, ch: str) -> CharacterParser | None:
        if ch == "b":
            raise KeyError("bug in a custom parser")
        return _Broken(self.text + ch) if ch in "ab" else None

    def allowed_characters(self) -> CharSet:
        return CharSet.of("ab")

    def can_end(self) -> bool:
        return bool(self.text)

    def key(self) -> object:
        return self.text


def test_internal_error_enters_the_error_state(caplog) -> None:
    vocabulary = Vocabulary.from_tokens(["<eos>", "a", "b", "ab"], eos_token_ids=[0])
    matcher = TokenEnforcer(vocabulary, _Broken()).matcher()
    bitmask = allocate_bitmask(1, vocabulary.size)
    with caplog.at_level(logging.ERROR, logger="formatenforcer"):
        matcher.fill_bitmask(bitmask, 0)  # the mask walk meets the bug: no exception
        matcher.fill_bitmask(bitmask, 0)
        assert matcher.allowed_token_ids() == [0]
        assert int(bitmask[0, 0]) == 1  # only end of sequence
        assert isinstance(matcher.error, KeyError)
        assert not matcher.accept_token(1)
        assert matcher.accept_token(0) and matcher.is_finished()
    assert len([r for r in caplog.records if "internal error" in r.getMessage()]) == 1  # logged once
    matcher.reset()
    assert matcher.error is None
    # a step meeting the bug: refused tokens stay False, and the error state allows end of sequence
    assert matcher.accept_token(1)
    assert not matcher.accept_token(2) and matcher.error is not None  # the step met the bug
    assert matcher.allowed_token_ids() == [0] and matcher.can_end()
    assert matcher.accept_token(0) and matcher.is_finished()


def test_prefix_allowed_tokens_never_raise(caplog) -> None:
    """The prefix-keyed path (``prefix_allowed_tokens_fn``) answers an internal error with end-of-sequence."""
    vocabulary = Vocabulary.from_tokens(["<eos>", "a", "b", "ab"], eos_token_ids=[0])
    enforcer = TokenEnforcer(vocabulary, _Broken())
    with caplog.at_level(logging.ERROR, logger="formatenforcer"):
        assert enforcer.allowed_tokens([1, 2]) == [0]  # the step over "b" meets the bug
        assert enforcer.allowed_tokens([]) == [0]  # the first mask walks into "b" and "ab"
    assert any("internal error" in r.getMessage() for r in caplog.records)


def test_regex_parser_is_still_fine_with_ordinary_arguments() -> None:
    matcher = TokenEnforcer(Vocabulary.from_tokens(["<eos>", "a"], [0]), RegexParser("a+")).matcher()
    assert matcher.accept_token(np.int64(1)) and matcher.error is None  # numpy ids are integers
    assert not matcher.accept_token(99) and matcher.validate_tokens([99]) == 0  # outside: refused, no error


def test_deep_nesting_never_raises_into_the_engine() -> None:
    """A model that repeats ``[``: JsonConfig.max_depth (1,000 by default) stops it, in the mask and in the
    step alike, with no error: past the limit only ``]`` is allowed (tests/test_json_depth.py does the same
    on Llama 3, and 10,000 levels under a raised limit)."""
    vocabulary = Vocabulary.from_tokens(["<eos>", "[", "]"], eos_token_ids=[0])
    matcher = TokenEnforcer(vocabulary, formatenforcer.JsonParser()).matcher()
    for _ in range(10_000):
        allowed = matcher.allowed_token_ids()
        if not matcher.accept_token(1):
            break
    assert matcher.num_accepted == 1000 and matcher.error is None
    assert allowed == [2] and matcher.allowed_token_ids() == [2]
    for _ in range(1000):
        assert matcher.accept_token(2)
    assert matcher.allowed_token_ids() == [0] and matcher.accept_token(0)
