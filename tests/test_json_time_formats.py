"""``time`` and ``date-time`` with RFC 3339's leap-second rule (formatenforcer/jsonschema/formats/time.py).

``hh:mm:60`` is valid exactly when local time minus offset is 23:59 (modulo a day). The reference here is
computed with ``datetime`` arithmetic, independently of the automaton's own ``leap_offsets``; the parser is
checked character by character, token by token with the Llama 3 tokenizer, under ``pattern``, ``not`` and
length limits, and by seeded random walks (no dead end, every finished walk valid).
"""

from __future__ import annotations

import datetime as dt
import json
import random
import re

import pytest

from formatenforcer import JsonSchemaParser, TokenEnforcer
from formatenforcer.jsonschema.formats.patterns import format_matches

from .checking import random_walk
from .json_checks import accepts_tokens, char_walk

_TIME = re.compile(r"(\d\d):(\d\d):(\d\d)(?:\.\d+)?(?:[Zz]|([+-])(\d\d):(\d\d))")


def reference_time(text: str) -> bool:
    """RFC 3339 ``full-time`` by datetime arithmetic: fields in range, and seconds 60 only at 23:59 UTC."""
    match = _TIME.fullmatch(text)
    if match is None:
        return False
    hour, minute, second = (int(g) for g in match.group(1, 2, 3))
    sign, off_h, off_m = match.group(4, 5, 6)
    if hour > 23 or minute > 59 or second > 60 or (sign and (int(off_h) > 23 or int(off_m) > 59)):
        return False
    if second < 60:
        return True
    offset = dt.timedelta(hours=int(off_h), minutes=int(off_m)) * (-1 if sign == "-" else 1) if sign else dt.timedelta()
    utc = dt.datetime(2000, 1, 2, hour, minute) - offset
    return (utc.hour, utc.minute) == (23, 59)


def test_every_local_minute_with_seconds_60_against_datetime():
    rng = random.Random(11)
    for local in range(24 * 60):
        hh_mm = f"{local // 60:02d}:{local % 60:02d}"
        offsets = ["Z", "z", "+00:00", "-00:00"]
        for _ in range(12):
            offsets.append(f"{rng.choice('+-')}{rng.randrange(24):02d}:{rng.randrange(60):02d}")
        ahead = (local - (23 * 60 + 59)) % (24 * 60)  # the two offsets that are right, written out again here
        offsets += [f"+{ahead // 60:02d}:{ahead % 60:02d}", f"-{(1440 - ahead) // 60:02d}:{(1440 - ahead) % 60:02d}"]
        for offset in offsets:
            for text in (f"{hh_mm}:60{offset}", f"{hh_mm}:60.5{offset}"):
                assert format_matches("time", text) is reference_time(text), text
        assert sum(reference_time(f"{hh_mm}:60{o}") for o in set(offsets)) >= 1, hh_mm  # never a dead end


def test_random_times_against_datetime():
    rng = random.Random(5)
    for _ in range(3000):
        offset = f"{rng.choice(chr(43) + chr(45))}{rng.randrange(25):02d}:{rng.randrange(61):02d}"
        text = (
            f"{rng.randrange(26):02d}:{rng.randrange(62):02d}:{rng.choice([rng.randrange(62), 60]):02d}"
            f"{rng.choice(['', '.25'])}{rng.choice(['Z', offset])}"
        )
        assert format_matches("time", text) is reference_time(text), text
        assert format_matches("date-time", "2016-12-31T" + text) is reference_time(text), text


@pytest.mark.parametrize("schema, valid, invalid", [
    ({"format": "time"}, ["15:59:60-08:00", "23:59:60z", "12:00:00.5+05:30"], ["15:59:60-07:00", "24:00:00Z"]),
    ({"format": "time", "pattern": "-08:00$"}, ["15:59:60-08:00", "01:02:03-08:00"],
     ["23:59:60Z", "15:59:60+16:00"]),
    ({"format": "date-time", "pattern": "^1998"}, ["1998-12-31T15:59:60.123-08:00"],
     ["1999-12-31T15:59:60.123-08:00", "1998-12-31T15:59:60.123-07:00"]),
    ({"format": "time", "not": {"pattern": "Z$"}}, ["23:59:60+00:00"], ["23:59:60Z"]),
    ({"not": {"format": "time"}}, ["23:59:60+01:00", "x"], ["15:59:60-08:00"]),
    ({"format": "time", "maxLength": 14}, ["15:59:60-08:00", "23:59:60Z"], ["15:59:60.1-08:00"]),
    ({"format": "time", "minLength": 15}, ["15:59:60.1-08:00"], ["15:59:60-08:00", "23:59:60.12Z"]),
    ({"format": "time", "enum": ["15:59:60-08:00", "23:59:60+01:00", 3]}, ["15:59:60-08:00"], ["23:59:60+01:00"]),
])  # fmt: skip
def test_combinations(schema, valid, invalid):
    parser = JsonSchemaParser({"type": "string", **schema})
    for text in valid:
        assert parser.accepts(json.dumps(text)), (schema, text)
    for text in invalid:
        assert not parser.accepts(json.dumps(text)), (schema, text)


@pytest.mark.parametrize("schema", [
    {"format": "time"}, {"format": "date-time"}, {"format": "time", "maxLength": 14},
    {"format": "time", "minLength": 16}, {"format": "date-time", "pattern": "T1[0-9]:[0-9]{2}:60"},
])  # fmt: skip
def test_character_walks_never_dead_end(schema):
    parser = JsonSchemaParser({"type": "string", **schema})
    rng = random.Random(3)
    leaps = 0
    for _ in range(150):
        text, finished = char_walk(parser, rng, max_chars=60, end_bias=0.3)
        assert finished, text
        value = json.loads(text)
        leaps += ":60" in value
        time_part = value.split("T")[-1].split("t")[-1]
        assert reference_time(time_part), value
        assert len(value) <= schema.get("maxLength", 99) and len(value) >= schema.get("minLength", 0), value
    assert leaps, "no walk reached a leap second"


def test_llama3_tokens(llama3_tokenizer, llama3_vocabulary):
    for schema, value in [
        ({"format": "time"}, "15:59:60-08:00"),
        ({"format": "time"}, "01:29:60+01:30"),
        ({"format": "date-time"}, "1998-12-31T15:59:60.123-08:00"),
        ({"format": "date-time", "pattern": "^1998"}, "1998-12-31T00:29:60-23:30"),
    ]:
        enforcer = TokenEnforcer(llama3_vocabulary, JsonSchemaParser({"type": "string", **schema}))
        ok, why = accepts_tokens(enforcer, llama3_tokenizer, json.dumps(value))
        assert ok, (value, why)
    enforcer = TokenEnforcer(llama3_vocabulary, JsonSchemaParser({"type": "string", "format": "time"}))
    assert not accepts_tokens(enforcer, llama3_tokenizer, json.dumps("15:59:60-07:00"))[0]
    for seed in range(8):
        text, finished = random_walk(enforcer, seed, max_tokens=40)
        assert finished and reference_time(json.loads(text)), text
