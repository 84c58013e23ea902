"""JSON Schema ``format`` enforcement (formatenforcer/jsonschema/formats*.py), checked through JsonSchemaParser.

Each example is a decoded string; it is checked character by character as ``json.dumps(value)`` (compact, raw
unicode) and ``json.dumps(value, ensure_ascii=True)``, a few also token by token with the Llama 3 tokenizer.
Every example is also run through ``format_matches`` (Python's ``re`` with the same pattern, or the same table
automaton, used for enum filtering), so the two engines cannot drift apart.
"""

from __future__ import annotations

import ipaddress
import json
import random
import re

import pytest

from formatenforcer import JsonSchemaParser, TokenEnforcer, UnsupportedSchemaError
from formatenforcer.jsonschema.formats.patterns import (
    FORMAT_MAX_LENGTH,
    FORMAT_PATTERNS,
    UNSUPPORTED_FORMATS,
    format_matches,
)
from formatenforcer.parsers.regex import compile_regex

from .json_checks import accepts_tokens, char_walk

LABEL63 = "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijk"

VALID = {
    "date-time": [
        "1963-06-19T08:30:06.283185Z",
        "1937-01-01T12:00:27.87+00:20",
        "1963-06-19t08:30:06z",
        "1998-12-31T23:59:60Z",
        "1998-12-31T23:59:60.5-00:00",
        "2000-02-29T00:00:00+23:59",
        "1985-04-12T00:59:59.999999999999999Z",
        "1998-12-31T15:59:60.123-08:00",
    ],
    "date": ["2020-01-31", "2020-02-29", "2000-02-29", "0000-02-29", "1900-02-28"],
    "time": [
        "08:30:06Z",
        "23:59:60Z",
        "23:59:60+00:00",
        "12:34:56-00:00",
        "08:30:06z",
        "23:20:50.52Z",
        "23:59:59+23:59",
        "15:59:60-08:00",
        "01:29:60+01:30",
        "00:29:60-23:30",
        "23:29:60+23:30",
        "15:59:60+16:00",
        "00:00:60+00:01",
        "23:58:60.25-00:01",
    ],
    "duration": ["P4DT12H30M5S", "PT1S", "P1W", "P0D", "P1Y2M"],
    "email": [
        "joe.bloggs@example.com",
        "~test@example.com",
        '"joe bloggs"@example.com',
        '"a\\"b"@c.d',
        '"joe@bloggs"@example.com',
        "joe.bloggs@[127.0.0.1]",
        "joe.bloggs@[IPv6:::1]",
        "a@[IPv6:2001:db8::ffff:1.2.3.4]",
        "te.s.t@example.com",
        f"a@{LABEL63}bc.com",
        "a@" + ".".join([LABEL63] * 3 + ["a" * 60]),
    ],
    "uuid": ["2eb8aa08-aa98-11ea-b4aa-73b441d16380", "2EB8AA08-AA98-11EA-B4AA-73B441D16380"],
    "ipv4": ["192.168.0.1", "0.0.0.0", "255.255.255.255"],
    "ipv6": [
        "::1",
        "::",
        "1:2:3:4:5:6:7:8",
        "1::",
        "1:2::3:4:5:6:7",
        "::ffff:192.168.0.1",
        "1:2:3:4:5:6:1.2.3.4",
        "1::2:3:4:5:6:7",
        "ABCD:ef01::",
    ],
    "hostname": [
        "www.example.com",
        "1host",
        "a--b.com",
        "xn--9n2bp8q.xn--9t4b11yi5a",
        f"{LABEL63}.com",
        ".".join([LABEL63] * 3 + ["a" * 61]),
    ],  # 253 characters exactly
    "uri": [
        "http://foo.bar/?baz=qux#quux",
        "http://-.~_!$&'()*+,;=:%40:80%2f::::::@example.com",
        "ldap://[2001:db8::7]/c=GB?objectClass?one",
        "mailto:John.Doe@example.com",
        "urn:a:b",
        "tel:+1-816",
        "http://087.10.0.1/",
        "http://[v1.fe]/",
        "file:/etc/hosts",
        "a:",
        "http://u:p@[::1]:8080/x?y#z",
        "http://[::ffff:1.2.3.4]",
    ],
    "uri-reference": [
        "http://foo.bar/?baz=qux#quux",
        "//foo.bar/?baz=qux#quux",
        "/abc",
        "abc",
        "#fragment",
        "",
        "?query=1",
        "//",
        "./this:that",
        "//[::1]:80/a",
        "a/b:c",
    ],
    "iri": [
        "http://ƒøø.ßår/?∂éœ=πîx#πîüx",
        "http://[2001:db8::1]",
        "http://[V1.fe]",
        "urn:example:resource",
        "http://ƒøø.ßår/\U00010300",
        "http://ƒøø.ßår/?q=\U000f0000",
        "http://例子.测试/路径?查询=值#片段",
    ],
    "iri-reference": ["//ƒøø.ßår/?∂éœ=πîx#πîüx", "/âππ", "âππ", "#ƒrägmênt", "", "//[::1]/ü"],
    "uri-template": [
        "http://example.com/dictionary/{term:1}/{term}",
        "",
        "a%41b",
        "a\U0001f600b",
        "{+var}",
        "{#var}",
        "{.var}",
        "{/var}",
        "{;x,y}",
        "{?var}",
        "{&var}",
        "{var*}",
        "{a.b}",
        "{%41}",
        "{v:1000}",
        "a'b",
        "{list*,keys:3}",
    ],
    "json-pointer": [
        "",
        "/",
        "/foo/bar~0/baz~1/%a",
        "/foo//bar",
        "/i\\j",
        '/k"l',
        "/ ",
        "/foo\x00bar\n\tbaz",
        "/foo/bar/😎",
        "/~1.1",
    ],
    "relative-json-pointer": ["1", "0/foo/bar", "2/0/baz/1/zip", "0#", "120/foo/bar", "100", "0//"],
}

INVALID = {
    "date-time": [
        "1998-12-31T23:59:61Z",
        "1998-12-31T23:58:60Z",
        "1998-12-31T22:59:60Z",
        "1990-02-31T15:59:59Z",
        "1990-12-31T15:59:59-24:00",
        "1963-06-19T08:30:06.28123+01:00Z",
        "1990-12-31T24:00:00Z",
        "1985-04-12T23:20:50+01",
        "2016-12-31T24:59:60+01:00",
        "1985-04-12T23:20:50Z\n",
        "1963-06-1\u09eaT00:00:00Z",
        "+11963-06-19T08:30:06Z",
        "1998-12-31T23:59:60+01:00",
    ],
    "date": ["2020-02-30", "2021-02-29", "1900-02-29", "2020-13-01", "2020-1-01", "20200101"],
    "time": [
        "22:59:60Z",
        "23:58:60Z",
        "22:59:60+00:00",
        "23:59:60+01:00",
        "23:59:60+00:30",
        "23:59:60-01:00",
        "23:59:60-00:30",
        "24:00:00Z",
        "00:60:00Z",
        "00:00:61Z",
        "01:02:03+24:00",
        "01:02:03+00:60",
        "01:02:03Z+00:30",
        "12:00:00",
        "08:30:06 PST",
        "1\u09e8:00:00Z",
        "15:59:60-07:00",
        "15:59:60+15:00",
        "00:00:60-00:01",
        "00:00:60Z",
    ],
    "duration": ["P", "PT", "P1D2H", "P2S", "PT1D", "P1Y2W"],
    "email": [
        "2962",
        ".test@example.com",
        "test.@example.com",
        "te..st@example.com",
        "joe.bloggs@invalid=domain.com",
        "joe.bloggs@[127.0.0.300]",
        "@example.com",
        "joe.bloggs@",
        "joe bloggs@example.com",
        '"a\tb"@c.d',
        '"é"@c.d',
        "a@[IPv6:1:2:3:4:5:6:7:8:9]",
        "a@[::1]",
        "a@" + ".".join([LABEL63] * 3 + ["a" * 61]),
    ],  # 255 characters: over RFC 5321's 254
    "uuid": ["2eb8aa08-aa98-11ea-b4aa-73b441d1638", "2eb8aa08aa9811eab4aa73b441d16380"],
    "ipv4": ["256.1.1.1", "01.2.3.4", "1.2.3", "1.2.3.4.5", "1.2.3.4\n"],
    "ipv6": [
        "12345::",
        "1:2:3:4:5:6:7:8:9",
        "1::2::3",
        ":::",
        "1:2:3:4:5:6:7::1.2.3.4",
        "::ffff:01.2.3.4",
        "1:",
        "1:2:3:4:5:6:7:8::",
        "::1.2.3",
        "g::1",
    ],
    "hostname": [
        "",
        ".",
        ".example",
        "example.",
        "-hostname",
        "hostname-",
        "host_name",
        "example\uff0ecom",
        f"{LABEL63}l.com",
        "example.com\n",
        "\u212aelvin.example.com",
        ".".join([LABEL63] * 3 + ["a" * 62]),
    ],  # 254 characters
    "uri": [
        "//foo.bar/?baz=qux#quux",
        "/abc",
        "abc",
        "http:// shouldfail.com",
        "bar,baz:foo",
        "https://[@example.org/test.txt",
        "https://example.org/foobar®.txt",
        "https://example.org/foobar\\.txt",
        "https://example.org/foo bar.txt",
        "http://example.com/%6G",
        "http://example.com/%A",
        "1http://a",
        "http://example.com:abc/path",
        "http://[::ffff:01.2.3.4]",
        "http:/[::1]",
        "http://a@b@c/",
        "http://[1.2.3.4]/",
        "http://[::1/",
        "http://[v1]/",
    ],
    "uri-reference": [
        "\\\\WINDOWS\\fileshare",
        "#frag\\ment",
        "/foobar®.txt",
        "/%zz",
        '/a"b',
        "/[::1]",
        "//example.com:abc/p",
        "//a@b@example.com/",
        "//[::ffff:192.168.0.01]/p",
        "1:b",
        "a b",
    ],
    "iri": [
        "http://2001:0db8:85a3:0000:0000:8a2e:0370:7334",
        "/abc",
        "âππ",
        "http://[::ffff:192.168.0.01]",
        "http://ƒøø.ßår/\n",
        "http://a/\x85",
        "http://a/b c",
    ],
    "iri-reference": ["\\\\WINDOWS\\filëßåré", "#ƒräg\\mênt", "a\x9fb"],
    "uri-template": [
        "http://example.com/dictionary/{term:1}/{term",
        "{}",
        "{a,,b}",
        "{v:0}",
        "{v:10000}",
        "foo}bar",
        "{a..b}",
        "{v:01}",
        "a b",
        "a\x7fb",
        "{a,}",
        "{var=def}",
        "{,+var}",
        "{=var}",
        "a%4",
        "{+}",
    ],
    "json-pointer": ["#", "#/", "#a", "/foo/bar~", "/~0~", "/~2", "/~-1", "/~~", "a", "0", "a/a"],
    "relative-json-pointer": [
        "/foo/bar",
        "-1/foo/bar",
        "+1/foo/bar",
        "\u0661/foo",
        "0##",
        "01/a",
        "01#",
        "",
        "0/~2",
        "0/foo/bar~",
        "1#/foo/bar",
        "1\n",
    ],
}


def _cases(table: dict[str, list[str]], expected: bool) -> list[tuple[str, str, bool]]:
    return [(fmt, value, expected) for fmt, values in table.items() for value in values]


CASES = _cases(VALID, True) + _cases(INVALID, False)


def _parser(fmt: str, **extra: object) -> JsonSchemaParser:
    return JsonSchemaParser({"type": "string", "format": fmt, **extra})


@pytest.mark.parametrize("fmt, value, expected", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_format_character_by_character(fmt, value, expected):
    parser = _parser(fmt)
    for text in (json.dumps(value, ensure_ascii=False), json.dumps(value)):
        assert parser.accepts(text) is expected, (fmt, text)
    limit = FORMAT_MAX_LENGTH.get(fmt, len(value))
    assert (format_matches(fmt, value) and len(value) <= limit) is expected, fmt


TOKEN_CASES = [("date-time", "1998-12-31T23:59:60Z"), ("email", "joe.bloggs@[IPv6:::1]"),
               ("uri", "https://example.com/a/b?c=d#e"), ("iri", "http://ƒøø.ßår/?∂éœ=πîx#πîüx"),
               ("uri-template", "https://api.example.com/users/{id}{?fields*}"), ("hostname", "www.example.com"),
               ("json-pointer", "/definitions/a~1b")]  # fmt: skip


@pytest.mark.parametrize("fmt, value", TOKEN_CASES)
def test_format_token_by_token_llama3(llama3_tokenizer, llama3_vocabulary, fmt, value):
    enforcer = TokenEnforcer(llama3_vocabulary, _parser(fmt))
    for text in (json.dumps(value, ensure_ascii=False), json.dumps(value)):
        ok, why = accepts_tokens(enforcer, llama3_tokenizer, text)
        assert ok, (fmt, text, why)


def test_hostname_total_length_is_capped_without_dead_ends():
    parser = _parser("hostname")
    rng = random.Random(7)
    for _ in range(20):
        text, finished = char_walk(parser, rng, max_chars=400, end_bias=0.0)
        assert finished and len(json.loads(text)) <= 253, text
    assert _parser("hostname", maxLength=5).accepts('"ab.cd"')
    assert not _parser("hostname", maxLength=5).accepts('"ab.cde"')
    long_name = ".".join([LABEL63] * 3 + ["a" * 62])
    enum = JsonSchemaParser({"format": "hostname", "enum": [long_name, "ok.example"]})
    assert enum.accepts('"ok.example"') and not enum.accepts(json.dumps(long_name))


def test_ipv6_pattern_agrees_with_ipaddress():
    rng = random.Random(3)
    pattern = re.compile(FORMAT_PATTERNS["ipv6"])

    def sample() -> str:
        groups = [format(rng.getrandbits(rng.choice([4, 8, 16])), rng.choice("xX")) for _ in range(rng.randint(1, 9))]
        if rng.random() < 0.3:
            groups[-1] = str(ipaddress.IPv4Address(rng.getrandbits(32)))
        if rng.random() < 0.7:
            cut = rng.randint(0, len(groups))
            return ":".join(groups[:cut]) + "::" + ":".join(groups[cut:])
        return ":".join(groups)

    def valid(text: str) -> bool:
        try:
            ipaddress.IPv6Address(text)
        except ValueError:
            return False
        return True

    texts = [sample() for _ in range(20000)]
    assert [t for t in texts if (pattern.fullmatch(t) is not None) != valid(t)] == []
    parser = _parser("ipv6")
    for text in texts[:300]:
        assert parser.accepts(json.dumps(text)) is valid(text), text


@pytest.mark.parametrize("fmt", list(UNSUPPORTED_FORMATS))
def test_unsupported_formats_are_refused_with_the_pointer(fmt):
    schema = {"type": "object", "properties": {"a": {"type": "string", "format": fmt}}}
    with pytest.raises(UnsupportedSchemaError) as raised:
        JsonSchemaParser(schema)
    assert raised.value.problems == [("#/properties/a/format", "format")]
    with pytest.warns(UserWarning, match="not enforcing 'format' at #/properties/a/format"):
        lenient = JsonSchemaParser(schema, lenient=True)
    assert lenient.accepts('{"a":"anything"}')


@pytest.mark.parametrize("fmt", list(FORMAT_PATTERNS))
def test_format_automaton_stays_small(fmt):
    # compile times are in docs/json-schema.md; the state count is the machine-independent part of them
    assert len(compile_regex(FORMAT_PATTERNS[fmt]).transitions) <= 800, fmt
