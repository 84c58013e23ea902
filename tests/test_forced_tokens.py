"""Forced tokens (jump-forward) on the real tokenizers: canonical, boundary-safe, accepted by the matcher."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from formatenforcer import (
    ChoiceParser,
    JsonConfig,
    JsonSchemaParser,
    RegexParser,
    TokenEnforcer,
    Vocabulary,
)
from formatenforcer.core.forced import greedy_tokenize

from .conftest import TOKENIZER_NAMES

CASES_DIR = Path(__file__).resolve().parent.parent / "benchmarks" / "cases"
COMPACT = JsonConfig(whitespace="compact")


def _cases() -> list[dict]:
    cases = []
    for path in sorted(CASES_DIR.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        cases.extend(data if isinstance(data, list) else [data])
    return cases


def jump_forward_path(vocabulary: Vocabulary, parser, canonical: list[int]) -> tuple[list[int], int, list[str]]:
    """Replays ``canonical`` as the model's choices, appending the forced tokens wherever there are some
    (the jump-forward loop with a teacher for a model). Returns (final ids, forced count, exceptions: where a
    forced run differs from what the canonical tokenization has there)."""
    matcher = TokenEnforcer(vocabulary, parser).matcher()
    out: list[int] = []
    forced_count = 0
    exceptions: list[str] = []
    while len(out) < len(canonical):
        forced = matcher.forced_tokens()
        if forced:
            assert matcher.accept_tokens(forced)
            expected = canonical[len(out) : len(out) + len(forced)]
            if forced != expected:
                exceptions.append(f"at {len(out)}: forced {forced} where the tokenizer writes {expected}")
                out.extend(forced)
                break
            out.extend(forced)
            forced_count += len(forced)
            continue
        token = canonical[len(out)]
        assert matcher.accept_token(token), (len(out), vocabulary.text_of(token))
        out.append(token)
    return out, forced_count, exceptions


@pytest.mark.parametrize("name", TOKENIZER_NAMES)
@pytest.mark.parametrize("layout", ["compact", "flexible"])
def test_forced_tokens_never_change_the_tokenization(vocabularies, name: str, layout: str):
    """Over every benchmark instance: the final ids equal the tokenizer's encoding of the final text, i.e.
    no forced run differs from what the tokenizer writes there (exceptions are counted: none today)."""
    vocabulary = vocabularies[name]
    config = COMPACT if layout == "compact" else JsonConfig()
    total = forced = 0
    exceptions: list[str] = []
    for case in _cases():
        if layout == "compact":
            text = json.dumps(case["instance"], separators=(",", ":"))
        else:
            text = json.dumps(case["instance"], ensure_ascii=False)
        canonical = vocabulary.tokenize(text)
        out, count, problems = jump_forward_path(vocabulary, JsonSchemaParser(case["schema"], config=config), canonical)
        exceptions += [f"{case['name']}: {problem}" for problem in problems]
        if not problems:
            assert out == canonical
        total += len(canonical)
        forced += count
    assert not exceptions, exceptions
    assert forced > 0.03 * total  # jump-forward has work to do on these schemas


def test_previous_token_that_would_merge_forces_nothing(llama3_vocabulary: Vocabulary):
    """Llama 3 writes '{"' as one token: after a lone '{' the forced '"name":"' would merge with it, so the
    lookback forces nothing there and the model writes the next token itself."""
    vocabulary = llama3_vocabulary
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"],
        "additionalProperties": False,
    }
    matcher = TokenEnforcer(vocabulary, JsonSchemaParser(schema, config=COMPACT)).matcher()
    assert vocabulary.tokenize('{"name') == [vocabulary.tokenize('{"')[0], vocabulary.tokenize("name")[0]]
    assert matcher.forced_tokens() == vocabulary.tokenize('{"name')  # from the start: canonical
    (brace,) = vocabulary.tokenize("{")
    assert matcher.accept_token(brace)
    assert matcher.forced_text() == '"name":"'
    assert matcher.forced_tokens() == []


def test_hold_back_where_a_longer_token_may_follow(llama3_vocabulary: Vocabulary):
    """The forced text ends in '":"' before a free string: '":"' is held back, since tokens such as ' ":"'
    variants starting there and running into the string (e.g. '":"' + letters) exist and are allowed."""
    vocabulary = llama3_vocabulary
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"],
        "additionalProperties": False,
    }
    matcher = TokenEnforcer(vocabulary, JsonSchemaParser(schema, config=COMPACT)).matcher()
    forced = matcher.forced_tokens()
    text = b"".join(vocabulary.text_of(t) for t in forced).decode()
    assert matcher.forced_text() == '{"name":"'
    assert text == '{"name'
    # and the withheld part really can be written by a longer token in the tokenizer's own encoding
    longer = vocabulary.tokenize('{"name":"Bob"}')
    assert longer[: len(forced)] == forced
    assert vocabulary.text_of(longer[len(forced)]).startswith(b'":"')


def test_enum_rest_is_forced_whole_when_the_format_closes_it(llama3_vocabulary: Vocabulary):
    vocabulary = llama3_vocabulary
    parser = JsonSchemaParser({"enum": ["Gryffindor", "Hufflepuff"]}, config=COMPACT)
    matcher = TokenEnforcer(vocabulary, parser).matcher()
    assert matcher.accept_tokens(vocabulary.tokenize('"G'))
    forced = matcher.forced_tokens()
    assert matcher.forced_text() == 'ryffindor"'
    assert forced == vocabulary.tokenize('"Gryffindor"')[len(vocabulary.tokenize('"G')) :]
    assert matcher.accept_tokens(forced)
    assert matcher.can_end() and matcher.forced_tokens() == []


@pytest.mark.parametrize("name", TOKENIZER_NAMES)
def test_regex_and_choice_runs_are_accepted(vocabularies, name: str):
    vocabulary = vocabularies[name]
    for parser, prefix in [
        (RegexParser(r"ORDER-[0-9]{4}/(open|closed)"), "ORDER-1234/c"),
        (ChoiceParser(["The answer is yes.", "The answer is no."]), "The answer is y"),
    ]:
        matcher = TokenEnforcer(vocabulary, parser).matcher()
        while True:
            forced = matcher.forced_tokens()
            if not forced:
                break
            assert matcher.accept_tokens(forced)
        written = b"".join(vocabulary.text_of(t) for t in matcher.generated_tokens).decode().lstrip()
        assert prefix.startswith(written) or written.startswith(prefix[: len(written)])
        ids = vocabulary.tokenize(prefix)
        matcher.reset()
        assert matcher.accept_tokens(ids)
        text = matcher.forced_text()
        forced = matcher.forced_tokens()
        assert text in ("losed", "es.")
        assert matcher.accept_tokens(forced)
        final = prefix + b"".join(vocabulary.text_of(t) for t in forced).decode()
        assert (prefix + text).startswith(final)


def test_from_tokens_vocabulary_uses_greedy_longest_match():
    vocabulary = Vocabulary.from_tokens(["<eos>", "a", "b", "ab", "abc", "-", "c"], eos_token_ids=[0])
    assert vocabulary.encode is None
    assert greedy_tokenize(vocabulary, "abcab-c") == [4, 3, 5, 6]
    matcher = TokenEnforcer(vocabulary, RegexParser(r"abcab-c[0-9]?")).matcher()
    assert matcher.forced_text() == "abcab-c"
    assert matcher.forced_tokens() == [4, 3, 5, 6]
    assert matcher.accept_tokens([4, 3, 5, 6]) and matcher.can_end()
    # a text a token cannot start: nothing to force
    assert greedy_tokenize(vocabulary, "x") == []


def test_rollback_keeps_the_token_history(llama3_vocabulary: Vocabulary):
    matcher = TokenEnforcer(llama3_vocabulary, RegexParser(r"[a-z]+ [0-9]+")).matcher()
    ids = llama3_vocabulary.tokenize("hello 42")
    assert matcher.accept_tokens(ids)
    matcher.rollback(1)
    assert matcher.generated_tokens == ids[:-1]
    matcher.reset()
    assert matcher.generated_tokens == []
