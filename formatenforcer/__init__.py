"""formatenforcer: make a language model emit only text that a format allows.

Key types, by lifetime:
    Vocabulary      per tokenizer: the exact bytes each token adds, in a trie (``Vocabulary.from_transformers``)
    parsers         per format: RegexParser, ChoiceParser, GrammarParser, SequenceParser, UnionParser,
                    ReasoningParser (immutable states)
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

from .core.backend import core_backend
from .core.batch import fill_bitmasks, fill_position_bitmasks
from .core.bitmask import allocate_bitmask, apply_bitmask
from .core.bitmask import ids_of as mask_token_ids
from .core.bitmask import write_row as write_mask_row
from .core.charset import CharSet
from .core.enforcer import EnforcerConfig, TokenEnforcer
from .core.errors import (
    BuildMemoryError,
    BuildTimeoutError,
    FormatEnforcerError,
    FormatError,
    GrammarError,
    MaskMemoryError,
    MaskTimeoutError,
    RegexError,
    SchemaError,
    UnsupportedSchemaError,
    VocabularyError,
)
from .core.hooks import FreeRun
from .core.matcher import Matcher
from .core.protocol import CharacterParser
from .core.token_texts import token_bytes_from_pieces
from .core.vocabulary import Vocabulary
from .grammar import GrammarParser, ToolCallParser
from .jsonschema import JsonConfig, JsonParser, JsonSchemaParser
from .parsers.choice import ChoiceParser
from .parsers.combinators import SequenceParser, UnionParser
from .parsers.reasoning import ReasoningParser
from .parsers.regex import RegexParser

__all__ = [
    "BuildMemoryError",
    "BuildTimeoutError",
    "CharSet",
    "CharacterParser",
    "ChoiceParser",
    "EnforcerConfig",
    "FormatEnforcerError",
    "FormatError",
    "FreeRun",
    "GrammarError",
    "GrammarParser",
    "JsonConfig",
    "JsonParser",
    "JsonSchemaParser",
    "MaskMemoryError",
    "MaskTimeoutError",
    "Matcher",
    "ReasoningParser",
    "RegexError",
    "RegexParser",
    "SchemaError",
    "SequenceParser",
    "TokenEnforcer",
    "ToolCallParser",
    "UnionParser",
    "UnsupportedSchemaError",
    "Vocabulary",
    "VocabularyError",
    "allocate_bitmask",
    "apply_bitmask",
    "fill_bitmasks",
    "fill_position_bitmasks",
    "mask_token_ids",
    "token_bytes_from_pieces",
    "write_mask_row",
    "core_backend",
]

__version__ = "0.1.0"
