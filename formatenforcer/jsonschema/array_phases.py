"""Where an array state stands in ``[ item , item ]``: its phase (arrays.py reads the characters,
array_walk.py offers the walk its shortcuts).

OPEN before ``[``; FIRST after it; VALUE inside an item; AFTER an item; NEXT after a comma; DONE after ``]``.
A state of a ``uniqueItems`` array also carries its item's text so far, where ``UNKNOWN_TEXT`` marks
characters read inside a free run.
"""

OPEN, FIRST, VALUE, AFTER, NEXT, DONE = range(6)

UNKNOWN_TEXT = "\x00"
"""Marks item text read inside a free run (never in real JSON text: raw control characters are invalid)."""
