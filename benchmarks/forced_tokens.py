"""What the forced-token rules (formatenforcer/core/forced.py) do, measured over the benchmark cases, no model.

For each tokenizer (Llama 3, SmolLM2, a SentencePiece byte-fallback model trained like the tests' fixture)
and layout (compact, ``json.dumps`` default), two walks per benchmark instance:

- **teacher**: the "model" writes the tokenizer's own encoding of the instance (a canonical path), and the
  forced tokens are appended wherever there are some. Counted: tokens, forced tokens, forced runs,
  exceptions (a forced run that differs from the canonical encoding there; the final ids would then differ
  from ``encode(final text)``), and the bytes that were forced text at some point but that the model
  still wrote itself (the hold-back and lookback rules left them to it).
- **split**: the "model" writes the instance one character per token where such tokens exist (the greedy
  shortest split: as non-canonical as a model can be), so the token before a forced run is often one the
  tokenizer would merge with the forced text. Counted: the forced runs, the steps where the lookback rule
  forced nothing (with no lookback something would have been forced, and the tokens around the boundary
  would not be the tokenizer's), and the forced runs that are not what the tokenizer writes after the text
  so far (``encode(text + forced text)`` must be ``encode(text)`` followed by the run and then the rest).

    python benchmarks/forced_tokens.py
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def cases() -> list[dict]:
    out: list[dict] = []
    for path in sorted((ROOT / "benchmarks" / "cases").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        out.extend(data if isinstance(data, list) else [data])
    return out


def shortest_split(vocabulary, text: str) -> list[int]:
    """One token per character where the vocabulary has it, else the greedy encoding of the character."""
    ids: list[int] = []
    for ch in text:
        ids.extend(vocabulary.tokenize(ch) if vocabulary.encode is None else _single(vocabulary, ch))
    return ids


def _single(vocabulary, ch: str) -> list[int]:
    from formatenforcer.core.forced import greedy_tokenize

    return greedy_tokenize(vocabulary, ch)


def in_context(vocabulary, text: str, run_text: str, run: list[int]) -> bool:
    """Whether ``run`` is what the tokenizer writes for ``run_text`` after ``text``: the encoding of both
    together is the encoding of ``text`` followed by ``run`` (and then whatever else)."""
    before = vocabulary.tokenize(text) if text else []
    together = vocabulary.tokenize(text + run_text)
    if not text and vocabulary.strip_leading_space:
        return together[: len(run)] == run or vocabulary.tokenize(run_text)[: len(run)] == run
    return together[: len(before)] == before and together[len(before) : len(before) + len(run)] == run


def main() -> int:
    from formatenforcer import JsonConfig, JsonSchemaParser, TokenEnforcer, Vocabulary
    from formatenforcer.core.forced import forced_tokens_of
    from tests import tokenizers_fixtures as tf

    tokenizers = {
        "Llama 3": (tf.llama3_tokenizer(), tf.LLAMA3_EOS),
        "SmolLM2": (tf.smollm2_tokenizer(), None),
        "SentencePiece": (tf.sentencepiece_tokenizer(Path(tempfile.mkdtemp())), None),
    }
    print("| tokenizer | layout | tokens | forced tokens | forced runs | exceptions | forced bytes left to the model "
          "| split walk: runs forced / refused by the lookback / not the tokenizer's |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    for name, (tokenizer, eos) in tokenizers.items():
        vocabulary = Vocabulary.from_transformers(tokenizer, eos)
        for layout in ("compact", "flexible"):
            tokens = forced = runs = exceptions = held = split_runs = refused = split_wrong = 0
            for case in cases():
                parser = JsonSchemaParser(case["schema"], config=JsonConfig(whitespace=layout))
                if layout == "compact":
                    text = json.dumps(case["instance"], separators=(",", ":"))
                else:
                    text = json.dumps(case["instance"], ensure_ascii=False)
                canonical = vocabulary.tokenize(text)
                matcher = TokenEnforcer(vocabulary, parser).matcher()
                done = offset = 0
                covered: set[int] = set()  # byte offsets of the text that some forced text covered
                written_bytes = 0
                while done < len(canonical):
                    run = matcher.forced_tokens()
                    covered.update(range(offset, offset + len(matcher.forced_text().encode())))
                    if run:
                        written_bytes += len(b"".join(vocabulary.text_of(t) for t in run))
                        runs += 1
                        if run != canonical[done : done + len(run)]:
                            exceptions += 1
                            break
                        matcher.accept_tokens(run)
                        done += len(run)
                        forced += len(run)
                        offset += len(b"".join(vocabulary.text_of(t) for t in run))
                        continue
                    matcher.accept_token(canonical[done])
                    offset += len(vocabulary.text_of(canonical[done]))
                    done += 1
                held += len(covered) - written_bytes
                tokens += len(canonical)
                # the split walk: the model writes one character per token
                matcher = TokenEnforcer(vocabulary, parser).matcher()
                split = shortest_split(vocabulary, text)
                done = 0
                while done < len(split):
                    with_lookback = forced_tokens_of(matcher, 1)
                    if not with_lookback and forced_tokens_of(matcher, 0):
                        refused += 1
                    if with_lookback:
                        split_runs += 1
                        so_far = b"".join(vocabulary.text_of(t) for t in matcher.generated_tokens).decode()
                        run_text = b"".join(vocabulary.text_of(t) for t in with_lookback).decode()
                        if not in_context(vocabulary, so_far, run_text, with_lookback):
                            split_wrong += 1
                        matcher.accept_tokens(with_lookback)
                        # go on with the split of the rest of the text
                        consumed = b"".join(vocabulary.text_of(t) for t in matcher.generated_tokens).decode()
                        if vocabulary.strip_leading_space and consumed[:1] == " " and text[:1] != " ":
                            consumed = consumed[1:]  # SentencePiece: the first token's space is not written
                        split = matcher.generated_tokens + shortest_split(vocabulary, text[len(consumed) :])
                        done = len(matcher.generated_tokens)
                        continue
                    if not matcher.accept_token(split[done]):
                        break
                    done += 1
            print(f"| {name} | {layout} | {tokens} | {forced} ({forced / tokens:.1%}) | {runs} | {exceptions} "
                  f"| {held} | {split_runs} / {refused} / {split_wrong} |")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
