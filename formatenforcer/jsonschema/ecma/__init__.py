"""The ECMA-262 regular expressions of JSON Schema's ``pattern`` and ``patternProperties``: their grammar,
character classes and translation to the automata's full-match regex text."""
