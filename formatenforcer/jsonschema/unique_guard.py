"""``uniqueItems`` over items whose values can run out: whether an item can still end as a value not seen.

Scalars exclude the values seen from the next item's schema, and an open object can always take a fresh key
(arrays.py). A closed object, an object under ``maxProperties`` or ``propertyNames``, or a constrained array
may be left, after a few characters, with nothing to become but an earlier item (``{"a":true`` when
``{"a":true}`` was seen and ``a`` is the only key). So while the item's text may still turn into a seen value
(``SeenItems.live``), a character is taken only if the item can go on from the new state to a value not
seen (``UniqueGuard.fresh``): a breadth-first search over the item parser's own states for a completion that
leaves every seen value.

The search takes no whitespace outside strings (the same completion without it is the same value) and no
second zero in a row inside a number: ``1.0``, ``1.00``, ``10e-1``, ``100e-2`` ... spell one value without end,
and without that cut a search through a seen number never stopped short of the bound. A new value whose
digits hold ``00`` (``2001``) is then not found by the search: refused only where no other new value is left.

The search ends with success at the first state that can end as a new value, that allows a character
appearing in no seen value's text (``SeenItems.keep``: such a character can only be a literal character
of a string, so every completion differs), or whose text can no longer become any seen value. It goes level
by level (one more character each), explores states alike (one parser key, one text up to spelling:
``_normal``) once, and stops at the end of the level in which it passed ``FRESH_BOUND`` states; then the
character is refused. That keeps the guarantee: a state admitted because a new value was found ``L``
characters on, through ``c1``, has among its successors the state after ``c1``, from which every state of
the levels before ``L - 1`` was already among the fewer than ``FRESH_BOUND`` explored before level ``L``,
so its own search reaches level ``L - 1`` and finds the same value (or an earlier one). What the bound can
cost is a wrong rejection, where the only new values lie deeper than ``FRESH_BOUND`` states of texts that
might still become seen items (docs/json-schema.md).
"""

from __future__ import annotations

import json
import re
from collections.abc import Hashable
from fractions import Fraction
from functools import lru_cache

from ..core.charset import CharSet
from ..core.protocol import CharacterParser
from .schema.validate import to_fraction
from .unique_text import canonical

FRESH_BOUND = 4096
"""States the search for a new value explores from one item state (whole levels) before it refuses."""

SYNTAX = CharSet.of(' \t\n\r{}[]:,"\\/0123456789-+.eEtruefalsnabcdfABCDEF')
"""Every character a JSON text can hold outside the literal characters of its strings: whitespace,
punctuation, numbers, ``true``/``false``/``null``, and escapes (``\\n``, ``\\u00e9``)."""

_END = -1  # the text ends inside the value: it may still become it
_FAIL = -2  # the text cannot become the value
_NUMBER = re.compile(r"-?[0-9]*(?:\.[0-9]*)?(?:[eE][+-]?[0-9]*)?")
_WORDS = {"t": ("true", True), "f": ("false", False), "n": ("null", None)}


@lru_cache(maxsize=4096)
def _number(text: str) -> Fraction:
    return Fraction(text) if text.lstrip("-").isdigit() else to_fraction(float(text))


class SeenItems:
    """The items seen so far (their texts), parsed once: values, canonical forms, and the characters
    their texts may hold."""

    __slots__ = ("values", "canon", "keep", "_live", "_expanded")

    def __init__(self, texts: frozenset) -> None:
        self._live: dict[str, bool] = {}
        self._expanded: dict[tuple, list[tuple] | None] = {}
        self.canon = frozenset(canonical(text) for text in texts)
        self.values: list[object] = []
        chars: set[str] = set()
        for text in texts:
            try:
                value = json.loads(text, parse_int=Fraction, parse_float=_number)
            except (ValueError, RecursionError):  # deeper than Python's stack: never ruled out
                value = _UNKNOWN
            self.values.append(value)
            chars.update(_string_chars(value) if value is not _UNKNOWN else "")
        self.keep = SYNTAX | CharSet.of(chars)

    def live(self, text: str) -> bool:
        """Whether ``text`` (an item's prefix) can still be completed into a value equal to a seen one."""
        hit = self._live.get(text)
        if hit is None:
            if len(self._live) >= 1 << 15:
                self._live.clear()
            hit = self._live[text] = self._compute_live(text)
        return hit

    def _compute_live(self, text: str) -> bool:
        for value in self.values:
            if value is _UNKNOWN:
                return True
            try:
                if _match(text, 0, value) != _FAIL:
                    return True
            except RecursionError:
                return True
        return False

    def expand(self, node: CharacterParser, read: str, inside: int) -> list[tuple] | None:
        """One state of the search (``UniqueGuard.fresh``): None when it shows a new value (it can end as
        one, allows a character of no seen text, or a character after which its text can no longer become a
        seen item), else its successors as (identity, state, text, string position). Kept: the searches
        from a state and from its successors walk the same states."""
        ident = (node.key(), read)
        hit = self._expanded.get(ident, _UNKNOWN)
        if hit is not _UNKNOWN:
            return hit  # type: ignore[return-value]
        if len(self._expanded) >= 1 << 14:
            self._expanded.clear()
        children: list[tuple] | None = []
        allowed = node.allowed_characters()
        if (node.can_end() and not self.repeats(read)) or allowed - self.keep:
            children = None
        else:
            for ch in allowed.chars():
                if not inside and (ch in _WHITESPACE or (ch == "0" and read[-1:] == "0")):
                    continue  # whitespace never changes the value; a second zero in a number: see above
                after = node.add_character(ch)
                if after is None:
                    continue
                longer = read + ch
                if not self.live(longer):
                    children = None
                    break
                children.append(((after.key(), _normal(longer)), after, longer, _string_step(inside, ch)))  # type: ignore[union-attr]
        self._expanded[ident] = children
        return children

    def repeats(self, text: str) -> bool:
        """Whether the complete item ``text`` equals a seen one."""
        return canonical(text) in self.canon


_UNKNOWN = object()


def _string_chars(value: object) -> set[str]:
    out: set[str] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.update(item)
        elif isinstance(item, dict):
            stack.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return out


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\n\r":
        i += 1
    return i


def _match(text: str, i: int, value: object) -> int:
    """Where the JSON value starting at ``text[i]`` ends if it equals ``value``; ``_END`` when the text ends
    first and could still become it, ``_FAIL`` when it cannot. Conservative (``_END``) where unsure."""
    i = _skip(text, i)
    if i == len(text):
        return _END
    ch = text[i]
    if ch == "{":
        return _object(text, i + 1, value) if isinstance(value, dict) else _FAIL
    if ch == "[":
        return _array(text, i + 1, value) if isinstance(value, list) else _FAIL
    if ch == '"':
        return _string(text, i, value) if isinstance(value, str) else _FAIL
    if ch in _WORDS:
        word, literal = _WORDS[ch]
        if value is not literal or isinstance(value, Fraction):
            return _FAIL
        part = text[i : i + len(word)]
        if len(part) < len(word):
            return _END if word.startswith(part) else _FAIL
        return i + len(word) if part == word else _FAIL
    if ch == "-" or ch.isdigit():
        if not isinstance(value, Fraction):
            return _FAIL
        end = _NUMBER.match(text, i).end()  # type: ignore[union-attr]
        if end == len(text):  # more characters may come
            return _END if _number_may_become(text[i:], value) else _FAIL
        try:
            return end if _number(text[i:end]) == value else _FAIL
        except (ValueError, ZeroDivisionError, OverflowError):
            return _END
    return _END


@lru_cache(maxsize=4096)
def _facts(value: Fraction) -> tuple[bool, bool, str | None]:
    """Whether ``value`` is zero, whether it is negative, and the significant digits of its decimal
    expansion (None past 40 decimals)."""
    scaled = abs(value)
    while scaled.denominator != 1:
        scaled *= 10
        if scaled.denominator > 10**40:
            return value == 0, value < 0, None
    return value == 0, value < 0, str(scaled.numerator).rstrip("0")


def _number_may_become(text: str, value: Fraction) -> bool:
    """Whether the number ``text``, read so far, can go on to equal ``value``: its digits (leading zeros
    left out) must begin the value's significant digits followed by zeros, an exponent placing them. Where
    a float's rounding could make two spellings equal (more than 15 digits, an exponent of 3 digits or
    more), yes."""
    body = text.lstrip("-").replace("E", "e")
    mantissa, has_exponent, exponent = body.partition("e")
    digits = mantissa.replace(".", "").lstrip("0")
    if len(digits) > 15 or len(exponent.lstrip("+-")) > 2:
        return True
    zero, negative, significant = _facts(value)
    if zero:
        return not digits
    if text.startswith("-") != negative:
        return False
    if significant is None:
        return True
    if has_exponent:
        if digits.rstrip("0") != significant:
            return False
        power = abs(value) / abs(Fraction(mantissa))
        k = len(str(power.numerator)) - 1 if power.denominator == 1 else 1 - len(str(power.denominator))
        if power != Fraction(10) ** k:
            return False
        sign, figures = (exponent[:1], exponent[1:]) if exponent[:1] in "+-" else ("", exponent)
        if (sign == "-" and k > 0) or (sign == "+" and k < 0):
            return False
        return str(abs(k)).startswith(figures.lstrip("0"))
    return (significant + "0" * len(digits)).startswith(digits)


def _object(text: str, i: int, value: dict) -> int:
    used: set[str] = set()
    while True:
        i = _skip(text, i)
        if i == len(text):
            return _END
        ch = text[i]
        if ch == ",":
            i += 1
            continue
        if ch == "}":
            return i + 1 if len(used) == len(value) else _FAIL
        if ch != '"':
            return _END
        close = _string_end(text, i)
        if close == _END:
            body = text[i + 1 :]
            return _END if any(_string_may_become(body, k) for k in value if k not in used) else _FAIL
        key = json.loads(text[i:close])
        if key in used:
            return _END  # a repeated key: not judged here
        if key not in value:
            return _FAIL
        i = _skip(text, close)
        if i == len(text):
            return _END
        end = _match(text, i + 1, value[key])  # (text[i] is ':')
        if end < 0:
            return end
        used.add(key)
        i = end


def _array(text: str, i: int, value: list) -> int:
    index = 0
    while True:
        i = _skip(text, i)
        if i == len(text):
            return _END
        ch = text[i]
        if ch == ",":
            i += 1
            continue
        if ch == "]":
            return i + 1 if index == len(value) else _FAIL
        if index == len(value):
            return _FAIL
        end = _match(text, i, value[index])
        if end < 0:
            return end
        index += 1
        i = end


def _string_end(text: str, i: int) -> int:
    """Just past the closing quote of the string opening at ``text[i]``, or ``_END``."""
    j = i + 1
    while j < len(text):
        ch = text[j]
        if ch == "\\":
            j += 2
        elif ch == '"':
            return j + 1
        else:
            j += 1
    return _END


def _split_escape(body: str) -> tuple[str, str]:
    """A string body read so far as (its complete part, an unfinished escape at its end: ``\\``, ``\\u`` and
    up to three hex digits, or a high surrogate's escape and what follows it)."""
    i = 0
    last = -1  # where the last complete escape began, when it is a high surrogate
    while i < len(body):
        if body[i] != "\\":
            i += 1
            last = -1
            continue
        if i + 1 < len(body) and body[i + 1] != "u":
            i += 2
            last = -1
        elif i + 6 <= len(body):
            last = i if body[i + 2 : i + 4].lower() in ("d8", "d9", "da", "db") else -1
            i += 6
        else:
            return (body[:last], body[last:]) if last >= 0 else (body[:i], body[i:])
    return (body[:last], body[last:]) if last >= 0 else (body, "")


def _string_may_become(body: str, value: str) -> bool:
    """Whether a string whose body reads ``body`` so far can go on to be ``value``."""
    done, pending = _split_escape(body)
    try:
        head = json.loads('"' + done + '"')
    except ValueError:
        return True
    if not value.startswith(head):
        return False
    if not pending:
        return True
    rest = value[len(head) :]
    if not rest:
        return False  # the escape adds a character
    units = rest[0].encode("utf-16-be", "surrogatepass").hex()
    return units.startswith(pending.replace("\\u", "").replace("\\", "").lower())


def _string(text: str, i: int, value: str) -> int:
    close = _string_end(text, i)
    if close == _END:
        return _END if _string_may_become(text[i + 1 :], value) else _FAIL
    return close if json.loads(text[i:close]) == value else _FAIL


_PIECE = re.compile(
    r'[ \t\n\r]+|(?P<p>[\[\]{},:])|(?P<s>"(?:[^"\\]|\\.)*")|(?P<w>true|false|null)'
    r"|(?P<n>-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)(?=[ \t\n\r\]},:])"
)


def _normal(text: str) -> str:
    """``text`` with its finished tokens spelled one way (no whitespace, strings as ``json.dumps`` writes
    them, numbers by value) and the unfinished last one as read: two texts alike here, read by states of one
    key, have the same completions with the same values."""
    out: list[str] = []
    i = 0
    while True:
        match = _PIECE.match(text, i)
        if match is None or match.end() == i:
            out.append("\x00" + text[i:])
            return "".join(out)
        i = match.end()
        if match["p"] or match["w"]:
            out.append(match["p"] or match["w"])
        elif match["s"]:
            out.append(json.dumps(json.loads(match["s"])))
        elif match["n"]:
            out.append(f"#{_number(match['n'])}")


_WHITESPACE = frozenset(" \t\n\r")
_DIGITS = frozenset("0123456789")
_OUT, _IN, _ESCAPE = 0, 1, 2  # where a character falls: outside strings, in a string, after its backslash


def _string_step(inside: int, ch: str) -> int:
    if inside == _OUT:
        return _IN if ch == '"' else _OUT
    if inside == _ESCAPE:
        return _IN
    return _ESCAPE if ch == "\\" else _OUT if ch == '"' else _IN


def _string_state(text: str) -> int:
    inside = _OUT
    for ch in text:
        inside = _string_step(inside, ch)
    return inside


class UniqueGuard:
    """The checks of one ``uniqueItems`` array, with what they learn cached by the texts seen."""

    __slots__ = ("_seen", "_fresh")

    def __init__(self) -> None:
        self._seen: dict[frozenset, SeenItems] = {}
        self._fresh: dict[tuple, bool] = {}

    def items(self, seen: frozenset) -> SeenItems:
        hit = self._seen.get(seen)
        if hit is None:
            hit = self._seen[seen] = SeenItems(seen)
        return hit

    def admits(self, state: CharacterParser, text: str, seen: frozenset) -> bool:
        """Whether the item ``state`` that has read ``text`` can end as a value not in ``seen``."""
        if text[-1:] in _WHITESPACE and text[-2:-1] not in _DIGITS and _string_state(text[:-1]) == _OUT:
            # whitespace between tokens (not ending a number) leaves the same values to come as before it,
            # and the state before it, reached, was admitted: its search's new value is still there
            return True
        items = self.items(seen)
        return not items.live(text) or self.fresh(state, text, seen, items)

    def allowed(self, state: CharacterParser, text: str, seen: frozenset, allowed: CharSet) -> CharSet:
        """Of ``allowed`` (the item's characters at ``state``, whose text ``text`` is live), those after
        which it can still end as a new value; a character in no seen text always can."""
        items = self.items(seen)
        risky = allowed & items.keep
        good = [ch for ch in risky.chars() if self.admits(state.add_character(ch), text + ch, seen)]  # type: ignore[arg-type]
        return (allowed - risky) | CharSet.of(good)

    def fresh(self, state: CharacterParser, text: str, seen: frozenset, items: SeenItems) -> bool:
        """Breadth first from ``state`` (whose ``text`` may still become a seen item), at most
        ``FRESH_BOUND`` states: whether some completion is a value not seen (see the module's text)."""
        key: Hashable = (state.key(), text, seen)
        hit = self._fresh.get(key)
        if hit is not None:
            return hit
        found = False
        level = [(state, text, _string_state(text))]
        visited = {(state.key(), _normal(text))}
        explored = 0
        while level and explored <= FRESH_BOUND and not found:
            following = []
            for node, read, inside in level:  # whole levels: see the module's text
                explored += 1
                children = items.expand(node, read, inside)
                if children is None:
                    found = True
                    break
                for ident, after, longer, now in children:
                    if ident not in visited:
                        visited.add(ident)
                        following.append((after, longer, now))
            level = following
        if len(self._fresh) > 1 << 16:
            self._fresh.clear()
        self._fresh[key] = found
        return found


__all__ = ["FRESH_BOUND", "SeenItems", "UniqueGuard"]
