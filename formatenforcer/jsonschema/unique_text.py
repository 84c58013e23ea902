"""JSON equality of item texts without recursion, for ``uniqueItems`` (arrays.py): ``canonical(text)`` is a
string equal for two texts exactly when their JSON values are equal (1 == 1.0, objects in any key order,
True != 1), built with an explicit stack. ``json.loads`` and a nested tuple form would both reach the
recursion limit on an item nested thousands of levels deep (under a raised ``JsonConfig.max_depth``): a
string is hashed and compared without recursion."""

from __future__ import annotations

import json
import re

from .schema.validate import to_fraction

_TOKEN = re.compile(
    r'\s*(?:(?P<punct>[\[\]{},:])|(?P<string>"(?:[^"\\]|\\.)*")|(?P<word>true|false|null)'
    r"|(?P<number>-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?))"
)


def canonical(text: str) -> str:
    """The canonical form of the JSON value ``text`` (valid JSON): strings as ``json.dumps`` writes them,
    numbers as ``n`` and their exact fraction, members of an object sorted."""
    stack: list[list] = []  # open containers: [is an object, members, the key read and not yet given a value]
    value = ""
    position = 0
    while True:
        match = _TOKEN.match(text, position)
        if match is None:
            return value
        position = match.end()
        punct = match["punct"]
        if punct == "[" or punct == "{":
            stack.append([punct == "{", {} if punct == "{" else [], None])
            continue
        if punct == "," or punct == ":":
            continue
        if punct is not None:  # a closing bracket
            is_object, members, _ = stack.pop()
            if is_object:
                value = "{" + ",".join(f"{key}:{members[key]}" for key in sorted(members)) + "}"
            else:
                value = "[" + ",".join(members) + "]"
        elif match["string"] is not None:
            value = json.dumps(json.loads(match["string"]))
            if stack and stack[-1][0] and stack[-1][2] is None:
                stack[-1][2] = value  # a key
                continue
        elif match["word"] is not None:
            value = match["word"]
        else:
            value = f"n{to_fraction(json.loads(match['number']))}"
        if not stack:
            return value
        top = stack[-1]
        if top[0]:
            top[1][top[2]] = value  # (a repeated key keeps its last value, as json.loads does)
            top[2] = None
        else:
            top[1].append(value)
