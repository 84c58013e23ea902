"""Formats built on the parser protocol alone: regular expressions, choice lists and the combinators that
join parsers. They import the core's character sets, errors and protocol, never the walk or the enforcer."""
