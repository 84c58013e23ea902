"""The text of a ``uniqueItems`` item read partly inside a free run (see ``ArrayWalkHooks.free_run``).

The token walk takes a run of string or digit characters in one step and goes on from ``after(n)``, a state
that does not know which ``n`` characters were read. For a ``uniqueItems`` array that state still has to
finish the item and record it as seen, so it carries the item's text as a ``PartialItem``: the ``head`` read
before the run, ``gap`` characters of the run's class that it does not name, then the ``tail`` read after.

The run is only offered once the item can no longer equal an earlier one (a string that has left every seen
value; a compound item when no compound item was seen), so finishing it is exact. What remains uncertain is a
*later* item, complete inside the same token, that might equal this one for some filling of the gap: there
the stand-in refuses (``may_equal``). That needs a single token holding two whole items, and no token of the
Llama 3, SmolLM2 or SentencePiece test vocabularies has that shape (``tests/test_json_unique.py``
counts them), so the stand-in's masks equal the real states' masks on them.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache

from ..core.charset import CharSet
from .unique_text import canonical


class PartialItem:
    """``head`` + ``gap`` unnamed characters from ``chars`` (None: a class not tracked) + ``tail``."""

    __slots__ = ("head", "gap", "chars", "tail")

    def __init__(self, head: str, gap: int, chars: CharSet | None, tail: str = "") -> None:
        self.head, self.gap, self.chars, self.tail = head, gap, chars, tail

    @staticmethod
    def after_run(text: str | PartialItem, n: int, chars: CharSet) -> PartialItem:
        """``text`` followed by ``n`` characters of a run of ``chars``."""
        if isinstance(text, PartialItem):  # a second run: the known tail joins the gap, of no tracked class
            return PartialItem(text.head, text.gap + len(text.tail) + n, None)
        return PartialItem(text, n, chars)

    def __add__(self, ch: str) -> PartialItem:
        return PartialItem(self.head, self.gap, self.chars, self.tail + ch)

    @property
    def first(self) -> str:
        return self.head[:1]

    def may_equal(self, other: str | PartialItem) -> bool:
        """Whether some filling of the gap makes this finished item the same JSON value as ``other`` (a seen
        item's text: a scalar normalised by ``json.dumps``, an array or object as read)."""
        if self.first in ("[", "{") and isinstance(other, str) and other[:1] in ("[", "{"):
            return self._compound_may_equal(other)
        if isinstance(other, PartialItem) or self.first != '"':
            # numbers and compound items: any item of the same kind might be equal (conservative; see above)
            return _kind(self.first) == _kind(other.first if isinstance(other, PartialItem) else other[:1])
        if other[:1] != '"':
            return False
        value = json.loads(other)
        head, tail = json.loads(self.head + '"'), json.loads('"' + self.tail)
        if len(value) != len(head) + self.gap + len(tail) or not value.startswith(head) or not value.endswith(tail):
            return False
        middle = value[len(head) : len(value) - len(tail)]
        return self.chars is None or all(ch in self.chars for ch in middle)

    def _compound_may_equal(self, other: str) -> bool:
        """For an array or object whose gap lies inside a string value (a run of string characters): whether
        some filling of the gap makes it equal to the seen item ``other``. The gap is spelled with a
        placeholder, and the canonical form (unique_text.canonical) is matched with any one character in
        each placeholder's place. Conservative (True) where that reading does not hold: a gap inside a key
        (the key order would depend on it), in a number, or across several runs."""
        if self.chars is None:
            return True
        text = self.head + _PLACEHOLDER * self.gap + self.tail
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            return True  # (a gap in a number: not JSON with the placeholder)
        stack = [value]
        while stack:  # the placeholder must only be in string values, never in a key
            item = stack.pop()
            if isinstance(item, dict):
                if any(_PLACEHOLDER in key for key in item):
                    return True
                stack.extend(item.values())
            elif isinstance(item, list):
                stack.extend(item)
        pattern = _pattern(canonical(text))
        return pattern.fullmatch(canonical(other)) is not None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PartialItem):
            return False
        return (self.head, self.gap, self.chars, self.tail) == (other.head, other.gap, other.chars, other.tail)

    def __hash__(self) -> int:
        return hash(("partial item", self.head, self.gap, self.tail))

    def __repr__(self) -> str:
        return f"<item text {self.head!r} + {self.gap} + {self.tail!r}>"


_PLACEHOLDER = "\uffff"
"""Spells the gap's characters in a compound item's text; ``json.dumps`` writes it ``\uffff``."""

_ONE_CHARACTER = r"(?:[ !#-\[\]-~]|\\u[0-9a-f]{4}(?:\\u[0-9a-f]{4})?)"
"""One character of a string body as ``json.dumps`` writes it (ASCII as itself, the rest as escapes)."""


@lru_cache(maxsize=256)
def _pattern(form: str) -> re.Pattern[str]:
    """The canonical form ``form`` as a regex, with any one character where the placeholder is."""
    return re.compile(_ONE_CHARACTER.join(re.escape(part) for part in form.split("\\uffff")))


def _kind(first: str) -> str:
    if first in "[{":
        return "compound"
    if first == '"':
        return "string"
    return "number" if first in "-0123456789" else first


def first_char(text: str | PartialItem) -> str:
    """The first character of an item's text so far ('' before the item starts)."""
    return text.first if isinstance(text, PartialItem) else text[:1]


def partials(seen: frozenset) -> list[PartialItem]:
    """The seen items read partly in a run (only ever inside one token's walk)."""
    return [text for text in seen if isinstance(text, PartialItem)]


__all__ = ["PartialItem", "first_char", "partials"]
