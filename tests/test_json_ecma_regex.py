"""JSON Schema regexes are ECMA-262 (unicode mode): ``pattern``/``patternProperties`` semantics (ecma/parse.py) and
``format: regex`` (the syntax automaton of formats/regex_syntax.py), through JsonSchemaParser, character by character
in both JSON spellings and token by token with the Llama 3 tokenizer; plus seeded random walks showing that
``format: regex`` never dead-ends and only writes what the independent parser of jsonschema/ecma/parse.py accepts."""

from __future__ import annotations

import json
import random
import re
import warnings

import pytest

from formatenforcer import JsonSchemaParser, SchemaError, TokenEnforcer, UnsupportedSchemaError
from formatenforcer.jsonschema.ecma import parse as ecma
from formatenforcer.jsonschema.ecma import translate as et
from formatenforcer.jsonschema.ecma.classes import PROPERTY_NAMES
from formatenforcer.jsonschema.formats import regex_syntax as es
from formatenforcer.jsonschema.formats.regex_content import RegexSyntaxContent, completion, completion_cost
from formatenforcer.parsers.regex import CompiledRegex, compile_regex

from .json_checks import accepts_tokens, char_walk

# pattern -> (strings it accepts, strings it refuses), ECMA-262 semantics where Python's differ
PATTERNS = {
    r"^\d+$": (["0123456789"], ["\u0663", "12\n", "1a"]),  # \d is ASCII only
    r"^\w+$": (["a_Z9"], ["é", "ß", "a-b"]),  # \w is ASCII only
    r"^\s+$": ([" \t\n\r\v\f", "\u00a0\ufeff\u2028\u2029\u3000\u1680"], ["a", "\u200b", "\u0085"]),
    r"^\S$": (["a", "\u0085"], ["\ufeff", "\u2029"]),
    r"^abc$": (["abc"], ["abc\n", "xabc"]),  # $ does not match before a final newline
    r"^\cC\cj$": (["\x03\n"], ["cC"]),
    r"^.$": (["a", "\U0001f600", "\x85"], ["\n", "\r", "\u2028", "\u2029", ""]),  # code points, not units
    r"a+": (["xxaayy", "a"], ["", "xyz"]),  # unanchored: a search
    r"^a|b$": (["ax", "xb", "a", "b"], ["xa", "bx", ""]),  # anchors bind per alternative
    r"^(?:a|b)$": (["a", "b"], ["ab", "xb"]),
    r"^\p{Letter}+$": (["Hello", "\u03c0", "中文"], ["123", "a1", ""]),
    r"^\P{L}$": (["1", " "], ["a", "\u03c0"]),
    r"^\p{gc=Lu}\p{Ll}*$": (["Ab", "\u0394\u03b1"], ["ab", "A1"]),
    r"^\p{Nd}{2}$": (["1\u0663"], ["1a"]),
    r"^[\u4e00-\u9fff]{2}$": (["中文"], ["中a", "中"]),  # a large class: spelled with stand-ins
    r"^\u{1F600}\uD83D\uDE01$": (["\U0001f600\U0001f601"], ["\U0001f600"]),
    r"^[^\d\s]+$": (["ab-", "\u0663"], ["a1", "a b"]),
    r"^a\-b\@$": (["a-b@"], ["ab@"]),  # escaped punctuation reads as itself (Annex B), for pattern only
    r"^x{2}}$": (["xx}"], ["xxx"]),  # a lone } is a literal (Annex B)
    r"^[]$|^[^]$": (["a", "\n"], ["", "ab"]),  # [] matches nothing, [^] anything
    r"(?:)": (["", "a"], []),
}


def _json_spellings(text: str) -> list[str]:
    return [json.dumps(text, ensure_ascii=False), json.dumps(text)]


@pytest.mark.parametrize("pattern", list(PATTERNS))
def test_pattern_has_ecma_semantics(pattern):
    parser = JsonSchemaParser({"type": "string", "pattern": pattern})
    good, bad = PATTERNS[pattern]
    for text in good:
        assert et.search(pattern, text), (pattern, text)
        for spelled in _json_spellings(text):
            assert parser.accepts(spelled), (pattern, spelled)
    for text in bad:
        assert not et.search(pattern, text), (pattern, text)
        for spelled in _json_spellings(text):
            assert not parser.accepts(spelled), (pattern, spelled)


def test_pattern_tokens_with_llama3(llama3_vocabulary, llama3_tokenizer):
    for pattern in (r"^\p{Letter}+$", r"^\s+$", r"^[\u4e00-\u9fff]{2}$", r"^a|b$"):
        enforcer = TokenEnforcer(llama3_vocabulary, JsonSchemaParser({"type": "string", "pattern": pattern}))
        for text in PATTERNS[pattern][0]:
            ok, why = accepts_tokens(enforcer, llama3_tokenizer, json.dumps(text, ensure_ascii=False))
            assert ok, (pattern, text, why)


def test_pattern_properties_and_enum_filtering_use_ecma_semantics():
    keyed = JsonSchemaParser({"type": "object", "patternProperties": {r"^\p{Letter}+$": {"type": "number"}},
                              "additionalProperties": False})  # fmt: skip
    assert keyed.accepts('{"\u03c0": 1}') and not keyed.accepts('{"\u03c0": "x"}')
    assert not keyed.accepts('{"123": 1}')
    # enum values are filtered with the same semantics: "\u0663" is no \d in ECMA-262 (it is in Python)
    listed = JsonSchemaParser({"enum": ["7", "\u0663", "abc\n"], "pattern": r"^\d$|^abc$"})
    assert listed.accepts('"7"') and not listed.accepts('"\u0663"') and not listed.accepts('"abc\\n"')


@pytest.mark.parametrize("pattern, what", [
    ("(?=a)b", "lookahead"), ("(?<=a)b", "lookbehind"), (r"(a)\1", "back-reference"), (r"\bword", "word boundary"),
    ("(^a|b)c", "anchor inside a group"), ("a^b", "anchor in the middle"), (r"\p{Script=Greek}", "Script"),
])  # fmt: skip
def test_patterns_beyond_automata_are_refused_with_their_pointer(pattern, what):
    schema = {"properties": {"p": {"type": "string", "pattern": pattern}}}
    with pytest.raises(UnsupportedSchemaError) as raised:
        JsonSchemaParser(schema)
    assert raised.value.problems == [("#/properties/p/pattern", "pattern")], what
    assert et.check_pattern(pattern) is not None


@pytest.mark.parametrize("pattern", ["(?P<n>x)", r"\a", "[z-a]", "a{2,1}", "(a", "x**", r"[\d-z]", r"\u{110000}"])
def test_invalid_ecma_patterns_are_schema_errors(pattern):
    with pytest.raises(SchemaError) as raised:
        JsonSchemaParser({"type": "string", "pattern": pattern})
    assert not isinstance(raised.value, UnsupportedSchemaError)
    assert raised.value.pointer == "#/pattern"


def test_automaton_and_python_regex_agree_on_random_strings():
    """The DFA (interegular text, stand-ins when needed) and Python's ``re`` (enum filtering) come from one
    parse; they must agree on every string."""
    rng = random.Random(7)
    pool = "aZ09_ -.\n\t\ufeff\u00a0\u2028\u03c0\u4e2d\u0663é\U0001f600"
    for pattern in PATTERNS:
        translation = et.translate((pattern,))
        (text,) = translation.texts
        dfa = compile_regex(text, translation.stand_ins) if text is not None else None
        for _ in range(400):
            sample = "".join(rng.choice(pool) for _ in range(rng.randint(0, 4)))
            state: int | None = 0
            for ch in sample if dfa is not None else ():
                state = dfa.step(state, ch)
                if state is None:
                    break
            by_dfa = dfa is not None and state is not None and state in dfa.finals
            assert by_dfa == et.search(pattern, sample), (pattern, sample)


def test_stand_ins_are_part_of_the_automaton_identity_and_survive_the_disk_format():
    """Two classes spelled by the same stand-in text must not share an automaton; the on-disk parts of a
    stand-in automaton rebuild it exactly."""
    wide, narrow = et.translate((r"^[\u4e00-\u9fff]$",)), et.translate((r"^[\u4e00-\u9fa5]$",))
    assert wide.texts == narrow.texts and wide.stand_ins != narrow.stand_ins
    a, b = compile_regex(wide.texts[0], wide.stand_ins), compile_regex(narrow.texts[0], narrow.stand_ins)
    assert a is not b and a.ident != b.ident
    assert a.step(0, "\u9fb0") is not None and b.step(0, "\u9fb0") is None
    rebuilt = CompiledRegex(wide.texts[0], parts=a.parts(), stand_ins=wide.stand_ins)
    for ch in "\u4e00\u9fff\u9fb0a\u3000":
        assert rebuilt.step(0, ch) == a.step(0, ch)


# --- format: regex ---------------------------------------------------------------------------------------

REGEX_VALID = ["([abc])+\\s+$", "(?<name>x)", "(?<n>a)\\k<n>", "(?<=a+)b", "[]", "[^]", "\\cA", "^[a-z0-9_-]{3,16}$",
               "\\d{3}-\\d{4}", "^\\p{Lu}\\p{Ll}+$", "[\\u{1F600}-\\u{1F64F}]", "x*?", "a|b|", "(?:)", "[\\b]",
               "\\/", "[\\-]", "\\1(a)", "(?!a)[--/]", "\\0", "a{2,}", "\\x41\\u00e9", "\\P{gc=Nd}", ""]  # fmt: skip
REGEX_INVALID = ["\\a", "(?P<name>x)", "(?P<n>a)(?P=n)", "(?#comment)a", "(?i)abc", "(?ims)abc", "^(abc]",
                 "a{2,1}", "a{,3}", "(a)\\2", "x**", "[\\d-z]", "\\-", "a{1}{2}", "(?<a>x)(?<a>y)", "\\k<b>",
                 "[z-a]", "\\00", "a{", "}", "]", "\\p{Foo}", "\\c1", "\\x4", "\\u{110000}", "(?<=a)*",
                 "^*"]  # fmt: skip


def test_format_regex_accepts_valid_ecma_syntax_and_refuses_the_rest(llama3_vocabulary, llama3_tokenizer):
    parser = JsonSchemaParser({"type": "string", "format": "regex"})
    enforcer = TokenEnforcer(llama3_vocabulary, parser)
    for text in REGEX_VALID:
        assert ecma.is_valid(text), text
        for spelled in _json_spellings(text):
            assert parser.accepts(spelled), spelled
        ok, why = accepts_tokens(enforcer, llama3_tokenizer, json.dumps(text))
        assert ok, (text, why)
    for text in REGEX_INVALID:
        assert not ecma.is_valid(text), text
        for spelled in _json_spellings(text):
            assert not parser.accepts(spelled), spelled


def test_format_regex_with_other_keywords():
    short = JsonSchemaParser({"type": "string", "format": "regex", "minLength": 3})
    assert short.accepts('"a+b"') and not short.accepts('"a+"')
    enum = JsonSchemaParser({"enum": ["(a", "a+", 3], "format": "regex"})
    assert enum.accepts('"a+"') and not enum.accepts('"(a"') and enum.accepts("3")
    unique = JsonSchemaParser({"type": "array", "items": {"type": "string", "format": "regex"}, "uniqueItems": True})
    assert unique.accepts('["a", "ab"]') and not unique.accepts('["a", "a"]')
    bounded = JsonSchemaParser({"type": "string", "format": "regex", "maxLength": 6})
    assert bounded.accepts('"(a|bc)"') and not bounded.accepts('"(a|bcd)"')
    assert bounded.add_text('"(((') is not None and bounded.add_text('"((((') is None  # 4 + 4 closing > 6
    for schema in ({"format": "regex", "pattern": "a"}, {"not": {"format": "regex"}},
                   {"format": "regex", "maxLength": 5, "not": {"const": "a"}}):  # fmt: skip
        with pytest.raises(UnsupportedSchemaError):
            JsonSchemaParser({"type": "string", **schema})


def _completion(content: RegexSyntaxContent, state: tuple, limit: int = 200) -> str:
    """A way to finish from ``state``, chosen per mode as the module notes argue one exists; each character
    is checked against ``allowed``."""
    out: list[str] = []
    for _ in range(limit):
        if content.accepting(state):
            return "".join(out)
        mode, aux, stack, groups, names, need, named = state[0]
        allowed = content.allowed(state)
        if mode in es.SEQUENCE:
            missing = sorted(named - names)
            text = ")" if mode == es.PAREN or stack else "()" if need > groups else \
                f"(?<{missing[0]}>)" if missing else "a"  # fmt: skip
        elif mode in (es.CLS_START, es.CLS, es.CLS_NUL, es.CLS_DASH):
            text = "]"
        elif mode == es.PNAME:
            done = aux[1]
            text = "}" if "}" in allowed else next(n for n in PROPERTY_NAMES if n.startswith(done))[len(done)]
        elif mode == es.BRACE:
            text = "0" if aux[0] is None else "}" if "}" in allowed else "9"
        elif mode in (es.GNAME, es.KNAME):
            text = ">" if ">" in allowed else "a"
        else:
            fixed = {es.GQ: ":", es.GLT: "=", es.ESC_C: "Z", es.ESC_U: "{", es.ESC_K: "<", es.ESC_P: "{",
                     es.ESC: "u" if mode == es.ESC and aux[0] == "h" else "n"}  # fmt: skip
            text = fixed.get(mode) or ("}" if "}" in allowed else max(
                (c for c in "0123456789ABCDEF" if c in allowed), key=lambda c: int(c, 16)))  # fmt: skip
        for ch in text:
            assert ch in content.allowed(state), (out, ch, state)
            state = content.step(state, ch)
            out.append(ch)
    raise AssertionError(f"no completion within {limit} characters after {''.join(out)!r}")


def _python_compiles(text: str) -> bool:
    """Python's ``re`` reads the constructs ECMA-262 shares with it the same way; those it lacks or spells
    differently (\\p, \\u{..}, \\k, \\c, named groups, lookbehind, forward references, [] and [^]) are skipped."""
    if re.search(r"\\[1-9pPukc0]|\(\?<|\[\^?\]", text):
        return True
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # "possible nested set": a literal [ in a class
            re.compile(text)
    except OverflowError:  # a quantifier bound beyond Python's limit (ECMA-262 has none)
        pass
    return True


def test_format_regex_random_walks_never_dead_end_and_write_valid_ecma():
    """Seeded walks over the syntax automaton: every offered character is accepted, from every state a
    completion exists (built per mode), and every completed text is valid for ecma/parse.py's parser (a second,
    independent reading of the grammar) and, where the dialects agree, for Python's ``re``."""
    content = RegexSyntaxContent()
    rng = random.Random(2024)
    syntax_chars = list("()[]{}|\\^$.*+?-,:=!<>0123456789abcdefxuckpPdDsSwWbB/ ")
    for _ in range(1500):
        state, out = content.start(), []
        for _ in range(rng.randint(1, 40)):
            allowed = content.allowed(state)
            for probe in rng.sample(syntax_chars, 6):  # allowed() is exact
                assert (content.step(state, probe) is not None) == (probe in allowed), ("".join(out), probe)
            candidates = [c for c in syntax_chars if c in allowed]
            if candidates and rng.random() < 0.9:
                ch = rng.choice(candidates)
            else:
                lo, hi = allowed.intervals[rng.randrange(len(allowed.intervals))]
                ch = chr(rng.randint(lo, min(hi, lo + 300)))
            nxt = content.step(state, ch)
            assert nxt is not None, ("".join(out), ch)
            out.append(ch)
            state = nxt
        text = "".join(out) + _completion(content, state)
        assert ecma.is_valid(text), text
        canonical = completion(state[0])  # the one maxLength counts on: as long as its cost, and it finishes
        assert len(canonical) == completion_cost(state[0], {}) and ecma.is_valid("".join(out) + canonical)
        assert _python_compiles(text), text


def test_format_regex_char_walks_through_the_json_string_parser():
    parser = JsonSchemaParser({"type": "array", "items": {"type": "string", "format": "regex"}, "maxItems": 3})
    rng = random.Random(11)
    finished = 0
    for _ in range(200):
        text, done = char_walk(parser, rng, max_chars=120, end_bias=0.5)
        if done:
            finished += 1
            for item in json.loads(text):
                assert ecma.is_valid(item), item
    assert finished > 20


REGEX_SCHEMA = JsonSchemaParser({"type": "string", "format": "regex"})


_SLOW = pytest.mark.slow  # (a plain walk of Llama 3 each, 3 to 4 CPU-seconds: one exact, one inexact run fast)


@pytest.mark.parametrize("prefix, exact", [
    ('"a|(?:x', True), pytest.param('"(a)\\\\1', True, marks=_SLOW), ('"[^a', False),
    pytest.param('"(?<na', False, marks=_SLOW), pytest.param('"(a)\\\\k<n', False, marks=_SLOW),
])  # fmt: skip
def test_format_regex_free_runs_against_the_plain_walk(llama3_vocabulary, prefix, exact):
    """Outside classes the runs are exact; inside a class or a name their stand-in only leaves out tokens
    that go on with ``-`` (a range whose lower end the run does not remember) or ``>`` after the run."""
    import numpy as np

    from formatenforcer.core.walk import allowed_mask

    from .test_free_run_masks import WalkOnly

    state = REGEX_SCHEMA.add_text(prefix)
    assert state is not None
    fast = allowed_mask(llama3_vocabulary, state, b"", False, {})
    plain = allowed_mask(llama3_vocabulary, WalkOnly(state), b"", False)
    assert not (fast & ~plain).any()
    missing = np.flatnonzero(np.unpackbits((plain & ~fast).view(np.uint8), bitorder="little"))
    if exact:
        assert missing.size == 0
    for token in missing:
        text = llama3_vocabulary.text_of(int(token))
        assert b"-" in text[1:] or b">" in text[1:], text


@pytest.mark.parametrize("high", [0, 1, 2, 3, 5, 8, 13])
def test_format_regex_under_max_length_never_dead_ends(high):
    """With ``maxLength`` a character is offered only if the canonical completion still fits after it."""
    parser = JsonSchemaParser({"type": "string", "format": "regex", "maxLength": high, "minLength": min(high, 2)})
    rng = random.Random(high)
    for _ in range(300):
        text, done = char_walk(parser, rng, max_chars=60, end_bias=0.2)
        assert done, text
        value = json.loads(text)
        assert ecma.is_valid(value) and min(high, 2) <= len(value) <= high, value


@pytest.mark.parametrize("prefix", ['"a', pytest.param('"[^a', marks=_SLOW), pytest.param('"(?:x|', marks=_SLOW)])
def test_format_regex_runs_under_max_length_match_the_plain_walk(llama3_vocabulary, prefix):
    import numpy as np

    from formatenforcer.core.walk import allowed_mask

    from .test_free_run_masks import WalkOnly

    state = JsonSchemaParser({"type": "string", "format": "regex", "maxLength": 9}).add_text(prefix)
    fast = allowed_mask(llama3_vocabulary, state, b"", False, {})
    plain = allowed_mask(llama3_vocabulary, WalkOnly(state), b"", False)
    assert not (fast & ~plain).any()
    missing = np.flatnonzero(np.unpackbits((plain & ~fast).view(np.uint8), bitorder="little"))
    assert all(b"-" in llama3_vocabulary.text_of(int(t))[1:] for t in missing)
