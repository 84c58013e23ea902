"""The jump-forward generation loop with the real SmolLM2-135M-Instruct on CPU (slow)."""

from __future__ import annotations

import re

import pytest

from formatenforcer import ChoiceParser, JsonSchemaParser, RegexParser

from .jump_forward_cases import BOOK, DATE, PERSON, PROMPTS, prompt_ids

pytestmark = pytest.mark.slow


@pytest.mark.parametrize(
    "label,parser,prompt",
    [
        ("person", JsonSchemaParser(PERSON), PROMPTS["person"]),
        ("book", JsonSchemaParser(BOOK), PROMPTS["book"]),
        ("date", RegexParser(DATE), PROMPTS["date"]),
    ],
)
def test_greedy_jump_forward_writes_what_step_by_step_writes(smollm2_model, label, parser, prompt):
    """Same text as one token per forward pass, in fewer passes: the forced tokens are appended and fed
    with the sampled one before them. The final ids are the tokenizer's own encoding of the text wherever
    the step-by-step ids are."""
    from formatenforcer.integrations.transformers import generate

    model, tokenizer = smollm2_model
    ids = prompt_ids(tokenizer, prompt)
    step = generate(model, tokenizer, parser, ids, 120, jump_forward=False)
    jump = generate(model, tokenizer, parser, ids, 120, jump_forward=True)
    assert step.finished and jump.finished
    assert jump.text == step.text
    assert jump.forced_count > 0 and step.forced_count == 0
    assert jump.forward_passes == len(jump.token_ids) - jump.forced_count
    assert jump.forward_passes < step.forward_passes == len(step.token_ids)
    assert all(size >= 1 for size in jump.steps) and max(jump.steps) > 1  # several tokens in one pass

    def canonical(result) -> bool:
        return result.token_ids[:-1] == tokenizer.encode(result.text, add_special_tokens=False)

    if canonical(step):
        assert canonical(jump)
    if label == "date":
        assert re.fullmatch(DATE, jump.text)
    else:
        assert parser.accepts(jump.text)


def test_sampling_is_reproducible_with_a_seed_and_streams(smollm2_model):
    from formatenforcer.integrations.transformers import generate

    model, tokenizer = smollm2_model
    ids = prompt_ids(tokenizer, "Recommend a book as JSON.")
    parser = JsonSchemaParser(BOOK)
    chunks: list[tuple[list[int], bool]] = []

    class Recorder:  # the transformers streamer protocol: put(ids), end()
        def __init__(self) -> None:
            self.puts: list[list[int]] = []
            self.ended = False

        def put(self, value) -> None:
            self.puts.append(value.reshape(-1).tolist())

        def end(self) -> None:
            self.ended = True

    recorder = Recorder()
    first = generate(model, tokenizer, parser, ids, 80, temperature=0.9, top_p=0.95, seed=3,
                     callback=lambda run, forced: chunks.append((run, forced)), streamer=recorder)  # fmt: skip
    second = generate(model, tokenizer, parser, ids, 80, temperature=0.9, top_p=0.95, seed=3)
    assert first.token_ids == second.token_ids and first.text == second.text
    assert [t for run, _ in chunks for t in run] == first.token_ids
    assert [f for run, forced in chunks for f in [forced] * len(run)] == first.forced
    assert recorder.puts[0] == ids and sum(recorder.puts[1:], []) == first.token_ids and recorder.ended
    if first.finished:
        assert parser.accepts(first.text)


def test_budget_cuts_forced_runs_too(smollm2_model):
    from formatenforcer.integrations.transformers import generate

    model, tokenizer = smollm2_model
    parser = ChoiceParser(["The answer is definitely yes.", "The answer is definitely no."])
    result = generate(model, tokenizer, parser, prompt_ids(tokenizer, "Is the sky blue?"), 3)
    assert len(result.token_ids) == 3 and not result.finished
    full = generate(model, tokenizer, parser, prompt_ids(tokenizer, "Is the sky blue?"), 40)
    assert full.finished and full.text in ("The answer is definitely yes.", "The answer is definitely no.")
    assert full.forward_passes <= 3  # the prefix forced with the prompt; one choice; the rest forced


def test_bad_arguments_raise_value_errors(smollm2_model):
    from formatenforcer.integrations.transformers import generate

    model, tokenizer = smollm2_model
    parser = RegexParser("[0-9]+")
    for kwargs in ({"max_new_tokens": 0}, {"temperature": -1.0}, {"top_p": 0.0}):
        with pytest.raises(ValueError):
            generate(model, tokenizer, parser, [1, 2, 3], **{"max_new_tokens": 5, **kwargs})
    with pytest.raises(ValueError, match="one sequence"):
        generate(model, tokenizer, parser, [[1, 2], [3, 4]], 5)
    with pytest.raises(ValueError, match="empty"):
        generate(model, tokenizer, parser, [], 5)


def test_cli_jump_forward_trace_and_opt_out():
    """The command line jump-forwards by default and marks forced tokens with + in --trace;
    --no-jump-forward samples every token and writes the same greedy answer here."""
    from .test_cli import run

    options = ["The answer is yes.", "The answer is no."]
    jump = run("generate", "Is the sky blue?", "--choice", *options, "--trace", timeout=900)
    step = run("generate", "Is the sky blue?", "--choice", *options, "--trace", "--no-jump-forward", timeout=900)
    assert jump.returncode == 0 and step.returncode == 0, (jump.stderr, step.stderr)
    assert jump.stdout.strip() in options and jump.stdout == step.stdout
    assert re.search(r"^\s+\d+\+\s+forced\s", jump.stderr, re.MULTILINE), jump.stderr
    assert "appended without a step (marked +)" in jump.stderr
    assert "forced" not in step.stderr
