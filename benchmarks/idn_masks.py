"""Mask times inside ``idn-hostname`` / ``idn-email`` strings on the Llama 3 vocabulary (a developer aid, as
slowest_tokens.py): for each prefix, the first mask (one enforcer per schema, prefixes in the order listed, so
earlier ones have warmed the shared caches as a generation would) and a later mask of the same position with
the enforcer's mask cache cleared (the lexeme walks stay cached). A plain ``maxLength: 63`` string is the
yardstick.

    python benchmarks/idn_masks.py
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from formatenforcer import JsonSchemaParser, TokenEnforcer, Vocabulary  # noqa: E402
from formatenforcer.enforcer import Position  # noqa: E402
from tests.tokenizers_fixtures import LLAMA3_EOS, llama3_tokenizer  # noqa: E402

HOST = ["", "exa", "example.", "mün", "Host", "실례", "실례.테스", "παράδειγμα", "παράδειγμα" * 4 + "πα",
        "\u05d0\u05d1", "xn--", "a" * 60, "Host.Example.", "\u0915\u094d"]  # fmt: skip
EMAIL = ["", "joe", "δοκιμή", "joe@", "joe@mün", "δοκιμή@παρά", '"δο', "joe@example.co"]
PLAIN = ["", "exa", "mün", "παράδειγμα"]


def run(vocabulary: Vocabulary, schema: dict, prefixes: list[str]) -> None:
    enforcer = TokenEnforcer(vocabulary, JsonSchemaParser(schema))
    print(schema)
    for prefix in prefixes:
        state = enforcer.parser.add_text('"' + prefix)
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


def main() -> None:
    vocabulary = Vocabulary.from_transformers(llama3_tokenizer(), LLAMA3_EOS)
    run(vocabulary, {"type": "string", "maxLength": 63}, PLAIN)
    run(vocabulary, {"type": "string", "format": "idn-hostname"}, HOST)
    run(vocabulary, {"type": "string", "format": "idn-email"}, EMAIL)


if __name__ == "__main__":
    main()
