"""formatenforcer: make a language model emit only text that a format allows.

Key types, by lifetime:
    Vocabulary      per tokenizer: the exact bytes each token adds, in a trie (``Vocabulary.from_transformers``)
    parsers         per format: RegexParser, ChoiceParser, SequenceParser, UnionParser (immutable states)
    TokenEnforcer   per (vocabulary, format): allowed next tokens, cached by parser state
    Matcher         per sequence: accept_token / rollback / fill_bitmask, for engines

Usual call sequence::

    vocabulary = Vocabulary.from_transformers(tokenizer)
    enforcer = TokenEnforcer(vocabulary, RegexParser(r"[0-9]{3}-[0-9]{4}"))
    matcher = enforcer.matcher()
    bitmask = allocate_bitmask(1, vocabulary.size)
    matcher.fill_bitmask(bitmask, 0); apply_bitmask(logits, bitmask); matcher.accept_token(chosen)

Importing this package loads no engine (no torch, transformers or vLLM); integrations import theirs lazily.
"""

from .bitmask import allocate_bitmask, apply_bitmask
from .charset import CharSet
from .choice import ChoiceParser
from .combinators import SequenceParser, UnionParser
from .core.backend import core_backend
from .enforcer import EnforcerConfig, TokenEnforcer
from .errors import (
    FormatEnforcerError,
    FormatError,
    RegexError,
    SchemaError,
    UnsupportedSchemaError,
    VocabularyError,
)
from .jsonschema import JsonConfig, JsonParser, JsonSchemaParser
from .matcher import Matcher
from .parser import CharacterParser, FreeRun
from .regex import RegexParser
from .vocabulary import Vocabulary

__all__ = [
    "CharSet",
    "CharacterParser",
    "ChoiceParser",
    "EnforcerConfig",
    "FormatEnforcerError",
    "FormatError",
    "FreeRun",
    "JsonConfig",
    "JsonParser",
    "JsonSchemaParser",
    "Matcher",
    "RegexError",
    "RegexParser",
    "SchemaError",
    "SequenceParser",
    "TokenEnforcer",
    "UnionParser",
    "UnsupportedSchemaError",
    "Vocabulary",
    "VocabularyError",
    "allocate_bitmask",
    "apply_bitmask",
    "core_backend",
]

__version__ = "0.1.0"
