"""JSON Schema and JSON parsers, in two stages (see docs/json-schema.md).

    normalize.py   raw schema -> intermediate form (ir.py): $ref, allOf merging, not, if/then/else, enum
    merge.py       intersection / union / complement of intermediate nodes
    compile.py     intermediate form -> parser start states, build-time check of every reachable node
    strings.py, content.py, numbers.py, arrays.py, objects.py   one parser per value kind
    api.py         JsonSchemaParser, JsonParser;  config.py: JsonConfig
"""

from .api import JsonParser, JsonSchemaParser
from .config import JsonConfig
from .formats.content import JSON_STRING_CHARS
from .schema.ir import IMPLEMENTED_KEYWORDS

__all__ = ["IMPLEMENTED_KEYWORDS", "JSON_STRING_CHARS", "JsonConfig", "JsonParser", "JsonSchemaParser"]
