"""Reasoning mode: free thinking up to ``</think>``, then the answer's format, on the real tokenizers."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from formatenforcer import (
    FormatError,
    JsonSchemaParser,
    ReasoningParser,
    RegexParser,
    TokenEnforcer,
    Vocabulary,
)
from formatenforcer.core.walk import advance

from .conftest import TOKENIZER_NAMES

jsonschema = pytest.importorskip("jsonschema")

SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "integer"}, "unit": {"enum": ["m", "km"]}},
    "required": ["answer", "unit"],
    "additionalProperties": False,
}


def test_texts_accepted_and_refused():
    parser = ReasoningParser(JsonSchemaParser(SCHEMA))
    answer = '{"answer": 4, "unit": "km"}'
    assert parser.accepts(f"<think>\nIt is <b>four</b> </thin kilometres.\n</think>\n\n{answer}")
    assert parser.accepts(f"thinking without the start marker</think>{answer}")  # DeepSeek-R1 style
    assert parser.accepts(f"</think>{answer}")  # empty thinking
    assert not parser.accepts(answer)  # the end marker is required
    assert not parser.accepts(f"<think>x</think>{answer[:-1]}")  # the answer must be complete
    assert not parser.accepts('<think>x</think>{"answer": "4", "unit": "km"}')  # and valid
    # more whitespace than max_gap and the root value's own leading run (JsonConfig.max_whitespace) together
    assert not parser.accepts("<think>x</think>" + "\n" * 40 + answer)
    strict = ReasoningParser(RegexParser("[0-9]+"), optional=False)
    assert strict.accepts("<think>hmm</think>42")
    assert not strict.accepts("hmm</think>42")
    no_start = ReasoningParser(RegexParser("[0-9]+"), start=None, end="<|end|>", max_gap=0)
    assert no_start.accepts("a <|end <|end|>7")
    assert not no_start.accepts("a<|end|> 7")
    # the end marker ends the thinking at its first occurrence: what follows is the answer
    assert not strict.accepts("<think>a</think>b</think>42")


def test_thinking_forces_nothing_and_answer_forces_its_text(llama3_vocabulary: Vocabulary):
    parser = ReasoningParser(JsonSchemaParser(SCHEMA))
    matcher = TokenEnforcer(llama3_vocabulary, parser).matcher()
    assert matcher.forced_text() == ""
    assert matcher.accept_tokens(llama3_vocabulary.tokenize('<think>ok</think>{"a'))
    assert matcher.forced_text().startswith('nswer"')


def test_bad_options_raise():
    with pytest.raises(FormatError):
        ReasoningParser("not a parser")  # type: ignore[arg-type]
    with pytest.raises(FormatError):
        ReasoningParser(RegexParser("a"), end="")
    with pytest.raises(FormatError):
        ReasoningParser(RegexParser("a"), max_gap=-1)


def _allowed_by_brute_force(vocabulary: Vocabulary, state) -> set[int]:
    """Every token whose bytes the state accepts (no special tokens), one ``advance`` per token."""
    return {
        token_id
        for token_id, data in enumerate(vocabulary.token_bytes)
        if data and advance(state, b"", data) is not None
    }


@pytest.mark.parametrize("name", TOKENIZER_NAMES)
def test_thinking_mask_is_exact(vocabularies, name: str):
    """While thinking, the mask is every text token except those holding the end marker followed by text
    the answer refuses: checked against one ``advance`` per token, at the start, mid-thought and part-way
    through the end marker."""
    vocabulary = vocabularies[name]
    parser = ReasoningParser(JsonSchemaParser(SCHEMA))
    enforcer = TokenEnforcer(vocabulary, parser)
    texts = vocabulary.token_bytes
    everything = {i for i, data in enumerate(texts) if data}
    for prefix in ["", "<think>Let me see", "<think>so </th", "<think>a <"]:
        state = parser.add_text(prefix)
        assert state is not None
        matcher = enforcer.matcher()
        ids = vocabulary.tokenize(prefix)
        if prefix and not matcher.accept_tokens(ids):
            pytest.fail(f"the tokens of {prefix!r} were refused")
        position = matcher.position if prefix else enforcer._start
        allowed = set(matcher.allowed_token_ids())
        expected = _allowed_by_brute_force(vocabulary, position.state) if not position.pending else None
        if expected is not None:
            assert allowed == expected, (prefix, sorted(allowed ^ expected)[:10])
        refused = everything - allowed
        # the only tokens refused are those that complete the end marker and go on with text the answer
        # refuses, and byte tokens that cannot start a UTF-8 character (a lone continuation byte)
        tail = prefix[-8:].encode()
        assert all(b"</think>" in tail + texts[i] or not 0 <= texts[i][0] < 0x80 and not 0xC2 <= texts[i][0] <= 0xF4
                   for i in refused), prefix  # fmt: skip
        marker_refused = [i for i in refused if b"</think>" in tail + texts[i]]
        assert len(marker_refused) < 0.01 * len(everything)  # the whole vocabulary but a few marker tokens


@pytest.mark.parametrize("name", TOKENIZER_NAMES)
def test_free_thinking_then_schema_valid_json(vocabularies, name: str):
    """A random walk over allowed tokens: thinking for a while, the end marker, then the answer walked to
    end-of-sequence. The answer part parses as JSON and validates against the schema."""
    vocabulary = vocabularies[name]
    parser = ReasoningParser(JsonSchemaParser(SCHEMA))
    enforcer = TokenEnforcer(vocabulary, parser)
    firsts = np.array([data[0] if data else -1 for data in vocabulary.token_bytes])
    for seed in range(3):
        rng = random.Random(seed)
        matcher = enforcer.matcher()
        for _ in range(rng.randint(3, 15)):  # free thinking: any tokens at all
            allowed = matcher.allowed_token_ids()
            token = allowed[rng.randrange(len(allowed))]
            assert matcher.accept_token(token)
        assert matcher.accept_tokens(vocabulary.tokenize("\n</think>\n"))
        for _ in range(200):  # the answer, walked by first byte so structure characters come up
            allowed = np.array(matcher.allowed_token_ids())
            groups = np.unique(firsts[allowed]) if len(allowed) else []
            group = groups[rng.randrange(len(groups))]
            members = allowed[firsts[allowed] == group]
            token = int(members[rng.randrange(len(members))])
            assert matcher.accept_token(token)
            if matcher.is_finished():
                break
        assert matcher.is_finished(), "the walk did not reach end-of-sequence"
        text = b"".join(vocabulary.text_of(t) for t in matcher.generated_tokens).decode("utf-8", "replace")
        answer = text.split("</think>", 1)[1]
        jsonschema.validate(json.loads(answer), SCHEMA)


def test_special_token_markers_are_given_their_text():
    """A tokenizer that declares ``</think>`` special (never allowed in a plain Vocabulary): with_marker_tokens
    gives it its text, so the thinking can end on that one token."""
    from formatenforcer.parsers.reasoning import with_marker_tokens

    from . import tokenizers_fixtures as tf

    tokenizer = tf.smollm2_tokenizer()
    tokenizer.add_special_tokens({"additional_special_tokens": ["<think>", "</think>"]})
    end_id = tokenizer.convert_tokens_to_ids("</think>")
    plain = Vocabulary.from_transformers(tokenizer, cache_dir=False)
    assert plain.text_of(end_id) == b""
    vocabulary = with_marker_tokens(plain, tokenizer)
    assert vocabulary.text_of(end_id) == b"</think>" and vocabulary.encode is plain.encode
    matcher = TokenEnforcer(vocabulary, ReasoningParser(RegexParser("[0-9]+"), max_gap=0)).matcher()
    assert end_id in matcher.allowed_token_ids()
    assert matcher.accept_tokens([*vocabulary.tokenize("so"), end_id])
    assert matcher.forced_text() == "" and not matcher.can_end()
    assert end_id not in TokenEnforcer(plain, ReasoningParser(RegexParser("[0-9]+"))).matcher().allowed_token_ids()
    assert with_marker_tokens(vocabulary, tokenizer) is vocabulary  # nothing left to add


def test_vllm_extra_args_reasoning():
    """``extra_args={"json": ..., "reasoning": true}`` wraps the format (no vLLM needed to read the args)."""
    from formatenforcer.integrations.vllm import format_spec_from_args

    spec = format_spec_from_args({"json": SCHEMA, "reasoning": True})
    parser = spec.build_parser()
    assert isinstance(parser, ReasoningParser)
    assert parser.accepts('<think>hm</think>\n{"answer": 1, "unit": "m"}')
    assert format_spec_from_args({"json": SCHEMA}).reasoning is None
    assert format_spec_from_args({"json": SCHEMA, "reasoning": "false"}).reasoning is None
    custom = format_spec_from_args({"regex": "[0-9]+", "reasoning": {"start": None, "end": "<|end|>"}})
    assert custom.build_parser().accepts("x<|end|>42") and not custom.build_parser().accepts("42")
    assert custom != format_spec_from_args({"regex": "[0-9]+"})  # cached as a different format
    for bad in ({"end": ""}, {"stop": "x"}, {"start": 3}):
        with pytest.raises(FormatError):
            format_spec_from_args({"regex": "a", "reasoning": bad})
