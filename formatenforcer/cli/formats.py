"""Turns the command line's format options into a parser, and answers ``check`` (schema support, no model).

Each option maps to one public parser: ``--schema``/``--pydantic`` -> JsonSchemaParser, ``--json`` ->
JsonParser, ``--regex`` -> RegexParser, ``--choice`` -> ChoiceParser, ``--grammar`` -> GrammarParser,
``--tools`` -> ToolCallParser (grammar_formats.py). Problems a user can fix (a missing
file, text that is not JSON, a class that cannot be imported) become ``CliError`` with a one-line message;
the library's own errors (``FormatEnforcerError``) pass through unchanged and are printed by ``main``.
"""

from __future__ import annotations

import importlib
import json
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import Problem
from ..core.protocol import CharacterParser
from ..jsonschema import JsonConfig, JsonParser, JsonSchemaParser
from ..parsers.choice import ChoiceParser
from ..parsers.regex import RegexParser
from .model import CliError


@dataclass(frozen=True)
class Format:
    """A built format: its parser, a short description, and the instruction added to the chat prompt."""

    parser: CharacterParser
    description: str
    instruction: str


def read_schema(path: str) -> Any:
    """The JSON value in ``path`` (``-`` reads stdin), or a one-line CliError saying what is wrong."""
    if path == "-":
        text = sys.stdin.read()
    else:
        file = Path(path).expanduser()
        if not file.exists():
            raise CliError(f"schema file not found: {path}")
        if file.is_dir():
            raise CliError(f"schema path is a folder, not a file: {path}")
        try:
            text = file.read_text(encoding="utf-8")
        except UnicodeDecodeError as error:
            raise CliError(f"schema file {path} is not UTF-8 text: {error.reason}") from error
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        where = f"line {error.lineno} column {error.colno}"
        raise CliError(f"schema file {path} is not JSON: {error.msg} at {where}") from error


def import_pydantic(spec: str) -> type:
    """``module:Class`` -> the class. The current folder is importable, as with ``python -m``."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise CliError(f"--pydantic takes module:Class (e.g. models:Person), not {spec!r}")
    if "" not in sys.path and "." not in sys.path:
        sys.path.insert(0, "")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise CliError(f"cannot import module {module_name!r} for --pydantic: {error}") from error
    target: Any = module
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise CliError(f"module {module_name!r} has no attribute {attribute!r}")
        target = getattr(target, part)
    if not (isinstance(target, type) and hasattr(target, "model_json_schema")):
        raise CliError(f"{spec} is not a pydantic model class (no model_json_schema)")
    return target


def json_config(compact: bool, property_order: str, closed_objects: bool | None = None) -> JsonConfig:
    whitespace = "compact" if compact else "flexible"
    return JsonConfig(whitespace=whitespace, property_order=property_order, closed_objects=closed_objects)  # type: ignore[arg-type]


def build_format(args: Any) -> Format:
    """The format chosen on the command line (argparse makes the options mutually exclusive)."""
    config = json_config(
        getattr(args, "compact", False), getattr(args, "property_order", "any"), getattr(args, "closed_objects", None)
    )
    lenient = getattr(args, "lenient", False)
    if args.schema is not None:
        schema = read_schema(args.schema)
        return _schema_format(schema, lenient, config, f"JSON Schema {args.schema}")
    if args.pydantic is not None:
        model = import_pydantic(args.pydantic)
        return _schema_format(model, lenient, config, f"pydantic model {args.pydantic}")
    if args.regex is not None:
        return Format(RegexParser(args.regex), f"regex {args.regex}", "")
    if getattr(args, "grammar", None) is not None:
        from .grammar_formats import grammar_parser

        parser, syntax, text = grammar_parser(args.grammar, args.grammar_syntax)
        instruction = f"Answer only with text in the language of this {syntax} grammar:\n{text}"
        return Format(parser, f"{syntax} grammar {args.grammar}", instruction)
    if getattr(args, "tools", None) is not None:
        from .grammar_formats import tools_parser

        parser, instruction = tools_parser(
            args.tools,
            args.tool_style,
            preamble=not getattr(args, "no_preamble", False),
            parallel=not getattr(args, "single_call", False),
        )
        return Format(parser, f"{args.tool_style} tool calls for {args.tools}", instruction)
    if args.choice is not None:
        options = list(args.choice)
        return Format(ChoiceParser(options), f"one of {options}", "Answer with exactly one of: " + ", ".join(options))
    return Format(JsonParser(config), "any JSON", "Answer in JSON only.")


def _schema_format(schema: Any, lenient: bool, config: JsonConfig, description: str) -> Format:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # lenient mode's warning is re-said below as one line
        parser = JsonSchemaParser(schema, lenient=lenient, config=config)
    if parser.problems:
        listed = "; ".join(Problem.of(problem).describe() for problem in parser.problems)
        print(f"formatenforcer: note: --lenient: not enforcing {listed}", file=sys.stderr)
    if parser.closed_objects:
        places = ", ".join(parser.closed_objects)
        print(f"formatenforcer: note: closed objects, no keys beyond the named ones at {places} "
              "(--open-objects allows them)", file=sys.stderr)  # fmt: skip
    text = json.dumps(parser.schema, separators=(",", ":"))
    instruction = f"Answer with JSON only, following this JSON Schema: {text}"
    return Format(parser, description, instruction)


def unsupported_keywords(schema: Any) -> list[Problem]:
    """Every keyword formatenforcer cannot enforce in ``schema`` as ``(JSON pointer, keyword)`` pairs with a
    ``reason`` (``errors.Problem``), unknown ``format`` values (annotations) included; empty if none.

    Raises SchemaError (from the library) when the schema is broken rather than merely unsupported."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        parser = JsonSchemaParser(schema, lenient=True)
    return list(parser.problems) + list(parser.unknown_formats)
