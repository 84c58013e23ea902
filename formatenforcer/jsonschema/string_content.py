"""Which content automaton enforces a string node: its values, lengths, patterns and formats combined into
one automaton (``Content``), or Unsupported naming the keyword when the combination cannot be enforced."""

from __future__ import annotations

from ..parsers.dfa_ops import combine
from ..parsers.regex import CompiledRegex, RegexError, compile_boolean, compile_regex
from .ecma.parse import EcmaSyntaxError, EcmaUnsupported
from .ecma.translate import Translation, literal_pattern, translate
from .formats.content import Content, ExcludeContent, LengthContent, TrieContent
from .formats.idn.a_labels import HostnameContent
from .formats.idn.email import IdnEmailContent
from .formats.idn.hostname import IdnHostnameContent
from .formats.patterns import FORMAT_MAX_LENGTH, IDN_FORMATS, format_automaton
from .formats.regex_content import RegexSyntaxContent
from .regex_tables import TabledRegexContent
from .schema.ir import String, Unsupported


def ecma_full(patterns: tuple[str, ...], keyword: str) -> Translation:
    """Full-match automaton texts for JSON Schema patterns (ECMA-262, searching; see ecma/parse.py), over shared
    stand-ins; Unsupported (naming ``keyword``) for what they cannot express."""
    try:
        return translate(patterns)
    except (EcmaSyntaxError, EcmaUnsupported) as error:
        raise Unsupported(keyword, str(error)) from None


def string_content(node: String) -> Content | None:
    """The content automaton enforcing a string node (None: no string at all); raises Unsupported for
    combinations that could dead-end or whose automaton is too large."""
    if node.values is not None:
        return TrieContent(node.values)
    if not (node.patterns or node.formats or node.not_patterns or node.not_formats):  # lengths, excluded values
        if not node.excluded:
            return LengthContent(node.min_length, node.max_length)
        if node.max_length is None:
            return ExcludeContent(node.excluded, node.min_length)
    if "regex" in node.formats or "regex" in node.not_formats:
        return regex_syntax_content(node)
    if any(f in IDN_FORMATS for f in node.formats + node.not_formats):
        return idn_content(node)
    if node.excluded and not (node.not_patterns or node.not_formats or node.max_length is not None
                              or node.patterns or node.formats):  # fmt: skip
        return ExcludeContent(node.excluded, node.min_length)
    if not (node.patterns or node.formats or node.not_patterns or node.not_formats or node.excluded):
        return LengthContent(node.min_length, node.max_length)
    keyword = "format" if node.formats and not node.patterns else "pattern"
    wanted = tuple(dict.fromkeys(node.patterns))
    unwanted = tuple(dict.fromkeys(node.not_patterns)) + tuple(literal_pattern(v) for v in sorted(node.excluded))
    translation = ecma_full(wanted + unwanted, keyword)
    if any(text is None for text in translation.texts[: len(wanted)]):
        return None  # a pattern that matches nothing (an empty class)
    formats = [format_automaton(f) for f in node.formats]
    not_formats = [format_automaton(f) for f in node.not_formats]
    if translation.stand_ins and (formats or not_formats):
        raise Unsupported(keyword, "a pattern with a large Unicode class together with a format")
    full = list(dict.fromkeys([t for t in translation.texts[: len(wanted)] if t is not None] + formats))
    never = [t for t in translation.texts[len(wanted) :] if t is not None] + not_formats
    stand_ins = translation.stand_ins
    if never or len(full) > 1 or not full:
        # several patterns, a pattern and a format, or what a `not` excludes: one product automaton
        try:
            clauses = ((tuple(full), tuple(never)),)
            # (stand-ins never meet a format: refused above)
            dfa = compile_boolean(clauses, stand_ins) if stand_ins else combine(clauses)  # type: ignore[arg-type]
        except RegexError as error:
            if "no string" in str(error):
                return None
            raise Unsupported(keyword if full else "not", str(error)) from None
        content = TabledRegexContent(dfa, node.min_length, node.max_length)
        return content if content.satisfiable() else None
    try:
        dfa = full[0] if isinstance(full[0], CompiledRegex) else compile_regex(full[0], stand_ins)
    except RegexError as error:
        raise Unsupported(keyword, str(error)) from None
    caps = [FORMAT_MAX_LENGTH[f] for f in node.formats if f in FORMAT_MAX_LENGTH]
    high = min(caps + ([] if node.max_length is None else [node.max_length]), default=None)
    content = TabledRegexContent(dfa, node.min_length, high)
    if not content.satisfiable():
        return None  # no string matches the pattern within the length limits (an exact search)
    if node.formats == ("hostname",) and not node.patterns:
        return HostnameContent(content)  # A-labels: punycode and IDNA2008 (formats/idn/a_labels.py)
    return content


def idn_content(node: String) -> Content:
    """``idn-hostname``/``idn-email``: their own automata (formats/idn/hostname.py), alone on the string; a length
    limit, pattern, other format, excluded value or ``not`` with them is refused (lengths count code points
    there but octets of the A-label form here, and the automata are not product-combinable DFAs)."""
    if node.not_formats and any(f in IDN_FORMATS for f in node.not_formats):
        raise Unsupported("format", "'not' of an idn format")
    names = set(node.formats)
    if (len(names) > 1 or node.patterns or node.not_patterns or node.not_formats or node.excluded
            or node.min_length > 1 or node.max_length is not None):  # fmt: skip
        raise Unsupported(
            "format",
            f"format {sorted(names)[0]!r} together with a pattern, another format, a length limit or excluded values",
        )
    return IdnEmailContent() if "idn-email" in names else IdnHostnameContent()


def regex_syntax_content(node: String) -> Content | None:
    """``format: regex``: the ECMA-262 syntax automaton (formats/regex_content.py) with lengths or excluded
    values; a pattern or another format on the same string is refused."""
    if "regex" in node.not_formats:
        raise Unsupported("format", "'not' of format 'regex' (strings that are not regular expressions)")
    if node.patterns or node.not_patterns or len(set(node.formats)) > 1 or node.not_formats:
        raise Unsupported("format", "format 'regex' together with a pattern or another format")
    if node.max_length is not None and node.excluded:
        raise Unsupported("format", "format 'regex' with maxLength and excluded values (could end on one)")
    if node.max_length is not None and node.max_length < node.min_length:
        return None
    return RegexSyntaxContent(node.min_length, node.excluded, node.max_length)
