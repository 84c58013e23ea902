"""Time per mask of a grammar, teacher-forced, on the Llama 3 vocabulary: formatenforcer and llguidance.

Each text of a workload (``--workload sql``: SQL queries of benchmarks/grammars/sql.lark; ``tools``: Hermes
tool calls with reasoning, ToolCallParser's grammar with one %json rule per tool) is tokenized naturally and
fed token by token; before each token the engine computes the full mask of allowed tokens (a packed int32 bitmask), and
the token is checked against it. Reported per engine:

- TTFM  time from the grammar text to the first mask (compile + matcher + first mask), a fresh grammar object
        for every text (so formatenforcer's per-grammar caches start cold each time; its per-vocabulary
        terminal walks are shared); with ``--reuse`` one grammar object serves every text, as a server keeps
        one per grammar, and only the first text pays the compile;
- TBM   time between masks: accept the forced token + compute the next mask; mean, p50, p99;
- refused: forced tokens (or the final end-of-sequence) the engine refused (must be 0).

One process, engines one after another, each text once per round (``--rounds``). This 2-core machine is
shared and drifts, so compare engines within one run.

    python benchmarks/grammar_masks.py                       # formatenforcer and llguidance, 3 rounds
    python benchmarks/grammar_masks.py --engines formatenforcer --rounds 1 --reuse
    python benchmarks/grammar_masks.py --workload tools
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from grammar_cases import TOOLS  # noqa: E402  (the tool schemas MaskBench's tool-call case uses)

SQL_GRAMMAR = (ROOT / "benchmarks" / "grammars" / "sql.lark").read_text(encoding="utf-8")
SQL_TEXTS = [
    "SELECT * FROM users",
    'select name, email from customers where age >= 21 and country = "FR" order by name asc limit 50',
    'SELECT count(*) FROM orders WHERE status != "shipped" OR (total > 100.5 AND NOT paid = 1)',
    "select o.id, c.name from orders where customer_id = 7; select max(price) from products",
    "SELECT id,title,author FROM books WHERE year<1950 ORDER BY title DESC LIMIT 10;",
    'select sum(amount) from payments where method = "card" and (day = 3 or day = 4 or day = 5)',
]

TOOL_TEXTS = [
    '<think>The user asks about Paris.</think>\n\n<tool_call>\n{"name": "get_weather", "arguments": '
    '{"city": "Paris", "days": 3, "unit": "celsius"}}\n</tool_call>',
    "I will look both up.\n<tool_call>\n"
    '{"name": "search", "arguments": {"query": "best pizza in Naples"}}\n</tool_call>\n'
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Naples"}}\n</tool_call>',
    '<tool_call>\n{"name": "search", "arguments": {"query": "train times Zurich to Milan", "limit": 5}}\n</tool_call>',
]


def workload(name: str) -> tuple[str, list[str]]:
    """(grammar text, texts): ``sql`` (benchmarks/grammars/sql.lark) or ``tools`` (ToolCallParser's Hermes
    grammar with reasoning and two tools: the same %json grammar text both engines read)."""
    if name == "sql":
        return SQL_GRAMMAR, SQL_TEXTS
    from formatenforcer.grammar import tool_call_grammar

    return tool_call_grammar(TOOLS, "hermes", reasoning=True), TOOL_TEXTS


def _bit(bitmask: np.ndarray, token: int) -> bool:
    return bool((int(bitmask[0, token >> 5]) >> (token & 31)) & 1)


class FormatEnforcer:
    name = "formatenforcer"

    def __init__(self, tokenizer: Any) -> None:
        from formatenforcer import GrammarParser, TokenEnforcer, Vocabulary

        self.GrammarParser, self.TokenEnforcer = GrammarParser, TokenEnforcer
        self.vocabulary = Vocabulary.from_transformers(tokenizer)
        self.bitmask = np.zeros((1, (self.vocabulary.size + 31) // 32), dtype=np.int32)
        self.eos = self.vocabulary.eos_token_ids[0]

    def start(self, grammar: str, reuse: bool = False) -> Any:
        if not reuse or getattr(self, "_parser", None) is None:
            self._parser = self.GrammarParser(grammar)
        matcher = self.TokenEnforcer(self.vocabulary, self._parser).matcher()
        bitmask = self.bitmask

        class Session:
            def mask(self) -> None:
                matcher.fill_bitmask(bitmask, 0)

            def accept(self, token: int) -> bool:
                return matcher.accept_token(token)

        return Session()


class Llguidance:
    name = "llguidance"

    def __init__(self, tokenizer: Any) -> None:
        import llguidance
        import llguidance.hf
        import llguidance.numpy

        self.llg = llguidance
        self.fill = llguidance.numpy.fill_next_token_bitmask
        self.tokenizer = llguidance.hf.from_tokenizer(tokenizer)
        self.bitmask = llguidance.numpy.allocate_token_bitmask(1, self.tokenizer.vocab_size)
        self.eos = self.tokenizer.eos_token

    def start(self, grammar: str, reuse: bool = False) -> Any:
        matcher = self.llg.LLMatcher(self.tokenizer, self.llg.LLMatcher.grammar_from_lark(grammar), log_level=0)
        if matcher.is_error():
            raise RuntimeError(matcher.get_error())
        bitmask, fill = self.bitmask, self.fill

        class Session:
            def mask(self) -> None:
                fill(matcher, bitmask, 0)

            def accept(self, token: int) -> bool:
                return matcher.consume_token(token)

        return Session()


def run(engine: Any, tokenizer: Any, rounds: int, reuse: bool, grammar: str, texts: list[str]) -> dict[str, Any]:
    ttfm: list[float] = []
    tbm: list[float] = []
    refused = 0
    for _ in range(rounds):
        for text in texts:
            tokens = list(tokenizer.encode(text, add_special_tokens=False)) + [engine.eos]
            t0 = time.perf_counter()
            session = engine.start(grammar, reuse)
            session.mask()
            ttfm.append(time.perf_counter() - t0)
            for i, token in enumerate(tokens):
                if not _bit(engine.bitmask, token):
                    refused += 1
                    break
                t0 = time.perf_counter()
                ok = session.accept(token)
                if i + 1 < len(tokens):
                    session.mask()
                tbm.append(time.perf_counter() - t0)
                if not ok:
                    refused += 1
                    break
    tbm.sort()
    return {
        "engine": engine.name,
        "ttfm_p50_ms": 1e3 * statistics.median(ttfm),
        "ttfm_max_ms": 1e3 * max(ttfm),
        "tbm_mean_ms": 1e3 * statistics.fmean(tbm),
        "tbm_p50_ms": 1e3 * tbm[len(tbm) // 2],
        "tbm_p99_ms": 1e3 * tbm[min(len(tbm) - 1, int(0.99 * len(tbm)))],
        "masks": len(tbm),
        "refused": refused,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", default="formatenforcer,llguidance")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workload", choices=["sql", "tools"], default="sql")
    parser.add_argument(
        "--reuse", action="store_true", help="one grammar object for every text (as a server keeps one per grammar)"
    )
    args = parser.parse_args()
    from maskbench import llama3_tokenizer

    tokenizer = llama3_tokenizer()
    makers = {"formatenforcer": FormatEnforcer, "llguidance": Llguidance}
    print("| engine | TTFM p50 / max | TBM mean / p50 / p99 | masks | refused |")
    print("|---|---|---|---|---|")
    for name in args.engines.split(","):
        grammar, texts = workload(args.workload)
        result = run(makers[name](tokenizer), tokenizer, args.rounds, args.reuse, grammar, texts)
        print(
            f"| {result['engine']} | {result['ttfm_p50_ms']:.2f} ms / {result['ttfm_max_ms']:.1f} ms | "
            f"{result['tbm_mean_ms']:.3f} ms / {result['tbm_p50_ms']:.3f} ms / {result['tbm_p99_ms']:.2f} ms | "
            f"{result['masks']} | {result['refused']} |"
        )


if __name__ == "__main__":
    main()
