"""``format: regex``: the syntax of ECMA-262 regular expressions (unicode mode) as a transition function.

The syntax nests parentheses, so it is not regular; but a content automaton is Python, and its state can
carry a stack. The state is a small tuple read left to right: the lexical mode (after an atom, inside a
class, after a backslash, inside ``{n,m}``...), a few mode-specific values, the stack of open groups, the
number of capturing groups and the group names so far, and the back-references still owed (``\\3`` needs three
groups somewhere in the pattern, ``\\k<n>`` a group named ``n``, possibly written later).

No dead end: every offered character keeps a completion. Open classes and groups can always be closed, a
quantifier brace always reaches a valid ``}`` (digits can grow ``m`` past ``n``), an escape is offered only
when some ending of it is valid (a range's upper end must not fall below its lower end, so its hex digits
are narrowed), and a missing group can always be appended at the end (``()`` or ``(?<name>)``).

Narrower than ECMA-262 (never offered, although valid): ``\\uHHHH`` / ``\\u{...}`` escapes of surrogates
(so no ``\\uD83D\\uDE00`` pairs: use ``\\u{1F600}``), back-references above ``\\9`` to groups not yet
written (so a completion never needs more than nine new groups), ``\\0`` as the upper end of a class
range, group names outside ``[A-Za-z0-9_$]``, ``\\p{...}`` names beyond ecma_classes.PROPERTY_NAMES, and
ES2025 modifier groups ``(?i:...)``. Everything offered is checked by ecma.is_valid in the tests.

The content automaton around it (lengths, excluded values, free runs) is formats/regex_content.py; its
``completion_cost`` follows one fixed way to finish from every state (what ``maxLength`` checks against).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Hashable

from ...core.charset import ANY, EMPTY, CharSet
from ..ecma.classes import PROPERTY_NAMES, SURROGATES

# modes
TERM, PAREN, ATOM, ATOM_NUL, BACKREF, QUANT = range(6)  # between terms ("sequence modes")
BRACE, GQ, GLT, GNAME = range(6, 10)
CLS_START, CLS, CLS_NUL, CLS_DASH = range(10, 14)
ESC, ESC_C, ESC_X, ESC_U, ESC_U4, ESC_UB, ESC_K, KNAME, ESC_P, PNAME = range(14, 24)
SEQUENCE = (TERM, PAREN, ATOM, ATOM_NUL, BACKREF, QUANT)
_QUANTIFIABLE = (ATOM, ATOM_NUL, BACKREF)

_SYNTAX = "^$\\.*+?()[]{}|"
CHARS = ANY - SURROGATES
PLAIN = CHARS - CharSet.of(_SYNTAX)
DIGITS = CharSet.ranges(("0", "9"))
_HEXS = "0123456789abcdefABCDEF"
_LETTERS = CharSet.ranges(("A", "Z"), ("a", "z"))
NAME_START = _LETTERS | CharSet.of("$_")
NAME_PART = NAME_START | DIGITS
_CLASS_ESCAPES = "dDsSwW"
_CONTROL = {"f": 0x0C, "n": 0x0A, "r": 0x0D, "t": 0x09, "v": 0x0B}
_IDENTITY = {c: ord(c) for c in _SYNTAX + "/"}
_MAX = 0x10FFFF


def _ok(lo: int, hi: int, low: int) -> bool:
    """Whether ``[lo, hi]`` holds a code point ``>= low`` that is not a surrogate."""
    lo, hi = max(lo, low), min(hi, _MAX)
    return lo <= hi and not (0xD800 <= lo and hi <= 0xDFFF)


def _can_reach(prefix: int, digits: int | None, low: int) -> bool:
    """Whether hex digits after ``prefix`` can spell a valid code point ``>= low``: exactly ``digits`` more,
    or (None: ``\\u{...}``) any number more."""
    if digits is not None:
        width = 16**digits
        return _ok(prefix * width, prefix * width + width - 1, low)
    width = 1
    while prefix * width <= _MAX:
        if _ok(prefix * width, prefix * width + width - 1, low):
            return True
        width *= 16
    return False


class _Syntax:
    """The transition function over syntax states ``(mode, aux, stack, groups, names, need, named)``."""

    @staticmethod
    def start() -> tuple:
        return (TERM, None, (), 0, frozenset(), 0, frozenset())

    @staticmethod
    def accepting(s: tuple) -> bool:
        mode, _, stack, groups, names, need, named = s
        return mode in SEQUENCE and mode != PAREN and not stack and need <= groups and named <= names

    def step(self, s: tuple, c: str) -> tuple | None:  # noqa: C901 - one branch per mode keeps it readable
        mode, aux, stack, groups, names, need, named = s
        if mode == PAREN:
            if c == "?":
                return (GQ, None, stack, groups, names, need, named)
            return self.step((TERM, None, (*stack, True), groups + 1, names, need, named), c)
        if mode in SEQUENCE:
            if mode == QUANT and c == "?":
                return (TERM, None, stack, groups, names, need, named)
            if c in "*+?":
                return (QUANT, None, stack, groups, names, need, named) if mode in _QUANTIFIABLE else None
            if c == "{":
                return (BRACE, (None, False, None), stack, groups, names, need, named) if mode in _QUANTIFIABLE \
                    else None  # fmt: skip
            if c in "^$|":
                return (TERM, None, stack, groups, names, need, named)
            if c == "(":
                return (PAREN, None, stack, groups, names, need, named)
            if c == ")":
                if not stack:
                    return None
                return (ATOM if stack[-1] else TERM, None, stack[:-1], groups, names, need, named)
            if c == "[":
                return (CLS_START, None, stack, groups, names, need, named)
            if c == "\\":
                return (ESC, ("o",), stack, groups, names, need, named)
            if c in "]}" or c not in CHARS:
                return None
            if "0" <= c <= "9":
                if mode == ATOM_NUL:
                    return None
                if mode == BACKREF:
                    value = aux * 10 + int(c)
                    if value > max(9, groups):
                        return None  # a reference past \\9 to a group not written yet: not offered
                    return (BACKREF, value, stack, groups, names, max(need, value), named)
            return (ATOM, None, stack, groups, names, need, named)
        if mode == BRACE:
            n, comma, m = aux
            if "0" <= c <= "9":
                if not comma:
                    return (BRACE, ((n or 0) * 10 + int(c), False, None), stack, groups, names, need, named)
                return (BRACE, (n, True, (m or 0) * 10 + int(c)), stack, groups, names, need, named)
            if c == "," and n is not None and not comma:
                return (BRACE, (n, True, None), stack, groups, names, need, named)
            if c == "}" and n is not None and (m is None or m >= n):
                return (QUANT, None, stack, groups, names, need, named)
            return None
        if mode == GQ:
            if c == ":":
                return (TERM, None, (*stack, True), groups, names, need, named)
            if c in "=!":
                return (TERM, None, (*stack, False), groups, names, need, named)
            return (GLT, None, stack, groups, names, need, named) if c == "<" else None
        if mode == GLT:
            if c in "=!":
                return (TERM, None, (*stack, False), groups, names, need, named)
            return (GNAME, c, stack, groups, names, need, named) if c in NAME_START else None
        if mode == GNAME:
            if c == ">":
                if aux is None or aux in names:
                    return None  # None: a free run's stand-in, which does not know the name
                return (TERM, None, (*stack, True), groups + 1, names | {aux}, need, named)
            if c not in NAME_PART:
                return None
            return (GNAME, None if aux is None else aux + c, stack, groups, names, need, named)
        if mode in (CLS_START, CLS, CLS_NUL):
            if mode == CLS_START and c == "^":
                return (CLS, None, stack, groups, names, need, named)
            if mode == CLS_NUL and "0" <= c <= "9":
                return None
            prev = 0 if mode == CLS_NUL else aux
            if c == "]":
                return (ATOM, None, stack, groups, names, need, named)
            if c == "\\":
                return (ESC, ("c",), stack, groups, names, need, named)
            if c == "-" and prev is not None:
                return (CLS_DASH, prev, stack, groups, names, need, named)
            return (CLS, ord(c), stack, groups, names, need, named) if c in CHARS else None
        if mode == CLS_DASH:
            if c == "]":
                return (ATOM, None, stack, groups, names, need, named)
            if aux == "e":
                return None
            if c == "\\":
                return (ESC, ("h", aux), stack, groups, names, need, named)
            return (CLS, None, stack, groups, names, need, named) if c in CHARS and ord(c) >= aux else None
        return self._escape(s, c)

    def _escape(self, s: tuple, c: str) -> tuple | None:  # noqa: C901
        mode, aux, stack, groups, names, need, named = s
        rest = (stack, groups, names, need, named)
        if mode == ESC:
            ctx = aux
            where, low = ctx[0], (ctx[1] if ctx[0] == "h" else 0)
            if where == "o":
                if c in "bB":
                    return (TERM, None, *rest)
                if c == "0":
                    return (ATOM_NUL, None, *rest)
                if "1" <= c <= "9":
                    return (BACKREF, int(c), stack, groups, names, max(need, int(c)), named)
                if c == "k":
                    return (ESC_K, None, *rest)
            if c in _CLASS_ESCAPES or c in "pP":
                if where == "h":
                    return None
                if c in "pP":
                    return (ESC_P, ctx, *rest)
                return (ATOM if where == "o" else CLS, None if where == "o" else "e", *rest)
            if where != "o" and c == "0":
                return (CLS_NUL, None, *rest) if where == "c" else None
            if c == "c":
                return (ESC_C, ctx, *rest) if low <= 26 else None
            if c == "x":
                return (ESC_X, (ctx, 0, 0), *rest) if low <= 0xFF else None
            if c == "u":
                return (ESC_U, ctx, *rest)
            value = _CONTROL.get(c, _IDENTITY.get(c))
            if value is None and where != "o":
                value = {"b": 0x08, "-": 0x2D}.get(c)
            if value is None or value < low:
                return None
            return self._char(ctx, value, rest)
        if mode == ESC_C:
            if c not in _LETTERS:
                return None
            value = ord(c) % 32
            return self._char(aux, value, rest) if value >= _low(aux) else None
        if mode in (ESC_X, ESC_U4):
            ctx, k, value = aux
            total = 2 if mode == ESC_X else 4
            if c not in _HEXS:
                return None
            value = value * 16 + int(c, 16)
            if not _can_reach(value, total - k - 1, _low(ctx)):
                return None
            if k + 1 == total:
                return self._char(ctx, value, rest)
            return (mode, (ctx, k + 1, value), *rest)
        if mode == ESC_U:
            if c == "{":
                return (ESC_UB, (aux, None), *rest)
            if c not in _HEXS or not _can_reach(int(c, 16), 3, _low(aux)):
                return None
            return (ESC_U4, (aux, 1, int(c, 16)), *rest)
        if mode == ESC_UB:
            ctx, value = aux
            if c == "}":
                if value is None or not _ok(value, value, _low(ctx)):
                    return None
                return self._char(ctx, value, rest)
            if c not in _HEXS:
                return None
            value = (value or 0) * 16 + int(c, 16)
            return (ESC_UB, (ctx, value), *rest) if _can_reach(value, None, _low(ctx)) else None
        if mode == ESC_K:
            return (KNAME, "", *rest) if c == "<" else None
        if mode == KNAME:
            if c == ">" and aux:
                return (ATOM, None, stack, groups, names, need, named | {aux})
            if c not in (NAME_START if aux == "" else NAME_PART):
                return None
            return (KNAME, None if aux is None else aux + c, *rest)
        if mode == ESC_P:
            return (PNAME, (aux, ""), *rest) if c == "{" else None
        if mode == PNAME:
            ctx, text = aux
            if c == "}":
                if text not in _PROPERTY_SET:
                    return None
                return (ATOM, None, *rest) if ctx[0] == "o" else (CLS, "e", *rest)
            return (PNAME, (ctx, text + c), *rest) if _is_property_prefix(text + c) else None
        return None

    @staticmethod
    def _char(ctx: tuple, value: int, rest: tuple) -> tuple:
        """The state after an escape that spelled one code point ``value``."""
        if ctx[0] == "o":
            return (ATOM, None, *rest)
        if ctx[0] == "c":
            return (CLS, value, *rest)
        return (CLS, None, *rest)


def _low(ctx: tuple) -> int:
    return ctx[1] if ctx[0] == "h" else 0


_PROPERTY_SET = frozenset(PROPERTY_NAMES)


def _is_property_prefix(text: str) -> bool:
    i = bisect_left(PROPERTY_NAMES, text)
    return i < len(PROPERTY_NAMES) and PROPERTY_NAMES[i].startswith(text)


class AllowedChars:
    """The characters ``_Syntax.step`` accepts from a state, by mode (exactly those: tests compare them)."""

    def __init__(self, syntax: _Syntax) -> None:
        self.syntax = syntax
        self.memo: dict[Hashable, CharSet] = {}

    def __call__(self, s: tuple) -> CharSet:
        mode, aux, stack = s[0], s[1], s[2]
        if mode in SEQUENCE or mode in (CLS_START, CLS, CLS_NUL, BRACE, GQ, GLT, ESC_K):
            key: Hashable = (mode, bool(stack), aux if mode == BRACE else aux is None)
            if mode == BRACE:
                n, comma, m = aux
                key = (mode, n is None, comma, m is None or m >= (n or 0))
            hit = self.memo.get(key)
            if hit is None:
                hit = self.memo[key] = self._compute(s)
            return hit
        return self._compute(s)

    def _compute(self, s: tuple) -> CharSet:
        mode, aux = s[0], s[1]
        if mode in SEQUENCE or mode in (CLS_START, CLS, CLS_NUL):
            # the big sets: decide the ASCII characters one by one, everything above as one block
            base = PLAIN if mode in SEQUENCE else CHARS - CharSet.of("\\]-")
            probe = [chr(cp) for cp in range(128)]
            ok = [c for c in probe if self.syntax.step(s, c) is not None]
            return (base - CharSet([(0, 127)])) | CharSet.of(ok)
        if mode == CLS_DASH:
            if aux == "e":
                return CharSet.of("]")
            high = CharSet([(aux, _MAX)]) & (CHARS - CharSet.of("\\]")) if aux <= _MAX else EMPTY
            return high | CharSet.of("]\\")
        if mode in (GNAME, KNAME):
            out = [c for c in ">" if self.syntax.step(s, c) is not None]
            return CharSet.of(out) | (NAME_START if aux == "" else NAME_PART)
        candidates = {BRACE: "0123456789,}", GQ: ":=!<", GLT: "=!", ESC_K: "<", ESC_P: "{",
                      ESC_C: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", ESC_X: _HEXS, ESC_U4: _HEXS,
                      ESC_U: _HEXS + "{", ESC_UB: _HEXS + "}"}  # fmt: skip
        if mode == GLT:
            return CharSet.of("=!") | NAME_START
        if mode == ESC:
            probe = [chr(cp) for cp in range(128)]
        elif mode == PNAME:
            probe = sorted({n[len(aux[1])] for n in PROPERTY_NAMES if n.startswith(aux[1]) and len(n) > len(aux[1])}
                           | {"}"})  # fmt: skip
        else:
            probe = list(candidates[mode])
        return CharSet.of(c for c in probe if self.syntax.step(s, c) is not None)


SYNTAX = _Syntax()
"""The one shared transition function."""
