"""Tool calling: the model answers with a call whose arguments follow the tool's JSON Schema, then we run it.

Run: python samples/tool_calls.py
ToolCallParser writes the grammar of a tool-call format (hermes: <tool_call>{"name", "arguments"}</tool_call>,
as Qwen and Hermes models are trained on; llama3: one {"name", "parameters"} object), with one JSON Schema per
tool inside it, so the name decides which schema the arguments follow. docs/grammars.md
"""

import json
from pathlib import Path

from transformers import LogitsProcessorList

from formatenforcer import ToolCallParser
from formatenforcer.cli.model import load
from formatenforcer.integrations.transformers import FormatEnforcerLogitsProcessor

TOOLS = json.loads((Path(__file__).resolve().parent / "grammars" / "tools.json").read_text())
FUNCTIONS = {
    "add": lambda a, b: a + b,
    "get_weather": lambda city, days: f"{days} sunny days in {city}",
}

model, tokenizer, _ = load(None)
system = f"You can call these tools: {json.dumps(TOOLS)}. Answer with <tool_call>{{...}}</tool_call>."
for question in ("What is 2 plus 3?", "What is the weather in Paris for the next 3 days?"):
    messages = [{"role": "system", "content": system}, {"role": "user", "content": question}]
    prompt = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    inputs = tokenizer(prompt, return_tensors="pt", add_special_tokens=False)
    parser = ToolCallParser(TOOLS, style="hermes", preamble=False, parallel=False)
    processor = FormatEnforcerLogitsProcessor(tokenizer, parser)
    output = model.generate(**inputs, logits_processor=LogitsProcessorList([processor]), max_new_tokens=60)
    text = tokenizer.decode(output[0, inputs["input_ids"].shape[1] :], skip_special_tokens=True)
    call = json.loads(text.strip().removeprefix("<tool_call>").removesuffix("</tool_call>"))
    result = FUNCTIONS[call["name"]](**call["arguments"])  # the arguments match the tool's schema
    print(f"{question}\n  {call['name']}({call['arguments']}) -> {result}")
