"""How the command line shows a set of characters: each character quoted, ranges written ``'a'..'z'``.

``CharSet``'s own repr writes ``[(-0-9]`` for "``(``, ``-`` or a digit", which reads just as well as "from
``(`` to ``0``, then ``-9``"; grammars' operators and punctuation make that common. Here every character is a
Python string literal (so ``'-'``, ``' '`` and ``'\\n'`` are plain to see) and a range uses ``..``; a set
holding almost everything is shown as what it leaves out.
"""

from __future__ import annotations

from ..core.charset import CharSet

_SHOWN = 24
"""Pieces (characters or ranges) shown before the rest is counted."""
_WIDE = 0x10000
"""A set with more characters than this is shown by the characters it leaves out, when they are fewer."""


def describe_characters(chars: CharSet) -> str:
    """``chars`` for a reader: ``'(' '-' '0'..'9'``, ``any character except '"' '\\\\'``, ``no character``."""
    if not chars.intervals:
        return "no character"
    missing = chars.complement()
    if not missing.intervals:
        return "any character"
    if chars.size() > _WIDE and len(missing.intervals) < len(chars.intervals) + 2:
        return f"any character except {_pieces(missing)}"
    return _pieces(chars)


def _pieces(chars: CharSet) -> str:
    pieces: list[str] = []
    for lo, hi in chars.intervals:
        if lo == hi:
            pieces.append(repr(chr(lo)))
        elif hi == lo + 1:
            pieces.extend((repr(chr(lo)), repr(chr(hi))))
        else:
            pieces.append(f"{chr(lo)!r}..{chr(hi)!r}")
    shown = " ".join(pieces[:_SHOWN])
    if len(pieces) > _SHOWN:
        shown += f" and {len(pieces) - _SHOWN} more"
    return shown
