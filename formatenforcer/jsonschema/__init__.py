"""JSON Schema and JSON parsers, in two stages (see docs/json-schema.md).

schema/        stage one: raw schema -> intermediate form (schema/ir.py): $ref, allOf merging, not,
               if/then/else, enum; the algebra on that form (merge, complement, products)
ecma/          the ECMA-262 regular expressions of ``pattern``
formats/       ``format`` values as string content automata
compile.py     stage two: intermediate form -> parser start states, build-time check of every node
strings.py, numbers.py, arrays.py, objects.py, keys.py   one parser per value kind
api.py         JsonSchemaParser, JsonParser;  config.py: JsonConfig
"""

from . import formats
from .api import JsonParser, JsonSchemaParser
from .config import JsonConfig
from .formats.content import JSON_STRING_CHARS
from .schema import format_checks
from .schema.ir import IMPLEMENTED_KEYWORDS

format_checks.install(format_checks.FormatChecks(formats.KNOWN_FORMATS, formats.FORMAT_MAX_LENGTH, formats.matches))

__all__ = ["IMPLEMENTED_KEYWORDS", "JSON_STRING_CHARS", "JsonConfig", "JsonParser", "JsonSchemaParser"]
