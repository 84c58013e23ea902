"""The ``formatenforcer`` command, run as a user runs it: ``python -m formatenforcer`` in a subprocess.

Fast cases need no model (``check``, ``explain``, every error that is caught before the model loads); the
``generate`` cases load the real default model (SmolLM2-135M-Instruct) and are marked slow.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PERSON = ROOT / "samples" / "person.schema.json"


def run(*args: str, cwd: Path | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    # one torch thread, as the CLI uses: on a small shared CPU more threads contend and run ~10x slower
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "OMP_NUM_THREADS": "1"}
    return subprocess.run(
        [sys.executable, "-m", "formatenforcer", *args],
        capture_output=True,
        text=True,
        cwd=cwd or ROOT,
        env=env,
        timeout=timeout,
    )


def assert_one_line_error(result: subprocess.CompletedProcess[str], *fragments: str) -> None:
    """The error policy: non-zero exit, exactly one line on stderr, no traceback, nothing on stdout."""
    assert result.returncode != 0, result
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("formatenforcer: error: "), lines[0]
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    assert result.stdout == ""


@pytest.fixture()
def files(tmp_path: Path) -> dict[str, Path]:
    paths = {
        "unsupported": tmp_path / "unsupported.json",
        "not_json": tmp_path / "not_json.json",
        "missing": tmp_path / "missing.json",
    }
    paths["unsupported"].write_text(
        json.dumps({"type": "object", "properties": {"a": {"type": "string", "pattern": "(?<=x)y"}}})
    )
    paths["not_json"].write_text('{"type": "object",')
    return paths


# --- check -----------------------------------------------------------------------------------------------


def test_check_supported_schema_exits_0() -> None:
    result = run("check", str(PERSON))
    assert result.returncode == 0, result.stderr
    assert "fully supported" in result.stdout


def test_check_lists_unsupported_keywords_with_pointers_and_exits_1(files: dict[str, Path]) -> None:
    result = run("check", str(files["unsupported"]))
    assert result.returncode == 1, result.stderr
    assert "#/properties/a/pattern" in result.stdout and "pattern" in result.stdout
    assert "lookaround" in result.stdout  # the reason, after the keyword
    assert result.stderr == ""


def test_check_reads_stdin() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "formatenforcer", "check", "-"],
        input='{"type": "integer", "minimum": 3}',
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0 and "fully supported" in result.stdout


@pytest.mark.parametrize(("name", "fragment"), [("missing", "schema file not found"), ("not_json", "is not JSON")])
def test_check_errors_exit_2(files: dict[str, Path], name: str, fragment: str) -> None:
    result = run("check", str(files[name]))
    assert result.returncode == 2
    assert_one_line_error(result, fragment)


# --- generate: every error is caught before the model loads (fast) --------------------------------------


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (["--schema", "{missing}"], ["schema file not found"]),
        (["--schema", "{not_json}"], ["is not JSON", "line 1"]),
        (["--schema", "{unsupported}"], ["pattern", "#/properties/a/pattern", "--lenient"]),
        (["--regex", "[a-"], ["regular expression"]),
        (["--regex", "(?=a)b"], ["lookaround"]),
        (["--json", "--model", "{missing}"], ["model path not found"]),
        (["--json", "--model", "{not_json}"], ["not a .gguf file"]),
        (["--pydantic", "no_such_module_xyz:Model"], ["cannot import module"]),
        (["--json", "--max-tokens", "0"], ["--max-tokens"]),
    ],
    ids=[
        "missing-schema",
        "not-json",
        "unsupported",
        "bad-regex",
        "lookaround",
        "missing-model",
        "model-not-gguf",
        "bad-pydantic",
        "max-tokens",
    ],  # fmt: skip
)
def test_generate_errors_are_one_line(files: dict[str, Path], args: list[str], fragments: list[str]) -> None:
    args = [a.format(**{k: str(v) for k, v in files.items()}) for a in args]
    result = run("generate", "hello", *args)
    assert result.returncode == 2
    assert_one_line_error(result, *fragments)


def test_generate_needs_a_format() -> None:
    result = run("generate", "hello")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "one of the arguments" in result.stderr


# --- explain (no model) -----------------------------------------------------------------------------------


def test_explain_complete_text_exits_0() -> None:
    text = json.dumps({"name": "Ada Lovelace", "age": 36, "email": "ada@example.org", "hobbies": ["math"]})
    result = run("explain", "--schema", str(PERSON), text)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "complete" in result.stdout


def test_explain_shows_where_and_what_was_allowed() -> None:
    result = run("explain", "--schema", str(PERSON), '{"name": "Al", "age": 17}')
    assert result.returncode == 1
    assert "refused '7'" in result.stdout and "column 24" in result.stdout
    assert "allowed there: '8' '9'" in result.stdout  # minimum 18: after "1" only 8 or 9 may follow


def test_explain_incomplete_text() -> None:
    result = run("explain", "--regex", r"[0-9]{3}-[0-9]{4}", "555-12")
    assert result.returncode == 1 and "incomplete" in result.stdout and "continues with: '0'..'9'" in result.stdout


def test_explain_choice_and_pydantic(tmp_path: Path) -> None:
    assert run("explain", "--choice", "red", "green", "--", "green").returncode == 0
    (tmp_path / "people.py").write_text(
        "from pydantic import BaseModel\n\nclass Person(BaseModel):\n    name: str\n    age: int\n"
    )
    good = run("explain", "--pydantic", "people:Person", '{"name": "Bo", "age": 4}', cwd=tmp_path)
    assert good.returncode == 0, good.stdout + good.stderr
    bad = run("explain", "--pydantic", "people:Person", '{"name": "Bo", "age": "4"}', cwd=tmp_path)
    assert bad.returncode == 1 and "refused" in bad.stdout


def test_version_and_help() -> None:
    assert run("--version").stdout.startswith("formatenforcer ")
    for command in ("generate", "check", "explain"):
        assert run(command, "--help").returncode == 0


def test_importing_the_cli_loads_no_engine() -> None:
    code = "import sys, formatenforcer.cli.main; print('torch' in sys.modules or 'transformers' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == "False", result.stderr


# --- generate with the real default model (slow) ----------------------------------------------------------


@pytest.mark.slow
def test_generate_readme_command_prints_schema_valid_json() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    result = run("generate", "Describe a fictional person.", "--schema", str(PERSON), timeout=900)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    value = json.loads(result.stdout)
    jsonschema.validate(value, json.loads(PERSON.read_text()), format_checker=jsonschema.FormatChecker())


@pytest.mark.slow
def test_generate_choice_stream_and_trace() -> None:
    options = ["positive", "negative", "neutral"]
    result = run("generate", "Sentiment of: 'I love it!'", "--choice", *options, "--stream", "--trace", timeout=900)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() in options
    assert "allowed" in result.stderr and "overrode the model's first choice" in result.stderr


@pytest.mark.slow
def test_generate_regex_sampling_with_seed_is_reproducible() -> None:
    args = ["generate", "A US phone number:", "--regex", r"\([0-9]{3}\) [0-9]{3}-[0-9]{4}", "--temperature", "0.8"]
    first = run(*args, "--seed", "7", timeout=900)
    second = run(*args, "--seed", "7", timeout=900)
    assert first.returncode == 0, first.stderr
    assert first.stdout == second.stdout
    import re

    assert re.fullmatch(r"\([0-9]{3}\) [0-9]{3}-[0-9]{4}", first.stdout.strip())


@pytest.mark.slow
def test_generate_stops_at_max_tokens_with_exit_3() -> None:
    result = run("generate", "Describe a fictional person.", "--json", "--max-tokens", "3", timeout=900)
    assert result.returncode == 3
    assert_incomplete = result.stderr.strip().splitlines()
    assert len(assert_incomplete) == 1 and "--max-tokens" in assert_incomplete[0]


@pytest.mark.slow
def test_explain_tokens_with_default_tokenizer() -> None:
    result = run("explain", "--tokens", "--json", '{"a": [1, 2]}', timeout=900)
    assert result.returncode == 0, result.stderr
    assert "step  allowed  token" in result.stdout and "complete" in result.stdout


# --- grammars and tools ------------------------------------------------------------------------------------

GRAMMARS = ROOT / "samples" / "grammars"
SQL = GRAMMARS / "sql.lark"
TOOLS = GRAMMARS / "tools.json"


@pytest.mark.parametrize(
    ("name", "label"),
    [("sql.lark", "Lark"), ("json.lark", "Lark"), ("arithmetic.gbnf", "GBNF"), ("chess.gbnf", "GBNF")],
)
def test_check_grammar_detects_the_syntax_and_exits_0(name: str, label: str) -> None:
    result = run("check", "--grammar", str(GRAMMARS / name))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"{GRAMMARS / name}: valid {label} grammar"), result.stdout


def test_check_grammar_syntax_can_be_forced(tmp_path: Path) -> None:
    ebnf = tmp_path / "g.txt"
    ebnf.write_text('root ::= "a" [0-9]+\n')
    assert "valid EBNF grammar" in run("check", "--grammar", str(ebnf), "--grammar-syntax", "ebnf").stdout
    # forced to Lark, the same text is not Lark: one line, naming the problem
    assert_one_line_error(run("check", "--grammar", str(ebnf), "--grammar-syntax", "lark"), "Lark")


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        ('root ::= "a" missing\n', ["rule 'root' (line 1)", "undefined rule 'missing'"]),
        ('start: "x" | a\na: "y" a\n', ["rule 'a' (line 2)", "derives no string"]),
        ('start: "x"\nunused: "y"\n', ["rule 'unused' (line 2)", "never used"]),
    ],
)
def test_check_grammar_errors_name_rule_and_line(tmp_path: Path, text: str, fragments: list[str]) -> None:
    grammar = tmp_path / "bad.g"
    grammar.write_text(text)
    result = run("check", "--grammar", str(grammar))
    assert result.returncode == 2
    assert_one_line_error(result, *fragments)


def test_check_tools(tmp_path: Path) -> None:
    result = run("check", "--tools", str(TOOLS))
    assert result.returncode == 0 and "valid tools" in result.stdout, result.stderr
    broken = tmp_path / "tools.json"
    broken.write_text(json.dumps([{"name": "f", "parameters": {"type": "object"}}, {"parameters": {}}]))
    assert_one_line_error(run("check", "--tools", str(broken)), "tool #1 has no 'name'")
    broken.write_text('{"name": "f"}')
    assert_one_line_error(run("check", "--tools", str(broken)), "non-empty JSON list")
    assert_one_line_error(run("check"), "check takes one of")
    assert_one_line_error(run("check", str(PERSON), "--grammar", str(SQL)), "check takes one of")


def test_explain_on_a_grammar_and_on_tool_calls() -> None:
    ok = run("explain", "--grammar", str(SQL), "SELECT name FROM users WHERE age > 30 ORDER BY age DESC;")
    assert ok.returncode == 0 and "complete" in ok.stdout, ok.stdout + ok.stderr
    refused = run("explain", "--grammar", str(SQL), "SELECT name FROM users WHERE age >> 30")
    assert refused.returncode == 1 and "refused '>' at offset 34" in refused.stdout, refused.stdout
    assert "the format allowed there: ' ' '='\n" in refused.stdout
    call = '<tool_call>\n{"name": "add", "arguments": {"a": 1, "b": "two"}}\n</tool_call>'
    bad = run("explain", "--tools", str(TOOLS), call)
    assert bad.returncode == 1 and "refused '\"' at offset 55" in bad.stdout, bad.stdout
    good = run("explain", "--tools", str(TOOLS), call.replace('"two"', "2"))
    assert good.returncode == 0, good.stdout
    llama = run("explain", "--tools", str(TOOLS), "--tool-style", "llama3", '{"name": "add", "parameters": {"a": 1}}')
    assert llama.returncode == 1 and "refused '}'" in llama.stdout, llama.stdout  # "b" is required


def test_generate_grammar_errors_before_loading_a_model(tmp_path: Path) -> None:
    assert_one_line_error(run("generate", "x", "--grammar", str(tmp_path / "none.lark")), "grammar file not found")
    bad = tmp_path / "bad.gbnf"
    bad.write_text('root ::= "a" |\n  "b" nothing\n')
    assert_one_line_error(run("generate", "x", "--grammar", str(bad)), "undefined rule 'nothing'")
    assert_one_line_error(run("generate", "x", "--tools", str(tmp_path / "none.json")), "tools file not found")
    both = run("generate", "x", "--grammar", str(SQL), "--json")  # argparse's usage error, before any model
    assert both.returncode == 2 and "not allowed with argument --grammar" in both.stderr, both.stderr


@pytest.mark.slow
def test_generate_sql_with_the_default_model_parses_with_lark() -> None:
    lark = pytest.importorskip("lark")
    prompt = "Write a SQL query that lists the names of users older than 30, oldest first."
    result = run("generate", prompt, "--grammar", str(SQL), "--max-tokens", "60", timeout=900)
    assert result.returncode == 0, result.stderr
    query = result.stdout.rstrip("\n")
    assert query.startswith("SELECT ")
    lark.Lark(SQL.read_text(), parser="earley", lexer="dynamic_complete").parse(query)  # raises if not SQL


@pytest.mark.slow
@pytest.mark.parametrize("style", ["hermes", "llama3"])
def test_generate_tool_call_with_the_default_model_validates(style: str) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    tools = {tool["name"]: tool["parameters"] for tool in json.loads(TOOLS.read_text())}
    args = ["--tools", str(TOOLS), "--tool-style", style, "--max-tokens", "80"]
    result = run("generate", "What is the weather in Paris for the next 3 days?", *args, "--no-preamble", timeout=900)
    assert result.returncode == 0, result.stderr
    text = result.stdout.strip()
    if style == "hermes":
        calls = text.split("</tool_call>")
        assert calls[-1].strip() == "" and len(calls) >= 2, text
        bodies = [call.strip().removeprefix("<tool_call>") for call in calls[:-1]]
        key = "arguments"
    else:
        bodies, key = [text], "parameters"
    for body in bodies:
        call = json.loads(body)
        assert set(call) == {"name", key}
        jsonschema.validate(call[key], tools[call["name"]])


# --- model sources and the cache key (in process, no model) -----------------------------------------------


def test_model_sources_and_cache_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("transformers")
    from formatenforcer.cli.model import CliError, cache_folder, cache_root, default_source, resolve_source

    default = resolve_source(None)
    assert default == default_source() and default.gguf_file and default.gguf_file.endswith(".gguf")
    gguf = tmp_path / "tiny.gguf"
    gguf.write_bytes(b"GGUF")
    source = resolve_source(str(gguf))
    assert source.gguf_file == "tiny.gguf" and source.folder == tmp_path
    first = cache_folder(source, tmp_path / "cache")
    assert first.parent == tmp_path / "cache" / "models" and first.name.startswith("tiny-")
    gguf.write_bytes(b"GGUF, changed")  # another size: another cache folder, never a stale model
    assert cache_folder(source, tmp_path / "cache") != first
    folder = tmp_path / "model"
    folder.mkdir()
    with pytest.raises(CliError, match="without config.json"):
        resolve_source(str(folder))
    (folder / "config.json").write_text("{}")
    assert resolve_source(str(folder)).gguf_file is None
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root(None) == tmp_path / "xdg" / "formatenforcer"
    assert cache_root(str(tmp_path / "mine")) == tmp_path / "mine"


def test_progress_is_quiet_off_a_terminal_and_draws_on_one() -> None:
    import io

    from formatenforcer.cli.progress import Progress

    quiet = io.StringIO()
    with Progress("Working", stream=quiet):
        pass
    assert quiet.getvalue() == ""
    shown = io.StringIO()
    with Progress("Working", stream=shown, enabled=True) as progress:
        progress.done_message = "done"
    assert shown.getvalue().endswith("Working: done\n")


@pytest.mark.slow
def test_first_run_converts_and_caches_quietly_then_reuses_the_cache(tmp_path: Path) -> None:
    args = ["generate", "Is the sky blue?", "--choice", "yes", "no", "--cache-dir", str(tmp_path)]
    first = run(*args, timeout=900)
    assert first.returncode == 0, first.stderr
    assert first.stderr == ""  # not a terminal: no progress, no transformers bars or advice
    (folder,) = (tmp_path / "models").iterdir()
    assert (folder / "config.json").is_file() and (folder / "model.safetensors").is_file()
    assert (folder / "tokenizer.json").is_file()
    second = run(*args, timeout=900)
    assert second.returncode == 0 and second.stdout == first.stdout and second.stderr == ""
