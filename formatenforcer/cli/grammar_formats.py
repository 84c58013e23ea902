"""The command line's grammar formats: ``--grammar FILE`` (Lark, GBNF or EBNF) and ``--tools FILE``.

``--grammar`` reads the file and builds a ``GrammarParser``; the syntax is detected as vLLM does (text
containing ``::=`` is GBNF/EBNF, anything else Lark) unless ``--grammar-syntax`` names it. ``--tools`` reads
a JSON list of ``{"name": ..., "parameters": schema}`` objects (OpenAI's ``{"type": "function", "function":
{...}}`` wrapping too) and builds a ``ToolCallParser`` in ``--tool-style`` (hermes or llama3). A file that
cannot be read or is not the expected shape is a one-line ``CliError``; a grammar the library refuses is its
own ``GrammarError``, printed by ``main`` as one line naming the rule and line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..grammar import GrammarParser, ToolCallParser, detect_syntax, read_grammar
from .model import CliError


def read_text(path: str, what: str) -> str:
    """The UTF-8 text of ``path`` (``-`` reads stdin), or a one-line CliError."""
    if path == "-":
        import sys

        return sys.stdin.read()
    file = Path(path).expanduser()
    if not file.exists():
        raise CliError(f"{what} file not found: {path}")
    if file.is_dir():
        raise CliError(f"{what} path is a folder, not a file: {path}")
    try:
        return file.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise CliError(f"{what} file {path} is not UTF-8 text: {error.reason}") from error


def read_tools(path: str) -> list[Any]:
    """The tool list in ``path``: a JSON list (or ``{"tools": [...]}``, as an OpenAI request body holds it)."""
    text = read_text(path, "tools")
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        where = f"line {error.lineno} column {error.colno}"
        raise CliError(f"tools file {path} is not JSON: {error.msg} at {where}") from None
    if isinstance(value, dict) and isinstance(value.get("tools"), list):
        value = value["tools"]
    if not isinstance(value, list) or not value:
        raise CliError(f"tools file {path} must hold a non-empty JSON list of {{name, parameters}} objects")
    return value


def grammar_parser(path: str, syntax: str | None) -> tuple[GrammarParser, str, str]:
    """``(parser, syntax used, grammar text)`` for the grammar file ``path``."""
    text = read_text(path, "grammar")
    chosen = syntax or detect_syntax(text)
    return GrammarParser(text, chosen), chosen, text


def tools_parser(path: str, style: str, preamble: bool = True, parallel: bool = True) -> tuple[ToolCallParser, str]:
    """``(parser, instruction for the system prompt)`` for the tools file ``path``."""
    tools = read_tools(path)
    parser = ToolCallParser(tools, style=style, preamble=preamble, parallel=parallel)
    listed = json.dumps(tools, separators=(",", ":"))
    if style == "hermes":
        shape = '<tool_call>\n{"name": <tool name>, "arguments": <arguments object>}\n</tool_call>'
    else:
        shape = '{"name": <tool name>, "parameters": <arguments object>}'
    instruction = f"You can call these tools: {listed}\nCall one by answering exactly: {shape}"
    return parser, instruction


def describe_grammar(path: str, syntax: str | None) -> str:
    """``check``'s one-line summary of a grammar that loads (GrammarError otherwise)."""
    _, chosen, text = grammar_parser(path, syntax)
    grammar = read_grammar(text, chosen)
    users = [name for name in grammar.rules if name not in grammar.origin]
    label = "Lark" if chosen == "lark" else chosen.upper()
    return f"valid {label} grammar, {len(users)} rules, starting at '{grammar.start}'"
