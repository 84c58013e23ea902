"""The program of the compiled JSON machine (core/_machine.c) for a schema it covers, built from the schema's
intermediate form; None for a schema it does not cover, which the Python parsers answer alone.

The machine holds a document's syntax (objects, arrays, whitespace, strings with every escape, numbers,
literals) and reads from the program the schema's answers for each value node: an object's names with
their value nodes, which are required, whether other keys may come and what their values are; an array's
item nodes and count limits; a string's content (any text, a length range, an automaton over decoded
characters: an enum, a pattern, a format, under a maximum length or not); a number's bounds and step; and
each node's fewest levels, which decide near ``max_depth`` what may still open. Covered: any value, objects
(of one rule set or several, as ``allOf`` leaves them) without ``patternProperties``, ``propertyNames``,
property counts or dependencies (at most 63 names), arrays without ``contains`` (with ``uniqueItems`` only
over strings of any text or an enum's words), numbers without excluded values whose bounds are decimals
M·10^e (|M| < 2^30) or, for integers and under ``multipleOf``, 64-bit integers in units of its last place,
sets of number values, booleans, null, unions of numbers, unions of several objects, arrays or strings (read
all their options' ways at once until the text tells them apart, at most ``MAX_WAYS`` ways in any state; not
in a schema with ``uniqueItems``), unions whose other options start with different characters, and
references that loop through an array, an object or a union of them. Layout and escapes follow
``JsonConfig`` (``property_order="schema"`` and ``whitespace_pattern`` are not covered).

The program is exact by construction for what it covers: each answer is the one the Python parsers give
(tests/test_machine.py compares masks and steps with them).
"""

from __future__ import annotations

import math
import struct
from array import array
from bisect import bisect_right
from collections.abc import Hashable
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core import backend
from ..core.automaton import native_automaton
from ..core.cache_release import register_memo
from .formats.content import Content, LengthContent, RegexContent, TrieContent
from .object_names import object_names
from .schema.ir import AnyValue, Array, Boolean, Never, Node, Null, Number, Object, String, Union, deref
from .schema.number_bounds import NumberContext
from .strings import StringParser

if TYPE_CHECKING:
    from .compile import Compiler

MAGIC = 0x4A534D31
HEADER = 16
K_ANY, K_OBJECT, K_ARRAY, K_STRING, K_NUMBER, K_BOOL, K_NULL, K_UNION, K_NUMSET = range(9)
C_ANY, C_LENGTH, C_AUTOMATON, C_CAPPED = range(4)
U_NONE, U_ANY, U_WORDS = range(3)
WORDS_CAP = 1 << 30
MAX_NAMES = 63
ROOM_GUARD = 128
"""The fewest levels a node's values need must stay below this (core/_machine.c): the Python parsers narrow
a container to the levels left within this many levels of ``max_depth`` (jsonschema/depth.py)."""
MAX_WAYS = 16
"""A union of several objects, arrays or strings is read as several whole states at once (one per option still
possible): a schema whose states could hold more of them is left to the Python parsers
(``_Builder._check_ways``; the machine keeps up to 64, core/_machine.c)."""
MAX_NESTING = 200
"""Schemas whose nodes nest deeper are left to the Python parsers (which build any depth without recursion):
the program is built by recursion over the nodes."""
MAX_CONTENT_STATES = 4096
"""A string content explored into an automaton (an enum's words, a pattern under length limits) may have
this many states; more, and the schema stays on the Python parsers."""
_END = 0x110000

_AUTOMATA: dict[Hashable, Any] = {}
"""A content's identity by value -> (its ``_native.Automaton``, the words each state accepts or None where
they are not counted) (False: not explorable), shared by schemas."""
register_memo(_AUTOMATA.clear)  # emptied when a burst of enforcers ends (core/cache_release.py)

_STARTS = ("{", "[", '"', "")
"""Classes of a value's first character for the bound on ways: the three that a union's options of one kind
may share, and any other (numbers, booleans and null, which a union never reads several ways)."""
_FORKED = (K_OBJECT, K_ARRAY, K_STRING)
"""The kinds of which a union may hold several options: the machine reads them all their ways at once
(core/_machine.c, ``fork_options``). Each starts with its own character, which no other kind starts with."""
_FIRST = {K_OBJECT: "{", K_ARRAY: "[", K_STRING: '"', K_NUMBER: "-0123456789", K_NUMSET: "-0123456789", K_NULL: "n"}


class NotCovered(Exception):
    """The schema holds something the machine does not read; the Python parsers answer it."""


class _Builder:
    def __init__(self, compiler: Compiler, root: Node) -> None:
        self.compiler = compiler
        self.root = root
        self.depths: dict[int, int] = {}
        """id of a node -> the fewest levels its values need, from the passes made so far."""
        self.config = compiler.config
        self.merger = compiler.merger
        self.escapable = compiler.escapable
        self.automata: list[Any] = []
        self.automaton_index: dict[int, int] = {}
        self.distances: dict[int, list[int]] = {}
        """automaton index -> the fewest characters from each state to an accepting one (capped strings)."""
        self.records: list[list[int] | None] = []
        self.ids: dict[int, int] = {}
        self.keep: list[Node] = []
        self.busy: set[int] = set()
        self.kinds: dict[int, int] = {}
        """node id -> its kind, for the containers whose record is still being built (a loop through them)."""
        self.min_depths: list[int] = []
        """Per node, the fewest arrays and objects open at once in a value of it (finite.py)."""
        self.containers: dict[int, Node] = {}
        self.loops = False
        """Whether a container was met again while being built (a recursive schema)."""
        self.any = self._new([K_ANY], 0)
        self.any_string = self._new([K_STRING, C_ANY, 0, -1], 0)
        self.any_number = self._new([K_NUMBER, 0, 0, 0, 0, 0, 0, 1, 0], 0)
        self.any_object = self._new([K_OBJECT, self.any, 0, 0, -1, 0], 1)  # (its trie: the empty key trie)
        self.any_array = self._new([K_ARRAY, self.any, 0, -1, 0, U_NONE, 0], 1)
        self.words: dict[int, list[int]] = {}
        """uniqueItems array node -> the words each state of its items' automaton accepts (U_WORDS)."""
        self.tries: list[tuple[int, list[tuple[str, ...]]]] = [(self.any_object, [])]

    def _new(self, record: list[int] | None, min_depth: int) -> int:
        if not 0 <= min_depth < ROOM_GUARD:
            raise NotCovered("a value that needs too many levels")
        self.records.append(record)
        self.min_depths.append(min_depth)
        return len(self.records) - 1

    def _depth(self, node: Node) -> int:
        """The fewest levels a value of ``node`` needs (NotCovered where it has no finite value)."""
        depth = self.depths.get(id(node))
        if depth is None:  # one pass over what a value of the node needs (finite.py), kept for the others
            self.depths.update(self.compiler._finite.min_depths(node))  # noqa: SLF001
            self.keep.append(node)
            depth = self.depths.get(id(node))
        if depth is None:
            raise NotCovered("a value with no finite instance")
        return depth

    def _container(self, node: Node, kind: int) -> int:
        """A container's id before its record: a loop through it (a recursive schema) meets this id. Its
        fewest levels are filled in by ``finish`` (where they can matter)."""
        ident = self._new(None, 0)
        self.ids[id(node)] = ident
        self.kinds[ident] = kind
        self.containers[ident] = node
        return ident

    def finish(self, root: int) -> None:
        """Fills in the fewest levels of the containers and unions where some may be read: a schema that
        loops, or one nested within ``ROOM_GUARD`` levels of ``max_depth``. Elsewhere the machine never reads
        them (a typed container's values always have more room than any of them needs), so the finiteness
        pass is not made (the time to first mask)."""
        self._check_ways()
        if not self.loops and self._height(root) < self.config.max_depth - ROOM_GUARD:
            return
        for ident, node in self.containers.items():
            depth = self._depth(node)
            if depth >= ROOM_GUARD:
                raise NotCovered("a value that needs too many levels")
            self.min_depths[ident] = depth
        for ident, record in enumerate(self.records):
            if record is not None and record[0] == K_UNION:
                self.min_depths[ident] = min(self.min_depths[o] for o in record[2:])

    def _check_ways(self) -> None:
        """NotCovered where a state could hold more than ``MAX_WAYS`` ways. A union of several objects, arrays
        or strings is read all those options' ways at once (core/_machine.c, ``fork_options``), each way a
        whole state, until the text rules options out; inside the value of a key, every object option that
        takes the key reads it its own way (inside an item, every array option), so a value of such a union
        may be read, at once, the sum over those options of the ways of their values there that start with
        the character read (at least one way per option between values). Per node and first character
        (``_STARTS``), the least fixed point of these sums over the program (nested values, loops included)
        bounds every state's ways."""
        records = self.records
        unique = any(r[0] == K_ARRAY and r[5 + r[4]] != U_NONE for r in records)  # type: ignore[index]
        for record in records:  # (a state holds item words or several ways, not both: core/_machine.c)
            if unique and record[0] == K_UNION:  # type: ignore[index]
                kinds = [self._kind(o) for o in record[2:]]  # type: ignore[index]
                if any(kinds.count(k) > 1 for k in (K_OBJECT, K_ARRAY, K_STRING)):
                    raise NotCovered("a union read several ways beside a uniqueItems array")
        names = dict(self.tries)
        starts = [self._starts(ident) for ident in range(len(records))]
        ways = [[1 if c in start else 0 for c in range(len(_STARTS))] for start in starts]
        changed = True
        while changed:
            changed = False
            for ident, record in enumerate(records):
                kind = record[0]  # type: ignore[index]
                if kind == K_OBJECT:
                    inner = [v for v in record[6:] if v >= 0] + ([record[1]] if record[1] >= 0 else [])  # type: ignore
                    values = {_STARTS.index("{"): max((max(ways[v]) for v in inner), default=1)}
                elif kind == K_ARRAY:
                    items = [record[1], *record[5 : 5 + record[4]]]  # type: ignore[index, operator]
                    values = {_STARTS.index("["): max(max(ways[v]) for v in items)}
                elif kind == K_UNION:
                    values = self._union_ways(record[2:], names, ways, starts)  # type: ignore[index]
                else:
                    continue
                for c, value in values.items():
                    if value > ways[ident][c]:
                        if value > MAX_WAYS:
                            raise NotCovered(f"a union read more than {MAX_WAYS} ways at once")
                        ways[ident][c] = value
                        changed = True

    def _starts(self, ident: int) -> set[int]:
        """The classes (``_STARTS``) of the first characters of a value of the node."""
        record = self.records[ident]
        kind = record[0]  # type: ignore[index]
        if kind == K_ANY:
            return set(range(len(_STARTS)))
        if kind == K_UNION:
            return {c for o in record[2:] for c in self._starts(o)}  # type: ignore[index]
        first = {K_OBJECT: "{", K_ARRAY: "[", K_STRING: '"'}.get(kind, "")
        return {_STARTS.index(first)}

    def _union_ways(
        self, options: list[int], names: dict[int, list[str]], ways: list[list[int]], starts: list[set[int]]
    ) -> dict[int, int]:
        """Per first character, the ways a value of a union with these options may be read at once, from the
        ways of its parts."""
        records = self.records
        out = {}
        for c in range(len(_STARTS)):
            alike = [o for o in options if c in starts[o]]
            if len(alike) < 2 or _STARTS[c] == "":  # (one option, or kinds that never fork)
                out[c] = max((ways[o][c] for o in alike), default=0)
                continue
            sums = [len(alike)]
            if _STARTS[c] == "[":  # an item of each array option, whichever it is
                items = [[records[o][1], *records[o][5 : 5 + records[o][4]]] for o in alike]  # type: ignore[index, misc]
                sums.extend(sum(max(ways[v][d] for v in nodes) for nodes in items) for d in range(len(_STARTS)))
            elif _STARTS[c] == "{":
                keys = {name for o in alike for name in names[o]}
                for key in [*keys, None]:  # (None: a key no option names, an extra key of the open ones)
                    values = []
                    for o in alike:
                        record = records[o]
                        own = names[o]
                        if key is not None and key in own:
                            values.append(record[6 + own.index(key)])  # type: ignore[index]
                        elif record[1] >= 0:  # type: ignore[index]
                            values.append(record[1])  # type: ignore[index]
                    sums.extend(sum(ways[v][d] for v in values) for d in range(len(_STARTS)))
            out[c] = max(sums)
        return out

    def _height(self, root: int) -> int:
        """The most typed arrays and objects nested in a value of the (loop-free) program."""
        heights: dict[int, int] = {}

        def height(ident: int) -> int:
            hit = heights.get(ident)
            if hit is None:
                record = self.records[ident]
                kind = record[0]  # type: ignore[index]
                if kind == K_OBJECT:
                    children = list(record[6:]) + ([record[1]] if record[1] >= 0 else [])  # type: ignore[index]
                elif kind == K_ARRAY:
                    children = [record[1], *record[5 : 5 + record[4]]]  # type: ignore[index]
                elif kind == K_UNION:
                    children = list(record[2:])  # type: ignore[index]
                else:
                    children = []
                below = max((height(c) for c in children if c != self.any), default=0)
                hit = heights[ident] = below + (1 if kind in (K_OBJECT, K_ARRAY) else 0)
            return hit

        return height(root)

    def node(self, node: Node) -> int:
        """The id of ``node``'s record (built once); NotCovered where the machine cannot read it."""
        target = deref(node)
        key = id(target)
        hit = self.ids.get(key)
        if hit is not None:
            if self.records[hit] is None:
                self.loops = True
            return hit
        if key in self.busy:
            raise NotCovered("a reference that loops outside an array or object")
        if len(self.busy) >= MAX_NESTING:
            raise NotCovered("nodes nested deeper than the builder goes")
        self.busy.add(key)
        self.keep.append(target)
        try:
            ident = self._build(target)
        finally:
            self.busy.discard(key)
        self.ids[key] = ident
        return ident

    def _build(self, node: Node) -> int:
        if isinstance(node, AnyValue):
            return self.any
        if isinstance(node, Null):
            return self._leaf([K_NULL])
        if isinstance(node, Boolean):
            if not node.values:
                raise NotCovered("no boolean")
            return self._leaf([K_BOOL, (1 if True in node.values else 0) | (2 if False in node.values else 0)])
        if isinstance(node, Number):
            return self._leaf(_number_record(node))
        if isinstance(node, String):
            return self._string(node)
        if isinstance(node, Array):
            return self._array(node)
        if isinstance(node, Object):
            return self._object(node)
        if isinstance(node, Union):
            return self._union(node)
        raise NotCovered(type(node).__name__)

    def _string(self, node: String) -> int:
        """A string by the content automaton its Python parser reads (compile.py builds it once per node)."""
        start = self.compiler.start(node)
        if not isinstance(start, StringParser) or start._escapable is not self.escapable:
            raise NotCovered("a string the machine does not read")
        content = start._content
        if type(content) is LengthContent:
            if content.low == 0 and content.high is None:
                return self._leaf([K_STRING, C_ANY, 0, -1])
            return self._leaf([K_STRING, C_LENGTH, content.low, -1 if content.high is None else content.high])
        if isinstance(content, RegexContent) and content.low == 0 and content.high is not None:
            # a pattern or format under a maximum length (an email's 254 characters): its DFA, the length
            # read, and per state the fewest characters to an accepting one
            automaton = native_automaton(content.dfa)
            if automaton is None:
                raise NotCovered("an automaton too big to export")
            index = self._automaton(automaton)
            distances = content.dfa.distances()
            self.distances.setdefault(index, distances)
            return self._leaf([K_STRING, C_CAPPED, index, content.high, -1, max(distances)])
        automaton, state, _ = _content_automaton(content)
        return self._leaf([K_STRING, C_AUTOMATON, self._automaton(automaton), state])

    def _automaton(self, automaton: Any) -> int:
        index = self.automaton_index.get(id(automaton))
        if index is None:
            index = self.automaton_index[id(automaton)] = len(self.automata)
            self.automata.append(automaton)
        return index

    def _leaf(self, record: list[int]) -> int:
        return self._new(record, 0)

    def _array(self, node: Array) -> int:
        if node.contains is not None or node.also_contains or node.evaluated_by:
            raise NotCovered("contains")
        if isinstance(deref(node.items), Never) or any(isinstance(deref(p), Never) for p in node.prefix):
            raise NotCovered("an item with no value")
        ident = self._container(node, K_ARRAY)
        items = self.node(node.items)
        prefix = [self.node(p) for p in node.prefix]
        high = -1 if node.max_items is None else node.max_items
        if node.min_items >= _BOUND or high >= _BOUND:
            raise NotCovered("an item count of 2^30 or more")
        unique = U_NONE
        if node.unique and (node.max_items is None or node.max_items > 1):  # (one item is always unique)
            unique = self._unique(node, ident)
        self.records[ident] = [K_ARRAY, items, node.min_items, high, len(prefix), *prefix, unique, 0]
        return ident

    def _unique(self, node: Array, ident: int) -> int:
        """The uniqueItems kind of an array the machine reads: strings of any text (the Python parsers exclude
        the values seen: ``ExcludeContent``), or an enum's words (a smaller enum each item), whose automaton's
        word counts go with the program."""
        items = deref(node.items)
        if node.prefix or not isinstance(items, String):
            raise NotCovered("uniqueItems over items other than strings")
        start = self.compiler.start(items)
        content = start._content if isinstance(start, StringParser) else None
        if type(content) is LengthContent and content.high is None:
            return U_ANY
        if isinstance(content, TrieContent):
            _, _, words = _content_automaton(content)
            if words is not None:
                self.words[ident] = words
                return U_WORDS
        raise NotCovered("uniqueItems over strings with a pattern, format or maximum length")

    def _object(self, node: Object) -> int:
        if any(side.patterns for side in node.sides):
            raise NotCovered("patternProperties")
        if node.property_names is not None or node.min_properties or node.max_properties is not None:
            raise NotCovered("propertyNames or a property count")
        if node.dependent_required or node.exists:
            raise NotCovered("dependentRequired or a member that must exist")
        facts = object_names(node, self.merger)
        names = facts.names
        if len(names) > MAX_NAMES:
            raise NotCovered("more than 63 names")
        if facts.usable != (1 << len(names)) - 1:
            raise NotCovered("a name that cannot be written")
        additional: Node = AnyValue()  # (an extra key's value meets every rule set's additionalProperties)
        for side in node.sides:
            additional = self.merger.lazy_and(additional, side.additional)
        additional = deref(additional)
        ident = self._container(node, K_OBJECT)
        values = [self.node(v) for v in facts.values]
        extra = -1 if isinstance(additional, Never) else self.node(additional)
        required = facts.required
        record = [K_OBJECT, extra, required & 0xFFFFFFFF, required >> 32, -1, len(names), *values]
        self.records[ident] = [v - (1 << 32) if v >= 1 << 31 else v for v in record]
        self.tries.append((ident, list(names)))
        return ident

    def _union(self, node: Union) -> int:
        ident = None
        if len(node.options) > 1 and any(isinstance(deref(o), (Object, Array)) for o in node.options):
            # a union holding a container gets its id first, as a container does: a reference that loops
            # through it (a recursive oneOf of objects, a JSON value's object or array of values) meets that id
            ident = self._new(None, 0)
            self.ids[id(node)] = ident
            self.kinds[ident] = K_UNION
        options = [self.node(o) for o in node.options]
        numbers = [o for o in options if self._kind(o) == K_NUMBER]
        if len(numbers) > 1:  # several numbers (a number enum, integer or number): one text, any of them
            records = _same_places([self.records[o] for o in numbers])  # type: ignore[misc]
            if sum(r[1] == 3 for r in records) > 1:
                raise NotCovered("several sets of number values in one union")
            head = [K_NUMSET, len(numbers)]
            tables: list[int] = []
            for index, record in enumerate(records):  # (a set's table moves past the options)
                option = record[:NUM_WORDS]
                if record[1] == 3:
                    option[3] = 2 + NUM_WORDS * len(records) + len(tables) - (2 + NUM_WORDS * index)
                    tables.extend(record[NUM_WORDS:])
                head.extend(option)
            merged = self._leaf(head + tables)
            options = [o for o in options if o not in numbers] + [merged]
        if len(options) == 1 and ident is None:
            return options[0]
        taken: set[str] = set()
        for option in options:
            kind = self._kind(option)
            if kind in (K_ANY, K_UNION):
                raise NotCovered("a union of any values or of unions")
            if kind == K_BOOL:
                record = self.records[option]
                first = ("t" if record[1] & 1 else "") + ("f" if record[1] & 2 else "")  # type: ignore[index]
            else:
                first = _FIRST[kind]
            if taken & set(first) and kind not in _FORKED:  # (those are read several ways at once)
                raise NotCovered("union options that start alike")
            taken |= set(first)
        if ident is None:
            return self._new([K_UNION, len(options), *options], min(self.min_depths[o] for o in options))
        self.records[ident] = [K_UNION, len(options), *options]  # (its fewest levels: ``finish``)
        return ident

    def _kind(self, ident: int) -> int:
        record = self.records[ident]
        return self.kinds[ident] if record is None else record[0]

    def names(self) -> bytes:
        """Each object's names as int32 words (node id, count, then length and code points per name): the
        machine builds their key tries (``_native.Machine``)."""
        words = array("i")
        for ident, names in self.tries:
            words.extend((ident, len(names)))
            for name in names:
                points = array("i", name.encode("utf-32-le"))
                words.append(len(points))
                words.extend(points)
        return words.tobytes()

    def code(self, root: int) -> bytes:
        """The program's int32 words: header, node offsets, records, then the key tries."""
        config = self.config
        cap = config.max_whitespace if config.whitespace == "flexible" else 0
        trail = min(config.max_trailing_whitespace, cap)
        records = self.records
        offsets = []
        body: list[int] = []
        at = HEADER + 2 * len(records)  # (the offsets, then the min-depth table)
        for record in records:
            assert record is not None
            offsets.append(at + len(body))
            body.extend(record)
        code = [0] * HEADER
        code[:13] = [MAGIC, len(records), root, self.any, self.any_object, self.any_array, self.any_string,
                     self.any_number, cap, cap, trail, config.max_depth, 1 if config.ascii_escapes else 0]  # fmt: skip
        code.extend(offsets)
        code[13] = len(code)
        code.extend(self.min_depths)
        code.extend(body)
        placed: dict[int, int] = {}
        for index, distances in self.distances.items():
            placed[index] = len(code)
            code.extend(distances)
        for ident, record in enumerate(records):
            if record[0] == K_STRING and record[1] == C_CAPPED:
                code[offsets[ident] + 4] = placed[record[2]]
        for ident, words in self.words.items():
            code[offsets[ident] + 6 + records[ident][4]] = len(code)  # type: ignore[index]
            code.extend(words)
        return struct.pack(f"<{len(code)}i", *code)


_BOUND = 1 << 30


SCALE_CAP = 1000
"""A number bound is the decimal M·10^scale with |M| < 2^30 and |scale| at most this (core/_machine.c)."""


PLACES_CAP = 18
"""A number's ``multipleOf`` is read as step / 10^places with places at most this (core/_machine.c)."""


def _number_record(node: Number) -> list[int]:
    """The K_NUMBER record of a number node: [K_NUMBER, kind, flags, minimum, maximum, minimum's scale,
    maximum's scale, step, places], flags 1 for a minimum, 2 for a maximum, 4 and 8 when each is exclusive.

    An integer (kind 1): its bounds become the nearest integers inside them (inclusive, as number_bounds.py's
    ``_integer_set``), each in two words (low and high 32 bits), and its values the multiples of ``step``. A
    number under ``multipleOf`` step / 10^places (kind 2, plain notation): the same in units of 10^-places.
    Another number (kind 0): its bounds as written, each a decimal M·10^scale. NotCovered for what the machine
    does not decide (see the reasons)."""
    if node.values is not None:
        return _set_record(node)
    if node.excluded or node.not_multiples:
        raise NotCovered("a number with excluded values")
    if node.integer or node.multiple_of is not None:
        places, step = 0, 1
        if node.integer:
            step = 1 if node.multiple_of is None else node.multiple_of.numerator  # (number_bounds.py's _lcm_int)
        else:
            places, step = _places(node.multiple_of)  # type: ignore[arg-type]
        if step >= _BOUND:
            raise NotCovered("a multipleOf of 2^30 or more (in units of its last decimal place)")
        scale = Fraction(10**places)
        flags, low, high = _integer_bounds(node, scale)  # (each in two words: the low 32 bits, then the high ones)
        kind = 1 if node.integer else 2
        return [K_NUMBER, kind, flags, _int32(low), _int32(high), _int32(low >> 32), _int32(high >> 32), step, places]
    flags, low, high, low_scale, high_scale = 0, 0, 0, 0, 0
    for bound, bit, open_bit, is_open in ((node.low, 1, 4, node.low_open), (node.high, 2, 8, node.high_open)):
        if bound is None:
            continue
        mantissa, scale = _decimal(bound)
        flags |= bit | (open_bit if is_open else 0)
        if bit == 1:
            low, low_scale = mantissa, scale
        else:
            high, high_scale = mantissa, scale
    return [K_NUMBER, 0, flags, low, high, low_scale, high_scale, 1, 0]


NUM_WORDS = 9
"""A K_NUMBER record's words (a set of values adds its automaton's table after them)."""
_SET_CHARACTERS = "-.0123456789"
"""A set's automaton's characters, in the order of its table's columns (core/_machine.c's ``set_class``)."""


def _set_record(node: Number) -> list[int]:
    """The record of a number with a set of ``values`` (a large number enum): the automaton of the texts the
    Python parser writes for them (number_bounds.py's ``_set_feasible``), plain notation, a ``-`` for those
    <= 0 (``-0`` for 0), a fraction padded with zeros at will (an integer: no fraction). A prefix can go on
    exactly when it starts some value's shortest text (or that text padded with zeros), so the automaton is
    the trie of the shortest texts (with ``W.`` for each integral W) plus one state that takes more zeros."""
    ctx = NumberContext(node)
    texts: set[str] = set()
    for sign, values in (("", ctx.values_positive), ("-", ctx.values_negative)):
        for value in values or ():
            text = _plain(value)
            texts.add(sign + text)
            if not node.integer and "." not in text:
                texts.add(sign + text + ".")
    trie: dict[str, int] = {"": 0}
    for text in sorted(texts):
        for end in range(1, len(text) + 1):
            trie.setdefault(text[:end], len(trie))
    if len(trie) >= MAX_CONTENT_STATES:
        raise NotCovered("a set of number values with too many texts")
    pad = len(trie)  # (more zeros after a value's text)
    states = pad + 1
    words = set(texts)

    def value_of(text: str) -> bool:  # whether a text with a fraction digit denotes a value (zeros stripped)
        return "." in text and not text.endswith(".") and text.rstrip("0").rstrip(".") in words

    table = [-1] * (states * len(_SET_CHARACTERS))
    accepting = [0] * states
    for text, state in trie.items():
        for k, ch in enumerate(_SET_CHARACTERS):
            target = trie.get(text + ch)
            if target is None and ch == "0" and value_of(text + "0"):
                target = pad
            if target is not None:
                table[state * len(_SET_CHARACTERS) + k] = target
        accepting[state] = 1 if (text in words and not text.endswith(".")) or value_of(text) else 0
    table[pad * len(_SET_CHARACTERS) + _SET_CHARACTERS.index("0")] = pad
    accepting[pad] = 1
    return [K_NUMBER, 3, 0, NUM_WORDS, states, 0, 0, 1, 0, *table, *accepting]


def _plain(value: Fraction) -> str:
    """The shortest plain decimal text of ``value`` >= 0 (a finite decimal)."""
    whole, rest = divmod(value, 1)
    digits = ""
    while rest:
        rest *= 10
        digit, rest = divmod(rest, 1)
        digits += str(digit)
    return str(whole) + ("." + digits if digits else "")


def _same_places(records: list[list[int]]) -> list[list[int]]:
    """The number records of a set with their multipleOf options (kind 2) in the same units, the finest of
    them (the machine reads the digits of one text once for all): 0.5 with 0.25 is 50 with 25 hundredths."""
    places = max((r[8] for r in records if r[1] == 2), default=0)
    out = []
    for record in records:
        if record[1] == 2 and record[8] < places:
            factor = 10 ** (places - record[8])
            low = ((record[5] << 32) | (record[3] & 0xFFFFFFFF)) * factor
            high = ((record[6] << 32) | (record[4] & 0xFFFFFFFF)) * factor
            step = record[7] * factor
            if step >= _BOUND or not (-(1 << 63) <= low < 1 << 63 and -(1 << 63) <= high < 1 << 63):
                raise NotCovered("a multipleOf of 2^30 or more (in units of its last decimal place)")
            record = [K_NUMBER, 2, record[2], _int32(low), _int32(high), _int32(low >> 32), _int32(high >> 32),
                      step, places]  # fmt: skip
        out.append(record)
    return out


def _places(multiple: Fraction) -> tuple[int, int]:
    """``multiple`` as (places, step) with multiple = step / 10^places, places as few as can be; NotCovered
    when it has no finite decimal form within PLACES_CAP places."""
    for places in range(PLACES_CAP + 1):
        units = multiple * 10**places
        if units.denominator == 1:
            return places, units.numerator
    raise NotCovered("a multipleOf with no short decimal form")


def _decimal(value: Fraction) -> tuple[int, int]:
    """``value`` as (M, scale) with value = M·10^scale, M not a multiple of ten (0 for 0); NotCovered where M
    would reach 2^30 or the scale SCALE_CAP (a bound of many digits)."""
    if value == 0:
        return 0, 0
    denominator = value.denominator
    twos = fives = 0
    while denominator % 2 == 0:
        denominator //= 2
        twos += 1
    while denominator % 5 == 0:
        denominator //= 5
        fives += 1
    places = max(twos, fives)
    if denominator != 1 or places > SCALE_CAP:  # (bounds come from JSON numbers: finite decimals)
        raise NotCovered("a number bound with no short decimal form")
    mantissa, scale = value.numerator * 10**places // value.denominator, -places
    while mantissa % 10 == 0 and scale <= SCALE_CAP:
        mantissa //= 10
        scale += 1
    if not -_BOUND < mantissa < _BOUND or scale > SCALE_CAP:
        raise NotCovered("a number bound whose significant digits reach 2^30")
    return mantissa, scale


def _int32(value: int) -> int:
    """The low 32 bits of ``value`` as a signed int32 word."""
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def _integer_bounds(node: Number, scale: Fraction = Fraction(1)) -> list[int]:
    """[flags, minimum, maximum] of an integer node, or of a number's bounds times ``scale``: flags 1 for a
    minimum, 2 for a maximum, each the nearest integer inside the bound as written, a 64-bit integer."""
    flags, low, high = 0, 0, 0
    if node.low is not None:
        bound = node.low * scale
        low = math.floor(bound) + 1 if node.low_open or bound != math.floor(bound) else int(bound)
        flags |= 1
    if node.high is not None:
        bound = node.high * scale
        high = math.ceil(bound) - 1 if node.high_open or bound != math.ceil(bound) else int(bound)
        flags |= 2
    if not (-(1 << 63) <= low < 1 << 63 and -(1 << 63) <= high < 1 << 63):
        raise NotCovered("an integer bound beyond 64 bits")
    return [flags, low, high]


def _content_automaton(content: Content) -> tuple[Any, int, list[int] | None]:
    """(``_native.Automaton``, start state, words) of a string content over decoded characters: a pattern or
    format without length limits is its pruned DFA as exported for the compiled walk; an enum's words and a
    pattern under length limits are explored state by state, with the words each state accepts where they
    are finitely many (else None). Shared by value across schemas."""
    if isinstance(content, RegexContent) and content.low == 0 and content.high is None:
        automaton = native_automaton(content.dfa)
        if automaton is None:
            raise NotCovered("an automaton too big to export")
        return automaton, 0, None
    if isinstance(content, TrieContent):
        ident: Hashable = ("words", content._words)
    elif isinstance(content, RegexContent):
        ident = content.value_ident()
    else:
        raise NotCovered(type(content).__name__)
    hit = _AUTOMATA.get(ident)
    if hit is None:
        if len(_AUTOMATA) >= 256:
            _AUTOMATA.clear()
        hit = _AUTOMATA[ident] = _explore(content) or False
    if hit is False:
        raise NotCovered("a string content with too many states")
    return hit[0], 0, hit[1]


def _word_counts(pieces: list[list[tuple[int, int, int]]], accepting: list[bool]) -> list[int] | None:
    """The words each state of an explored automaton accepts (capped at ``WORDS_CAP``), where every edge
    leads to a later state (an enum's trie, explored breadth first); None otherwise."""
    words = [0] * len(pieces)
    for state in range(len(pieces) - 1, -1, -1):
        total = 1 if accepting[state] else 0
        for a, b, target in pieces[state]:
            if target <= state:
                return None
            total += (b - a + 1) * words[target]
        words[state] = min(total, WORDS_CAP)
    return words


def _explore(content: Content) -> tuple[Any, list[int] | None] | None:
    """The content's reachable states as a ``_native.Automaton`` (state 0 its start) and the words each state
    accepts (``_word_counts``), or None when there are more than ``MAX_CONTENT_STATES`` or its characters
    cannot be grouped: every allowed interval between the content's class points (or every allowed
    character, where it has none) leads to one state."""
    points = content.class_points()
    edges = None if points is None else sorted({0, _END, *(p for p in points if 0 <= p <= _END)})
    states = [content.start()]
    index = {states[0]: 0}
    pieces: list[list[tuple[int, int, int]]] = []
    for state in states:
        row: list[tuple[int, int, int]] = []
        for lo, hi in content.allowed(state).intervals:
            if edges is None:
                if hi - lo > 255:
                    return None
                cuts = [(c, c) for c in range(lo, hi + 1)]
            else:
                first, last = bisect_right(edges, lo) - 1, bisect_right(edges, hi) - 1
                cuts = [(max(lo, edges[k]), min(hi, edges[k + 1] - 1)) for k in range(first, last + 1)]
            for a, b in cuts:
                rep = a if not 0xD800 <= a <= 0xDFFF else 0xE000
                if rep > b:
                    continue
                target = content.step(state, chr(rep))
                if target is None:
                    return None  # (allowed, yet refused: not one automaton)
                number = index.get(target)
                if number is None:
                    if len(states) >= MAX_CONTENT_STATES:
                        return None
                    number = index[target] = len(states)
                    states.append(target)
                row.append((a, b, number))
        pieces.append(row)
    bounds = sorted({x for row in pieces for a, b, _ in row for x in (a, b + 1)})
    lows = bounds[:-1]
    table = np.full((len(states), max(len(lows), 1)), -1, dtype=np.int32)
    for number, row in enumerate(pieces):
        for a, b, target in row:
            table[number, bisect_right(lows, a) - 1 : bisect_right(lows, b)] = target
    allow_start = [0]
    allow_lo: list[int] = []
    allow_hi: list[int] = []
    for state in states:
        for lo, hi in content.allowed(state).intervals:
            allow_lo.append(lo)
            allow_hi.append(hi)
        allow_start.append(len(allow_lo))
    accepting = [content.accepting(state) for state in states]
    automaton = backend.native.Automaton(  # type: ignore[union-attr]
        class_lo=np.array(lows, dtype=np.int32),
        class_hi=np.array([b - 1 for b in bounds[1:]], dtype=np.int32),
        class_id=np.arange(len(lows), dtype=np.int32),
        transitions=table.reshape(-1),
        accepting=np.array(accepting, dtype=np.uint8),
        allow_start=np.array(allow_start, dtype=np.int32),
        allow_lo=np.array(allow_lo, dtype=np.int32),
        allow_hi=np.array(allow_hi, dtype=np.int32),
        classes=max(len(lows), 1),
    )
    return automaton, _word_counts(pieces, accepting)


def machine(root: Node, compiler: Compiler) -> Any:
    """The compiled machine (``_native.Machine``) of the schema whose intermediate form is ``root``; None
    where it is not covered (see the module notes) or the compiled core is not in use."""
    config = compiler.config
    if not backend.active() or config.whitespace_pattern is not None or config.property_order != "any":
        return None
    builder = _Builder(compiler, root)
    try:
        ident = builder.node(root)
        builder.finish(ident)
    except NotCovered:
        return None
    return backend.native.Machine(builder.code(ident), tuple(builder.automata), builder.names())  # type: ignore[union-attr]
