"""Forced text (jump-forward): the longest text every valid continuation starts with, per parser, and a
random-walk property check that every completion a walk finds starts with it."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from formatenforcer import (
    CharacterParser,
    ChoiceParser,
    GrammarParser,
    JsonConfig,
    JsonParser,
    JsonSchemaParser,
    RegexParser,
    SequenceParser,
    TokenEnforcer,
    UnionParser,
    Vocabulary,
)
from formatenforcer.core.forced import forced_text_of

COMPACT = JsonConfig(whitespace="compact")
CASES_DIR = Path(__file__).resolve().parent.parent / "benchmarks" / "cases"


def forced_after(parser: CharacterParser, text: str) -> str:
    state = parser.add_text(text)
    assert state is not None, text
    return forced_text_of(state)


def test_required_keys_in_schema_order():
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
        "required": ["name", "age"],
        "additionalProperties": False,
    }
    parser = JsonSchemaParser(schema, config=JsonConfig(whitespace="compact", property_order="schema"))
    assert forced_after(parser, "") == '{"name":"'
    assert forced_after(parser, '{"name":"Al"') == ',"age":'
    assert forced_after(parser, '{"name":"Al","age":4') == ""  # more digits or the closing brace
    assert forced_after(parser, '{"name":"Al","age":42}') == ""  # complete: end-of-sequence is allowed


def test_closed_object_with_one_key_left_and_any_order():
    schema = {
        "type": "object",
        "properties": {"alpha": {"type": "boolean"}, "beta": {"type": "boolean"}},
        "required": ["alpha", "beta"],
        "additionalProperties": False,
    }
    parser = JsonSchemaParser(schema, config=COMPACT)
    assert forced_after(parser, "") == '{"'  # either key may come first
    assert forced_after(parser, '{"b') == 'eta":'
    assert forced_after(parser, '{"beta":t') == 'rue,"alpha":'
    assert forced_after(parser, '{"beta":true,"alpha":f') == "alse}"


def test_flexible_whitespace_forces_less():
    schema = {"type": "object", "properties": {"a": {"const": 1}}, "required": ["a"], "additionalProperties": False}
    assert forced_after(JsonSchemaParser(schema), "") == ""  # whitespace may come before the root value
    assert forced_after(JsonSchemaParser(schema, config=COMPACT), "") == '{"a":'  # (compact: 1.0 is 1 too)
    assert forced_after(JsonSchemaParser(schema), '{"') == 'a"'


def test_enum_with_shared_prefixes():
    schema = {"enum": ["Gryffindor", "Grindelwald", "Hufflepuff"]}
    parser = JsonSchemaParser(schema, config=COMPACT)
    assert forced_after(parser, "") == '"'
    assert forced_after(parser, '"G') == "r"
    assert forced_after(parser, '"Gry') == 'ffindor"'
    assert forced_after(parser, '"H') == 'ufflepuff"'


def test_const_and_fixed_length_array():
    const = JsonSchemaParser({"const": {"kind": "point", "dims": ["x", 2]}}, config=COMPACT)
    assert forced_after(const, "") == '{"'  # keys of an object const may come in any order
    assert forced_after(const, '{"k') == 'ind":"point","dims":["x",'  # 2.0, 20e-1 and 0.2e1 are 2 as well
    assert forced_after(const, '{"kind":"point","dims":["x",2]') == "}"
    pair = JsonSchemaParser(
        {"type": "array", "prefixItems": [{"const": "x"}, {"type": "integer"}], "items": False, "minItems": 2},
        config=COMPACT,
    )
    assert forced_after(pair, "") == '["x",'
    assert forced_after(pair, '["x",7') == ""  # more digits or "]"
    triple = JsonSchemaParser({"type": "array", "items": {"const": True}, "minItems": 3, "maxItems": 3}, config=COMPACT)
    assert forced_after(triple, "") == "[true,true,true]"


def test_regex_literals():
    parser = RegexParser(r"ID-[0-9]{3}-(XL|XS)\.end")
    assert forced_after(parser, "") == "ID-"
    assert forced_after(parser, "ID-1") == ""
    assert forced_after(parser, "ID-123") == "-X"
    assert forced_after(parser, "ID-123-XL") == ".end"
    assert forced_after(RegexParser("ab?"), "a") == ""  # may end: nothing is forced


def test_choices_sequence_union():
    choice = ChoiceParser(["apple pie", "apple tart", "banana"])
    assert forced_after(choice, "") == ""
    assert forced_after(choice, "a") == "pple "
    assert forced_after(choice, "apple t") == "art"
    sequence = SequenceParser([ChoiceParser(["<a>", "<b>"]), RegexParser(r"=[0-9]+;")])
    assert forced_after(sequence, "") == "<"
    assert forced_after(sequence, "<b") == ">="
    union = UnionParser([RegexParser(r"key: [a-z]+"), RegexParser(r"key: [0-9]+")])
    assert forced_after(union, "") == "key: "
    assert forced_after(JsonParser(), "[true") == ""  # "," or "]" or whitespace


def test_matcher_forced_text_and_cache(llama3_vocabulary: Vocabulary):
    parser = RegexParser(r"abc[0-9]def")
    enforcer = TokenEnforcer(llama3_vocabulary, parser)
    matcher = enforcer.matcher()
    assert matcher.forced_text() == "abc"
    assert parser.key() in enforcer._forced
    assert matcher.accept_tokens(llama3_vocabulary.tokenize("abc4"))
    assert matcher.forced_text() == "def"


SQL_GRAMMAR = r"""
start: "SELECT " cols " FROM " NAME (" WHERE " NAME "=" NUMBER)? ";"
cols: NAME ("," NAME)*
NAME: /[a-z]+/
NUMBER: /[0-9]+/
"""
MOVES_GRAMMAR = r"""
root ::= "moves: " move (", " move)* "."
move ::= piece? [a-h] [1-8] ("+" | "#")?
piece ::= "K" | "Q" | "R" | "B" | "N"
"""


def test_grammar_forced_text_and_tokens(llama3_vocabulary: Vocabulary):
    """A grammar's literals are forced text, and the matcher writes them as Llama 3 tokens: ``SELECT `` at
    the start (its trailing space held back or not, but a prefix of it), nothing while a column list may go
    on, `` FROM `` once it may not, ``, `` between chess moves."""
    matcher = TokenEnforcer(llama3_vocabulary, GrammarParser(SQL_GRAMMAR)).matcher()
    assert matcher.forced_text() == "SELECT "
    forced = matcher.forced_tokens()
    assert forced and "SELECT ".startswith(b"".join(llama3_vocabulary.token_bytes[t] for t in forced).decode())
    assert matcher.accept_tokens(llama3_vocabulary.tokenize("SELECT a,b"))
    assert matcher.forced_text() == ""  # another column, or " FROM "
    assert matcher.accept_tokens(llama3_vocabulary.tokenize(" FROM"))
    assert matcher.forced_text() == " "
    moves = TokenEnforcer(llama3_vocabulary, GrammarParser(MOVES_GRAMMAR, syntax="gbnf")).matcher()
    assert moves.forced_text() == "moves: "
    assert moves.accept_tokens(llama3_vocabulary.tokenize("moves: e4,"))
    assert moves.forced_text() == " "


# --- random-walk property: the forced text is a prefix of every completion found ---------------------------


def _random_walk(state: CharacterParser, rng: random.Random, limit: int = 300) -> tuple[str, bool]:
    """A random walk over allowed characters: (text, whether it reached a state that may end and stopped
    there). Closing characters are preferred so that walks finish."""
    out: list[str] = []
    for _ in range(limit):
        if state.can_end() and (rng.random() < 0.35 or not state.allowed_characters()):
            return "".join(out), True
        allowed = state.allowed_characters()
        inside_text = allowed.size() > 1000  # a string: close it rather than the containers
        closers = [c for c in ('"' if inside_text else "}]") if c in allowed] or [c for c in '"' if c in allowed]
        if closers and rng.random() < 0.7:
            ch = rng.choice(closers)
        else:
            intervals = allowed.intervals
            lo, hi = intervals[rng.randrange(len(intervals))]
            ch = chr(rng.randint(lo, min(hi, lo + 200)))
        nxt = state.add_character(ch)
        assert nxt is not None, f"allowed_characters offered {ch!r} but add_character refused it"
        out.append(ch)
        state = nxt
    return "".join(out), False


def _parsers() -> list[tuple[str, CharacterParser]]:
    cases = []
    for path in sorted(CASES_DIR.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        cases.extend(data if isinstance(data, list) else [data])
    out: list[tuple[str, CharacterParser]] = []
    for case in cases[::10]:  # every tenth benchmark schema, compact and flexible
        out.append((case["name"], JsonSchemaParser(case["schema"], config=COMPACT)))
        out.append((case["name"] + "-flexible", JsonSchemaParser(case["schema"])))
    out += [
        ("regex", RegexParser(r"(ab|ac)d{2,3}(-[xy]z)*!")),
        ("choice", ChoiceParser(["alpha", "alphabet", "alps", "beta", "betamax", "gamma ray", "gamma rays"])),
        ("sequence", SequenceParser([RegexParser("x+"), ChoiceParser(["yz", "yw"])])),
        ("union", UnionParser([JsonSchemaParser({"const": "abc"}), JsonSchemaParser({"enum": ["abd", 12]})])),
        ("grammar-lark", GrammarParser(SQL_GRAMMAR)),
        ("grammar-gbnf", GrammarParser(MOVES_GRAMMAR, syntax="gbnf")),
    ]
    return out


PARSERS = _parsers()


PAST_FORCED = 50
"""Characters a walk of ``test_forced_text_prefixes_every_completion`` takes beyond the forced text's length
(the longest forced text along its walks is under 30 characters)."""


@pytest.mark.parametrize("label,parser", PARSERS, ids=[label for label, _ in PARSERS])
def test_forced_text_prefixes_every_completion(label: str, parser: CharacterParser):
    """Every completion a walk finds starts with the forced text; so does every unfinished walk long enough
    (every allowed character has a completion), and a shorter one is a prefix of it. A walk goes on
    ``PAST_FORCED`` characters beyond the forced text's length: what it holds after the forced text's length
    is not read by the check (most walks never finish: an open object takes random keys until the limit)."""
    rng = random.Random(label)
    completed = nonempty = 0
    for _walk in range(6):
        state = parser
        prefix = ""
        for _step in range(25):  # walk into the format, checking the forced text at every step
            forced = forced_text_of(state)
            for _ in range(3):
                text, done = _random_walk(state, rng, limit=len(forced) + PAST_FORCED)
                if done or len(text) >= len(forced):
                    assert text.startswith(forced), (label, prefix, forced, text)
                else:
                    assert forced.startswith(text), (label, prefix, forced, text)
                completed += done
                nonempty += bool(forced) and len(text) >= len(forced)
            text, _ = _random_walk(state, rng, limit=4)
            if not text:
                break
            state = state.add_text(text)
            prefix += text
    assert nonempty >= 3  # the walks reached forced text and went past it


def _cases() -> list[dict]:
    cases = []
    for path in sorted(CASES_DIR.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        cases.extend(data if isinstance(data, list) else [data])
    return cases


@pytest.mark.parametrize("layout", ["compact", "flexible", "indent"])
def test_forced_text_prefixes_every_benchmark_instance(layout: str):
    """Each benchmark instance is a completion of every prefix of itself: at every character, the forced
    text must be what the instance goes on with."""
    config = COMPACT if layout == "compact" else JsonConfig()
    forced_chars = 0
    for case in _cases():
        parser = JsonSchemaParser(case["schema"], config=config)
        if layout == "compact":
            text = json.dumps(case["instance"], separators=(",", ":"))
        else:
            text = json.dumps(case["instance"], indent=2 if layout == "indent" else None, ensure_ascii=False)
        state: CharacterParser | None = parser
        for offset in range(len(text) + 1):
            assert state is not None, (case["name"], text[:offset])
            forced = forced_text_of(state)
            assert text.startswith(forced, offset), (case["name"], text[:offset], forced)
            forced_chars += len(forced) > 0
            if offset < len(text):
                state = state.add_character(text[offset])
        assert state.can_end()
    assert forced_chars > 100
