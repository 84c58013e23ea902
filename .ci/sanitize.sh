#!/usr/bin/env bash
# Memory safety of the compiled core: builds formatenforcer/core/_native.c once with AddressSanitizer and
# UndefinedBehaviorSanitizer into a temporary folder and runs the differential and fuzz tests against that
# build (FORMATENFORCER_NATIVE_MODULE points the package at it). Any sanitizer report fails the run.
#
# The Python interpreter is not built with ASan, so the ASan runtime is preloaded (LD_PRELOAD) and leak
# detection is off (detect_leaks=0): CPython keeps objects alive until exit by design, and LeakSanitizer would
# report those. Leaks of the extension itself are checked by test_native_fuzz.py's resident-size test.
set -euo pipefail
cd "$(dirname "$0")/.."
CC=${CC:-gcc}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
include=$(python -c "import sysconfig; print(sysconfig.get_paths()['include'])")
suffix=$(python -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")
"$CC" -shared -fPIC -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all \
  -Wall -Werror -I"$include" formatenforcer/core/_native.c -o "$out/_native$suffix"
export LD_PRELOAD="$("$CC" -print-file-name=libasan.so) $("$CC" -print-file-name=libubsan.so)"
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export FORMATENFORCER_NATIVE_MODULE="$out/_native$suffix" HF_HUB_OFFLINE=1
python -c "from formatenforcer.core import backend; assert backend.native.__file__ == '$out/_native$suffix'"
# (the resident-size test is left out: ASan keeps freed memory in quarantine, so the size grows by design)
python -m pytest -q -p no:cacheprovider tests/test_native_fuzz.py tests/test_native_walk.py tests/test_native_lexeme.py \
  tests/test_native_grammar.py tests/test_machine.py tests/test_machine_unique.py tests/test_machine_inside.py \
  tests/test_machine_unions.py tests/test_machine_numbers.py -k "not no_leak"
