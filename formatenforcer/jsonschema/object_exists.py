"""Members an object must hold (``Object.exists``, from ``not``): "some key of K has a value of V".

``not {propertyNames: S}`` needs a key that S refuses, ``not {additionalProperties: X}`` a key that no
property names and no pattern matches with a value that X refuses, ``not {patternProperties: {p: X}}`` a
key matching p with a value X refuses. Like an array's ``contains``, this is decided left to right: the
object state is wrapped (``ExistsObject``) with the set of members ``found`` so far and, while a value
whose key is in some K is read, a tracker per such member (the parser of V, fed the value's characters
beside it). ``}`` is refused until every member was found.

No dead end: while a member is missing the object must still be able to take one. ``Witnesses`` checks at
build time that for every member infinitely many extra keys (keys the object does not name) are in K, are
allowed by the object's own key rules (``propertyNames``, closed sides, patterns) and have a value that is
both V and the object's schema for that key, with a finite instance. Then, whatever was written, a fresh
such key exists (only finitely many were used), the object's own rules always let one more extra key come
(no ``maxProperties``: refused together with one), and after it the object can close as before. Where the
keys that could hold a member are finitely many, or the search below cannot show they are infinitely many,
the schema is refused (``Unsupported``): there the mask would have to force the last such key's value.

Key texts are kept (duplicates refused) so a key's membership in K is read from its text; where some K is
not simply "every extra key", keys are read character by character (no free-run stand-ins, whose text is
not known) so the text is exact.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import fields
from typing import TYPE_CHECKING

from ..core.charset import CharSet
from ..core.hooks import FreeRun, Lexeme, nested_alternatives, nested_first_char_split, nested_lexeme
from ..core.protocol import CharacterParser, MemoAllowed
from .after_value import after_value_lexeme
from .formats.content import Content, FreeContent
from .keys import MAX_PATTERNS, patterns_of
from .object_names import object_names
from .object_phases import AFTER, BEFORE, COLON, DONE, KEY, VALUE
from .schema.ir import (
    AnyValue,
    Array,
    Boolean,
    Never,
    Node,
    Null,
    Number,
    Object,
    String,
    Union,
    Unsupported,
    deref,
    union_of,
)
from .schema.merge import Merger
from .schema.validate import accepts
from .string_content import string_content
from .strings import StringParser

if TYPE_CHECKING:
    from .objects import ObjectContext, ObjectParser

SEARCH_STATES = 4096
"""Most product states the build-time search for infinitely many witness keys visits (docs/bad-input.md)."""


def _every_extra(keys: Node, names: tuple[str, ...]) -> bool:
    """Whether every key the object does not name is in ``keys``: then a key's text need not be read."""
    keys = deref(keys)
    if isinstance(keys, AnyValue):
        return True
    if not isinstance(keys, String):
        return False
    blank = String()
    rest = (keys.min_length, keys.max_length, keys.patterns, keys.formats, keys.values, keys.not_patterns,
            keys.not_formats)  # fmt: skip
    plain = rest == (blank.min_length, blank.max_length, blank.patterns, blank.formats, blank.values,
                     blank.not_patterns, blank.not_formats)  # fmt: skip
    return plain and keys.excluded <= set(names)


def _points(contents: list[Content]) -> list[int]:
    """The class boundaries the automata report (characters between two of them behave alike in each)."""
    out: set[int] = set()
    for content in contents:
        points = content.class_points()
        if points:
            out |= points
    return sorted(out)


def _infinite(contents: list[Content]) -> str:
    """Whether the texts every one of ``contents`` accepts are infinitely many: "infinite", "empty", or
    "unsure" (finitely many, or the bounded search could not tell). A depth-first search over the product
    of their states, trying the ends of each allowed interval and the class boundaries inside it; a cycle
    from which an accepting state is reachable proves infinitely many (a sufficient test)."""
    points = _points(contents)
    start = tuple(c.start() for c in contents)
    edges: dict[tuple, list[tuple]] = {}
    accepting: set[tuple] = set()
    stack = [start]
    edges[start] = []
    complete = True
    while stack:
        state = stack.pop()
        if all(c.accepting(s) for c, s in zip(contents, state)):
            accepting.add(state)
        allowed: CharSet | None = None
        for c, s in zip(contents, state):
            allowed = c.allowed(s) if allowed is None else allowed & c.allowed(s)
        tried: set[int] = set()
        for lo, hi in allowed.intervals if allowed is not None else ():
            inner = [p for p in points[_bisect(points, lo + 1) : _bisect(points, hi + 1)]][:64]
            for point in (lo, hi, *inner):
                if point in tried or 0xD800 <= point <= 0xDFFF:
                    continue
                tried.add(point)
                ch = chr(point)
                after = []
                for c, s in zip(contents, state):
                    nxt = c.step(s, ch)
                    if nxt is None:
                        break
                    after.append(nxt)
                else:
                    target = tuple(after)
                    edges[state].append(target)
                    if target not in edges:
                        if len(edges) >= SEARCH_STATES:
                            complete = False
                            continue
                        edges[target] = []
                        stack.append(target)
    # the states from which an accepting one is reachable, then a cycle among them
    back: dict[tuple, list[tuple]] = {s: [] for s in edges}
    for s, targets in edges.items():
        for t in targets:
            back[t].append(s)
    live, todo = set(accepting), list(accepting)
    while todo:
        for s in back[todo.pop()]:
            if s not in live:
                live.add(s)
                todo.append(s)
    if not live:
        return "empty" if complete else "unsure"
    indegree = {s: 0 for s in live}
    for s in live:
        for t in edges[s]:
            if t in live:
                indegree[t] += 1
    todo = [s for s, d in indegree.items() if d == 0]
    removed = 0
    while todo:
        s = todo.pop()
        removed += 1
        for t in edges[s]:
            if t in live:
                indegree[t] -= 1
                if indegree[t] == 0:
                    todo.append(t)
    return "infinite" if removed < len(live) else "unsure"


def _bisect(points: list[int], value: int) -> int:
    lo, hi = 0, len(points)
    while lo < hi:
        mid = (lo + hi) // 2
        if points[mid] < value:
            lo = mid + 1
        else:
            hi = mid
    return lo


def value_combinations(node: Object, merger: Merger) -> list[tuple[frozenset[str], Node]]:
    """(patterns matched, value schema) for every set of the object's key patterns an extra key may match:
    the intersection, over sides, of the matched patterns' schemas or ``additionalProperties``."""
    patterns = patterns_of(node)
    if len(patterns) > MAX_PATTERNS:
        raise Unsupported("not", "'not' of an object rule on keys it does not name, with many key patterns")
    out = []
    for bits in range(1 << len(patterns)):
        matched = frozenset(p for i, p in enumerate(patterns) if bits >> i & 1)
        schema: Node = AnyValue()
        for side in node.sides:
            for part in [s for p, s in side.patterns if p in matched] or [side.additional]:
                schema = merger.intersect(schema, part)
        out.append((matched, schema))
    return out


def member_values(node: Object, merger: Merger) -> list[Node]:
    """Per member of ``node.exists``: the values an extra key holding it may have (the union over
    ``value_combinations`` of each with the member's value schema), for the finiteness check."""
    combos = [schema for _, schema in value_combinations(node, merger)]
    facts = object_names(node, merger)
    out = []
    for keys, value in node.exists:
        named = [facts.values[i] for i, name in enumerate(facts.names) if accepts(keys, name)]
        out.append(union_of([merger.intersect(schema, value) for schema in combos + named]))
    return out


_MISSING = object()
_MEMO = 65536
"""Most steps (and runs) a ``MarkedKeys`` remembers before it starts over (a walk asks the same ones)."""


class MarkedKeys(Content):
    """The extra-key automaton ``extras`` with, beside it, the automata of the members' key sets whose
    membership a key's text decides (``marks``): state (extras state, (mark state or None once the text
    has left that key set, ...)). The marks never refuse a character (a key outside a member's key set is
    still a key), so this accepts exactly what ``extras`` does; a closed key's state says which key sets
    hold it, however the key was read (character by character or in a free run)."""

    __slots__ = ("extras", "marks", "_steps", "_runs")

    def __init__(self, extras: Content, marks: tuple[Content | None, ...]) -> None:
        self.extras, self.marks = extras, marks
        self._steps: dict[tuple, tuple | None] = {}
        self._runs: dict[tuple, FreeContent | None] = {}

    def start(self) -> tuple:
        return (self.extras.start(), tuple(None if m is None else m.start() for m in self.marks))

    def step(self, state: tuple, ch: str) -> tuple | None:
        memo = self._steps
        hit = memo.get((state, ch), _MISSING)
        if hit is _MISSING:
            if len(memo) > _MEMO:
                memo.clear()
            hit = memo[(state, ch)] = self._step(state, ch)
        return hit  # type: ignore[return-value]

    def _step(self, state: tuple, ch: str) -> tuple | None:
        extra = self.extras.step(state[0], ch)
        if extra is None:
            return None
        marks = tuple(None if s is None else m.step(s, ch) for m, s in zip(self.marks, state[1]))  # type: ignore[union-attr]
        return (extra, marks)

    def allowed(self, state: tuple) -> CharSet:
        return self.extras.allowed(state[0])

    def accepting(self, state: tuple) -> bool:
        return self.extras.accepting(state[0])

    def inside(self, state: tuple) -> int:
        """The bit mask of the marked key sets that hold the text read (once the key closes)."""
        out = 0
        for i, (m, s) in enumerate(zip(self.marks, state[1])):
            if s is not None and m.accepting(s):  # type: ignore[union-attr]
                out |= 1 << i
        return out

    def free(self, state: tuple) -> FreeContent | None:
        memo = self._runs
        hit = memo.get(state, _MISSING)
        if hit is _MISSING:
            if len(memo) > _MEMO:
                memo.clear()
            hit = memo[state] = self._free(state)
        return hit  # type: ignore[return-value]

    def _free(self, state: tuple) -> FreeContent | None:
        """The extras' run where every live mark runs too (over the characters they share): a mark reads
        ``n`` of them as its run says, and past its run's bound it has refused one (the text left its key
        set). The other characters are exits, walked from the state after the run."""
        inner = self.extras.free(state[0])
        if inner is None:
            return None
        chars, room, after = inner
        runs = []
        for m, s in zip(self.marks, state[1]):
            if s is None:
                runs.append(None)
                continue
            own = m.free(s)  # type: ignore[union-attr]
            if own is None:
                return None
            chars = chars & own[0]
            runs.append(own)
        if not chars.intervals:
            return None

        def after_run(n: int) -> tuple:
            return (after(n), tuple(None if run is None or (run[1] is not None and n > run[1]) else run[2](n)
                                    for run in runs))  # fmt: skip

        return chars, room, lambda n: after_run(n) if n else state


_KIND_FIRSTS = {Null: "n", Number: "-0123456789", String: '"', Array: "[", Object: "{"}


def whole_kinds(node: Node) -> str:
    """The first characters of a JSON value after which every value is an instance of ``node``: those of
    each kind ``node`` holds without a constraint (``not {"type": "string"}`` holds every object, array,
    number, boolean and null)."""
    node = deref(node)
    if isinstance(node, AnyValue):
        return "".join(_KIND_FIRSTS.values()) + "tf"
    if isinstance(node, Union):
        return "".join(dict.fromkeys("".join(whole_kinds(option) for option in node.options)))
    if isinstance(node, Boolean):
        return ("t" if True in node.values else "") + ("f" if False in node.values else "")
    if isinstance(node, Null) or (isinstance(node, (Number, String, Array, Object)) and _unconstrained(node)):
        return _KIND_FIRSTS[type(node)]
    return ""


def _unconstrained(node: Number | String | Array | Object) -> bool:
    """Whether ``node`` holds every value of its kind."""
    if isinstance(node, (Number, String)):
        return all(getattr(node, f.name) == f.default for f in fields(node))  # (every field has a default)
    if isinstance(node, Array):
        return (
            not node.prefix and isinstance(deref(node.items), AnyValue) and node.min_items == 0
            and node.max_items is None and not node.unique and node.contains is None and not node.also_contains
        )  # fmt: skip
    return (
        all(not side.properties and not side.patterns and isinstance(deref(side.additional), AnyValue)
            for side in node.sides)
        and not node.required and node.property_names is None and node.min_properties == 0
        and node.max_properties is None and not node.dependent_required and not node.exists
    )  # fmt: skip


class Witnesses:
    """The members one object must hold, checked at build time (see the module docstring)."""

    def __init__(self, ctx: ObjectContext) -> None:
        node: Object = ctx.node
        self.ctx = ctx
        self.members = node.exists
        self.all = (1 << len(self.members)) - 1
        names = ctx.names
        self.every_extra = [_every_extra(keys, names) for keys, _ in self.members]
        # the members whose key set a key's text decides: their automata ride along the extra keys' one
        self.marked = [i for i, every in enumerate(self.every_extra) if not every]
        self._marks: tuple[Content | None, ...] = tuple(string_content(deref(self.members[i][0])) for i in self.marked)  # type: ignore[arg-type]
        self.names_in = [sum(1 << i for i, name in enumerate(names) if accepts(keys, name)) for keys, _ in self.members]
        self.any_value = [isinstance(deref(value), AnyValue) for _, value in self.members]
        self.whole = [whole_kinds(value) for _, value in self.members]
        """Per member, the first characters after which every value is an instance of its value schema: such
        a value holds the member whatever follows, so it is found at its first character, untracked (a
        tracker beside the value stops the walk's free runs: a mask inside a long key or string of that
        value then stepped every token character by character)."""
        self._trackers: dict[int, CharacterParser | None] = {}
        self._values: list[Node] | None = None
        self._marker = MarkedKeys(ctx.extras, self._marks)  # (reads the marks of a closed key's state)

    def member_values(self) -> list[Node]:
        """``member_values`` of the object (memoised): near the depth limit a missing member's value must fit."""
        if self._values is None:
            self._values = member_values(self.ctx.node, self.ctx.compiler.merger)
            self.ctx.compiler._keep.extend(self._values)
        return self._values

    def marked_extras(self, extras: Content | None) -> Content | None:
        """``extras`` with the marks riding along (see ``MarkedKeys``), when some member needs them."""
        if extras is None or not self.marked:
            return extras
        return MarkedKeys(extras, self._marks)

    def impossible(self) -> bool:
        """Whether some member can never be written (no object fits); raises Unsupported where it could be
        but the object could then dead-end (see the module docstring)."""
        ctx, node = self.ctx, self.ctx.node
        if ctx.max_properties == 0:
            return True
        if ctx.max_properties is not None:
            raise Unsupported("not", "'not' of an object rule on keys it does not name, under maxProperties")
        merger = ctx.compiler.merger
        for i, (keys, value) in enumerate(self.members):
            verdicts = set()
            for matched, schema in value_combinations(node, merger):
                witness = merger.intersect(schema, value)
                ctx.compiler._keep.append(witness)
                if isinstance(deref(witness), Never) or not ctx.compiler.finite(witness):
                    verdicts.add("empty")
                    continue
                verdicts.add(self._keys_verdict(keys, matched))
                if "infinite" in verdicts:
                    break
            if "infinite" in verdicts:
                continue
            if verdicts <= {"empty"} and not self.names_in[i] & ctx.usable:
                return True  # no key at all can hold it (where only names could, they are finitely many)
            raise Unsupported(
                "not", "'not' of an object rule on keys it does not name, where finitely many keys could break it"
            )
        return False

    def _keys_verdict(self, keys: Node, matched: frozenset[str]) -> str:
        """``_infinite`` of the extra keys in ``keys`` that match exactly the patterns ``matched``."""
        ctx = self.ctx
        if ctx.extras is None:
            return "empty"
        extras = ctx.extras.extras if isinstance(ctx.extras, MarkedKeys) else ctx.extras
        contents: list[Content] = [extras]
        keys = deref(keys)
        if isinstance(keys, String):
            content = string_content(keys)
            if content is None:
                return "empty"
            contents.append(content)
        for pattern in patterns_of(ctx.node):
            rule = String(patterns=(pattern,)) if pattern in matched else String(not_patterns=(pattern,))
            content = string_content(rule)
            if content is None:
                return "empty"
            contents.append(content)
        return _infinite(contents)

    def hits(self, pending: int | object, extra: Hashable) -> tuple[int, int]:
        """For the key just closed (``pending``: a name's index, or an extra key; ``extra``: the extra-key
        automaton's state there): the members it holds with any value (found once its value is written),
        and those whose value must be tracked."""
        if isinstance(pending, int):
            inside = sum(1 << i for i, names in enumerate(self.names_in) if names >> pending & 1)
        else:
            inside = sum(1 << i for i, every in enumerate(self.every_extra) if every)
            if self.marked and isinstance(extra, tuple) and len(extra) == 2 and isinstance(extra[1], tuple):
                marked = self._marker.inside(extra)
                inside |= sum(1 << i for j, i in enumerate(self.marked) if marked >> j & 1)
        anyhow = sum(1 << i for i, any_value in enumerate(self.any_value) if any_value and inside >> i & 1)
        return anyhow, inside & ~anyhow

    def tracker(self, i: int) -> CharacterParser | None:
        """The parser of member ``i``'s value schema (a value it accepts holds the member)."""
        if i not in self._trackers:
            self._trackers[i] = self.ctx.compiler.start(self.members[i][1])
        return self._trackers[i]


def _step_trackers(trackers: tuple, ch: str) -> tuple:
    """The trackers after ``ch``, those that refused it dropped (the value no longer holds their member)."""
    out = []
    for i, tracker in trackers:
        after = tracker.add_character(ch)
        if after is not None:
            out.append((i, after))
    return tuple(out)


def _closed_key(key: CharacterParser) -> Hashable:
    """The extra-key automaton's state in a closed key's string state (KeyContent: (node, extra, text))."""
    return key.content_state[1]  # type: ignore[attr-defined]


class ExistsObject(MemoAllowed):
    """An object state (``inner``) with the members ``found`` so far (a bit mask); after a key, the members
    whose value must be tracked (``armed``); while that value is read, their trackers ((member, parser
    state), ...; a tracker that refused a character is dropped)."""

    __slots__ = ("_inner", "_found", "_armed", "_trackers", "_allowed", "_key")

    def __init__(self, inner: ObjectParser, found: int, armed: int = 0, trackers: tuple = ()) -> None:
        self._inner, self._found, self._armed, self._trackers = inner, found, armed, trackers
        self._allowed: CharSet | None = None
        self._key: Hashable | None = None

    @property
    def _witnesses(self) -> Witnesses:
        return self._inner._ctx.witnesses  # type: ignore[attr-defined]

    def _keyed(self, inner: ObjectParser, key: CharacterParser) -> ExistsObject:
        """The state over ``inner`` (just past a key's closing quote), ``key`` the closed key's state."""
        anyhow, tracked = self._witnesses.hits(inner._pending, _closed_key(key))
        return ExistsObject(inner, self._found | anyhow, tracked & ~self._found)

    def _finished(self) -> int:
        """``found`` with the members whose trackers accept the value read (once it has ended)."""
        found = self._found
        for i, tracker in self._trackers:
            if tracker.can_end():
                found |= 1 << i
        return found

    def _start_trackers(self, ch: str) -> tuple[int, tuple]:
        """The members found by a value whose first character is ``ch`` (each of its values holds them: the
        object cannot close before the value ends, so this is the same as finding them at its end), and
        the trackers of the other armed members."""
        witnesses, armed = self._witnesses, self._armed & ~self._found
        found, out = self._found, []
        i = 0
        while armed:
            if armed & 1:
                if ch in witnesses.whole[i]:
                    found |= 1 << i
                else:
                    start = witnesses.tracker(i)
                    after = None if start is None else start.add_character(ch)
                    if after is not None:
                        out.append((i, after))
            armed >>= 1
            i += 1
        return found, tuple(out)

    def _closed(self, inner: ObjectParser, found: int) -> ExistsObject | None:
        """``inner`` after ``}``: only once every member was found."""
        return ExistsObject(inner, found) if found == self._witnesses.all else None

    def add_character(self, ch: str) -> ExistsObject | None:
        inner = self._inner
        after = inner.add_character(ch)
        if after is None:
            return None
        phase, now = inner._phase, after._phase
        if phase == VALUE:
            if now == VALUE:  # the value took it
                trackers = _step_trackers(self._trackers, ch) if self._trackers else ()
                return ExistsObject(after, self._found, self._armed, trackers)
            found = self._finished()
            return self._closed(after, found) if now == DONE else ExistsObject(after, found)
        if now == DONE:
            return self._closed(after, self._found)
        if phase == KEY and now == COLON:
            return self._keyed(after, inner._child.add_character(ch))
        if phase == BEFORE and now == VALUE:
            found, trackers = self._start_trackers(ch)
            return ExistsObject(after, found, self._armed, trackers)
        return ExistsObject(after, self._found, self._armed)

    def _compute_allowed(self) -> CharSet:
        allowed = self._inner.allowed_characters()
        if "}" in allowed and self.add_character("}") is None:
            allowed = allowed - CharSet.of("}")
        return allowed

    def can_end(self) -> bool:
        return self._inner.can_end()

    def key(self) -> Hashable:
        if self._key is None:
            trackers = tuple((i, t.key()) for i, t in self._trackers)
            self._key = ("exists", self._inner.key(), self._found, self._armed, trackers)
        return self._key

    # --- walk hooks: the object's, with its states wrapped; none skips a character a tracker must read ---

    def free_run(self) -> FreeRun | None:
        if self._trackers:
            return None
        run = self._inner.free_run()
        if run is None:
            return None
        after, found, armed = run.after, self._found, self._armed
        return FreeRun(run.chars, run.max_length, lambda n: ExistsObject(after(n), found, armed), run.ends_inside)

    def _resumed(self, lexeme: Lexeme) -> Lexeme:
        """``lexeme`` of the inner object (a key, whitespace, a value's start), its states wrapped: a key
        that closes in it is read for the members it holds."""
        resume, found, armed, keyed = lexeme.resume, self._found, self._armed, self._keyed

        def wrapped(state: CharacterParser) -> CharacterParser | None:
            full = resume(state)
            if full is None:
                return None
            if full._phase == COLON and type(state) is StringParser and state.can_end():
                return keyed(full, state)  # type: ignore[arg-type]
            return ExistsObject(full, found, armed)  # type: ignore[arg-type]

        return Lexeme(lexeme.inner, wrapped, lexeme.checked_ends)

    def lexeme(self) -> Lexeme | None:
        inner = self._inner
        phase = inner._phase
        if self._trackers:
            return None
        if phase == AFTER:
            return self._after_value(inner, inner._ws, self._found)
        if phase == VALUE:
            child = inner._child
            if child.can_end() and not child.allowed_characters():  # a closed string or container
                return self._after_value(inner._finish_value(), 0, self._found)
            ctx, seen, extras, pending, found = inner._ctx, inner._seen, inner._extras, inner._pending, self._found
            kind = type(inner)
            return nested_lexeme(
                child,
                lambda c: ExistsObject(kind(ctx, VALUE, seen, extras, 0, c, pending), found),
                lambda c: ExistsObject(kind(ctx, VALUE, seen, extras, 0, c, pending)._finish_value(), found),
            )
        if phase in (COLON, BEFORE) and self._armed & ~self._found:
            return None  # the value's first characters go to its trackers too
        lexeme = inner.lexeme()  # a key, the whitespace-quote-and-key after a comma, or a value's start
        return None if lexeme is None else self._resumed(lexeme)

    def _after_value(self, after: ObjectParser, run: int, found: int) -> Lexeme:
        """Whitespace then ``,`` or, once every member was found, ``}`` (after_value.py)."""
        ctx, seen, extras = after._ctx, after._seen, after._extras
        comma = after._key_start() is not None
        closer = "}" if after._closable() and found == self._witnesses.all else None
        kind = type(after)
        return after_value_lexeme(
            ctx.ws, run, comma, closer, lambda n: ExistsObject(kind(ctx, AFTER, seen, extras, n, None, None), found)
        )

    def alternatives(self) -> tuple[CharacterParser, ...] | None:
        inner = self._inner
        if inner._phase != VALUE:
            return None
        ctx, seen, extras, pending = inner._ctx, inner._seen, inner._extras, inner._pending
        found, armed, trackers, kind = self._found, self._armed, self._trackers, type(inner)
        return nested_alternatives(
            inner._child,
            lambda c: ExistsObject(kind(ctx, VALUE, seen, extras, 0, c, pending), found, armed, trackers),
        )

    def first_char_split(self) -> tuple[CharacterParser, bytes] | None:
        inner = self._inner
        if inner._phase != VALUE or self._trackers:
            return None
        ctx, seen, extras, pending = inner._ctx, inner._seen, inner._extras, inner._pending
        found, armed, kind = self._found, self._armed, type(inner)
        return nested_first_char_split(
            inner._child, lambda c: ExistsObject(kind(ctx, VALUE, seen, extras, 0, c, pending), found, armed)
        )

    def __repr__(self) -> str:
        return f"ExistsObject(found={self._found:b}, armed={self._armed:b}, inner={self._inner!r})"


__all__ = ["SEARCH_STATES", "ExistsObject", "Witnesses"]
