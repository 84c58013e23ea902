"""The exceptions formatenforcer raises, all under one root.

    FormatEnforcerError
    ├── FormatError            a format (regex, choice list, schema) that cannot be built
    │   ├── RegexError         a regular expression that is malformed or uses an unsupported construct
    │   └── SchemaError        a JSON Schema that is broken (not JSON, wrong keyword type, dangling $ref, ...)
    │       └── UnsupportedSchemaError   a valid schema using keywords that cannot be enforced
    │   └── GrammarError       a context-free grammar (Lark, GBNF, EBNF) that is malformed or cannot be enforced
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


class GrammarError(FormatError):
    """A context-free grammar that cannot be read or enforced: bad syntax, an undefined, unproductive or
    unreachable symbol, a terminal the regex engine cannot compile, an empty language, or one too large to
    build within the time limit. The message names the rule (or terminal) and its line."""


class BuildTimeoutError(FormatError):
    """A format that did not finish building within its time budget (``JsonConfig.build_seconds``): raised
    by the parser's constructor, never during generation."""


class BuildMemoryError(FormatError):
    """A format whose build needed more memory than its budget (``JsonConfig.build_megabytes``: the
    process's resident memory may grow by that much while the parser's constructor runs): raised by the
    constructor, never during generation."""


class MaskTimeoutError(FormatEnforcerError):
    """One mask took longer to compute than ``EnforcerConfig.mask_seconds``. Never raised into an engine's
    loop: the matcher that asked enters its error state (end-of-sequence only) with this as its ``error``,
    and ``TokenEnforcer.allowed_tokens`` answers end-of-sequence for that call."""


class MaskMemoryError(FormatEnforcerError):
    """One mask's walk grew the process's resident memory by more than ``EnforcerConfig.mask_megabytes``.
    Never raised into an engine's loop: handled as ``MaskTimeoutError`` is (the matcher's error state,
    end-of-sequence from ``TokenEnforcer.allowed_tokens`` for that call)."""


class Problem(tuple):
    """One keyword that cannot be enforced: the pair ``(pointer, keyword)`` - it unpacks, compares and hashes
    as that pair, as ``UnsupportedSchemaError.problems`` items always did - plus ``reason``, why not."""

    reason: str

    def __new__(cls, pointer: str, keyword: str, reason: str = "") -> Problem:
        self = super().__new__(cls, (pointer, keyword))
        self.reason = reason
        return self

    @classmethod
    def of(cls, item: tuple) -> Problem:
        """``item`` as a Problem: a Problem as is, a plain ``(pointer, keyword)`` pair with no reason."""
        return item if isinstance(item, Problem) else cls(*item)

    @property
    def pointer(self) -> str:
        return self[0]

    @property
    def keyword(self) -> str:
        return self[1]

    def __getnewargs__(self) -> tuple[str, str, str]:  # type: ignore[override]
        return (self[0], self[1], self.reason)

    def __repr__(self) -> str:
        return f"Problem({self[0]!r}, {self[1]!r}, reason={self.reason!r})"

    def describe(self) -> str:
        """``'keyword' at pointer (reason)``, as error messages and warnings list it."""
        where = f"'{self[1]}' at {self[0] or '#'}"
        return f"{where} ({self.reason})" if self.reason else where


class UnsupportedSchemaError(SchemaError):
    """A schema that uses keywords formatenforcer cannot enforce; ``problems`` lists them as ``Problem``s:
    ``(pointer, keyword)`` pairs that also carry a ``reason``."""

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        self.problems: list[Problem] = [Problem.of(p) for p in problems]
        listed = "; ".join(p.describe() for p in self.problems)
        FormatError.__init__(self, f"unsupported JSON Schema keyword(s): {listed}")
        self.pointer = self.problems[0][0] if self.problems else ""


class VocabularyError(FormatEnforcerError, ValueError):
    """A tokenizer whose per-token texts cannot be recovered exactly."""
