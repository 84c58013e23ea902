"""Runs the official JSON-Schema-Test-Suite through JsonSchemaParser and summarises the result per file.

Used by test_json_schema_suite.py. Each group's schema is built once; each valid instance must be accepted
(compact with raw unicode, and ``indent=2`` with ``\\uXXXX`` escapes), each invalid one refused. Valid
instances are checked token by token over a real tokenizer when ``accept`` is given (natural tokenization,
EOS at the end); invalid ones character by character, which is exact: a text refused by the parser cannot be
spelled by any token sequence, since tokens are byte strings of that text.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from formatenforcer import JsonSchemaParser, SchemaError, UnsupportedSchemaError

SUITE = (
    Path(os.environ["JSON_SCHEMA_TEST_SUITE"])
    if os.environ.get("JSON_SCHEMA_TEST_SUITE")
    else Path(__file__).resolve().parents[2] / "shared/corpora/json-schema-test-suite"
) / "tests"
"""The suite's ``tests`` folder: ``JSON_SCHEMA_TEST_SUITE`` (a checkout of the suite), else
``../shared/corpora/json-schema-test-suite`` beside this repository."""
GET_SUITE = (
    f"git clone --depth 1 https://github.com/json-schema-org/JSON-Schema-Test-Suite {SUITE.parent}"
    " (or set JSON_SCHEMA_TEST_SUITE to a checkout)"
)
"""How to get the suite when it is missing (the skip reason of its tests says it)."""
REMOTES = SUITE.parent / "remotes"
REMOTE_BASE = "http://localhost:1234/"
DRAFTS = {
    "draft2020-12": "https://json-schema.org/draft/2020-12/schema",
    "draft7": "http://json-schema.org/draft-07/schema#",
}

DIFFERENCES = {
    "format-assertion": "`format` is enforced as an assertion: a string that is not a valid date/email/... is never "
    "generated, although `format` is only an annotation by default in 2020-12 (the `optional/format/` files "
    "hold the assertion cases and are reported separately)",
    "integer-float": "an integer is generated without fraction or exponent, so `1.0` is refused where the schema "
    "says `integer` (JSON Schema counts 1.0 as an integer)",
    "bounded-exponent": "a number under multipleOf (or with excluded values) is written in plain decimal "
    "notation, so `1e-05` (how Python serializes 0.00001) is refused there (under bounds alone, exponents are "
    "decided exactly)",
}


def serializations(data: Any) -> list[str]:
    """Compact with raw unicode, and indent=2 with ASCII escapes."""
    return [json.dumps(data, separators=(",", ":"), ensure_ascii=False), json.dumps(data, indent=2)]


def _has_integral_float(data: Any) -> bool:
    if isinstance(data, float):
        return data.is_integer()
    if isinstance(data, list):
        return any(_has_integral_float(v) for v in data)
    if isinstance(data, dict):
        return any(_has_integral_float(v) for v in data.values())
    return False


def expected_difference(file: str, schema: Any, data: Any) -> str | None:
    """Which deliberate difference (if any) explains refusing this *valid* instance."""
    text = json.dumps(schema)
    if file == "format.json" and isinstance(data, str):
        return "format-assertion"
    if _has_integral_float(data) and '"integer"' in text:
        return "integer-float"
    if "e" in json.dumps(data).replace("true", "").replace("false", "") and any(
        k in text for k in ("minimum", "maximum", "xclusive", "multipleOf", '"const"', '"enum"')
    ):
        return "bounded-exponent"
    return None


@dataclass
class FileResult:
    groups: int = 0
    supported: int = 0
    valid: int = 0
    valid_ok: int = 0
    invalid: int = 0
    invalid_ok: int = 0
    differences: dict[str, int] = field(default_factory=dict)
    unsupported: dict[str, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)


Accept = Callable[[JsonSchemaParser, str], tuple[bool, str]]

_REMOTE_DOCUMENTS: dict[str, Any] = {}


def remote_documents() -> dict[str, Any]:
    """The suite's ``remotes/`` folder as ``resources`` for JsonSchemaParser, by the URIs the tests use
    (``http://localhost:1234/<path>``): the suite expects them served there; formatenforcer never fetches."""
    if not _REMOTE_DOCUMENTS:
        for path in sorted(REMOTES.rglob("*.json")):
            _REMOTE_DOCUMENTS[REMOTE_BASE + path.relative_to(REMOTES).as_posix()] = json.loads(path.read_text())
    return _REMOTE_DOCUMENTS


def run_file(path: Path, name: str, draft: str, accept: Accept | None) -> FileResult:
    result = FileResult()
    for group in json.loads(path.read_text()):
        result.groups += 1
        schema = group["schema"]
        if isinstance(schema, dict) and "$schema" not in schema:
            schema = {"$schema": DRAFTS[draft], **schema}
        try:
            parser: JsonSchemaParser | None = JsonSchemaParser(schema, resources=remote_documents())
        except UnsupportedSchemaError as error:
            for keyword in sorted({k for _, k in error.problems}):
                result.unsupported[keyword] = result.unsupported.get(keyword, 0) + 1
            continue
        except SchemaError:
            parser = None  # an unsatisfiable schema: every instance is refused
        result.supported += 1
        for test in group["tests"]:
            label = f"{name} / {group['description']} / {test['description']}"
            texts = serializations(test["data"])
            if test["valid"]:
                result.valid += 1
                reasons = []
                for text in texts:
                    if parser is None:
                        reasons.append("schema refused as unsatisfiable")
                    elif accept is not None:
                        ok, why = accept(parser, text)
                        if not ok:
                            reasons.append(why)
                    elif not parser.accepts(text):
                        reasons.append("refused character by character")
                if not reasons:
                    result.valid_ok += 1
                    continue
                difference = expected_difference(path.name, schema, test["data"])
                if difference is not None:
                    result.differences[difference] = result.differences.get(difference, 0) + 1
                else:
                    result.failures.append(f"valid refused: {label}: {texts[0]!r}: {reasons[0]}")
            else:
                result.invalid += 1
                if parser is None or not any(parser.accepts(text) for text in texts):
                    result.invalid_ok += 1
                else:
                    result.failures.append(f"invalid accepted: {label}: {texts[0]!r}")
    return result


def draft_files(draft: str) -> dict[str, Path]:
    """The draft's files by name (``optional/format/x.json``): the keyword files, then the format files."""
    folder = SUITE / draft
    paths = sorted(folder.glob("*.json")) + sorted((folder / "optional/format").glob("*.json"))
    paths += [p for p in (folder / "optional/cross-draft.json",) if p.is_file()]  # not in every suite copy
    return {str(path.relative_to(folder)): path for path in paths}


def run_draft(draft: str, accept=None, files: list[str] | None = None) -> dict[str, FileResult]:  # noqa: ANN001
    return {
        name: run_file(path, name, draft, accept)
        for name, path in draft_files(draft).items()
        if files is None or name in files
    }


def run_drafts(drafts: tuple[str, ...], accept=None) -> dict[str, dict[str, FileResult]]:  # noqa: ANN001
    """``run_draft`` of each draft, run file by file across the drafts: a file of one draft is followed by the
    file of the same name in the others. Their instances are mostly the same, so with ``accept`` the later
    drafts walk states the earlier one has just left in the process-wide caches (the idn-hostname and
    idn-email files, most of a draft's token pass, cost little the second time), where a whole draft in
    between evicts them. Each draft's files come back in ``run_draft``'s order."""
    files = {draft: draft_files(draft) for draft in drafts}
    names = list(dict.fromkeys(name for draft in drafts for name in files[draft]))
    done: dict[str, dict[str, FileResult]] = {draft: {} for draft in drafts}
    for name in names:
        for draft in drafts:
            if name in files[draft]:
                done[draft][name] = run_file(files[draft][name], name, draft, accept)
    return {draft: {name: done[draft][name] for name in files[draft]} for draft in drafts}


def summary_markdown(results: dict[str, dict[str, FileResult]]) -> str:
    lines = [
        "# JSON-Schema-Test-Suite coverage",
        "",
        "Written by `python -m pytest tests/test_json_schema_suite.py` (do not edit by hand). Suite: "
        "`../shared/corpora/json-schema-test-suite/` (draft2020-12 and draft7, plus `optional/format/`; "
        "`remotes/` passed as `resources=` under `http://localhost:1234/`, each read in the dialect its own "
        "`$schema` names; `optional/cross-draft.json` when the suite copy has it: this one does not, and "
        "tests/test_json_dialects.py runs such cases on the same remotes).",
        "A group is *supported* when `JsonSchemaParser(schema)` builds (an unsatisfiable schema counts as supported: "
        "it refuses everything). Valid instances: accepted token by token with the Llama 3 tokenizer, compact "
        "(raw unicode) and `indent=2` (`\\uXXXX` escapes), end-of-sequence allowed at the end. Invalid instances: "
        "refused in both layouts (checked character by character, which no token sequence can get around).",
        "",
    ]
    for draft, files in results.items():
        total = FileResult()
        for r in files.values():
            total.groups += r.groups
            total.supported += r.supported
            total.valid += r.valid
            total.valid_ok += r.valid_ok
            total.invalid += r.invalid
            total.invalid_ok += r.invalid_ok
            for k, v in r.differences.items():
                total.differences[k] = total.differences.get(k, 0) + v
        lines += [
            f"## {draft}",
            "",
            f"Totals: {total.supported}/{total.groups} groups supported; valid accepted {total.valid_ok}/{total.valid}"
            f" (+{sum(total.differences.values())} deliberate differences); invalid refused "
            f"{total.invalid_ok}/{total.invalid}.",
            "",
            "| file | groups supported | valid accepted | invalid refused | deliberate differences | unsupported |",
            "|---|---|---|---|---|---|",
        ]
        for name, r in files.items():
            diffs = ", ".join(f"{k} {v}" for k, v in sorted(r.differences.items())) or ""
            unsupported = ", ".join(f"{k} ({v})" for k, v in sorted(r.unsupported.items())) or ""
            lines.append(
                f"| {name} | {r.supported}/{r.groups} | {r.valid_ok}/{r.valid} | {r.invalid_ok}/{r.invalid} "
                f"| {diffs} | {unsupported} |"
            )
        lines.append("")
    lines += ["## Deliberate differences", ""]
    lines += [f"- **{k}**: {v}" for k, v in DIFFERENCES.items()]
    lines += ["", UNSUPPORTED_NOTES]
    return "\n".join(lines) + "\n"


UNSUPPORTED_NOTES = """## Unsupported groups and why

Each is refused at build time with `UnsupportedSchemaError` naming the keyword and its JSON pointer
(`lenient=True` turns that into a warning and enforces the rest). The groups left in the tables above:

- `format` (`optional/format/`): unknown format names (nothing to enforce); see docs/json-schema.md,
  Formats. `idn-hostname`/`idn-email` are not combined with a length limit, a `pattern`, another format,
  excluded values or `not` on the same string. `format: regex` is not combined with a `pattern` or another format on the
  same string, with its own `not`, or with excluded values under a `maxLength`.

Refused elsewhere, by the same rule (none in the suite's required files):

- `pattern`/`patternProperties` using lookaround, back-references, `\\b`/`\\B`, an anchor inside a group or
  mid-pattern, or a `\\p{...}` property Python's `unicodedata` has no table for (`Script=`): not regular, or
  not known here (docs/json-schema.md, Patterns). A pattern that is not ECMA-262 at all is a `SchemaError`.
- `not` of what only "there exists" can say where no tracker decides it: `uniqueItems` (a duplicate
  exists), `items` after `prefixItems`; `not` of `propertyNames`/`additionalProperties`/`patternProperties`
  (a member the object must hold) under `maxProperties`, over finitely many candidate keys, or with more than
  8 key patterns (enforced elsewhere: docs/json-schema.md, "Members an object must hold"); and `uniqueItems`
  with `minItems` over closed objects or constrained arrays not known to have enough distinct values for the
  positions the array cannot close before (a comma there might lead to an item with no new value left).
- a `$ref` whose resolution needs itself before any value is read (`allOf` cycles), and a `$ref` to a
  document not passed in `resources=` (never fetched; json-schema.org's metaschemas are read from the
  `jsonschema-specifications` package when it is installed).
- size limits: complements past 256 alternatives once empty and subsumed combinations are dropped (or
  past 8192 pairwise combinations in one step), more than 256 sets of overlapping alternatives that may
  pass together under one `unevaluated*`, more than 8 distinct key patterns whose value combinations need
  checking, more than 64 pattern combinations across closed `allOf` parts; and several `contains` on one
  array under `maxItems`, `uniqueItems` or a closed tuple, or two with `maxContains` (the joint room check
  is not implemented).

## Known approximations

- `hostname` with a `pattern` or under `not` checks `xn--` labels as plain LDH labels (punycode is decoded
  and IDNA2008 enforced only for `format: hostname` on its own, with any length limits); near the
  63-character label limit an A-label whose ending a bounded search does not find is refused. See
  docs/json-schema.md, Formats.
- `idn-hostname`/`idn-email`: near the 63-octet A-label limit only characters from the 64-code-point
  blocks of the label's own non-ASCII characters are offered (each checked exactly); capitals are refused
  in labels with non-ASCII characters; an `xn--` label after a right-to-left label is refused. Masks leave
  out some tokens a character-by-character check would accept: mixed runs of letters longer than the
  length bound allows (down to 1-3 characters inside a run begun near the end of that room), what follows
  such a run inside a token once the length bound no longer surely fits, ASCII runs
  longer than 24 after non-ASCII characters near the limit, and an `xn--` token that also ends its label
  (`ab.`). See docs/json-schema.md, Formats.
- Patterns are read as ECMA-262 in unicode mode (`\\d`, `\\w` ASCII; `\\s` with U+FEFF and the line
  terminators; `$` only at the very end), plus what JavaScript without the `u` flag reads as literals
  (`\\-`, a lone `}`); `\\p{...}` uses Python's Unicode tables, which may be a version behind an engine's.
- `format: regex` generates a subset of ECMA-262 syntax: no surrogate escapes (`\\uD83D`; `\\u{1F600}`
  instead), no forward references past `\\9`, ASCII group names, the `\\p{...}` names known here, no
  ES2025 modifier groups `(?i:...)`; such valid strings in an `enum` are still judged by the full parser.
"""
