"""CPU time of the JSON-Schema-Test-Suite's token pass (as tests/test_json_schema_suite.py runs it in the full
suite), per draft and per file, in one process: where the full suite's longest tests spend their time.

    python benchmarks/json_suite_pass.py                      # draft7, then draft2020-12
    python benchmarks/json_suite_pass.py draft7 --top 5
    python benchmarks/json_suite_pass.py draft7 --files optional/format/idn-hostname.json --digest

``--digest`` also hashes every mask the pass computes (per file and in total): a change that keeps every
mask keeps the digest.

Needs ../shared/corpora/json-schema-test-suite next to the checkout (the tests' location).
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from formatenforcer import TokenEnforcer, Vocabulary  # noqa: E402
from tests import tokenizers_fixtures as fixtures  # noqa: E402
from tests.json_checks import accepts_tokens  # noqa: E402
from tests.json_suite_runner import SUITE, run_draft  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("drafts", nargs="*", default=["draft7", "draft2020-12"])
    parser.add_argument("--top", type=int, default=8, help="files listed per draft, costliest first")
    parser.add_argument("--files", nargs="*", help="only these files (as listed, e.g. optional/format/x.json)")
    parser.add_argument("--digest", action="store_true", help="hash every mask (exactness of a refactor)")
    args = parser.parse_args()
    if not SUITE.is_dir():
        raise SystemExit(f"JSON-Schema-Test-Suite not found at {SUITE}")
    tokenizer = fixtures.llama3_tokenizer()
    vocabulary = Vocabulary.from_transformers(tokenizer, fixtures.LLAMA3_EOS)
    enforcers: dict[int, TokenEnforcer] = {}
    spent: collections.Counter = collections.Counter()
    current = [""]
    digests: dict[str, hashlib._Hash] = {}

    def accept(schema_parser, text):  # noqa: ANN001, ANN202
        enforcer = enforcers.get(id(schema_parser))
        if enforcer is None:
            enforcers.clear()  # one group at a time, as the test does
            enforcer = enforcers[id(schema_parser)] = TokenEnforcer(vocabulary, schema_parser)
        start = time.process_time()
        result = accepts_tokens(enforcer, tokenizer, text)
        spent[current[0]] += time.process_time() - start
        if args.digest:  # the same masks again, from a fresh matcher, outside the timing
            digest = digests.setdefault(current[0], hashlib.sha256())
            matcher = enforcer.matcher()
            for token in [*tokenizer.encode(text, add_special_tokens=False), None]:
                digest.update(matcher.mask().tobytes())
                if token is None or not matcher.accept_token(token):
                    break
        return result

    for draft in args.drafts:
        spent.clear()
        folder = SUITE / draft
        paths = sorted(folder.glob("*.json")) + sorted((folder / "optional/format").glob("*.json"))
        start = time.process_time()
        results = {}
        for path in paths:  # run_draft's files, one at a time
            current[0] = name = str(path.relative_to(folder))
            if args.files and name not in args.files:
                continue
            results.update(run_draft(draft, accept, [name]))
        total = time.process_time() - start
        failures = sum(len(result.failures) for result in results.values())
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
        print(f"{draft}: {total:.1f} CPU-s, {failures} failures, max RSS {rss} MB")
        for name, seconds in spent.most_common(args.top):
            print(f"  {seconds:7.1f} s  {name}")
        if args.digest:
            total_digest = hashlib.sha256()
            for name in sorted(digests):
                total_digest.update(digests[name].digest())
                print(f"  digest {digests[name].hexdigest()[:16]}  {name}")
            print(f"  digest TOTAL {total_digest.hexdigest()}")
            digests.clear()


if __name__ == "__main__":
    main()
