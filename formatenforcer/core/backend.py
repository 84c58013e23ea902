"""Which core computes masks: the compiled extension ``formatenforcer.core._native`` or the Python walk.

The extension is built by the package's own build (setup.py). Where it was not built (no C compiler), the
package works on the Python walk after a one-line warning. ``FORMATENFORCER_PURE_PYTHON=1`` forces the
Python walk; ``FORMATENFORCER_NATIVE_MODULE=/path/to/_native.so`` loads another build of the extension
(the sanitizer build of .ci/sanitize.sh). ``FORMATENFORCER_NO_MACHINE=1`` keeps the compiled walk but not the
compiled JSON machine (core/machine.py), for comparing the two.
"""

from __future__ import annotations

import importlib.util
import os
import warnings
from types import ModuleType

PURE_PYTHON_ENV = "FORMATENFORCER_PURE_PYTHON"
NO_MACHINE_ENV = "FORMATENFORCER_NO_MACHINE"
NATIVE_MODULE_ENV = "FORMATENFORCER_NATIVE_MODULE"


def _load() -> ModuleType | None:
    if os.environ.get(PURE_PYTHON_ENV, "") not in ("", "0"):
        return None
    path = os.environ.get(NATIVE_MODULE_ENV)
    try:
        if path:
            spec = importlib.util.spec_from_file_location(f"{__package__}._native", path)
            if spec is None or spec.loader is None:
                raise ImportError(f"{NATIVE_MODULE_ENV}={path!r} is not a loadable extension module")
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module
        from . import _native

        return _native
    except ImportError as error:
        warnings.warn(
            f"formatenforcer: the compiled core is not available ({error}); using the pure-Python walk",
            RuntimeWarning,
            stacklevel=2,
        )
        return None


native: ModuleType | None = _load()
"""The extension module, or None when it is not built or the Python walk is forced."""

_active = native is not None


def core_backend() -> str:
    """``"compiled"`` when masks come from the compiled walk where it applies, else ``"python"``."""
    return "compiled" if _active else "python"


def active() -> bool:
    """Whether the compiled walk is in use (see ``core_backend``)."""
    return _active


def use_compiled(enabled: bool) -> None:
    """Switches the compiled walk on or off in this process (differential tests and benchmarks compare the
    two backends in one process). Masks already cached by an enforcer are kept."""
    global _active
    if enabled and native is None:
        raise RuntimeError("the compiled core is not available in this process (see core_backend())")
    _active = enabled


_machine = os.environ.get(NO_MACHINE_ENV, "") in ("", "0")


def use_machine(enabled: bool) -> None:
    """Switches the compiled JSON machine on or off in this process (tests of the Python walk's own caches
    and benchmarks compare the two). Enforcers already made keep their start."""
    global _machine
    _machine = enabled


def machine_active() -> bool:
    """Whether formats the compiled JSON machine covers run on it (the compiled walk is in use, and
    ``FORMATENFORCER_NO_MACHINE`` is not set)."""
    return _active and _machine
