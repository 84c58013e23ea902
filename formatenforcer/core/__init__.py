"""The core: the vocabulary index, the token walk and the per-sequence matcher. It knows the parser protocol
(``protocol.py``) and no parser: formats plug in from ``parsers/`` and ``jsonschema/``."""
