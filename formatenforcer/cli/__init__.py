"""The ``formatenforcer`` command line: ``generate``, ``check`` and ``explain`` (see docs/cli.md)."""

from .main import main

__all__ = ["main"]
