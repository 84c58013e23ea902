"""Opening levels of nested unions of containers (issue #18): the seconds to step a character-level parser
``n`` levels down, for unions whose branches all accept the same bracket and all recurse.

    python benchmarks/union_depth.py                  # PYTHONPATH=/other/checkout for another side
    python benchmarks/union_depth.py --levels 1000 --cap 60

Each case opens one level at a time (``[`` or ``{"a":``) and prints the elapsed time at a few depths; a case
stops early once it has taken ``--cap`` seconds (an exponential one does within twenty levels).
"""

from __future__ import annotations

import argparse
import time

from formatenforcer import JsonConfig, JsonSchemaParser

CASES = {
    "arrays": (
        {
            "anyOf": [
                {"type": "array", "items": {"$ref": "#"}},
                {"type": "array", "items": {"$ref": "#"}, "maxItems": 3},
            ]
        },
        "[",
    ),
    "objects": (
        {
            "anyOf": [
                {"type": "object", "additionalProperties": {"$ref": "#"}},
                {"type": "object", "additionalProperties": {"$ref": "#"}, "maxProperties": 3},
            ]
        },
        '{"a":',
    ),
    "mixed": (  # two tagged objects that both take {"a": and recurse, an array that recurses, and null
        {
            "oneOf": [
                *(
                    {
                        "type": "object",
                        "properties": {"t": {"const": tag}},
                        "required": ["t"],
                        "additionalProperties": {"$ref": "#"},
                        **extra,
                    }
                    for tag, extra in ((1, {}), (2, {"maxProperties": 3}))
                ),
                {"type": "array", "items": {"$ref": "#"}},
                {"type": "null"},
            ]
        },
        '[{"a":',
    ),
}


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    options.add_argument("--levels", type=int, default=1000)
    options.add_argument("--cap", type=float, default=30.0, help="seconds per case before it stops")
    options.add_argument("--case", choices=sorted(CASES), action="append", help="only these cases")
    args = options.parse_args()
    for name, (schema, opener) in CASES.items():
        if args.case and name not in args.case:
            continue
        state = JsonSchemaParser(schema, config=JsonConfig(max_depth=2 * args.levels + 10))
        start = time.perf_counter()
        marks = []
        reached = 0
        for level in range(1, args.levels + 1):
            state = state.add_text(opener)
            assert state is not None, (name, level)
            reached = level
            elapsed = time.perf_counter() - start
            if level in (10, 15, 20, 100, 1000) or level == args.levels:
                marks.append(f"{level}: {elapsed:.3f}s")
            if elapsed > args.cap:
                marks.append(f"stopped at {level} levels after {elapsed:.1f}s")
                break
        print(f"{name:8s} ({reached} levels of {opener!r}) " + ", ".join(marks), flush=True)


if __name__ == "__main__":
    main()
