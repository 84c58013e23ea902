"""``ToolCallParser``: the tool-calling formats models are trained on, as a grammar with JSON Schema inside.

Styles:

    hermes  (Hermes, Qwen 2.5/3)   text, then one or more
                                   <tool_call>\\n{"name": NAME, "arguments": ARGS}\\n</tool_call>
    llama3  (Llama 3.1+ JSON)      one {"name": NAME, "parameters": ARGS}

``ARGS`` is valid under that tool's ``parameters`` schema (every keyword JsonSchemaParser enforces); one
``%json`` rule per tool, so the name decides which schema the arguments follow. With ``reasoning=True`` a
``<think>...</think>`` block may come first (as Qwen 3 and DeepSeek R1 write it). Free text (hermes) and the
reasoning never contain the tag that ends them, so a reader splitting on the tags reads what was enforced.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..core.errors import GrammarError
from .parser import GrammarParser

STYLES = ("hermes", "llama3")


def avoiding(word: str) -> str:
    """A regular expression (no look-around) for the strings that do not contain ``word``, whose first
    character appears nowhere else in it (``</think>``, ``<tool_call>``): text is free until a ``<`` starts
    a partial match of the word, which must break off (a character other than the next one of the word and
    the first) or be followed by another ``<`` or the end."""
    first, rest = word[0], word[1:]
    if not rest or first in rest:
        raise ValueError(f"avoiding() needs a word whose first character does not recur: {word!r}")

    def cls(*chars: str) -> str:
        return "[^" + "".join("\\" + c if c in "\\]^-[/" else c for c in chars) + "]"

    broken = ""  # first + a partial match of rest + a breaking character
    for ch in reversed(rest):
        inner = f"|{_escape(ch)}(?:{broken})" if broken else ""
        broken = f"{cls(first, ch)}{inner}"
    pending = ""  # first + a strict partial match of rest (the word not completed)
    for ch in reversed(rest[:-1]):
        pending = f"(?:{_escape(ch)}{pending})?"
    f, g = f"{_escape(first)}(?:{broken})", f"{_escape(first)}{pending}"
    free = cls(first)
    return f"{free}*(?:(?:{g})*{f}{free}*)*(?:{g})*"


def _escape(ch: str) -> str:
    return "\\" + ch if ch in r"\.^$|?*+()[]{}/" else ch


def _tools(tools: Sequence[Mapping[str, Any]]) -> list[tuple[str, Any]]:
    """``(name, parameters schema)`` per tool; OpenAI's ``{"type": "function", "function": {...}}`` too."""
    if isinstance(tools, (str, bytes)) or not isinstance(tools, Sequence) or not tools:
        raise GrammarError("tools must be a non-empty list of {'name': ..., 'parameters': schema} objects")
    out = []
    for i, tool in enumerate(tools):
        if isinstance(tool, Mapping) and isinstance(tool.get("function"), Mapping):
            tool = tool["function"]
        if not isinstance(tool, Mapping) or not isinstance(tool.get("name"), str) or not tool["name"]:
            raise GrammarError(f"tool #{i} has no 'name' (a non-empty string)")
        parameters = tool.get("parameters", {"type": "object"})
        if not isinstance(parameters, (Mapping, bool)):
            raise GrammarError(f"tool '{tool['name']}': 'parameters' must be a JSON Schema object")
        out.append((tool["name"], parameters))
    names = [name for name, _ in out]
    if len(set(names)) != len(names):
        raise GrammarError(f"tool names must be unique: {names}")
    return out


def tool_call_grammar(
    tools: Sequence[Mapping[str, Any]],
    style: str = "hermes",
    reasoning: bool = False,
    preamble: bool = True,
    parallel: bool = True,
) -> str:
    """The Lark grammar (with ``%json`` rules) of ``style``'s tool calls for ``tools``; ``preamble=False``
    makes a hermes answer start with its first call (no free text before it), ``parallel=False`` allows one
    hermes call only (OpenAI's ``parallel_tool_calls``)."""
    if style not in STYLES:
        raise GrammarError(f"unknown tool-call style {style!r}: expected one of {', '.join(STYLES)}")
    key = "arguments" if style == "hermes" else "parameters"
    calls = []
    for name, parameters in _tools(tools):
        schema = {
            "type": "object",
            "properties": {"name": {"const": name}, key: parameters},
            "required": ["name", key],
            "additionalProperties": False,
        }
        calls.append(f"%json {json.dumps(schema)}")
    lines = []
    prefix = "THINK? " if reasoning else ""
    if style == "hermes":
        lines.append(f"start: {prefix}{'TEXT? ' if preamble else ''}call{'+' if parallel else ''}")
        lines.append('call: "<tool_call>\\n" tool "\\n</tool_call>" "\\n"?')
        if preamble:
            lines.append(f"TEXT: /{avoiding('<tool_call>')}/")
    else:
        lines.append(f"start: {prefix}tool")
    lines.append("tool: " + "\n    | ".join(calls))
    if reasoning:
        lines.append(f"THINK: /<think>{avoiding('</think>')}<\\/think>\\n*/")
    return "\n".join(lines) + "\n"


class ToolCallParser(GrammarParser):
    """Tool calls in the format a model was trained on (see the module notes): ``tools`` is a list of
    ``{"name": ..., "parameters": schema}`` (or OpenAI's ``{"type": "function", "function": {...}}``),
    ``style`` ``"hermes"`` or ``"llama3"``, ``reasoning`` allows a leading ``<think>...</think>``, and
    ``preamble=False`` refuses free text before the first hermes call (the call comes at once, as
    ``tool_choice="required"`` asks; small models otherwise tend to answer in prose), and ``parallel=False``
    allows a single hermes call (``parallel_tool_calls=False``; a small model otherwise may repeat its call)."""

    __slots__ = ()

    def __init__(
        self,
        tools: Sequence[Mapping[str, Any]],
        style: str = "hermes",
        reasoning: bool = False,
        preamble: bool = True,
        parallel: bool = True,
    ) -> None:
        super().__init__(tool_call_grammar(tools, style, reasoning, preamble, parallel), "lark")
