"""GBNF (llama.cpp) and xgrammar's EBNF text into the neutral form (ir.py), by a small hand-written reader.

Both notations are ``name ::= alternatives`` over double-quoted strings, character classes (``[a-z]``,
``[^"\\\\]``), ``.`` (any character), rule names, parentheses, and the postfix operators ``*``, ``+``, ``?``
and ``{m}``, ``{m,}``, ``{m,n}``; ``#`` starts a comment. A rule may span lines: it ends where the next
``name ::=`` begins. The start rule is ``root``.

Every part of a rule that names no other rule is regular, so it becomes one terminal (a regular expression):
``"-"? [0-9]+ ("." [0-9]+)?`` is one lexeme, not six. Only parts that name rules become auxiliary rules
(``x*`` as ``aux ::= aux x | ``, left-recursive so the recognizer's sets stay small).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..core.charset import CharSet
from ..core.errors import GrammarError
from .ir import Grammar, Symbol, Terminal, rule, terminal

MAX_REPEAT = 1000
"""The largest ``{m,n}`` bound on a part that names rules (each repetition is a copy); regular parts have
no such bound here (their automaton is built under the regex time limit)."""

_WIDE_CLASS = 1024
"""A character class with more characters than this is written negated (see ``_class_regex``)."""
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'", "[": "[", "]": "]", "-": "-",
            "^": "^", "/": "/", "0": "\0", "f": "\f", "v": "\v", "a": "\a", "b": "\b", "e": "\x1b"}  # fmt: skip


@dataclass(frozen=True)
class _Node:
    kind: str  # "regex", "ref", "seq", "alt", "rep"
    value: object = None
    parts: tuple = ()
    low: int = 0
    high: int | None = None


class _Reader:
    def __init__(self, text: str, syntax: str) -> None:
        self.text, self.pos, self.syntax = text, 0, syntax
        self.rule_name = ""

    # --- characters ------------------------------------------------------------------------------------
    def line(self, pos: int | None = None) -> int:
        return self.text.count("\n", 0, self.pos if pos is None else pos) + 1

    def fail(self, message: str) -> GrammarError:
        where = f"rule '{self.rule_name}', " if self.rule_name else ""
        return GrammarError(f"{self.syntax.upper()} grammar ({where}line {self.line()}): {message}")

    def space(self) -> None:
        text = self.text
        while self.pos < len(text):
            ch = text[self.pos]
            if ch in " \t\r\n":
                self.pos += 1
            elif ch == "#":
                end = text.find("\n", self.pos)
                self.pos = len(text) if end < 0 else end + 1
            else:
                return

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def at_rule_start(self) -> bool:
        found = _NAME.match(self.text, self.pos)
        if not found:
            return False
        rest = self.text[found.end() :].lstrip(" \t")
        return rest.startswith("::=")

    def escaped(self) -> str:
        """The character after a backslash (the backslash already read)."""
        text = self.text
        if self.pos >= len(text):
            raise self.fail("a backslash at the end of the text")
        ch = text[self.pos]
        self.pos += 1
        sizes = {"x": 2, "u": 4, "U": 8}
        if ch in sizes:
            digits = text[self.pos : self.pos + sizes[ch]]
            if len(digits) != sizes[ch] or not all(c in "0123456789abcdefABCDEF" for c in digits):
                raise self.fail(f"\\{ch} needs {sizes[ch]} hexadecimal digits")
            self.pos += sizes[ch]
            code = int(digits, 16)
            if code > 0x10FFFF:
                raise self.fail(f"\\{ch}{digits} is not a character")
            return chr(code)
        if ch in _ESCAPES:
            return _ESCAPES[ch]
        raise self.fail(f"unknown escape \\{ch}")

    # --- expressions -----------------------------------------------------------------------------------
    def alternatives(self, nested: bool) -> _Node:
        options = [self.sequence(nested)]
        while self.peek() == "|":
            self.pos += 1
            self.space()
            options.append(self.sequence(nested))
        return options[0] if len(options) == 1 else _Node("alt", parts=tuple(options))

    def sequence(self, nested: bool) -> _Node:
        items = []
        while True:
            self.space()
            ch = self.peek()
            if not ch or ch in "|)" or (not nested and self.at_rule_start()):
                break
            items.append(self.postfix(self.primary()))
        return items[0] if len(items) == 1 else _Node("seq", parts=tuple(items))

    def primary(self) -> _Node:
        ch = self.peek()
        if ch == '"':
            return _Node("regex", re.escape(self.string()))
        if ch == "[":
            return _Node("regex", self.char_class())
        if ch == ".":
            self.pos += 1
            return _Node("regex", r"[\s\S]")
        if ch == "(":
            self.pos += 1
            self.space()
            if self.peek() == "=":
                raise self.fail("lookahead assertions '(= ...)' are not supported")
            inner = self.alternatives(nested=True)
            self.space()
            if self.peek() != ")":
                raise self.fail("a '(' is not closed")
            self.pos += 1
            return inner
        found = _NAME.match(self.text, self.pos)
        if found:
            self.pos = found.end()
            return _Node("ref", found.group())
        raise self.fail(f"unexpected {ch!r}")

    def postfix(self, node: _Node) -> _Node:
        while True:
            ch = self.peek()
            if ch in ("*", "+", "?"):
                self.pos += 1
                low, high = {"*": (0, None), "+": (1, None), "?": (0, 1)}[ch]
                node = _Node("rep", parts=(node,), low=low, high=high)
            elif ch == "{":
                found = re.compile(r"\{\s*(\d+)\s*(,\s*(\d*)\s*)?\}").match(self.text, self.pos)
                if not found:
                    raise self.fail("a repeat must be {m}, {m,} or {m,n}")
                self.pos = found.end()
                low = int(found.group(1))
                high = low if found.group(2) is None else (int(found.group(3)) if found.group(3) else None)
                if high is not None and high < low:
                    raise self.fail(f"repeat {{{low},{high}}} has its maximum below its minimum")
                node = _Node("rep", parts=(node,), low=low, high=high)
            else:
                return node

    def string(self) -> str:
        self.pos += 1
        out = []
        text = self.text
        while True:
            if self.pos >= len(text) or text[self.pos] == "\n":
                raise self.fail("a string literal is not closed")
            ch = text[self.pos]
            self.pos += 1
            if ch == '"':
                return "".join(out)
            out.append(self.escaped() if ch == "\\" else ch)

    def char_class(self) -> str:
        self.pos += 1
        negated = self.peek() == "^"
        if negated:
            self.pos += 1
        ranges: list[tuple[int, int]] = []
        text = self.text
        while True:
            if self.pos >= len(text):
                raise self.fail("a character class is not closed")
            ch = text[self.pos]
            self.pos += 1
            if ch == "]":
                break
            low = self.escaped() if ch == "\\" else ch
            high = low
            if self.peek() == "-" and self.pos + 1 < len(text) and text[self.pos + 1] != "]":
                self.pos += 1
                ch = text[self.pos]
                self.pos += 1
                high = self.escaped() if ch == "\\" else ch
                if ord(high) < ord(low):
                    raise self.fail(f"character range {low!r}-{high!r} is reversed")
            ranges.append((ord(low), ord(high)))
        chars = CharSet(ranges)
        return _class_regex(chars.complement() if negated else chars)


def _class_regex(chars: CharSet) -> str:
    """A regex class for ``chars``; a wide set whose complement is smaller is written as the negation of that
    complement, which the regex builder reads as one symbol instead of listing every character. A wide block
    that is not most of Unicode (``[一-鿿]``) stays positive: its negation would list the rest of Unicode."""
    if not chars:
        return r"[^\s\S]"
    negated = False
    if chars.size() > _WIDE_CLASS:
        complement = chars.complement()
        if not complement:
            return r"[\s\S]"
        if complement.size() < chars.size():
            negated, chars = True, complement
    body = "".join(
        _class_char(lo) if lo == hi else f"{_class_char(lo)}-{_class_char(hi)}" for lo, hi in chars.intervals
    )
    return f"[{'^' if negated else ''}{body}]"


def _class_char(code: int) -> str:
    """A character inside a regex class: itself, escaped where the class syntax gives it a meaning."""
    ch = chr(code)
    return "\\" + ch if ch in "\\]^-[" else ch


def _regex(node: _Node) -> str | None:
    """The regular expression of a part that names no rule, else None."""
    if node.kind == "regex":
        return node.value  # type: ignore[return-value]
    if node.kind == "ref":
        return None
    inner = [_regex(part) for part in node.parts]
    if any(part is None for part in inner):
        return None
    if node.kind == "seq":
        return "".join(f"(?:{part})" for part in inner)
    if node.kind == "alt":
        return "|".join(f"(?:{part})" for part in inner)
    high = "" if node.high is None else str(node.high)
    bound = f"{{{node.low}}}" if node.high == node.low else f"{{{node.low},{high}}}"
    return f"(?:{inner[0]}){bound}"


class _Builder:
    """Turns the parsed expressions into the neutral form: regular parts become terminals."""

    def __init__(self, grammar: Grammar) -> None:
        self.grammar = grammar
        self.by_pattern: dict[str, str] = {}
        self.count = 0

    def terminal_for(self, pattern: str, owner: str) -> Symbol:
        name = self.by_pattern.get(pattern)
        if name is None:
            name = self.by_pattern[pattern] = f"T{len(self.by_pattern)}_{owner}"
            self.grammar.terminals[name] = Terminal(name, pattern)
            self.grammar.origin[name] = owner
        return terminal(name)

    def auxiliary(self, owner: str, alternatives: list[tuple[Symbol, ...]]) -> Symbol:
        self.count += 1
        name = f"{owner}__{self.count}"
        self.grammar.rules[name] = alternatives
        self.grammar.origin[name] = owner
        return rule(name)

    def alternatives(self, node: _Node, owner: str) -> list[tuple[Symbol, ...]]:
        if node.kind == "seq" and not node.parts:
            return [()]
        pattern = _regex(node)
        if pattern is not None:
            return [(self.terminal_for(pattern, owner),)]
        if node.kind == "alt":
            return [self.sequence(part, owner) for part in node.parts]
        return [self.sequence(node, owner)]

    def sequence(self, node: _Node, owner: str) -> tuple[Symbol, ...]:
        if node.kind == "seq" and not node.parts:
            return ()
        pattern = _regex(node)
        if pattern is not None:
            return (self.terminal_for(pattern, owner),)
        if node.kind == "seq":
            return tuple(symbol for part in node.parts for symbol in self.sequence(part, owner))
        if node.kind == "ref":
            return (rule(node.value),)  # type: ignore[arg-type]
        if node.kind == "alt":
            return (self.auxiliary(owner, self.alternatives(node, owner)),)
        return self.repeat(node, owner)

    def repeat(self, node: _Node, owner: str) -> tuple[Symbol, ...]:
        item = self.sequence(node.parts[0], owner)
        low, high = node.low, node.high
        if max(low, high or 0) > MAX_REPEAT:
            raise GrammarError(f"{self.grammar.describe(owner)}: repeat {{{low},{high or ''}}} of a part naming "
                               f"rules is larger than {MAX_REPEAT}")  # fmt: skip
        out = item * low
        if high is None:
            star = self.auxiliary(owner, [()])
            self.grammar.rules[star.name].append((star, *item))  # left-recursive: aux ::= aux item |
            return (*out, star)
        optional: tuple[Symbol, ...] = ()
        for _ in range(high - low):  # nested: (item (item (...)?)?)?
            optional = (self.auxiliary(owner, [(), (*item, *optional)]),)
        return (*out, *optional)


def read_gbnf(text: str, syntax: str = "gbnf", start: str = "root") -> Grammar:
    """The neutral form of a GBNF (or, with ``syntax="ebnf"``, xgrammar EBNF) grammar."""
    reader = _Reader(text, syntax)
    bodies: dict[str, _Node] = {}
    grammar = Grammar(start=start, syntax=syntax)
    reader.space()
    while reader.pos < len(text):
        found = _NAME.match(text, reader.pos)
        if not found:
            raise reader.fail(f"expected a rule name, found {reader.peek()!r}")
        name = found.group()
        line = reader.line()
        reader.pos = found.end()
        reader.space()
        if not text.startswith("::=", reader.pos):
            raise reader.fail(f"expected '::=' after the rule name '{name}'")
        if name in bodies:
            raise reader.fail(f"rule '{name}' is defined twice (first on line {grammar.lines[name]})")
        reader.pos += 3
        reader.rule_name = name
        reader.space()
        bodies[name] = reader.alternatives(nested=False)
        if reader.peek() == ")":
            raise reader.fail("a ')' closes no '('")
        grammar.lines[name] = line
        reader.rule_name = ""
        reader.space()
    if start not in bodies:
        raise GrammarError(f"{syntax.upper()} grammar: no rule '{start}' to start from")
    for name, body in bodies.items():
        for ref in _references(body):
            if ref not in bodies:
                raise GrammarError(f"{grammar.describe(name)} uses the undefined rule '{ref}'")
    builder = _Builder(grammar)
    for name, body in bodies.items():
        grammar.rules[name] = builder.alternatives(body, name)
    return grammar


def _references(node: _Node) -> list[str]:
    if node.kind == "ref":
        return [node.value]  # type: ignore[list-item]
    return [ref for part in node.parts for ref in _references(part)]
