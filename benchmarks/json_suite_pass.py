"""CPU time of the JSON-Schema-Test-Suite's token pass (as tests/test_json_schema_suite.py runs it in the full
suite), per draft and per file, in one process: where the full suite's longest tests spend their time.

    python benchmarks/json_suite_pass.py                      # draft7, then draft2020-12
    python benchmarks/json_suite_pass.py draft7 --top 5
    python benchmarks/json_suite_pass.py draft7 --files optional/format/idn-hostname.json --digest
    python benchmarks/json_suite_pass.py draft2020-12 draft7 --by-file   # as the test runs them: file by file

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

from formatenforcer import EnforcerConfig, TokenEnforcer, Vocabulary  # noqa: E402
from tests import tokenizers_fixtures as fixtures  # noqa: E402
from tests.json_checks import accepts_tokens  # noqa: E402
from tests.json_suite_runner import SUITE, draft_files, run_draft  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("drafts", nargs="*", default=["draft7", "draft2020-12"])
    parser.add_argument("--top", type=int, default=8, help="files listed per draft, costliest first")
    parser.add_argument("--files", nargs="*", help="only these files (as listed, e.g. optional/format/x.json)")
    parser.add_argument("--digest", action="store_true", help="hash every mask (exactness of a refactor)")
    parser.add_argument("--by-file", action="store_true", help="the drafts file by file, as the test runs them")
    args = parser.parse_args()
    if not SUITE.is_dir():
        raise SystemExit(f"JSON-Schema-Test-Suite not found at {SUITE}")
    tokenizer = fixtures.llama3_tokenizer()
    vocabulary = Vocabulary.from_transformers(tokenizer, fixtures.LLAMA3_EOS)
    enforcers: dict[int, TokenEnforcer] = {}
    spent: collections.Counter = collections.Counter()
    current = [("", "")]
    digests: dict[tuple[str, str], hashlib._Hash] = {}

    def accept(schema_parser, text):  # noqa: ANN001, ANN202
        enforcer = enforcers.get(id(schema_parser))
        if enforcer is None:
            enforcers.clear()  # one group at a time, as the test does
            # no mask time budget, as in the test: a verdict must not depend on the load
            config = EnforcerConfig(mask_seconds=None)
            enforcer = enforcers[id(schema_parser)] = TokenEnforcer(vocabulary, schema_parser, config)
        result = accepts_tokens(enforcer, tokenizer, text)
        if args.digest:  # the same masks again, from a fresh matcher, outside the timing
            start = time.process_time()
            digest = digests.setdefault(current[0], hashlib.sha256())
            matcher = enforcer.matcher()
            for token in [*tokenizer.encode(text, add_special_tokens=False), None]:
                digest.update(matcher.mask().tobytes())
                if token is None or not matcher.accept_token(token):
                    break
            spent[current[0]] -= time.process_time() - start
        return result

    files = {draft: draft_files(draft) for draft in args.drafts}
    if args.by_file:  # as tests/test_json_schema_suite.py runs them (run_drafts): a file of each draft in turn
        names = list(dict.fromkeys(name for draft in args.drafts for name in files[draft]))
        jobs = [(draft, name) for name in names for draft in args.drafts if name in files[draft]]
    else:
        jobs = [(draft, name) for draft in args.drafts for name in files[draft]]
    results: dict[str, dict] = {draft: {} for draft in args.drafts}
    for draft, name in jobs:  # run_draft's files, one at a time
        if args.files and name not in args.files:
            continue
        current[0] = (draft, name)
        start = time.process_time()
        results[draft].update(run_draft(draft, accept, [name]))
        spent[draft, name] += time.process_time() - start  # the whole file: building, refusals, the walks
    for draft in args.drafts:
        total = sum(seconds for (d, _), seconds in spent.items() if d == draft)
        failures = sum(len(result.failures) for result in results[draft].values())
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
        print(f"{draft}: {total:.1f} CPU-s, {failures} failures, max RSS {rss} MB")
        ranked = collections.Counter({name: seconds for (d, name), seconds in spent.items() if d == draft})
        for name, seconds in ranked.most_common(args.top):
            print(f"  {seconds:7.1f} s  {name}")
        if args.digest:
            total_digest = hashlib.sha256()
            for key in sorted(k for k in digests if k[0] == draft):
                total_digest.update(digests[key].digest())
                print(f"  digest {digests[key].hexdigest()[:16]}  {key[1]}")
            print(f"  digest TOTAL {total_digest.hexdigest()}")
    print(f"all: {sum(spent.values()):.1f} CPU-s")


if __name__ == "__main__":
    main()
