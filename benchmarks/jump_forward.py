"""Jump-forward decoding: SmolLM2-135M-Instruct on CPU, the same prompts with and without it, in one run.

Each prompt is generated greedily by ``formatenforcer.integrations.transformers.generate`` twice per round,
once with ``jump_forward=True`` (forced tokens appended without sampling, fed in the same forward pass as the
sampled token before them) and once with ``jump_forward=False`` (one forward pass per token); the order
alternates between rounds, after one untimed warm-up of both (so both find the masks cached, as a server
that has seen the schema would). Reported per prompt, medians over rounds: forward passes per output,
tokens per output, forced tokens, tokens per second and wall time, and whether both runs wrote the same text
and whether the jump-forward token ids are the tokenizer's own encoding of the text (canonical).

The formats are the samples' (samples/person.schema.json, the Book model of samples/pydantic_model.py, the
date regex of samples/regex_date.py) in the default flexible layout and in the compact one
(``JsonConfig(whitespace="compact")``, where the format fixes more of the text), and compact with the
properties in schema order (``property_order="schema"``: the keys are fixed too). "canonical" says whether
the generated ids equal ``tokenizer.encode`` of the text; SmolLM2 itself often writes ``":`` then ``"``
where its tokenizer writes ``":"``, so the step-by-step path is often not canonical in the compact layout.

    python benchmarks/jump_forward.py                 # prints a markdown table
    python benchmarks/jump_forward.py --rounds 3 --max-new-tokens 120
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--max-new-tokens", type=int, default=120)
    args = parser.parse_args()

    from formatenforcer import Vocabulary
    from formatenforcer.integrations.transformers import generate
    from tests.jump_forward_cases import cases, load_smollm2, parser_of, prompt_ids

    model, tokenizer = load_smollm2()
    size = max(int(model.config.vocab_size), len(tokenizer))
    vocabulary = Vocabulary.from_transformers(tokenizer, size=size)
    rows = []
    totals = {True: [0, 0, 0.0], False: [0, 0, 0.0]}  # passes, tokens, seconds
    for case in cases():
        format_parser = parser_of(case)
        ids = prompt_ids(tokenizer, case["prompt"])

        def run(jump: bool, parser: Any = format_parser, ids: list[int] = ids) -> Any:
            return generate(model, tokenizer, parser, ids, args.max_new_tokens, jump_forward=jump,
                            vocabulary=vocabulary)  # fmt: skip

        run(True), run(False)  # warm-up: masks cached, as for a schema a server has seen before
        results: dict[bool, list[Any]] = {True: [], False: []}
        for round_index in range(args.rounds):
            for jump in (True, False) if round_index % 2 == 0 else (False, True):
                results[jump].append(run(jump))
        jf, step = results[True][0], results[False][0]

        def canonical(result: Any) -> bool:
            body = result.token_ids[: len(result.token_ids) - result.finished]
            return body == tokenizer.encode(result.text, add_special_tokens=False)

        row = {"name": case["name"], "same": jf.text == step.text, "text": jf.text,
               "canonical": f"{'yes' if canonical(jf) else 'no'} / {'yes' if canonical(step) else 'no'}"}  # fmt: skip
        for jump, label in ((True, "jf"), (False, "step")):
            runs = results[jump]
            seconds = statistics.median(r.seconds for r in runs)
            tokens = len(runs[0].token_ids)
            row[label] = {
                "passes": runs[0].forward_passes,
                "tokens": tokens,
                "forced": runs[0].forced_count,
                "seconds": seconds,
                "tps": tokens / seconds,
            }
            totals[jump][0] += runs[0].forward_passes
            totals[jump][1] += tokens
            totals[jump][2] += seconds
        rows.append(row)
        print(f"{case['name']}: done", file=sys.stderr, flush=True)

    print(f"SmolLM2-135M-Instruct, CPU, 1 torch thread, greedy, max {args.max_new_tokens} new tokens, "
          f"median of {args.rounds} rounds\n")  # fmt: skip
    print("| output | tokens | forced | forward passes (jf / step) | tok/s (jf / step) | wall s (jf / step) "
          "| wall saved | same text | canonical (jf / step) |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        jf, step = row["jf"], row["step"]
        saved = 1 - jf["seconds"] / step["seconds"]
        print(
            f"| {row['name']} | {jf['tokens']} | {jf['forced']} | {jf['passes']} / {step['passes']} "
            f"| {jf['tps']:.1f} / {step['tps']:.1f} | {jf['seconds']:.2f} / {step['seconds']:.2f} | {saved:.0%} "
            f"| {'yes' if row['same'] else 'no'} | {row['canonical']} |"
        )
    (jp, jt, js), (sp, st, ss) = totals[True], totals[False]
    print(
        f"| **all** | {jt} | {jt - jp} | {jp} / {sp} ({1 - jp / sp:.0%} fewer) | {jt / js:.1f} / {st / ss:.1f} "
        f"| {js:.2f} / {ss:.2f} | {1 - js / ss:.0%} | | |"
    )
    for row in rows:
        if not row["same"]:
            print(f"\ndiffers: {row['name']}: jump-forward wrote {row['text']!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
