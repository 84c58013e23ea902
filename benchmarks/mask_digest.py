"""A digest of every mask over the benchmark cases: a refactor that changes no behaviour keeps it.

Each case of benchmarks/cases/ is teacher-forced on the Llama 3 tokenizer, compact and indent=2 JSON, and
every mask (the bitmask row before each token and after the last) is hashed, per case and in total. Run it
on two checkouts and compare the outputs: equal digests mean equal masks, token by token.

    python benchmarks/mask_digest.py > after.txt        # PYTHONPATH=/path/to/other/checkout for the other side
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import maskbench  # noqa: E402

from formatenforcer import JsonSchemaParser, Matcher, TokenEnforcer, Vocabulary, allocate_bitmask  # noqa: E402


def digest_masks(matcher: Matcher, ids: list[int], vocabulary_size: int, digest: Any) -> int:
    """Teacher-forces ``ids`` through ``matcher``, hashing into ``digest`` the bitmask row before each token and
    after the last (and ``refused`` where a token is refused, which stops the run); returns how many rows."""
    bitmask = allocate_bitmask(1, vocabulary_size)
    rows = 0
    for token in [*ids, None]:
        matcher.fill_bitmask(bitmask, 0)
        digest.update(bitmask.tobytes())
        rows += 1
        if token is None:
            break
        if not matcher.accept_token(token):
            digest.update(b"refused")
            break
    return rows


def main() -> None:
    tokenizer = maskbench.llama3_tokenizer()
    vocabulary = Vocabulary.from_transformers(tokenizer)
    total = hashlib.sha256()
    count = 0
    for case in maskbench.load_cases():
        digest = hashlib.sha256()
        for indent in (None, 2):
            text = json.dumps(case["instance"], indent=indent, ensure_ascii=False)
            ids = tokenizer.encode(text, add_special_tokens=False)
            matcher = TokenEnforcer(vocabulary, JsonSchemaParser(case["schema"])).matcher()
            count += digest_masks(matcher, ids, vocabulary.size, digest)
        print(case["name"], digest.hexdigest()[:16])
        total.update(digest.digest())
    print("TOTAL", count, total.hexdigest())


if __name__ == "__main__":
    main()
