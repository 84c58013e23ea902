"""How many tokens the ``contains`` trackers' key stand-ins leave out (array_walk.py, ``_tracked_run``): for
arrays whose items are objects under a ``contains`` (with and without ``maxContains``), at every position
of a teacher-forced document on Llama 3, the mask is compared with the step over the whole vocabulary
(tests/json_checks.mask_and_step_at). Prints, per case, the CPU seconds of the masks alone, the positions,
the tokens the step takes summed over them, the tokens the mask leaves out (and the first few), and the
tokens the mask holds that the step refuses (must be 0).

    PYTHONPATH=<checkout> python benchmarks/contains_key_stand_in.py [WORD ...]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import maskbench  # noqa: E402

from formatenforcer import JsonConfig, JsonSchemaParser, TokenEnforcer, Vocabulary  # noqa: E402
from tests.json_checks import mask_and_step_at  # noqa: E402

PATTERNED = {"type": "object", "properties": {}, "additionalProperties": {"const": 15},
             "patternProperties": {"^p_": {"type": "null"}}}  # fmt: skip
COUNTED = {"type": "object", "minProperties": 1}
CASES = [
    ("maxContains: patterned items", {"type": "array", "items": PATTERNED, "contains": PATTERNED,
     "maxContains": 2}, '[{"p_":null},{"<<.notifyDataS":15}]'),
    ("maxContains: patterned contains, open items", {"type": "array", "items": {"type": "object"},
     "contains": PATTERNED, "maxContains": 1}, '[{"<<.notifyDataS":16},{"p_":null},{"ab":1}]'),
    ("maxContains: minProperties contains, open items", {"type": "array", "items": {"type": "object"},
     "contains": COUNTED, "maxContains": 1}, '[{},{"ab<<.notifyDataS":1},{}]'),
    ("maxContains: minProperties items", {"type": "array", "items": COUNTED,
     "contains": {"type": "object", "minProperties": 2}, "maxContains": 1},
     '[{"ab<<.notifyDataS":1,"ab<<.notifyDataT":1},{"x":2}]'),
    ("contains: patterned contains, open items", {"type": "array", "items": {"type": "object"},
     "contains": PATTERNED}, '[{"p_":null},{"<<.notifyDataS":15}]'),
]  # fmt: skip


def main() -> None:
    tokenizer = maskbench.llama3_tokenizer()
    vocabulary = Vocabulary.from_transformers(tokenizer)
    warm = TokenEnforcer(vocabulary, JsonSchemaParser({"type": "object"}))
    warm.mask(warm.start)  # the shared tables
    print(f"{'case':<50} {'mask CPU':>8} {'positions':>9} {'step':>9} {'left out':>8} {'let in':>6}")
    for name, schema, text in CASES:
        if sys.argv[1:] and not any(word in name for word in sys.argv[1:]):
            continue
        enforcer = TokenEnforcer(vocabulary, JsonSchemaParser(schema, config=JsonConfig(whitespace="compact")))
        position, cpu, total, out, wrong, examples = enforcer.start, 0.0, 0, 0, 0, []
        ids = tokenizer.encode(text, add_special_tokens=False)
        for token in ids:
            started = time.process_time()
            enforcer.mask(position)
            cpu += time.process_time() - started
            mask, step = mask_and_step_at(enforcer, position)
            total += len(step)
            out += len(step - mask)
            wrong += len(mask - step)
            examples.extend(tokenizer.decode([t]) for t in sorted(step - mask)[:3])
            position = enforcer.step(position, token)
            assert position is not None, (name, token)
        print(f"{name:<50} {cpu:>7.2f}s {len(ids):>9} {total:>9} {out:>8} {wrong:>6}  {examples[:6]}", flush=True)


if __name__ == "__main__":
    main()
