"""The backend choice: ``core_backend()`` says which walk computes masks, ``FORMATENFORCER_PURE_PYTHON=1``
forces the Python walk, and a build without a C compiler still installs and works, after one warning line."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

PROBE = """
import sys, warnings
if {isolate}:  # an editable install of the source tree would resolve formatenforcer.core._native by name
    sys.meta_path[:] = [finder for finder in sys.meta_path if "editable" not in repr(finder).lower()]
warnings.simplefilter("default")
import numpy as np
from formatenforcer import RegexParser, TokenEnforcer, Vocabulary, core_backend
v = Vocabulary.from_tokens(["a", "b", "ab", "\\u00e9", b"\\xc3", b"\\xa9", "1"], eos_token_ids=[7], size=8)
m = TokenEnforcer(v, RegexParser("(ab|\\u00e9)+")).matcher()
print(core_backend(), sorted(int(i) for i in np.flatnonzero(np.unpackbits(m.mask().view(np.uint8), bitorder="little"))))
"""


def probe(env: dict[str, str], path: str | None = None) -> subprocess.CompletedProcess:
    """Runs PROBE in a new interpreter; with ``path``, imports formatenforcer from there (and not from the
    current folder, which ``python -c`` puts first on the path)."""
    full = {key: value for key, value in os.environ.items() if key != "FORMATENFORCER_PURE_PYTHON"}
    full.update(env)
    if path is not None:
        full["PYTHONPATH"] = path
    return subprocess.run(
        [sys.executable, "-c", PROBE.format(isolate=path is not None)],
        env=full,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=path or ROOT,
    )


def test_pure_python_is_forced_by_the_environment():
    done = probe({"FORMATENFORCER_PURE_PYTHON": "1"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[0] == "python"
    assert "compiled core" not in done.stderr  # forced: no warning


def test_both_backends_give_the_same_mask():
    python = probe({"FORMATENFORCER_PURE_PYTHON": "1"})
    default = probe({})
    assert python.returncode == default.returncode == 0, python.stderr + default.stderr
    assert python.stdout.split(" ", 1)[1] == default.stdout.split(" ", 1)[1]
    assert python.stdout.split()[1:] == ["[0,", "2,", "3,", "4]"]  # a, ab, é, and é's first byte


def test_a_missing_extension_falls_back_with_one_warning_line():
    done = probe({"FORMATENFORCER_NATIVE_MODULE": str(ROOT / "no-such-extension.so")})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[0] == "python"
    lines = [line for line in done.stderr.splitlines() if "compiled core" in line]
    assert len(lines) == 1 and "pure-Python walk" in lines[0], done.stderr


BUILD_OUTPUTS = shutil.ignore_patterns("build", "dist", "*.egg-info", "*.so", "*.pyd", "__pycache__", ".*")
"""What a build leaves in a source tree (and dot folders: git, caches). ``setup.py build_ext --inplace``
leaves the compiled core under build/lib.*/ too, and a wheel built from that tree takes it from there as an
up-to-date build, without a compiler: the build below starts from the sources alone, as a fresh clone has them."""


@pytest.mark.skipif(not (ROOT / "setup.py").exists(), reason="needs the source tree")
def test_a_build_without_compiler_installs_and_runs(tmp_path):
    """CC=false: the optional extension is skipped, the wheel still builds, and the package runs from it."""
    source = tmp_path / "source"
    shutil.copytree(ROOT, source, ignore=BUILD_OUTPUTS)
    env = {**os.environ, "CC": "false", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(tmp_path),
         str(source)],
        env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert build.returncode == 0, build.stderr
    (wheel,) = tmp_path.glob("*.whl")
    target = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        assert not [name for name in archive.namelist() if name.endswith((".so", ".pyd"))]
        archive.extractall(target)
    done = probe({}, path=str(target))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[0] == "python"
    assert sum("compiled core" in line for line in done.stderr.splitlines()) == 1, done.stderr
