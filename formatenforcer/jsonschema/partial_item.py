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

from ..core.charset import CharSet


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

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PartialItem):
            return False
        return (self.head, self.gap, self.chars, self.tail) == (other.head, other.gap, other.chars, other.tail)

    def __hash__(self) -> int:
        return hash(("partial item", self.head, self.gap, self.tail))

    def __repr__(self) -> str:
        return f"<item text {self.head!r} + {self.gap} + {self.tail!r}>"


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
