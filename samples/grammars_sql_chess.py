"""Context-free grammars as the format: a SQL query (Lark), arithmetic and chess moves (GBNF), JSON as a grammar.

Run: python samples/grammars_sql_chess.py
The grammar files are in samples/grammars/. GrammarParser reads Lark, GBNF (llama.cpp) and EBNF (xgrammar),
detecting the syntax as vLLM does: a text containing "::=" is GBNF/EBNF, anything else Lark. docs/grammars.md
"""

from pathlib import Path

import lark
from transformers import LogitsProcessorList

from formatenforcer import GrammarParser
from formatenforcer.cli.model import load
from formatenforcer.integrations.transformers import FormatEnforcerLogitsProcessor

GRAMMARS = Path(__file__).resolve().parent / "grammars"
TASKS = [
    ("sql.lark", "Write a SQL query that lists the names of users older than 30, oldest first.", 40),
    ("arithmetic.gbnf", "What is 12 times 3? Write the calculation.", 20),
    ("chess.gbnf", "Write the first two moves of a chess game in algebraic notation.", 50),
    ("json.lark", "Describe a cat as a JSON object with its name and age.", 40),
]

model, tokenizer, _ = load(None)
for file, question, max_tokens in TASKS:
    text = (GRAMMARS / file).read_text()
    parser = GrammarParser(text)
    messages = [{"role": "user", "content": question}]
    prompt = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    inputs = tokenizer(prompt, return_tensors="pt", add_special_tokens=False)
    processor = FormatEnforcerLogitsProcessor(tokenizer, parser)
    output = model.generate(**inputs, logits_processor=LogitsProcessorList([processor]), max_new_tokens=max_tokens)
    answer = tokenizer.decode(output[0, inputs["input_ids"].shape[1] :], skip_special_tokens=True)
    print(f"{file:16} {answer!r}")
    if file.endswith(".lark"):  # read back by lark itself, on the same grammar
        lark.Lark(text, parser="earley", lexer="dynamic_complete").parse(answer)
    else:
        assert parser.accepts(answer), answer
