"""The exceptions formatenforcer raises, all under one root.

    FormatEnforcerError
    ├── FormatError            a format (regex, choice list, schema) that cannot be built
    │   ├── RegexError         a regular expression that is malformed or uses an unsupported construct
    │   └── SchemaError        a JSON Schema that is broken (not JSON, wrong keyword type, dangling $ref, ...)
    │       └── UnsupportedSchemaError   a valid schema using keywords that cannot be enforced
    └── VocabularyError        a tokenizer whose token texts cannot be recovered

Every error is raised when a format or vocabulary is built, never in the middle of generation: a generation
step that finds no way forward allows end-of-sequence and logs a warning instead (see ``TokenEnforcer``).
"""

from __future__ import annotations


class FormatEnforcerError(Exception):
    """Root of every error this library raises on purpose."""


class FormatError(FormatEnforcerError, ValueError):
    """A format description that cannot be turned into a parser."""


class RegexError(FormatError):
    """A regular expression that is malformed or uses a construct a finite automaton cannot express."""


class SchemaError(FormatError):
    """A JSON Schema that is malformed; ``pointer`` is the JSON pointer of the offending place."""

    def __init__(self, message: str, pointer: str = "") -> None:
        self.pointer = pointer
        super().__init__(f"{message} (at {pointer or '#'})" if pointer is not None else message)


class UnsupportedSchemaError(SchemaError):
    """A schema that uses keywords formatenforcer cannot enforce; ``problems`` lists (pointer, keyword)."""

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        self.problems = list(problems)
        listed = ", ".join(f"'{keyword}' at {pointer or '#'}" for pointer, keyword in self.problems)
        FormatError.__init__(self, f"unsupported JSON Schema keyword(s): {listed}")
        self.pointer = self.problems[0][0] if self.problems else ""


class VocabularyError(FormatEnforcerError, ValueError):
    """A tokenizer whose per-token texts cannot be recovered exactly."""
