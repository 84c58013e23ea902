"""Pattern text -> deterministic automaton in one pass, for the regular subset of Python ``re`` syntax.

Why not interegular alone: it builds an automaton per syntax node and combines them with products and
concatenations, each a crawl over fresh states (2-8 ms for a pattern as small as ``[A-Z]{3}-[0-9]{5}``),
which would dominate the time to a new schema's first mask. Here the pattern is read into a small tree, its
leaves numbered as positions (Glushkov's construction: which positions may come first, last, and after
which), and one subset construction over those positions gives the automaton: ~0.1-0.5 ms for such
patterns. The result is an ``interegular.fsm.FSM``, so everything downstream (pruning, products in
``compile_boolean``) is unchanged.

Characters are grouped into symbols by which leaves contain them; every character no leaf names explicitly
shares the ``anything_else`` symbol, as in interegular. Syntax outside the subset read here (inline flags,
lookaround, anchors inside the pattern, back-references, possessive quantifiers, octal escapes...) raises
``Unhandled`` and the caller falls back to interegular, so the accepted language never depends on which
builder ran (tests/test_regex_build.py compares the two automata on hundreds of patterns).
"""

from __future__ import annotations

from collections.abc import Callable

from interegular.fsm import FSM, Alphabet, anything_else

MAX_POSITIONS = 4000
"""More leaves than this after expanding counted repetitions: left to interegular (and its time limit)."""

MAX_EXPLICIT_CHARS = 20000
"""Classes naming more characters than this (a huge explicit range): left to interegular."""


class Unhandled(Exception):
    """The pattern uses syntax this builder does not read; interegular builds it instead."""


class Unsatisfiable(Exception):
    """Every word of the pattern needs a ``^`` after its first character or a ``$`` before its last."""


# A character set: (negated, characters). Negated sets hold every character except those listed.
CharSet = tuple[bool, frozenset[str]]

_DIGITS = frozenset("0123456789")
_WORD = frozenset("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz")
_SPACE = frozenset(" \t\n\r\f\v")
_CLASS_ESCAPES: dict[str, CharSet] = {
    "d": (False, _DIGITS), "D": (True, _DIGITS), "w": (False, _WORD), "W": (True, _WORD),
    "s": (False, _SPACE), "S": (True, _SPACE),
}  # fmt: skip
_CHAR_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": "\a"}
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}


def _union(a: CharSet, b: CharSet) -> CharSet:
    (neg_a, xs), (neg_b, ys) = a, b
    if not neg_a and not neg_b:
        return False, xs | ys
    if neg_a and neg_b:
        return True, xs & ys
    return True, (xs - ys) if neg_a else (ys - xs)


# Tree nodes: ("leaf", CharSet) | ("cat", [nodes]) | ("alt", [nodes]) | ("star", node) | ("opt", node), and
# ("anchor", "^" or "$") until ``_without_anchors`` rewrites them away
Node = tuple
_EMPTY_WORD: Node = ("cat", [])


class _Reader:
    """Recursive descent over the pattern text; builds the tree with counted repetitions expanded."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self.positions = 0
        self.anchors = 0
        self.names: set[str] = set()

    def read(self) -> Node:
        node = self._alternation()
        if self.i != len(self.text):
            raise Unhandled(f"unexpected {self.text[self.i]!r}")
        return node

    def _peek(self) -> str | None:
        return self.text[self.i] if self.i < len(self.text) else None

    def _alternation(self) -> Node:
        branches = [self._concatenation()]
        while self._peek() == "|":
            self.i += 1
            branches.append(self._concatenation())
        return branches[0] if len(branches) == 1 else ("alt", branches)

    def _concatenation(self) -> Node:
        items: list[Node] = []
        while True:
            c = self._peek()
            if c is None or c in "|)":
                return ("cat", items)
            items.append(self._repetition())

    def _repetition(self) -> Node:
        atom, size = self._atom()
        while True:
            c = self._peek()
            if c in ("*", "+", "?"):
                self.i += 1
                low, high = {"*": (0, None), "+": (1, None), "?": (0, 1)}[c]
            elif c == "{" and (bounds := self._braces()) is not None:
                low, high = bounds
            else:
                return atom
            nxt = self._peek()
            if nxt == "?":
                self.i += 1  # lazy: the same language
                nxt = self._peek()
            if nxt is not None and nxt in "*+?{":
                raise Unhandled("possessive or repeated quantifier")  # re refuses "a**"; "a*+" is possessive
            atom, size = _repeat(atom, size, low, high), size * (high if high is not None else low + 1)
            self.positions += size
            if self.positions > MAX_POSITIONS:
                raise Unhandled("too many positions")

    def _braces(self) -> tuple[int, int | None] | None:
        end = self.text.find("}", self.i)
        if end < 0:
            raise Unhandled("literal '{'")
        inside = self.text[self.i + 1 : end]
        low_text, comma, high_text = inside.partition(",")
        if not (low_text.isdigit() or (comma and low_text == "")) or not (high_text == "" or high_text.isdigit()):
            raise Unhandled("literal '{'")
        if not comma:
            low = high = int(low_text)
        else:
            if not low_text and not high_text:
                raise Unhandled("'{,}'")
            low = int(low_text) if low_text else 0
            high = int(high_text) if high_text else None
        if high is not None and high < low:
            raise Unhandled("bad repetition bounds")
        self.i = end + 1
        return low, high

    def _atom(self) -> tuple[Node, int]:
        c = self.text[self.i]
        if c == "(":
            return self._group()
        if c in "*+?{":
            raise Unhandled(f"quantifier {c!r} with nothing to repeat")
        if c in "^$":
            self.i += 1
            if self._peek() is not None and self._peek() in "*+?{":
                raise Unhandled("repeated anchor")  # re: "nothing to repeat" (its message names the position)
            self.anchors += 1
            return ("anchor", c), 0
        self.i += 1
        self.positions += 1
        if c == ".":
            return ("leaf", (True, frozenset("\n"))), 1
        if c == "[":
            return ("leaf", self._class()), 1
        if c == "\\":
            escaped = self._escape(in_class=False)
            return ("leaf", escaped if isinstance(escaped, tuple) else (False, frozenset(escaped))), 1
        return ("leaf", (False, frozenset(c))), 1

    def _group(self) -> tuple[Node, int]:
        text = self.text
        self.i += 1
        if text.startswith("?:", self.i):
            self.i += 2
        elif text.startswith("?P<", self.i):
            end = text.find(">", self.i)
            name = text[self.i + 3 : end]
            if end < 0 or not name.isidentifier() or name in self.names:
                raise Unhandled("group name")  # re refuses it: let its message name the problem
            self.names.add(name)
            self.i = end + 1
        elif text.startswith("?", self.i):
            raise Unhandled("group extension")
        before = self.positions
        node = self._alternation()
        if self._peek() != ")":
            raise Unhandled("unbalanced group")
        self.i += 1
        return node, self.positions - before

    def _escape(self, in_class: bool) -> str | CharSet:
        """After a backslash: a single character, or a class escape's set."""
        if self.i >= len(self.text):
            raise Unhandled("trailing backslash")
        c = self.text[self.i]
        self.i += 1
        if c in _CLASS_ESCAPES:
            return _CLASS_ESCAPES[c]
        if c in _CHAR_ESCAPES:
            return _CHAR_ESCAPES[c]
        if c in _HEX_ESCAPES:
            digits = self.text[self.i : self.i + _HEX_ESCAPES[c]]
            if len(digits) != _HEX_ESCAPES[c] or any(d not in "0123456789abcdefABCDEF" for d in digits):
                raise Unhandled("bad hex escape")
            self.i += len(digits)
            return chr(int(digits, 16))
        if c == "b" and in_class:
            return "\b"
        if c.isalnum() or c == "_":
            raise Unhandled(f"escape \\{c}")  # anchors, back-references, octal, \N{...}
        return c

    def _class(self) -> CharSet:
        text = self.text
        negated = text.startswith("^", self.i)
        if negated:
            self.i += 1
        result: CharSet = (False, frozenset())
        first = True
        while True:
            if self.i >= len(text):
                raise Unhandled("unterminated class")
            c = text[self.i]
            if c == "]" and not first:
                self.i += 1
                break
            first = False
            start = self._class_char()
            if isinstance(start, tuple):
                result = _union(result, start)
                continue
            if text.startswith("-", self.i) and self.i + 1 < len(text) and text[self.i + 1] != "]":
                self.i += 1
                end = self._class_char()
                if isinstance(end, tuple) or ord(end) < ord(start):
                    raise Unhandled("bad range")
                if ord(end) - ord(start) > MAX_EXPLICIT_CHARS:
                    raise Unhandled("range too large")
                chars = frozenset(map(chr, range(ord(start), ord(end) + 1)))
                result = _union(result, (False, chars))
            else:
                result = _union(result, (False, frozenset(start)))
        if negated:
            result = (not result[0], result[1])
        return result

    def _class_char(self) -> str | CharSet:
        c = self.text[self.i]
        self.i += 1
        if c == "\\":
            return self._escape(in_class=True)
        if c == "[" and self.text.startswith(":", self.i):
            raise Unhandled("POSIX-looking class")
        return c


def _repeat(node: Node, size: int, low: int, high: int | None) -> Node:
    """``node{low,high}`` as copies: ``x{2,4}`` is ``x x (x (x)?)?`` and ``x{2,}`` is ``x x x*``."""
    if low == 0 and high is None:
        return ("star", node)
    items: list[Node] = [node] * low
    if high is None:
        items.append(("star", node))
    else:
        tail: Node | None = None
        for _ in range(high - low):
            tail = ("opt", node if tail is None else ("cat", [node, tail]))
        if tail is not None:
            items.append(tail)
    return items[0] if len(items) == 1 else ("cat", items)


class _Positions:
    """Glushkov's construction: one position per leaf visit, with the positions that may follow it."""

    def __init__(self) -> None:
        self.sets: list[CharSet] = []
        self.follow: list[set[int]] = []

    def visit(self, node: Node) -> tuple[bool, list[int], list[int]]:
        """(accepts the empty string, first positions, last positions) of ``node``."""
        kind = node[0]
        if kind == "leaf":
            p = len(self.sets)
            self.sets.append(node[1])
            self.follow.append(set())
            return False, [p], [p]
        if kind == "cat":
            nullable, first, last = True, [], []
            for item in node[1]:
                n, f, la = self.visit(item)
                for p in last:
                    self.follow[p].update(f)
                if nullable:
                    first = first + f
                last = last + la if n else la
                nullable = nullable and n
            return nullable, first, last
        if kind == "alt":
            nullable, first, last = False, [], []
            for item in node[1]:
                n, f, la = self.visit(item)
                nullable, first, last = nullable or n, first + f, last + la
            return nullable, first, last
        n, f, la = self.visit(node[1])
        if kind == "star":
            for p in la:
                self.follow[p].update(f)
        return True, f, la


def _nullable(node: Node) -> bool:
    kind = node[0]
    if kind == "leaf":
        return False
    if kind == "cat":
        return all(_nullable(item) for item in node[1])
    if kind == "alt":
        return any(_nullable(item) for item in node[1])
    return True


def _has_anchor(node: Node) -> bool:
    kind = node[0]
    if kind == "anchor":
        return True
    if kind in ("cat", "alt"):
        return any(_has_anchor(item) for item in node[1])
    return kind != "leaf" and _has_anchor(node[1])


def _cat(*items: Node) -> Node:
    kept = [item for item in items if item != _EMPTY_WORD]
    return kept[0] if len(kept) == 1 else ("cat", kept)


def _alt(items: list[Node]) -> Node:
    return items[0] if len(items) == 1 else ("alt", items)


Variants = dict[tuple[bool, bool], Node]
"""A node's words split by what its anchors require: key (at_start, at_end) says the word must begin at the
start of the text (a ``^`` was matched at its first character) and/or end at its end (a ``$`` at its last);
the value is an anchor-free node of those words. A missing key: no such word."""


def _variants(node: Node) -> Variants:
    """``node``'s words by anchor requirement (see ``Variants``). A ``^`` matched after a character of the
    same word, or a ``$`` before one, can never hold: those words are dropped."""
    kind = node[0]
    if kind == "anchor":
        return {(True, False) if node[1] == "^" else (False, True): _EMPTY_WORD}
    if not _has_anchor(node):
        return {(False, False): node}
    if kind == "cat":
        acc: Variants = {(False, False): _EMPTY_WORD}
        for item in node[1]:
            acc = _concat_variants(acc, _variants(item))
        return acc
    if kind == "alt":
        pieces: dict[tuple[bool, bool], list[Node]] = {}
        for item in node[1]:
            for flags, word in _variants(item).items():
                pieces.setdefault(flags, []).append(word)
        return {flags: _alt(words) for flags, words in pieces.items()}
    inner = _variants(node[1])
    plain = inner.get((False, False))
    if kind == "opt":
        out = dict(inner)
        out[(False, False)] = _EMPTY_WORD if plain is None else ("opt", plain)
        return out
    # star: iterations w1..wk; one that needs the start has only empty words before it, one that needs the
    # end only empty words after it, so the anchored iterations can only be the first and the last
    loop = _EMPTY_WORD if plain is None else ("star", plain)
    out = {(False, False): loop}
    head, tail, both = inner.get((True, False)), inner.get((False, True)), inner.get((True, True))
    if head is not None:
        out[(True, False)] = _cat(head, loop)
    if tail is not None:
        out[(False, True)] = _cat(loop, tail)
    whole = ([both] if both is not None else []) + ([_cat(head, loop, tail)] if head and tail else [])
    if whole:
        out[(True, True)] = _alt(whole)
    return out


def _concat_variants(left: Variants, right: Variants) -> Variants:
    """Words u·v: if v needs the start, u must be empty (and then u·v needs it); if u needs the end, v must be
    empty."""
    pieces: dict[tuple[bool, bool], list[Node]] = {}
    for (s1, e1), u in left.items():
        for (s2, e2), v in right.items():
            if s2 and u != _EMPTY_WORD:
                if not _nullable(u):
                    continue
                u = _EMPTY_WORD
            w = v
            if e1 and w != _EMPTY_WORD:
                if not _nullable(w):
                    continue
                w = _EMPTY_WORD
            pieces.setdefault((s1 or s2, e1 or e2), []).append(_cat(u, w))
    return {flags: _alt(words) for flags, words in pieces.items()}


def _without_anchors(tree: Node) -> Node | None:
    """The anchor-free tree of the text ``tree`` fully matches: a whole text starts at the start and ends at
    the end, so every word's requirement holds; None when no word is left (no anchor can be satisfied).
    ``$`` is read as the end of the text only (Python's also matches before a final newline: the texts
    allowed are then a subset of ``re.fullmatch``'s, never more)."""
    words = list(_variants(tree).values())
    return _alt(words) if words else None


def build_fsm(body: str, expired: Callable[[], bool] = lambda: False) -> FSM:
    """The automaton of ``re.fullmatch(body, ...)`` (already checked by ``re.compile`` when it holds an
    anchor: see ``_without_anchors``). Raises ``Unhandled`` for syntax it does not read; ``expired()`` is
    polled at every state of the subset construction and a true result raises ``TimeoutError``."""
    reader = _Reader(body)
    tree = reader.read()
    if reader.anchors:
        tree = _without_anchors(tree)
        if tree is None:
            raise Unsatisfiable(body)
    positions = _Positions()
    nullable, first, last = positions.visit(tree)
    sets = positions.sets
    # the positions of each distinct set (a counted repeat holds one set many times), then each set's
    # characters once, in the order of the sets' first positions (the order of the symbols below)
    positions_of: dict[CharSet, int] = {}
    for index, leaf in enumerate(sets):
        positions_of[leaf] = positions_of.get(leaf, 0) | (1 << index)
    explicit: dict[str, int] = {}
    negated_bits = 0
    for (negated, chars), bits in positions_of.items():
        if negated:
            negated_bits |= bits
        for c in chars:
            explicit[c] = explicit.get(c, 0) | bits
    if len(explicit) > MAX_EXPLICIT_CHARS:
        raise Unhandled("too many explicit characters")
    symbol_of_signature = {negated_bits: 0}  # symbol 0: characters no leaf names
    mapping: dict[object, int] = {anything_else: 0}
    for c, bits in explicit.items():
        signature = bits ^ negated_bits
        symbol = symbol_of_signature.setdefault(signature, len(symbol_of_signature))
        if symbol:
            mapping[c] = symbol
    symbols_of_position: list[list[int]] = [
        [symbol for signature, symbol in symbol_of_signature.items() if signature >> p & 1] for p in range(len(sets))
    ]
    is_last = [False] * len(sets)
    for p in last:
        is_last[p] = True
    start = frozenset(first)
    states: list[frozenset[int]] = [start]
    number = {(start, nullable): 0}
    transitions: dict[int, dict[int, int]] = {}
    finals = {0} if nullable else set()
    follow = [frozenset(f) for f in positions.follow]
    i = 0
    while i < len(states):
        if expired():  # (every state: a state of many wide classes costs milliseconds alone)
            raise TimeoutError
        buckets: dict[int, set[int]] = {}
        for q in states[i]:
            for symbol in symbols_of_position[q]:
                bucket = buckets.get(symbol)
                if bucket is None:
                    buckets[symbol] = {q}
                else:
                    bucket.add(q)
        row = transitions[i] = {}
        for symbol, reached in buckets.items():
            if len(reached) == 1:  # most symbols of most states reach one position (``[0-9]{4}``)
                (q,) = reached
                key = (follow[q], is_last[q])
            else:
                key = (frozenset().union(*(follow[q] for q in reached)), any(is_last[q] for q in reached))
            target_positions = key[0]
            j = number.get(key)
            if j is None:
                j = number[key] = len(states)
                states.append(target_positions)
                if key[1]:
                    finals.add(j)
            row[symbol] = j
        i += 1
    return FSM(
        alphabet=Alphabet(mapping), states=range(len(states)), initial=0, finals=finals, map=transitions,
        __no_validation__=True,
    )  # fmt: skip
