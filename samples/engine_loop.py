"""The engine-level API without any model: a Matcher fills a packed bitmask, the "model" samples from the
masked logits, the matcher accepts the token. This is the loop every integration runs.

Run: python samples/engine_loop.py   (numpy only, a fraction of a second)
"""

import numpy as np

from formatenforcer import JsonConfig, JsonSchemaParser, TokenEnforcer, Vocabulary, allocate_bitmask, apply_bitmask

# A toy vocabulary: token id = index. Real ones come from Vocabulary.from_transformers(tokenizer).
TOKENS = ["<eos>", "{", "}", '"', "id", "tags", ":", ",", " ", "[", "]", "0", "1", "7", "42", "a", "b", "ab", '"x"']
vocabulary = Vocabulary.from_tokens(TOKENS, eos_token_ids=[0])

schema = {
    "type": "object",
    "properties": {"id": {"type": "integer", "minimum": 1}, "tags": {"type": "array", "maxItems": 2}},
    "required": ["id"],
    "additionalProperties": False,
}
# at most one space between tokens: a random "model" would otherwise spend its tokens on whitespace
config = JsonConfig(max_whitespace=1)
enforcer = TokenEnforcer(vocabulary, JsonSchemaParser(schema, config=config))  # one per format: shares its mask cache
rng = np.random.default_rng(0)

for sample in range(3):
    matcher = enforcer.matcher()  # one per sequence
    bitmask = allocate_bitmask(1, vocabulary.size)
    text = []
    for _ in range(100):
        logits = rng.normal(size=(1, vocabulary.size)).astype(np.float32)  # stand-in for a forward pass
        matcher.fill_bitmask(bitmask, 0)
        masked = apply_bitmask(logits, bitmask)
        token = int(np.argmax(masked[0]))
        assert matcher.accept_token(token)
        if token == 0:
            break
        text.append(TOKENS[token])
    print(f"sample {sample}: {''.join(text)}  (complete: {matcher.is_finished()})")
