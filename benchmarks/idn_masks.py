"""Mask times inside ``idn-hostname`` / ``idn-email`` strings on the Llama 3 vocabulary (a developer aid, as
slowest_tokens.py): for each prefix, the first mask (one enforcer per schema, prefixes in the order listed, so
earlier ones have warmed the shared caches as a generation would) and a later mask of the same position with
the enforcer's mask cache cleared (the lexeme walks stay cached). A plain ``maxLength: 63`` string is the
yardstick.

    python benchmarks/idn_masks.py
    python benchmarks/idn_masks.py --instance 0   # the suite's costliest idn-hostname instances (0, 1, 2), CPU-s

Figures of 22 Nov 2026, after the bound on code points (formats_idn_length.a_length_bound; same machine,
first masks, before -> after): Greek labels of 5-6 letters 10.6-14.2 s -> 0.3-0.7 s (mixed runs of 6 where
every token was walked), 10 letters 1988 -> 280-360 ms (27051 -> 35045 tokens), 20 letters 2.3 s -> 0.8-1.4 s
(a run of 4), 22-24 letters 2.3 s -> 7.7-8.0 s (slower: far inside the room of a run begun at 21 letters, but
no run of 4 left, so every token is walked, as at 5-6 letters before), 26 letters 1.6 s, 42 letters (printed
cut to 24) 4533 -> 3297 ms (one bound for the near-limit candidates instead of an A-label length each),
`δοκιμή@παρά` 559 -> 149 ms; the other prefixes unchanged in tokens and within the machine's noise in time
(start 678 -> 640-1047 ms, `exa` 478 -> 579 ms, `mün` 247 -> 334 ms, load 1 -> 2). The two full runs allowed
were spent before the last change (runs shorter than 4 inside an anchor's room, dropped: they cost the
suite's 52-letter label its 3-letter tokens), so the after figures for the Greek labels were measured apart
with this procedure; the others come from a run of the idn-hostname and idn-email parts.

Earlier figures of 22 Nov 2026 (2 shared cores, another test run alongside; first / later mask): plain string
107 ms at the start (its free-run table), then 2 ms; idn-hostname at the start 1.2 s (tables of the letter
and mixed runs, built once per process), `exa` 0.6 s, `mün` 0.3 s, `example.`, `Host`, `실례`, `xn--`,
`क्` 20-110 ms, a 10-letter Greek label 2.0 s and a 42-letter one 4.2 s (past the mixed runs' bound every
token is walked and checked near the limit); idn-email 0.15-0.2 s in the local part and the domain, 0.7 s
at its start and after a long Greek domain label, 1.8 s inside a quoted local part (no run there). Every
later mask of a position: under 0.2 ms (cached). Before these changes: 1.2-6.5 s for the first masks of
short names and minutes in a 10-letter Greek label or an `xn--` label.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from formatenforcer import EnforcerConfig, JsonSchemaParser, TokenEnforcer, Vocabulary  # noqa: E402
from formatenforcer.core.enforcer import Position  # noqa: E402
from tests.tokenizers_fixtures import LLAMA3_EOS, llama3_tokenizer  # noqa: E402

HOST = ["", "exa", "example.", "mün", "Host", "실례", "실례.테스", "παράδειγμα", "παράδειγμα" * 2,
        "παράδειγμα" * 4 + "πα", "\u05d0\u05d1", "xn--", "a" * 60, "Host.Example.", "\u0915\u094d"]  # fmt: skip
EMAIL = ["", "joe", "δοκιμή", "joe@", "joe@mün", "δοκιμή@παρά", '"δο', "joe@example.co"]
PLAIN = ["", "exa", "mün", "παράδειγμα"]


def run(vocabulary: Vocabulary, schema: dict, prefixes: list[str]) -> None:
    enforcer = TokenEnforcer(vocabulary, JsonSchemaParser(schema))
    print(schema)
    for prefix in prefixes:
        state = enforcer.parser.add_text(json.dumps(prefix, ensure_ascii=False)[:-1])
        position = Position(state, b"", False)
        t0 = time.perf_counter()
        mask = enforcer.mask(position)
        first = time.perf_counter() - t0
        enforcer._cache.clear()
        t0 = time.perf_counter()
        enforcer.mask(position)
        later = time.perf_counter() - t0
        count = int(sum(bin(int(x)).count("1") for x in mask.view("uint8")))
        print(f"  {prefix[:24]!r:28} first {first * 1000:8.1f} ms  later {later * 1000:7.2f} ms  {count} tokens")


# the JSON-Schema-Test-Suite's costliest idn-hostname instances, in its two layouts (``--instance i ...``)
INSTANCES = [("a" * 63, False), ("παράδειγμα" * 5 + "πα.com", False), ("παράδειγμα" * 5 + "πα.com", True)]


def instances(vocabulary: Vocabulary, tokenizer: object, which: list[int]) -> None:
    """CPU seconds of each instance's token pass as the suite runs it (a fresh enforcer each, no mask budget,
    every token in the mask and taken, end-of-sequence at the end; the process's caches are shared, so one
    instance per process compares best)."""
    from tests.json_checks import accepts_tokens

    for text, escaped in (INSTANCES[i] for i in which):
        parser = JsonSchemaParser({"type": "string", "format": "idn-hostname"})
        enforcer = TokenEnforcer(vocabulary, parser, EnforcerConfig(mask_seconds=None))
        document = json.dumps(text, ensure_ascii=escaped)
        start = time.process_time()
        ok, _ = accepts_tokens(enforcer, tokenizer, document)
        seconds = time.process_time() - start
        tokens = len(tokenizer.encode(document, add_special_tokens=False))  # type: ignore[attr-defined]
        print(f"  {document[:24]!r:28} {tokens:4} tokens  {seconds:6.1f} CPU-s  {'ok' if ok else 'REFUSED'}")


def main() -> None:
    tokenizer = llama3_tokenizer()
    vocabulary = Vocabulary.from_transformers(tokenizer, LLAMA3_EOS)
    if "--instance" in sys.argv[1:]:
        instances(vocabulary, tokenizer, [int(x) for x in sys.argv[sys.argv.index("--instance") + 1 :]])
        return
    run(vocabulary, {"type": "string", "maxLength": 63}, PLAIN)
    run(vocabulary, {"type": "string", "format": "idn-hostname"}, HOST)
    run(vocabulary, {"type": "string", "format": "idn-email"}, EMAIL)


if __name__ == "__main__":
    main()
