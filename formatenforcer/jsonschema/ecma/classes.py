"""The character classes of ECMA-262 regular expressions (unicode mode), as CharSets.

JSON Schema patterns are ECMA-262 regexes, whose classes differ from Python's: ``\\d`` and ``\\w`` are ASCII
only, ``\\s`` is the ECMAScript WhiteSpace and LineTerminator set (it holds U+FEFF and U+2028/U+2029, Python's
does not), ``.`` excludes the four line terminators. ``\\p{...}`` supports the General_Category values (long
names, short names and ECMAScript's aliases) and the binary properties ``Any``, ``ASCII``, ``ASCII_Hex_Digit``
and ``Assigned``, computed from Python's ``unicodedata`` (so from the Unicode version Python ships, which can
lag a JavaScript engine's by a version or two). Python has no Script table, so ``Script=``/``scx=`` and other
binary properties are not known here.

Cost: the first ``\\p{...}`` scans every code point once (about half a second); the sets are then memoised.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

from ...core.charset import ANY, CharSet

DIGIT = CharSet.ranges(("0", "9"))
WORD = CharSet.ranges(("0", "9"), ("A", "Z"), ("a", "z"), ("_", "_"))
LINE_TERMINATORS = CharSet([(0x0A, 0x0A), (0x0D, 0x0D), (0x2028, 0x2029)])
SPACE = CharSet([(0x09, 0x0D), (0x20, 0x20), (0xA0, 0xA0), (0x1680, 0x1680), (0x2000, 0x200A), (0x2028, 0x2029),
                 (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000), (0xFEFF, 0xFEFF)])  # fmt: skip
"""ECMA-262 WhiteSpace (TAB VT FF SP NBSP ZWNBSP and category Zs) plus LineTerminator (LF CR LS PS)."""
DOT = ANY - LINE_TERMINATORS
SURROGATES = CharSet([(0xD800, 0xDFFF)])

ESCAPE_CLASSES = {"d": DIGIT, "D": ANY - DIGIT, "s": SPACE, "S": ANY - SPACE, "w": WORD, "W": ANY - WORD}

_GROUPS = {
    "L": ("Lu", "Ll", "Lt", "Lm", "Lo"), "LC": ("Lu", "Ll", "Lt"), "M": ("Mn", "Mc", "Me"),
    "N": ("Nd", "Nl", "No"), "P": ("Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po"), "S": ("Sm", "Sc", "Sk", "So"),
    "Z": ("Zs", "Zl", "Zp"), "C": ("Cc", "Cf", "Cs", "Co", "Cn"),
}  # fmt: skip
_LONG_NAMES = {
    "Letter": "L", "Cased_Letter": "LC", "Uppercase_Letter": "Lu", "Lowercase_Letter": "Ll",
    "Titlecase_Letter": "Lt", "Modifier_Letter": "Lm", "Other_Letter": "Lo", "Mark": "M", "Combining_Mark": "M",
    "Nonspacing_Mark": "Mn", "Spacing_Mark": "Mc", "Enclosing_Mark": "Me", "Number": "N", "Decimal_Number": "Nd",
    "digit": "Nd", "Letter_Number": "Nl", "Other_Number": "No", "Punctuation": "P", "punct": "P",
    "Connector_Punctuation": "Pc", "Dash_Punctuation": "Pd", "Open_Punctuation": "Ps",
    "Close_Punctuation": "Pe", "Initial_Punctuation": "Pi", "Final_Punctuation": "Pf",
    "Other_Punctuation": "Po", "Symbol": "S", "Math_Symbol": "Sm", "Currency_Symbol": "Sc",
    "Modifier_Symbol": "Sk", "Other_Symbol": "So", "Separator": "Z", "Space_Separator": "Zs",
    "Line_Separator": "Zl", "Paragraph_Separator": "Zp", "Other": "C", "Control": "Cc", "cntrl": "Cc",
    "Format": "Cf", "Surrogate": "Cs", "Private_Use": "Co", "Unassigned": "Cn",
}  # fmt: skip
_SHORT = {c for group in _GROUPS.values() for c in group} | set(_GROUPS)
GENERAL_CATEGORY_VALUES = tuple(sorted(_SHORT | set(_LONG_NAMES)))
"""Every General_Category value ``\\p{...}`` accepts here, short and long spellings."""
BINARY_PROPERTIES = ("ASCII", "ASCII_Hex_Digit", "Any", "Assigned")
PROPERTY_NAMES = tuple(
    sorted(
        set(GENERAL_CATEGORY_VALUES)
        | set(BINARY_PROPERTIES)
        | {f"{p}={v}" for p in ("General_Category", "gc") for v in GENERAL_CATEGORY_VALUES}
    )
)
"""Every text that may stand between the braces of ``\\p{...}`` here (the syntax checker offers exactly these)."""


@lru_cache(maxsize=1)
def _categories() -> dict[str, CharSet]:
    runs: dict[str, list[tuple[int, int]]] = {}
    start, current = 0, unicodedata.category("\0")
    for cp in range(1, 0x110000):
        cat = unicodedata.category(chr(cp))
        if cat != current:
            runs.setdefault(current, []).append((start, cp - 1))
            start, current = cp, cat
    runs.setdefault(current, []).append((start, 0x10FFFF))
    return {cat: CharSet(intervals) for cat, intervals in runs.items()}


@lru_cache(maxsize=128)
def property_class(text: str) -> CharSet | None:
    """The characters of ``\\p{text}``, or None when the property is not one known here."""
    name, _, value = text.partition("=")
    if value:
        if name not in ("General_Category", "gc"):
            return None
        text = value
    elif text in BINARY_PROPERTIES:
        if text == "Any":
            return ANY
        if text == "ASCII":
            return CharSet([(0, 0x7F)])
        if text == "ASCII_Hex_Digit":
            return CharSet.ranges(("0", "9"), ("A", "F"), ("a", "f"))
        return ANY - _categories().get("Cn", CharSet())
    short = _LONG_NAMES.get(text, text)
    if short not in _SHORT:
        return None
    table = _categories()
    out = CharSet()
    for cat in _GROUPS.get(short, (short,)):
        out = out | table.get(cat, CharSet())
    return out
