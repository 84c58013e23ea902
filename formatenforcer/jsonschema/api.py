"""The public JSON entry points: ``JsonSchemaParser`` (a schema) and ``JsonParser`` (any JSON value).

Both are CharacterParsers for the first character of the document; every later state is the inner parser's.
Build order: load (dict / JSON text / pydantic class) -> normalize -> resolve every reference -> compile
every reachable node -> report. All errors are raised here, at build time.
"""

from __future__ import annotations

import warnings
import weakref
from collections.abc import Hashable, Mapping
from dataclasses import replace
from typing import Any

from ..core import backend
from ..core.charset import CharSet
from ..core.errors import Problem, SchemaError, UnsupportedSchemaError
from ..core.hooks import FreeRun, Lexeme, walk_lexeme
from ..core.machine import MachineState
from ..core.protocol import CharacterParser
from ..parsers.build_budget import build_budget, over_budget
from .compile import Compiler, forget_memos
from .config import JsonConfig
from .depth import DepthLimit
from .machine_program import machine
from .root import root_start
from .schema.closed import close_objects
from .schema.deep import prepare
from .schema.ir import AnyValue, Array, Never, Node, deref
from .schema.load import ignores_extra_fields, load_schema
from .schema.merge import Merger
from .schema.metaschemas import missing_hint
from .schema.normalize import Normalizer

_DEFAULT_CONFIG = JsonConfig()
"""The configuration of a parser given none (frozen: one object serves every build)."""


def _check_config(config: object) -> None:
    if config is not None and not isinstance(config, JsonConfig):
        raise TypeError(f"config must be a JsonConfig or None, not {type(config).__name__}")


class _Document(CharacterParser):
    """A JSON document: delegates to the start state of its root value. Weakly referable: the enforcers
    made for one document share its caches for as long as it lives (see TokenEnforcer)."""

    __slots__ = ("_start", "compiler", "_root", "_twin", "__weakref__")

    def _setup(self, compiler: Compiler, root: Node) -> None:
        self.compiler = compiler
        self._root = root
        self._twin: object = None
        weakref.finalize(self, forget_memos, compiler.numbers)  # (the list fills as states are built)
        start = compiler.start(root)
        if start is None:
            reason = deref(root).reason if isinstance(deref(root), Never) else "no value matches"
            where = "#"
            if not isinstance(deref(root), Never) and not compiler.finite(root):
                culprit = compiler._finite.culprit(root)
                where = compiler.origin(culprit)
                reason = "no finite value: a required property or item has no value, or needs another of itself"
                if where != "#":
                    reason += f"; the value at {where} has none"
                found = deref(culprit)
                if isinstance(found, Array) and found.contains is not None and found.min_contains > 0:
                    plain = replace(found, contains=None, also_contains=())
                    if compiler.finite(plain):  # the array alone has values: its ``contains`` is what fails
                        reason += f" (its 'contains' at {where}/contains cannot be met)"
            raise SchemaError(f"the schema is unsatisfiable: {reason}", where)
        depth = compiler.config.max_depth
        if not isinstance(deref(root), AnyValue):  # (any value: a scalar needs no container)
            if compiler._finite.exceeds_depth(root, depth):
                needed = compiler._finite.min_depth(root)
                raise SchemaError(
                    f"the smallest value of the schema nests {needed} arrays or objects, more than "
                    f"JsonConfig.max_depth ({depth}) allows",
                    "#",
                )
        self._start = root_start(compiler.config, compiler.ws, DepthLimit(compiler.config.max_depth).wrap(start))

    def compiled_twin(self) -> CharacterParser | None:
        """The document's start on the compiled JSON machine, where the compiled backend is active and the
        schema is one it covers (jsonschema/machine_program.py); built on first ask, None otherwise."""
        if not backend.machine_active():
            return None
        twin = self._twin
        if twin is None:
            compiled = machine(self._root, self.compiler)
            twin = False if compiled is None else MachineState(compiled, compiled.start())
            self._twin = twin
        return twin or None

    def add_character(self, ch: str) -> CharacterParser | None:
        return self._start.add_character(ch)

    def allowed_characters(self) -> CharSet:
        return self._start.allowed_characters()

    def can_end(self) -> bool:
        return self._start.can_end()

    def key(self) -> Hashable:
        return self._start.key()

    def free_run(self) -> FreeRun | None:
        return self._start.free_run()

    def alternatives(self) -> tuple[CharacterParser, ...] | None:
        # the root union's branches: the first mask then reuses their cached walks (a new schema's TTFM)
        return self._start.alternatives()

    def lexeme(self) -> Lexeme | None:
        return walk_lexeme(self._start)

    def first_char_split(self) -> tuple[CharacterParser, bytes] | None:
        return self._start.first_char_split()


class JsonSchemaParser(_Document):
    """Accepts exactly the JSON texts valid under ``schema`` (laid out as ``config`` allows).

    ``schema``: a dict or bool, a JSON string, or a pydantic ``BaseModel`` subclass (``model_json_schema()``).
    ``lenient``: when False (default) any keyword that cannot be enforced raises ``UnsupportedSchemaError``
    listing each one with its JSON pointer; when True they are reported once with ``warnings.warn`` and the
    rest of the schema is enforced (an unenforced keyword then constrains nothing).
    ``resources``: other schema documents by absolute URI (``{"https://example.com/person.json": {...}}``),
    for ``$ref``s that name them; nothing is ever fetched, so a ``$ref`` to a document not supplied is an
    unsupported ``$ref`` whose message names the URI.
    Raises ``SchemaError`` (with the pointer) for a malformed or unsatisfiable schema. An unknown ``format``
    value is an annotation: any string is allowed there, with a ``UserWarning`` naming it and its pointer
    (listed in ``unknown_formats``).
    """

    __slots__ = ("schema", "problems", "unknown_formats", "closed_objects")

    def __init__(
        self,
        schema: Any,
        *,
        lenient: bool = False,
        config: JsonConfig | None = None,
        resources: Mapping[str, Any] | None = None,
    ) -> None:
        _check_config(config)
        if resources is not None and not (
            isinstance(resources, Mapping) and all(isinstance(uri, str) for uri in resources)
        ):
            raise TypeError(f"resources must be a mapping of URI strings to schemas, not {type(resources).__name__}")
        raw = load_schema(schema)
        config = config or _DEFAULT_CONFIG
        closing = config.closed_objects
        if closing is None:
            closing = ignores_extra_fields(schema)
        built, closed = close_objects(raw) if closing else (raw, [])
        for uri, document in (resources or {}).items():
            if isinstance(document, dict):
                try:
                    load_schema(document)
                except SchemaError as error:
                    raise SchemaError(f"in resource {uri!r}: {error}") from None
        with build_budget(config.build_seconds, "JsonConfig.build_seconds", config.build_megabytes,
                          "JsonConfig.build_megabytes"):  # fmt: skip
            normalizer = Normalizer(built, resources)
            prepare(normalizer, built)
            root = normalizer.node(built)
            normalizer.finish()
            origins = normalizer.origin
            compiler = Compiler(config, normalizer.merger, lambda n: origins.get(id(n), "#"))
            problems = list(normalizer.problems)
            problems.extend(compiler.check_all(root, lenient=lenient))
            over_budget()
        problems = list(dict.fromkeys(problems))
        missing = "".join(f"; the $ref at {p} names {uri!r}, {missing_hint(uri)}"
                          for p, uri in normalizer.missing.items())  # fmt: skip
        if problems and not lenient:
            error = UnsupportedSchemaError(problems)
            error.args = (f"{error.args[0]}{missing}",)
            raise error
        if problems:
            listed = "; ".join(Problem.of(p).describe() for p in problems)
            warnings.warn(f"formatenforcer: not enforcing {listed}{missing}", stacklevel=2)
        for note in normalizer.unknown_formats:  # annotations, not errors: see Normalizer._kinds
            warnings.warn(f"formatenforcer: {note.reason} (at {note.pointer})", UserWarning, stacklevel=2)
        self.schema = raw
        self.closed_objects: list[str] = closed
        """The JSON pointers of the objects closed by ``JsonConfig.closed_objects`` (empty when it is off)."""
        self.problems = problems
        self.unknown_formats: list[Problem] = list(normalizer.unknown_formats)
        """``format`` values not known to formatenforcer, each a Problem (pointer, "format", reason): not
        asserted, so any value is allowed there, as JSON Schema 2020-12's format-annotation vocabulary says."""
        self._setup(compiler, root)


class JsonParser(_Document):
    """Accepts any single JSON value (vLLM's ``json_object`` mode when the value must be an object: use
    ``JsonSchemaParser({"type": "object"})``)."""

    __slots__ = ()

    def __init__(self, config: JsonConfig | None = None) -> None:
        _check_config(config)
        root = AnyValue()
        self._setup(Compiler(config or _DEFAULT_CONFIG, Merger(), lambda n: "#"), root)
