"""JSON Schema regular expressions are ECMA-262 (unicode mode): a parser of that grammar.

JSON Schema says patterns are ECMA-262 regexes; the automata (parsers/regex.py, interegular) and Python's ``re`` read
another dialect. So a pattern is parsed here by the ECMA-262 grammar in unicode mode, as the 2020-12 test
suite expects (``\\p{Letter}`` is a property class, ``\\a`` a syntax error), into a small AST whose character
matchers are explicit sets (ecma/classes.py): ``\\d`` is ASCII, ``\\s`` holds U+FEFF, ``.`` excludes the line
terminators, as in JavaScript. ecma/translate.py turns the AST into automaton text; ``is_valid`` is what
``format: regex`` asserts (for ``enum``/``const`` values; generation uses formats/regex_syntax.py).

``lenient`` (used for ``pattern``; ``format: regex`` is strict) also reads what JavaScript without the ``u``
flag reads as a literal: an escaped punctuation character (``\\-``, ``\\@``) and a lone ``]``, ``{`` or ``}``;
escaped letters keep unicode mode's meaning or are errors. Valid constructs that no automaton here expresses
(lookaround, back-references, ``\\b``) become ``("unsupported", what)`` nodes; an unknown ``\\p{...}`` raises
``EcmaUnsupported``.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ...core.charset import ANY, CharSet
from .classes import DOT, ESCAPE_CLASSES, property_class

_QUANTIFIER = re.compile(r"\{([0-9]+)(,([0-9]*))?\}")


class EcmaSyntaxError(ValueError):
    """Not an ECMA-262 (unicode mode) regular expression."""


class EcmaUnsupported(ValueError):
    """A valid ECMA-262 regular expression using something a finite automaton here does not express."""


SYNTAX_CHARACTERS = "^$\\.*+?()[]{}|"
_CONTROL = {"f": 0x0C, "n": 0x0A, "r": 0x0D, "t": 0x09, "v": 0x0B}
_HEX = "0123456789abcdefABCDEF"

# AST: ("set", CharSet) | ("seq", [n]) | ("alt", [n]) | ("rep", n, lo, hi|None) | ("bol",) | ("eol",)
#      | ("unsupported", what)


class _Parser:
    def __init__(self, text: str, lenient: bool) -> None:
        self.s, self.i, self.lenient = text, 0, lenient
        self.groups, self.names, self.refs, self.named_refs = 0, set(), [], []

    def error(self, what: str) -> EcmaSyntaxError:
        return EcmaSyntaxError(f"{what} at offset {self.i} of {self.s!r}")

    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.s[j] if j < len(self.s) else ""

    def parse(self) -> tuple:
        node = self.disjunction()
        if self.i < len(self.s):
            raise self.error("unmatched ')'")
        if self.refs and max(self.refs) > self.groups:
            raise EcmaSyntaxError(f"back-reference \\{max(self.refs)} to a missing group in {self.s!r}")
        for name in self.named_refs:
            if name not in self.names:
                raise EcmaSyntaxError(f"\\k<{name}> names no group in {self.s!r}")
        return node

    def disjunction(self) -> tuple:
        alts = [self.alternative()]
        while self.peek() == "|":
            self.i += 1
            alts.append(self.alternative())
        return alts[0] if len(alts) == 1 else ("alt", alts)

    def alternative(self) -> tuple:
        items = []
        while self.i < len(self.s) and self.peek() not in "|)":
            items.append(self.term())
        return ("seq", items)

    def term(self) -> tuple:
        s, i = self.s, self.i
        if s[i] in "^$":
            self.i += 1
            return ("bol",) if s[i] == "^" else ("eol",)
        if s.startswith(("\\b", "\\B"), i):
            self.i += 2
            return ("unsupported", "word-boundary assertions (\\b, \\B)")
        for opener in ("(?=", "(?!", "(?<=", "(?<!"):
            if s.startswith(opener, i):
                self.i += len(opener)
                self.disjunction()
                self.expect(")")
                return ("unsupported", "lookaround assertions")
        return self.quantifier(self.atom())

    def expect(self, ch: str) -> None:
        if self.peek() != ch:
            raise self.error(f"expected {ch!r}")
        self.i += 1

    def quantifier(self, atom: tuple) -> tuple:
        c = self.peek()
        if c in ("*", "+", "?"):
            self.i += 1
            lo, hi = {"*": (0, None), "+": (1, None), "?": (0, 1)}[c]
        elif c == "{":
            m = _QUANTIFIER.match(self.s, self.i)
            if m is None:
                if self.lenient:
                    return atom  # Annex B: a brace that starts no quantifier is a literal
                raise self.error("'{' starts no quantifier")
            lo = int(m.group(1))
            hi = lo if m.group(2) is None else (int(m.group(3)) if m.group(3) else None)
            if hi is not None and hi < lo:
                raise self.error("quantifier range out of order")
            self.i = m.end()
        else:
            return atom
        if self.peek() == "?":
            self.i += 1  # lazy: same language
        after = self.peek()
        if after in ("*", "+", "?") or (after == "{" and _QUANTIFIER.match(self.s, self.i)):
            raise self.error("nothing to repeat: a quantifier follows a quantifier")  # (a{2}{3}: not a{2} "{3}")
        return ("rep", atom, lo, hi)

    def atom(self) -> tuple:
        s, i, c = self.s, self.i, self.s[self.i]
        if c == ".":
            self.i += 1
            return ("set", DOT)
        if c == "(":
            if s.startswith("(?:", i):
                self.i += 3
            elif s.startswith("(?<", i):
                self.i += 3
                name = self.group_name()
                if name in self.names:
                    raise self.error(f"duplicate group name {name!r}")
                self.names.add(name)
                self.groups += 1
            elif s.startswith("(?", i):
                raise self.error("invalid group ('(?' must be followed by ':', '=', '!', '<=', '<!' or '<name>')")
            else:
                self.i += 1
                self.groups += 1
            node = self.disjunction()
            self.expect(")")
            return node
        if c == "[":
            return ("set", self.char_class())
        if c == "\\":
            return self.atom_escape()
        if c in "*+?{" and not (self.lenient and c == "{"):
            raise self.error(f"nothing to repeat before {c!r}")
        if c in ")]}" and not (self.lenient and c in "]}"):
            raise self.error(f"lone {c!r}")
        self.i += 1
        return ("set", CharSet([(ord(c), ord(c))]))

    def group_name(self) -> str:
        m = re.compile(r"[^\W\d][\w$]*|\$[\w$]*").match(self.s, self.i)
        name = m.group(0) if m else ""
        if not name or not (name[0] in "$_" or name[0].isidentifier()):
            raise self.error("invalid group name")
        self.i = m.end()  # type: ignore[union-attr]
        self.expect(">")
        return name

    def atom_escape(self) -> tuple:
        self.i += 1
        c = self.peek()
        if not c:
            raise self.error("'\\' at the end")
        if c in "123456789":
            m = re.compile(r"[0-9]+").match(self.s, self.i)
            self.refs.append(int(m.group(0)))  # type: ignore[union-attr]
            self.i = m.end()  # type: ignore[union-attr]
            return ("unsupported", "back-references (\\1, \\k<name>)")
        if c == "k":
            self.i += 1
            self.expect("<")
            m = re.compile(r"[^>]*").match(self.s, self.i)
            self.named_refs.append(m.group(0))  # type: ignore[union-attr]
            self.i = m.end()  # type: ignore[union-attr]
            self.expect(">")
            return ("unsupported", "back-references (\\1, \\k<name>)")
        value = self.class_or_char_escape(in_class=False)
        return ("set", value if isinstance(value, CharSet) else CharSet([(value, value)]))

    def class_or_char_escape(self, in_class: bool) -> CharSet | int:
        """After a backslash: a class (``\\d``, ``\\p{L}``) or one code point."""
        s, c = self.s, self.peek()
        if not c:
            raise self.error("'\\' at the end")
        self.i += 1
        if c in ESCAPE_CLASSES:
            return ESCAPE_CLASSES[c]
        if c in "pP":
            m = re.compile(r"\{([A-Za-z0-9_=]+)\}").match(s, self.i)
            if m is None:
                raise self.error("\\p must be followed by {property}")
            chars = property_class(m.group(1))
            if chars is None:
                raise EcmaUnsupported(f"Unicode property \\p{{{m.group(1)}}} (not in Python's unicodedata tables)")
            self.i = m.end()
            return chars if c == "p" else ANY - chars
        if c in _CONTROL:
            return _CONTROL[c]
        if c == "c":
            letter = self.peek()
            if not ("a" <= letter <= "z" or "A" <= letter <= "Z"):
                raise self.error("\\c must be followed by an ASCII letter")
            self.i += 1
            return ord(letter) % 32
        if c == "0":
            if self.peek() in tuple("0123456789"):
                raise self.error("\\0 followed by a digit")
            return 0
        if c == "x":
            m = re.compile(r"[0-9a-fA-F]{2}").match(s, self.i)
            if m is None:
                raise self.error("\\x needs two hex digits")
            self.i = m.end()
            return int(m.group(0), 16)
        if c == "u":
            return self.unicode_escape()
        if in_class and c == "b":
            return 0x08
        if in_class and c == "-":
            return 0x2D
        if c in SYNTAX_CHARACTERS or c == "/":
            return ord(c)
        if self.lenient and not c.isalnum():
            return ord(c)  # Annex B identity escape of punctuation (\- \@ ...)
        raise self.error(f"invalid escape \\{c}")

    def unicode_escape(self) -> int:
        s = self.s
        m = re.compile(r"\{([0-9a-fA-F]+)\}").match(s, self.i)
        if m is not None:
            value = int(m.group(1), 16)
            if value > 0x10FFFF:
                raise self.error("code point above U+10FFFF")
            self.i = m.end()
            return value
        m = re.compile(r"[0-9a-fA-F]{4}").match(s, self.i)
        if m is None:
            raise self.error("\\u needs four hex digits or {code point}")
        self.i = m.end()
        value = int(m.group(0), 16)
        low = re.compile(r"\\u(d[c-f][0-9a-f]{2})", re.IGNORECASE).match(s, self.i)
        if 0xD800 <= value <= 0xDBFF and low is not None:
            self.i = low.end()
            return 0x10000 + (value - 0xD800) * 0x400 + (int(low.group(1), 16) - 0xDC00)
        return value

    def char_class(self) -> CharSet:
        self.i += 1
        negated = self.peek() == "^"
        if negated:
            self.i += 1
        out: list[tuple[int, int]] = []
        while True:
            c = self.peek()
            if not c:
                raise self.error("unterminated character class")
            if c == "]":
                self.i += 1
                break
            low = self.class_atom()
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                self.i += 1
                high = self.class_atom()
                if isinstance(low, CharSet) or isinstance(high, CharSet):
                    raise self.error("a class escape cannot bound a range")
                if low > high:
                    raise self.error("character class range out of order")
                out.append((low, high))
            elif isinstance(low, CharSet):
                out.extend(low.intervals)
            else:
                out.append((low, low))
        chars = CharSet(out)
        return ANY - chars if negated else chars

    def class_atom(self) -> CharSet | int:
        c = self.peek()
        if c == "\\":
            self.i += 1
            if self.peek() in tuple("123456789") or self.peek() == "k":
                raise self.error("back-reference inside a character class")
            return self.class_or_char_escape(in_class=True)
        self.i += 1
        return ord(c)


@lru_cache(maxsize=512)
def parse(pattern: str, lenient: bool = False) -> tuple:
    """The AST of an ECMA-262 (unicode mode) pattern; EcmaSyntaxError when it is not one. Constructs that are
    valid but not translated appear as ``("unsupported", what)`` nodes."""
    return _Parser(pattern, lenient).parse()


def is_valid(pattern: str) -> bool:
    """Whether ``pattern`` is a valid ECMA-262 regular expression in unicode mode (what ``format: regex``
    asserts), as far as the property tables here know (see ecma/classes.py)."""
    try:
        parse(pattern)
    except EcmaSyntaxError:
        return False
    except EcmaUnsupported:
        return False  # an unknown \p{...}: the syntax checker (formats/regex_syntax.py) refuses it too
    return True


__all__ = ["EcmaSyntaxError", "EcmaUnsupported", "is_valid", "parse"]
