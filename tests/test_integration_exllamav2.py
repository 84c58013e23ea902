"""exllamav2: the FormatEnforcerFilter driven token by token through exllamav2's filter protocol
(begin / feed / next / clone) with the real ExLlamaV2Tokenizer of SmolLM2-135M-Instruct.

What is not exercised: exllamav2's CUDA extension cannot be built here, so no ExLlamaV2 model is loaded and
no generator runs; ``exllamav2_ext`` is replaced by an empty module so that the package's pure-Python parts
(config, tokenizer, filter base class) import. The sampler's own use of ``next()`` (intersect pass sets,
union end sets, assert non-empty, stop on an end token) is reproduced in ``_sample_step``.
"""

from __future__ import annotations

import importlib.util
import json
import random
import re
import sys
import types

import numpy as np
import pytest

from formatenforcer import ChoiceParser, JsonConfig, JsonSchemaParser, RegexParser

if importlib.util.find_spec("exllamav2") is None:
    pytest.skip("exllamav2 is not installed (pip install 'formatenforcer[exllamav2]')", allow_module_level=True)
if importlib.util.find_spec("exllamav2_ext") is None:
    # Without this, importing exllamav2 tries to JIT-compile its CUDA extension (and fails on CPU).
    sys.modules.setdefault("exllamav2_ext", types.ModuleType("exllamav2_ext"))

jsonschema = pytest.importorskip("jsonschema")

PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 12},
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
        "email": {"type": "string", "format": "email", "maxLength": 24},
    },
    "required": ["name", "age"],
    "additionalProperties": False,
}
ORDER = {
    "type": "object",
    "properties": {
        "orderId": {"type": "integer", "minimum": 1, "maximum": 99999},
        "items": {
            "type": "array",
            "maxItems": 3,
            "items": {
                "type": "object",
                "properties": {"sku": {"enum": ["A-1", "B-2", "C-3"]}, "qty": {"type": "integer", "maximum": 9}},
                "required": ["sku", "qty"],
                "additionalProperties": False,
            },
        },
        "paid": {"type": "boolean"},
    },
    "required": ["orderId", "items"],
    "additionalProperties": False,
}
COMPACT = JsonConfig(whitespace="compact")


def _schema_check(schema):
    return lambda text: jsonschema.validate(json.loads(text), schema) is None


CASES = {
    "person": (
        lambda: JsonSchemaParser(PERSON),
        [
            json.dumps({"name": "Alice", "age": 30}),
            json.dumps({"name": "Zoë 🙂", "age": 7, "email": "zoe@example.com"}, ensure_ascii=False),
            json.dumps({"age": 150, "name": ""}, indent=2),
        ],
        _schema_check(PERSON),
    ),
    "order": (
        lambda: JsonSchemaParser(ORDER),
        [
            json.dumps({"orderId": 12, "items": [{"sku": "A-1", "qty": 2}], "paid": True}),
            json.dumps({"items": [], "orderId": 99999}, indent=2),
        ],
        _schema_check(ORDER),
    ),
    "phone": (
        lambda: RegexParser(r"\(?[0-9]{3}\)? [0-9]{3}-[0-9]{4}"),
        ["(555) 123-4567", "555 987-6543"],
        lambda text: re.fullmatch(r"\(?[0-9]{3}\)? [0-9]{3}-[0-9]{4}", text) is not None,
    ),
    "choice": (
        lambda: ChoiceParser(["red", "green", "blue", "bleu ciel"]),
        ["red", "bleu ciel"],
        lambda text: text in {"red", "green", "blue", "bleu ciel"},
    ),
}
# Random walks use compact JSON so that every walk is bounded (no whitespace runs to wander in).
WALK_PARSERS = {
    "person": (lambda: JsonSchemaParser(PERSON, config=COMPACT), _schema_check(PERSON)),
    "order": (lambda: JsonSchemaParser(ORDER, config=COMPACT), _schema_check(ORDER)),
    "phone": CASES["phone"][0::2],
    "choice": CASES["choice"][0::2],
}


@pytest.fixture(scope="module")
def exl_tokenizer():
    from exllamav2 import ExLlamaV2Config, ExLlamaV2Tokenizer

    from .engine_models import smollm2_hf_folder

    config = ExLlamaV2Config(str(smollm2_hf_folder()))
    return ExLlamaV2Tokenizer(config)


@pytest.fixture(scope="module")
def filter_cls():
    from formatenforcer.integrations.exllamav2 import FormatEnforcerFilter

    return FormatEnforcerFilter


def _encode(tokenizer, text: str) -> list[int]:
    return tokenizer.encode(text, add_bos=False)[0].tolist()


def _decode(tokenizer, ids: list[int]) -> str:
    return tokenizer.tokenizer_model.decode(ids)


def test_is_an_exllamav2_filter(filter_cls, exl_tokenizer):
    from exllamav2.generator.filters import ExLlamaV2Filter

    flt = filter_cls(None, exl_tokenizer, RegexParser("[a-z]+"))
    assert isinstance(flt, ExLlamaV2Filter)
    assert flt.use_background_worker()
    assert flt.vocabulary.eos_token_ids == (exl_tokenizer.eos_token_id,)
    assert flt.vocabulary.size == 49152


def test_token_bytes_match_tokenizer_decoding(exl_tokenizer):
    from formatenforcer.integrations.exllamav2 import token_bytes_of

    data = token_bytes_of(exl_tokenizer)
    hf = exl_tokenizer.tokenizer_model.hf_tokenizer
    ids = [i for i in range(0, len(data), 7) if data[i]]
    # Concatenated token bytes decode to exactly what the tokenizer decodes (split UTF-8 characters included).
    assert b"".join(data[i] for i in ids).decode("utf-8", "replace") == hf.decode(ids)
    emoji_ids = _encode(exl_tokenizer, "🙂")
    assert b"".join(data[i] for i in emoji_ids) == "🙂".encode()
    assert data[exl_tokenizer.eos_token_id] is None and data[exl_tokenizer.bos_token_id] is None


@pytest.mark.parametrize("name", sorted(CASES))
def test_filter_admits_natural_tokenization(name, filter_cls, exl_tokenizer):
    make_parser, instances, check = CASES[name]
    flt = filter_cls(None, exl_tokenizer, make_parser())
    eos = exl_tokenizer.eos_token_id
    for text in instances:
        assert check(text), text
        flt.begin("")
        ids = _encode(exl_tokenizer, text)
        assert _decode(exl_tokenizer, ids) == text
        for i, token in enumerate(ids):
            pass_tokens, end_tokens = flt.next()
            assert token in pass_tokens, f"{name}: token #{i} {_decode(exl_tokenizer, [token])!r} of {text!r}"
            assert token not in end_tokens
            flt.feed(token)
        pass_tokens, end_tokens = flt.next()
        assert eos in pass_tokens and eos in end_tokens, f"{name}: cannot end after {text!r}"


def _sample_step(filters, rng: random.Random, first_bytes: np.ndarray, end_bias: float = 0.3) -> tuple[int, bool]:
    """What exllamav2's sampler does with filters, with a random pick instead of the model's: intersect pass
    sets, union end sets, refuse an empty pass set, report whether the pick ends the job. The pick first
    chooses a first byte among the allowed tokens (so that rare structural characters are as likely as the
    thousands of word tokens), then a token with it."""
    pass_tokens, end_tokens = None, set()
    for flt in filters:
        pt, et = flt.next()
        pass_tokens = np.asarray(pt) if pass_tokens is None else np.intersect1d(pass_tokens, pt)
        end_tokens |= set(et)
    assert len(pass_tokens), "Filter excluded all tokens"
    end_tokens &= set(pass_tokens.tolist()) if len(end_tokens) else set()  # only a passed token can end the job
    others = pass_tokens[~np.isin(pass_tokens, list(end_tokens))] if end_tokens else pass_tokens
    if end_tokens and (rng.random() < end_bias or not len(others)):
        return min(end_tokens), True
    firsts = first_bytes[others]
    chosen = rng.choice(np.unique(firsts).tolist())
    group = others[firsts == chosen]
    return int(group[rng.randrange(len(group))]), False


def _first_bytes(vocabulary) -> np.ndarray:
    return np.array([t[0] if t else -1 for t in vocabulary.token_bytes])


@pytest.mark.parametrize("name", sorted(WALK_PARSERS))
def test_random_walks_stay_in_format(name, filter_cls, exl_tokenizer):
    make_parser, check = WALK_PARSERS[name]
    flt = filter_cls(None, exl_tokenizer, make_parser())
    first_bytes = _first_bytes(flt.vocabulary)
    for seed in range(12):
        rng = random.Random(seed)
        flt.begin("")
        ids: list[int] = []
        for _ in range(400):
            token, ended = _sample_step([flt], rng, first_bytes)
            if ended:
                break
            flt.feed(token)
            ids.append(token)
        else:
            pytest.fail(f"{name} seed {seed}: walk did not end: {_decode(exl_tokenizer, ids)!r}")
        text = _decode(exl_tokenizer, ids)
        assert check(text), f"{name} seed {seed}: {text!r} is outside the format"


def test_clone_is_independent(filter_cls, exl_tokenizer):
    flt = filter_cls(None, exl_tokenizer, RegexParser("ab|ac"))
    flt.begin("")
    flt.feed(_encode(exl_tokenizer, "a")[0])
    twin = flt.clone()
    assert isinstance(twin, filter_cls) and twin.enforcer is flt.enforcer
    b, c = _encode(exl_tokenizer, "b")[0], _encode(exl_tokenizer, "c")[0]
    twin.feed(b)
    assert c in flt.next()[0] and b in flt.next()[0]
    assert twin.next()[1] == [exl_tokenizer.eos_token_id]
    assert flt.next()[1] == []


def test_two_filters_intersect_like_the_sampler(filter_cls, exl_tokenizer):
    """Two stacked filters (a format and a choice among its values) only let through what both allow."""
    digits = filter_cls(None, exl_tokenizer, RegexParser("[0-9]+"))
    exact = filter_cls(None, exl_tokenizer, ChoiceParser(["42", "7", "seven"]))
    rng = random.Random(3)
    first_bytes = _first_bytes(digits.vocabulary)
    texts = set()
    for _ in range(8):
        ids = []
        for f in (digits, exact):
            f.begin("")
        while True:
            token, ended = _sample_step([digits, exact], rng, first_bytes, end_bias=0.5)
            if ended:
                break
            for f in (digits, exact):
                f.feed(token)
            ids.append(token)
        texts.add(_decode(exl_tokenizer, ids))
    assert texts == {"42", "7"}
