"""Classes that derive from an engine's own base class, defined on first access.

An adapter module must import without its engine (``import formatenforcer.integrations.vllm`` works where
vLLM is not installed), yet its public class subclasses an engine class and must still resolve by name
(``module:Class`` for vLLM's ``--logits-processors``, pickling by reference). A module-level
``__getattr__`` made here builds each such class from its factory the first time it is asked for.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def lazy_classes(namespace: dict[str, Any], factories: dict[str, Callable[[], type]]) -> Callable[[str], Any]:
    """A module ``__getattr__`` that defines each class in ``factories`` in ``namespace`` (the module's
    globals) on first access, importing the engine only then."""
    module = namespace["__name__"]

    def __getattr__(name: str) -> Any:
        factory = factories.get(name)
        if factory is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        cls = factory()
        namespace[name] = cls
        return cls

    return __getattr__
