"""llama.cpp's published example grammars (its ``grammars/`` folder) read as GBNF: each one builds, accepts
random derivations of itself, agrees with xgrammar (and, for the JSON grammars, with Python's json module) on
mutated strings, and accepts natural Llama 3 tokenizations of its strings token by token.

The grammars are not copied into this repository: they are read from the llama-cpp-python source
distribution (the version .ci/engines.sh pins), which vendors llama.cpp. The session fixture looks for it in
``$FORMATENFORCER_LLAMA_CPP_SDIST`` or ``~/.cache/formatenforcer/published/``, and otherwise runs
``pip download llama-cpp-python==0.3.36 --no-deps --no-binary llama-cpp-python`` into that folder (about 75 MB,
once; one xdist worker downloads while the others wait on a file lock). Without the package registry the tests
are skipped with a message saying so.
"""

from __future__ import annotations

import fcntl
import json
import os
import random
import re
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from formatenforcer import GrammarParser
from formatenforcer.grammar import read_grammar
from formatenforcer.parsers import dfa_ops, regex

from .checking import accepts_text
from .grammar_cases import derive, mutate

LLAMA_CPP_PYTHON = "0.3.36"
SDIST = f"llama_cpp_python-{LLAMA_CPP_PYTHON}.tar.gz"
GRAMMARS = ("arithmetic", "json", "json_arr", "list", "chess", "c", "english", "japanese")
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "formatenforcer" / "published"

# Strings of each grammar's language written by hand (the derivations add random ones).
SAMPLES = {
    "arithmetic": ["a=1\n", "(x +2)*y=z\n", "foo_1 = (a)\nb=3\n"],
    "json": ['{"a": [1, 2.5e3, true, null], "b": {"c": "d\\n"}}', "{}", '{"x":-0.5}'],
    "json_arr": ['[\n{"a": 1},\n"b"]', "[\n]", "[\n1,\n[2, 3]]"],
    "list": ["- milk\n", "- eggs and ham\n- bread\n"],
    "chess": ["1. e4 e5\n2. Nf3 Nc6\n", "1. d4 d5\n2. c4 dxc4\n3. O-O-O Qxd8#\n"],
    "c": ["int main(){return 0;}", "float f(int x){int y = x*2;while(y>0){y = y-1;}return y;}"],
    "english": ["Hello, world!", "The quick brown fox jumps over 2 lazy dogs."],
    "japanese": ["こんにちは 世界", "カタカナ、ひらがな"],
}
REFUSED = {
    "arithmetic": ["a=1", "1a=2\n", "a==1\n"],
    "json": ["[1]", '{"a" 1}', "{'a': 1}", '{"a": 01}'],
    "json_arr": ["[1]", "{}", "[\n1,]"],
    "list": ["- \n", "milk\n", "- milk"],
    "chess": ["e4 e5\n", "1. e9 e5\n", "1. e4\n"],
    "c": ["int main{}", "main(){}"],
    "english": ["", " hello", "héllo"],
    "japanese": ["hello", " こんにちは"],
}


def _pip_download(folder: Path) -> str | None:
    """Downloads the sdist into ``folder``; returns why it could not, or None. On time-out pip and its build
    helpers are ended together.

    pip prepares an sdist's metadata in a build environment, installing its build requirements (scikit-build-core,
    cmake, ninja): only llama-cpp-python itself is asked for as source (``--no-binary llama-cpp-python``), so
    those come as wheels (10 CPU-seconds in all). ``--no-binary :all:`` would build them from source too: a
    CMake build per xdist worker, still compiling after 15 minutes on the shared two-core machine."""
    folder.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pip", "download", f"llama-cpp-python=={LLAMA_CPP_PYTHON}", "--no-deps",
               "--no-binary", "llama-cpp-python", "-q", "-d", str(folder)]  # fmt: skip
    try:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   start_new_session=True)  # fmt: skip
    except OSError as error:
        return str(error)
    try:
        _, stderr = process.communicate(timeout=600)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        return "pip download did not finish within 600 s"
    return None if process.returncode == 0 else (stderr.strip().splitlines() or ["pip failed"])[-1]


@pytest.fixture(scope="session")
def published_grammars() -> dict[str, str]:
    """name -> GBNF text of llama.cpp's example grammars, read from the llama-cpp-python sdist."""
    given = os.environ.get("FORMATENFORCER_LLAMA_CPP_SDIST")
    path = Path(given) if given else CACHE / SDIST
    reason = None
    if not given:  # one download for all workers; the lock also keeps them from reading a half-written file
        CACHE.mkdir(parents=True, exist_ok=True)
        with open(CACHE / "download.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not path.exists():
                reason = _pip_download(CACHE)
    if not path.exists():
        pytest.skip(
            f"llama.cpp's example grammars come from the {SDIST} sdist (vendor/llama.cpp/grammars); it is not "
            f"in {CACHE} and pip could not download it: {reason}"
        )
    texts: dict[str, str] = {}
    with tarfile.open(path) as archive:
        for member in archive.getmembers():
            parts = member.name.split("/")
            if parts[-2:-1] == ["grammars"] and "vendor/llama.cpp" in member.name and parts[-1].endswith(".gbnf"):
                texts[parts[-1][: -len(".gbnf")]] = archive.extractfile(member).read().decode("utf-8")
    missing = [name for name in GRAMMARS if name not in texts]
    assert not missing, f"{path} has no vendor/llama.cpp/grammars/{missing[0]}.gbnf"
    return texts


def _xgrammar_oracle(text: str):
    xgrammar = pytest.importorskip("xgrammar")
    from xgrammar.testing import _is_grammar_accept_string

    # xgrammar's EBNF has no empty alternative (json.gbnf's ``ws ::= | " " | ...``): spell it ``""``, the
    # same language
    compiled = xgrammar.Grammar.from_ebnf(re.sub(r"::=(\s*)\|", r'::=\1"" |', text))
    return lambda sample: _is_grammar_accept_string(compiled, sample)


def _json_root(name: str, sample: str) -> bool:
    """What Python's json module says of the root the grammar asks for (json: an object; json_arr: an array
    opening with ``[`` and a newline)."""
    try:
        value = json.loads(sample)
    except ValueError:
        return False
    if name == "json":
        return isinstance(value, dict)
    return isinstance(value, list) and sample.startswith("[\n")


@pytest.mark.parametrize("name", GRAMMARS)
def test_builds_and_accepts_its_language(name, published_grammars):
    text = published_grammars[name]
    parser = GrammarParser(text, syntax="gbnf")
    assert GrammarParser(text).accepts(SAMPLES[name][0]), f"{name}: syntax detection reads another language"
    for sample in SAMPLES[name]:
        assert parser.accepts(sample), f"{name}: refuses {sample!r}"
    for sample in REFUSED[name]:
        assert not parser.accepts(sample), f"{name}: accepts {sample!r}"
    grammar = read_grammar(text, "gbnf")
    rng = random.Random(name)
    for _ in range(30):
        sample = derive(grammar, rng, 6)
        assert parser.accepts(sample), f"{name}: refuses its own derivation {sample!r}"


@pytest.mark.parametrize("name", GRAMMARS)
def test_agrees_with_xgrammar_and_json_on_mutations(name, published_grammars):
    text = published_grammars[name]
    parser = GrammarParser(text, syntax="gbnf")
    oracle = _xgrammar_oracle(text)
    grammar = read_grammar(text, "gbnf")
    rng = random.Random(f"{name}-mutations")
    derived = [derive(grammar, rng, 6) for _ in range(30)] + SAMPLES[name]
    alphabet = "".join(sorted(set("".join(derived)) | set(' ()x1a,-"\n')))
    for sample in derived:
        assert oracle(sample), f"{name}: xgrammar refuses the derivation {sample!r}"
    samples = [mutate(rng.choice(derived), rng, alphabet) for _ in range(120)] + REFUSED[name]
    for sample in samples:
        accepted = parser.accepts(sample)
        assert accepted == oracle(sample), f"{name}: disagrees with xgrammar on {sample!r}"
        if name in ("json", "json_arr") and accepted:
            assert _json_root(name, sample), f"{name}: accepts {sample!r}, which Python's json module refuses"
    if name in ("json", "json_arr"):
        # every derivation is JSON; the grammar is narrower than JSON (no space before ':', at most 20 spaces
        # of indentation, at most 16 digits), so refusals are checked against xgrammar alone
        assert all(_json_root(name, s) for s in derived)


@pytest.mark.parametrize(
    "name", [pytest.param(g, marks=pytest.mark.slow) if g == "english" else g for g in GRAMMARS]
)  # (english: 15 CPU-seconds of Llama 3 token walks; the others a second or two)
def test_natural_tokenizations_are_accepted(name, published_grammars, llama3_vocabulary, llama3_tokenizer):
    parser = GrammarParser(published_grammars[name], syntax="gbnf")
    grammar = read_grammar(published_grammars[name], "gbnf")
    rng = random.Random(f"{name}-tokens")
    samples = SAMPLES[name] + [derive(grammar, rng, 5) for _ in range(3)]
    for sample in samples:
        ok, reason = accepts_text(llama3_vocabulary, llama3_tokenizer, parser, sample)
        assert ok, f"{name}: {sample!r}: {reason}"
    for sample in REFUSED[name]:
        if sample:
            assert not accepts_text(llama3_vocabulary, llama3_tokenizer, parser, sample)[0], f"{name}: {sample!r}"


def test_a_wide_class_that_is_not_most_of_unicode_builds(monkeypatch):
    """japanese.gbnf's ``[一-鿿]`` (20,992 characters) was written as the negation of the rest of Unicode,
    whose automaton did not build within the time limit; a wide class is negated only when its complement
    is the smaller set. The library's limit (``regex.COMPILE_SECONDS``, 5 s) is wall time, which a loaded
    machine can spend on a build of 1-2 CPU-seconds: the test lifts it to a hang guard and holds the build to
    5 s of this process's CPU time instead."""
    monkeypatch.setattr(regex, "COMPILE_SECONDS", 120.0)
    monkeypatch.setattr(dfa_ops, "COMPILE_SECONDS", 120.0)
    started = time.process_time()
    parser = GrammarParser("root ::= [一-鿿]+ ([^a-z] [a-z])?", syntax="gbnf", build_seconds=None)
    assert time.process_time() - started < 5.0
    assert parser.accepts("世界") and parser.accepts("世界!a") and parser.accepts("世界一x")
    assert not parser.accepts("世界ab") and not parser.accepts("ぁ") and not parser.accepts("")
