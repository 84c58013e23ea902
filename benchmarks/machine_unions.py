"""What a token costs in MaskBench's cases that hold a union of objects, with the compiled JSON machine or not.

The strict pass (maskbench.force_pass: a new schema each time, the first mask, then accept + mask per token)
over the cases whose schema holds an ``anyOf`` or ``oneOf`` of several objects (a discriminated union, models
with different keys, a recursive ``oneOf``), after one pass over a case without a union, so that what a
process builds once per vocabulary (the trie's tables, the string bodies' exits) is not charged to them.
Run it with the machine and without, in fresh processes:

    python benchmarks/machine_unions.py
    FORMATENFORCER_NO_MACHINE=1 python benchmarks/machine_unions.py
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import maskbench  # noqa: E402

from formatenforcer import Vocabulary  # noqa: E402
from formatenforcer.core import backend  # noqa: E402

WARM_UP = "user_profile"
"""A case without a union (read first, not counted)."""
UNIONS = ("payment_method_oneof", "notification_anyof_channels", "calendar_event_union_time", "shapes_anyof_array",
          "json_expression_ast")  # fmt: skip


def main() -> None:
    tokenizer = maskbench.llama3_tokenizer()
    vocabulary = Vocabulary.from_transformers(tokenizer)
    cases = {case["name"]: case for case in maskbench.load_cases() if "schema" in case}

    def work(names: tuple[str, ...]) -> list:
        out = []
        for name in names:
            text = json.dumps(cases[name]["instance"], separators=(",", ":"), ensure_ascii=False)
            out.append((cases[name]["schema"], tokenizer.encode(text, add_special_tokens=False)))
        return out

    maskbench.force_pass(vocabulary, work((WARM_UP,)))
    union_work = work(UNIONS)
    start = time.process_time()
    maskbench.force_pass(vocabulary, union_work)
    cpu = time.process_time() - start
    tokens = sum(len(ids) for _, ids in union_work)
    print(f"machine {'on' if backend.machine_active() else 'off'}: {len(UNIONS)} cases {tokens} tokens "
          f"{cpu:.4f} CPU-s {cpu / tokens * 1e6:.1f} µs/token")  # fmt: skip


if __name__ == "__main__":
    main()
