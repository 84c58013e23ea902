"""The ``format`` semantics stage one needs, handed in by the format layer (``jsonschema/formats/``).

Stage one reads ``format`` (is the name one that can be asserted?) and checks ``const``/``enum`` values
against it while merging, but it must not import the format grammars: they are automata for the parsers,
and stage one stays a pure transformation of schemas. So the format layer's answers come through this seam,
installed once by ``formatenforcer.jsonschema`` when the package is imported (before any schema is read).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class FormatChecks:
    """What stage one asks of formats: the names it can assert, the length caps some add beside their
    automaton, and whether a text is a valid value of one."""

    names: frozenset[str]
    max_length: Mapping[str, int]
    matches: Callable[[str, str], bool]


_INSTALLED: list[FormatChecks] = []


def install(checks: FormatChecks) -> None:
    """Makes ``checks`` the format semantics of stage one (the format layer calls this once)."""
    _INSTALLED[:] = [checks]


def format_checks() -> FormatChecks:
    """The installed format semantics."""
    if not _INSTALLED:
        raise RuntimeError("formatenforcer.jsonschema was not imported: no format checks are installed")
    return _INSTALLED[0]
