"""JsonConfig: the one frozen object that shapes JSON output (property order, whitespace)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..core.budget import checked_megabytes, checked_seconds
from ..core.errors import FormatError


@dataclass(frozen=True)
class JsonConfig:
    r"""How JSON text may be laid out. Every field has a default that accepts both ``json.dumps(x)`` and
    ``json.dumps(x, indent=2)``.

    property_order: ``"any"`` (default) lets properties come in any order the schema allows, each at most
        once, with every required one present before ``}``; ``"schema"`` fixes named properties to the order
        the schema lists them (extra properties, where allowed, come after them).
    whitespace: ``"flexible"`` (default) allows runs of spaces, tabs, newlines and carriage returns between
        tokens and before and after the root value (RFC 8259), each run capped by ``max_whitespace``;
        ``"compact"`` allows no whitespace at all (``separators=(",", ":")`` output only), which is the
        cheapest for the model and the mask cache.
    max_whitespace: the longest run of consecutive whitespace characters in flexible mode. One run is the
        newline plus the indentation before a key or item, so ``indent=2`` at nesting depth ``d`` needs
        ``1 + 2*d`` characters; the default 20 fits nine levels of ``indent=2`` while stopping a model that
        loops on spaces after twenty of them. Costs nothing to raise, except more room to loop.
    max_trailing_whitespace: the longest run of whitespace after the root value in flexible mode (further
        capped by ``max_whitespace``). The default 1 accepts the one newline that ends a file or a ``print``,
        yet a model that prefers a newline to end of sequence stops after one instead of writing a whole
        ``max_whitespace`` run of them; 0 makes end of sequence the only thing after the value. The run
        before the root value keeps ``max_whitespace``.
    whitespace_pattern: a regular expression that every run of whitespace between tokens must match in full
        (vLLM's ``whitespace_pattern``), e.g. ``r"[ ]?"``; overrides ``whitespace``/``max_whitespace``. It
        must match the empty string and only whitespace characters.

    ascii_escapes: whether ``\uXXXX`` may spell printable ASCII characters (``\u0061`` for ``a``). Off by
        default: ``json.dumps`` never writes them, and a small model offered that route drifts into spelling
        whole keys as escapes. Every other escape (``\" \\ \/ \b \f \n \r \t``, ``\uXXXX`` for control
        and non-ASCII characters, surrogate pairs) is always allowed.
    max_depth: the most arrays and objects open at once (``[[1]]`` has depth 2). Past it the mask and the
        step refuse ``[`` and ``{`` that would open another, so a model that loops on ``[`` is stopped at
        this depth and can only close what it opened. Nesting costs nothing per level (no recursion, see
        jsonschema/depth.py), so any limit works, e.g. 20_000. A schema whose smallest instance is nested
        deeper than the limit is refused at construction (``SchemaError``).
    closed_objects: whether an object whose schema names its properties, and says nothing of other keys, may
        get keys it does not name. ``True`` closes such objects, as if ``unevaluatedProperties: false`` stood
        there (see jsonschema/schema/closed.py for which places count as saying nothing), so a model cannot
        wander off inventing keys; objects whose schema mentions other keys (``additionalProperties``, even
        ``true``) stay as written. ``False`` keeps JSON Schema's meaning: unnamed keys are allowed. ``None``
        (default) is ``True`` for a pydantic model class whose config ignores extra fields (pydantic's
        default, which would drop such keys anyway) and ``False`` for every other schema.
    build_seconds: the most ``JsonSchemaParser(...)`` may take to build the schema (None: no limit), else
        ``BuildTimeoutError``. Every automaton it builds (a pattern, a format, a key automaton) also stops at
        its own limit (5 s), refused as unsupported at its keyword; this budget bounds the whole, so a schema
        with thousands of costly patterns cannot hold a server's thread for minutes. Schemas build in
        milliseconds; the default leaves room for a loaded machine.
    build_megabytes: how much the process's resident memory may grow while ``JsonSchemaParser(...)`` builds
        the schema (MiB; None: no limit), else ``BuildMemoryError``: an automaton whose states explode (a
        pattern such as ``(a|b)*a(a|b){20}``, a product of patterns) is stopped at its next state once past
        it, instead of taking the server's memory. Real schemas need a few megabytes, the largest formats
        tens; other threads' allocations during the build count too, hence the generous default.
    """

    property_order: Literal["any", "schema"] = "any"
    whitespace: Literal["compact", "flexible"] = "flexible"
    max_whitespace: int = 20
    max_trailing_whitespace: int = 1
    whitespace_pattern: str | None = None
    ascii_escapes: bool = False
    max_depth: int = 1000
    closed_objects: bool | None = None
    build_seconds: float | None = 60.0
    build_megabytes: float | None = 1024.0

    def __post_init__(self) -> None:
        if self.property_order not in ("any", "schema"):
            raise FormatError(f"JsonConfig.property_order must be 'any' or 'schema', not {self.property_order!r}")
        if self.whitespace not in ("compact", "flexible"):
            raise FormatError(f"JsonConfig.whitespace must be 'compact' or 'flexible', not {self.whitespace!r}")
        if not isinstance(self.max_whitespace, int) or self.max_whitespace < 0:
            raise FormatError(f"JsonConfig.max_whitespace must be an int >= 0, not {self.max_whitespace!r}")
        if not isinstance(self.max_trailing_whitespace, int) or self.max_trailing_whitespace < 0:
            raise FormatError(
                f"JsonConfig.max_trailing_whitespace must be an int >= 0, not {self.max_trailing_whitespace!r}"
            )
        if not isinstance(self.max_depth, int) or isinstance(self.max_depth, bool) or self.max_depth < 1:
            raise FormatError(f"JsonConfig.max_depth must be an int >= 1, not {self.max_depth!r}")
        if self.closed_objects not in (None, True, False):
            raise FormatError(f"JsonConfig.closed_objects must be True, False or None, not {self.closed_objects!r}")
        if self.whitespace_pattern is not None and not isinstance(self.whitespace_pattern, str):
            raise FormatError("JsonConfig.whitespace_pattern must be a string or None")
        checked_seconds(self.build_seconds, "JsonConfig.build_seconds")
        checked_megabytes(self.build_megabytes, "JsonConfig.build_megabytes")
