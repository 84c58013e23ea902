"""llama-cpp-python: FormatEnforcerLogitsProcessor on the SmolLM2-135M-Instruct GGUF, loaded directly by
llama.cpp (no transformers), through ``create_chat_completion`` and ``create_completion``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from formatenforcer import ChoiceParser, JsonSchemaParser, RegexParser

llama_cpp = pytest.importorskip("llama_cpp")

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 20},
        "age": {"type": "integer", "minimum": 0, "maximum": 120},
        "pets": {"type": "array", "items": {"enum": ["cat", "dog", "fish"]}, "maxItems": 3},
    },
    "required": ["name", "age", "pets"],
    "additionalProperties": False,
}
PHONE = r"\([0-9]{3}\) [0-9]{3}-[0-9]{4}"


@pytest.fixture(scope="module")
def llm():
    from .engine_models import gguf_path

    return llama_cpp.Llama(model_path=str(gguf_path()), n_ctx=1024, n_threads=1, seed=0, verbose=False)


def _processor(llm, parser):
    from formatenforcer.integrations.llamacpp import logits_processor_list

    return logits_processor_list(llm, parser)


def test_vocabulary_from_llama_matches_detokenize(llm):
    from formatenforcer.integrations.llamacpp import vocabulary_from_llama

    vocabulary = vocabulary_from_llama(llm)
    assert vocabulary is vocabulary_from_llama(llm)  # once per model
    assert vocabulary.size == llm.n_vocab()
    assert llm.token_eos() in vocabulary.eos_token_ids
    text = 'Zoë said: {"a": [1, 2]} 🙂 ok'
    ids = llm.tokenize(text.encode(), add_bos=False, special=False)
    assert b"".join(vocabulary.text_of(i) for i in ids) == text.encode()
    assert b"".join(vocabulary.text_of(i) for i in ids) == llm.detokenize(ids)


def test_processor_restarts_on_a_new_prompt(llm):
    import numpy as np

    from formatenforcer.integrations.llamacpp import FormatEnforcerLogitsProcessor

    processor = FormatEnforcerLogitsProcessor(llm, RegexParser("[0-9]+"))
    scores = np.zeros(llm.n_vocab(), dtype=np.float32)
    digit = llm.tokenize(b"7", add_bos=False, special=False)[0]
    letter = llm.tokenize(b"x", add_bos=False, special=False)[0]
    prompt = np.array(llm.tokenize(b"Number:", add_bos=False, special=False), dtype=np.intc)
    first = processor(prompt, scores)
    assert first[digit] == 0 and first[letter] == -np.inf
    second = processor(np.append(prompt, digit), scores)
    assert second[digit] == 0 and second[llm.token_eos()] == 0
    again = processor(prompt[:-1], scores)  # a shorter sequence: a new generation
    assert again[llm.token_eos()] == -np.inf and again[digit] == 0


@pytest.mark.slow
def test_chat_completion_json_schema(llm):
    jsonschema = pytest.importorskip("jsonschema")
    result = llm.create_chat_completion(
        messages=[{"role": "user", "content": "Describe a person with name, age and pets as JSON."}],
        logits_processor=_processor(llm, JsonSchemaParser(SCHEMA)),
        max_tokens=120,
        temperature=0.7,
        seed=1,
    )
    choice = result["choices"][0]
    assert choice["finish_reason"] == "stop", choice
    jsonschema.validate(json.loads(choice["message"]["content"]), SCHEMA)


@pytest.mark.slow
def test_chat_completion_regex_and_choice(llm):
    result = llm.create_chat_completion(
        messages=[{"role": "user", "content": "Give me a US phone number."}],
        logits_processor=_processor(llm, RegexParser(PHONE)),
        max_tokens=30,
        temperature=0.0,
    )
    assert re.fullmatch(PHONE, result["choices"][0]["message"]["content"]), result
    options = ["yes", "no"]
    result = llm.create_chat_completion(
        messages=[{"role": "user", "content": "Is water wet?"}],
        logits_processor=_processor(llm, ChoiceParser(options)),
        max_tokens=5,
        temperature=1.0,
        seed=3,
    )
    assert result["choices"][0]["message"]["content"] in options


@pytest.mark.slow
def test_create_completion_reuses_one_processor(llm):
    processors = _processor(llm, RegexParser(r"[0-9]{4}"))
    for prompt in ("The year the war ended:", "Four digits:"):
        text = llm.create_completion(prompt, logits_processor=processors, max_tokens=8, temperature=0.0)
        assert re.fullmatch(r"[0-9]{4}", text["choices"][0]["text"]), text


# --- GBNF, llama.cpp's grammar format ------------------------------------------------------------------------
ROOT = Path(__file__).resolve().parent.parent
ARITH_GBNF = (ROOT / "samples" / "grammars" / "arithmetic.gbnf").read_text()
CHESS_GBNF = (ROOT / "samples" / "grammars" / "chess.gbnf").read_text()


def test_grammar_parser_takes_gbnf_text_and_llama_grammar():
    from formatenforcer import GrammarError
    from formatenforcer.integrations.llamacpp import grammar_parser

    for grammar in (ARITH_GBNF, llama_cpp.LlamaGrammar.from_string(ARITH_GBNF, verbose=False)):
        parser = grammar_parser(grammar)
        assert parser.accepts("(1 + 2) * 3 = 9") and not parser.accepts("1 + = 2")
    with pytest.raises(GrammarError, match="undefined rule 'b'"):
        grammar_parser('root ::= "a" b')
    with pytest.raises(TypeError):
        grammar_parser(3)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "grammar", "prompt"),
    [
        ("arithmetic", ARITH_GBNF, "What is 12 times 3? Write the calculation."),
        ("chess", CHESS_GBNF, "Write the first moves of a chess game in algebraic notation."),
    ],
)
def test_chat_completion_gbnf_output_is_accepted_by_xgrammar(llm, name, grammar, prompt):
    """GBNF through the adapter on the real llama.cpp; the output is read back by xgrammar on the same GBNF."""
    xgrammar = pytest.importorskip("xgrammar")
    from xgrammar.testing import _is_grammar_accept_string

    from formatenforcer.integrations.llamacpp import grammar_logits_processor

    result = llm.create_chat_completion(
        messages=[{"role": "user", "content": prompt}],
        logits_processor=grammar_logits_processor(llm, llama_cpp.LlamaGrammar.from_string(grammar, verbose=False)),
        max_tokens=80,
        temperature=0.7,
        seed=2,
    )
    choice = result["choices"][0]
    text = choice["message"]["content"]
    assert choice["finish_reason"] == "stop", (name, text)
    assert _is_grammar_accept_string(xgrammar.Grammar.from_ebnf(grammar), text), (name, text)
