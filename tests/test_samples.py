"""samples/ cannot rot: every script byte-compiles, the model-free ones run here, the ones on the embedded
SmolLM2 (Hugging Face generate, the notebook) run in the slow suite, and engine samples run when their engine
is installed (vLLM and llama.cpp on CPU) or are at least compiled (exllamav2 needs a CUDA GPU).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import py_compile
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
SCRIPTS = sorted(SAMPLES.glob("*.py"))
HF_SAMPLES = [
    "hf_prefix_allowed_tokens.py",
    "hf_logits_processor.py",
    "pydantic_model.py",
    "regex_date.py",
    "choice.py",
    "grammars_sql_chess.py",
    "tool_calls.py",
]
# sample -> (the engine's module, the integration module it uses)
ENGINE_SAMPLES = {
    "vllm_offline.py": ("vllm", "vllm"),
    "exllamav2_filter.py": ("exllamav2", "exllamav2"),
    "llamacpp_logits.py": ("llama_cpp", "llamacpp"),
}


def run_sample(name: str, timeout: float) -> subprocess.CompletedProcess[str]:
    # one torch thread, as the CLI uses: on a small shared CPU more threads contend and run ~10x slower
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "OMP_NUM_THREADS": "1"}
    return subprocess.run(
        [sys.executable, str(SAMPLES / name)], capture_output=True, text=True, cwd=ROOT, env=env, timeout=timeout
    )


def test_samples_exist() -> None:
    names = {p.name for p in SCRIPTS}
    assert set(HF_SAMPLES) <= names and "engine_loop.py" in names
    assert (SAMPLES / "custom_schemas.ipynb").is_file() and (SAMPLES / "person.schema.json").is_file()


@pytest.mark.parametrize("script", SCRIPTS, ids=[p.name for p in SCRIPTS])
def test_sample_name_shadows_no_installed_module(script: Path) -> None:
    """``python samples/x.py`` puts samples/ first on sys.path: a sample named regex.py breaks transformers."""
    assert importlib.util.find_spec(script.stem) is None, f"rename {script.name}: it shadows a module"


@pytest.mark.parametrize("script", SCRIPTS, ids=[p.name for p in SCRIPTS])
def test_sample_byte_compiles(script: Path, tmp_path: Path) -> None:
    py_compile.compile(str(script), cfile=str(tmp_path / "out.pyc"), doraise=True)


def test_notebook_is_valid_and_stored_without_outputs() -> None:
    nbformat = pytest.importorskip("nbformat")
    notebook = nbformat.read(str(SAMPLES / "custom_schemas.ipynb"), as_version=4)
    nbformat.validate(notebook)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code and all(not cell.outputs for cell in code)
    for cell in code:
        compile(cell.source, "custom_schemas.ipynb", "exec")


def test_engine_loop_runs_without_a_model() -> None:
    result = run_sample("engine_loop.py", timeout=120)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 3 and all(line.endswith("(complete: True)") for line in lines)


def test_person_schema_is_supported_and_accepts_a_valid_person() -> None:
    from formatenforcer import JsonSchemaParser

    schema = json.loads((SAMPLES / "person.schema.json").read_text())
    parser = JsonSchemaParser(schema)
    person = {"name": "Ada Lovelace", "age": 36, "email": "ada@example.org", "hobbies": ["math", "poetry"]}
    assert parser.accepts(json.dumps(person)) and parser.accepts(json.dumps(person, indent=2))
    assert not parser.accepts(json.dumps({**person, "age": 17}))
    assert not parser.accepts(json.dumps({**person, "hobbies": ["a1", "b2", "c3", "d4"]}))


GRAMMAR_EXAMPLES = {
    "sql.lark": (
        ["SELECT * FROM users", "SELECT name, COUNT(*) FROM t WHERE a = 1 AND b != 'x' ORDER BY name DESC LIMIT 5;"],
        ["SELECT FROM t", "SELECT * FROM t LIMIT 1.5", "select * from t", "SELECT *  FROM t"],
    ),
    "json.lark": (['{"a": [1, -2.5e3, "x\\n"], "b": null}', "[]", ' "s" ', "true"], ["{'a': 1}", "[1,]", "01"]),
    "arithmetic.gbnf": (["12 * 3 = 36", "(1 + 2) / -4 = 0", "7 = 7"], ["1+2 = 3", "1 + = 2", "(1 = 1"]),
    "chess.gbnf": (
        ["1. e4 e5", "1. e4 e5 2. Nf3 Nc6 3. O-O exd5+", "1. e8=Q d1=N#"],
        ["1. e4", "1. e2=Q e5", "1.e4 e5"],
    ),
}


@pytest.mark.parametrize("name", sorted(GRAMMAR_EXAMPLES))
def test_sample_grammars_agree_with_lark_and_xgrammar(name: str) -> None:
    from formatenforcer import GrammarParser

    text = (SAMPLES / "grammars" / name).read_text()
    parser = GrammarParser(text)
    if name.endswith(".lark"):
        lark = pytest.importorskip("lark")
        oracle = lark.Lark(text, parser="earley", lexer="dynamic_complete")

        def other(s: str) -> bool:
            try:
                oracle.parse(s)
            except lark.exceptions.LarkError:
                return False
            return True
    else:
        xgrammar = pytest.importorskip("xgrammar")
        from xgrammar.testing import _is_grammar_accept_string

        compiled = xgrammar.Grammar.from_ebnf(text)

        def other(s: str) -> bool:
            return _is_grammar_accept_string(compiled, s)

    good, bad = GRAMMAR_EXAMPLES[name]
    for sample in good:
        assert parser.accepts(sample) and other(sample), sample
    for sample in bad:
        assert not parser.accepts(sample) and not other(sample), sample


def test_pydantic_sample_model_imports_without_an_engine() -> None:
    code = "import sys; sys.path.insert(0, 'samples'); import pydantic_model; print('torch' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert result.stdout.strip() == "False", result.stderr


@pytest.mark.slow
@pytest.mark.parametrize("name", HF_SAMPLES)
def test_hf_sample_runs_on_the_embedded_model(name: str) -> None:
    result = run_sample(name, timeout=900)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip()


@pytest.mark.slow
def test_notebook_executes() -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    pytest.importorskip("matplotlib")
    notebook = nbformat.read(str(SAMPLES / "custom_schemas.ipynb"), as_version=4)
    client = nbclient.NotebookClient(
        notebook, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}
    )
    client.execute()  # raises CellExecutionError, with the cell's traceback, if any cell fails
    images = [o for c in notebook.cells for o in c.get("outputs", []) if "image/png" in o.get("data", {})]
    assert len(images) == 2


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(ENGINE_SAMPLES))
def test_engine_sample_runs_when_its_engine_is_installed(name: str) -> None:
    module, integration = ENGINE_SAMPLES[name]
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed (the sample is byte-compiled above)")
    if importlib.util.find_spec(f"formatenforcer.integrations.{integration}") is None:
        pytest.skip(f"formatenforcer.integrations.{integration} is not written yet")
    if name == "exllamav2_filter.py":
        torch = pytest.importorskip("torch")
        if not torch.cuda.is_available():
            pytest.skip("exllamav2 needs a CUDA GPU")
    result = run_sample(name, timeout=1500)
    assert result.returncode == 0, result.stderr[-2000:]


@pytest.mark.parametrize("name", sorted(ENGINE_SAMPLES))
def test_engine_sample_without_its_engine_prints_the_install_hint(name: str) -> None:
    """Where the engine is not installed (here: its import made to fail, as it does where it is absent), the
    sample exits with the integration's one-line install hint, not a traceback."""
    module, integration = ENGINE_SAMPLES[name]
    hint = importlib.import_module(f"formatenforcer.integrations.{integration}").INSTALL_HINT
    script = str(SAMPLES / name)
    blocked = f"import runpy, sys; sys.modules[{module!r}] = None; runpy.run_path({script!r}, run_name='__main__')"
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    result = subprocess.run(
        [sys.executable, "-c", blocked], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120
    )
    assert result.returncode == 1, result.stderr[-2000:]
    assert "Traceback" not in result.stderr and result.stderr.strip().splitlines()[-1] == hint, result.stderr
