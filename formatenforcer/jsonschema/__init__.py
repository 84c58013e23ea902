"""JSON Schema and JSON parsers (see issue 3)."""
