"""The benchmark cases (benchmarks/cases/*.json) are valid: every instance validates against its schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

jsonschema = pytest.importorskip("jsonschema")

CASES_DIR = Path(__file__).resolve().parent.parent / "benchmarks" / "cases"


def _load() -> list[dict]:
    cases: list[dict] = []
    for path in sorted(CASES_DIR.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        cases.extend(data if isinstance(data, list) else [data])
    return cases


CASES = _load()


def test_enough_cases_with_unique_names() -> None:
    names = [case["name"] for case in CASES]
    assert len(names) >= 60
    assert len(names) == len(set(names))


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_instance_is_valid(case: dict) -> None:
    assert set(case) == {"name", "schema", "instance"}
    validator_class = jsonschema.validators.validator_for(case["schema"], default=jsonschema.Draft202012Validator)
    validator_class.check_schema(case["schema"])
    validator = validator_class(case["schema"], format_checker=validator_class.FORMAT_CHECKER)
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(case["instance"])]
    assert not errors, errors
