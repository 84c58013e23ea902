"""JSON objects: named and extra properties, ``required``, ``min/maxProperties``, ``dependentRequired``,
``patternProperties``, ``additionalProperties`` and ``propertyNames``, in any order or in schema order.

A state is (context, phase, named keys seen as a bit mask, extra keys seen, whitespace run, current key or
value state). Keys are JSON strings read by the string parser over ``KeyContent``: a trie of the named keys
still *available* (unseen, satisfiable, and leaving room under ``maxProperties`` for every required key still
missing, including those ``dependentRequired`` would add), united with the automaton of extra keys (any
string, the ``patternProperties`` of a closed object, or ``propertyNames``). So a key prefix is offered only
when it can still become an acceptable key, ``,`` only when another key can come, and ``}`` only when the
object is complete: no dead ends.
"""

from __future__ import annotations

from collections.abc import Hashable
from functools import cached_property
from typing import TYPE_CHECKING

from ..core.charset import EMPTY, CharSet, union_memo
from ..core.protocol import CharacterParser, MemoAllowed
from ..parsers.choice import CharTrie
from .formats.content import LengthContent
from .key_content import KeyContent, PartialText
from .keys import extra_keys
from .object_exists import ExistsObject, Witnesses
from .object_names import ObjectNames, object_names
from .object_phases import AFTER, BEFORE, COLON, DONE, FIRST, KEY, NEXT, OPEN, VALUE
from .object_walk import ObjectWalkHooks
from .schema.ir import AnyValue, Node, Object, Ref
from .schema.validate import value_schemas
from .strings import StringParser
from .whitespace import WHITESPACE_CHARS

if TYPE_CHECKING:
    from .compile import Compiler

_OPEN, _CLOSE, _COMMA, _COLON_SET, _QUOTE = (CharSet.of(c) for c in '{},:"')


class _ExtraKey:
    """The pending key of an extra property whose text is not kept (see ``ObjectContext.track_extra_text``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<extra key>"


EXTRA_KEY = _ExtraKey()


class ObjectContext(ObjectNames):
    """Compiled facts of one Object node, shared by all its states."""

    def __init__(self, node: Object, compiler: Compiler) -> None:
        # the named keys as the finiteness check already read them (object_names: once per node); their
        # fields are never changed after they are made
        self.__dict__.update(vars(object_names(node, compiler.merger)))
        self.compiler, self.ws = compiler, compiler.ws
        self.schema_order = compiler.config.property_order == "schema"
        compiler.named_values.extend(v for v in self.values if isinstance(v, Ref))  # merged: checked at build
        self.extras = extra_keys(node, compiler.merger, self.key_rule, compiler.finite)
        self.plain_extras = all(not side.patterns for side in node.sides)
        self.min_properties, self.max_properties = node.min_properties, node.max_properties
        # An extra key's text is kept only when something depends on it: the value's schema
        # (patternProperties) or counting distinct keys towards minProperties. Otherwise extra keys are
        # counted, not remembered (duplicate extra keys are not refused, as in the compiled engines), which
        # keeps states small and lets a key's text run free once it has left every named key.
        # (and where the object must hold a member, object_exists.py: a key's text decides whether it holds
        # one, and a repeated key would overwrite a member's value)
        self.track_extra_text = not self.plain_extras or self.min_properties > 0 or bool(node.exists)
        self.witnesses = Witnesses(self) if node.exists else None
        if self.witnesses is not None:
            self.extras = self.witnesses.marked_extras(self.extras)
        # every key text is acceptable (as an extra key if not a name): the key automaton can be shared
        self.any_extra_key = (
            not self.track_extra_text
            and isinstance(self.extras, LengthContent)
            and self.extras.high is None
            and self.extras.low == 0
        )
        self._live: dict[int, bool] = {}
        self._extra_values: dict[tuple[int, ...], CharacterParser | None] = {}
        self._value_starts: dict[int, CharacterParser | None] = {}
        self.key_contents: dict[tuple, KeyContent | None] = {}
        self.unions: dict[tuple[CharSet, ...], CharSet] = {}
        # per (seen, extras): the key start, whether the object may close, and the named keys that may come
        # next. Every state of a position (each whitespace count, each character of its value) asks, and a
        # walk makes thousands of states; every key the shared key automaton closes asks for the names
        self.key_starts: dict[tuple, StringParser | None] = {}
        self.closable: dict[tuple, bool] = {}
        self.available: dict[tuple, int] = {}
        # per (phase, seen, extras, ws, pending) outside a key or value: the structural characters allowed
        self.structural: dict[tuple, CharSet] = {}

    # The trie of the names and its masks are read only once a key of this object is being read: built on
    # first use, so compiling a schema (the time to first mask) does not pay for objects not reached yet.
    @cached_property
    def trie(self) -> CharTrie:
        """The character trie of the named keys (``self.names``, in order)."""
        return CharTrie(self.names)

    @cached_property
    def terminal_of(self) -> dict[int, int]:
        """Trie node -> the index of the name ending there."""
        children = self.trie.children
        terminal_of = {}
        for i, name in enumerate(self.names):
            node = 0
            for ch in name:
                node = children[node][ch]
            terminal_of[node] = i
        return terminal_of

    @cached_property
    def subtree(self) -> list[int]:
        """Trie node -> the bit mask of the names ending at or below it."""
        children, terminal_of = self.trie.children, self.terminal_of
        masks = [0] * len(children)
        for node in range(len(masks) - 1, -1, -1):  # children always have larger numbers than parents
            mask = 1 << terminal_of[node] if node in terminal_of else 0
            for child in children[node].values():
                mask |= masks[child]
            masks[node] = mask
        return masks

    def live(self, names: int) -> int:
        """Those of ``names`` whose value can be written (a start state, which needs a finite instance),
        checked on first use, once the schema is built: a recursive value is asked after its start exists."""
        out, rest = 0, names
        while rest:
            low = rest & -rest
            rest ^= low
            i = low.bit_length() - 1
            ok = self._live.get(i)
            if ok is None:
                ok = self._live[i] = self.value_start(i) is not None
            if ok:
                out |= low
        return out

    def start(self) -> CharacterParser | None:
        if self.impossible(self.extras, self.compiler.finite):
            return None
        state = ObjectParser(self, OPEN, 0, frozenset() if self.track_extra_text else 0, 0, None, None)
        if self.witnesses is not None:
            return None if self.witnesses.impossible() else ExistsObject(state, 0)
        return state

    def value_start(self, key: int | str | _ExtraKey) -> CharacterParser | None:
        """The start state of the value of a named key (by index) or an extra key (by text, or EXTRA_KEY
        when the text is not kept because no schema depends on it)."""
        if isinstance(key, int):
            if key not in self._value_starts:
                self._value_starts[key] = self.compiler.start(self.values[key])
            return self._value_starts[key]
        if key is EXTRA_KEY or isinstance(key, PartialText):  # (a stand-in's text: never a name, plain extras)
            key = "\x00" * (max(map(len, self.names), default=0) + 1)  # no named key: the extra-key schema
        parts = value_schemas(self.node, key)
        ident = tuple(id(p) for p in parts)
        if ident not in self._extra_values:
            schema: Node = AnyValue()
            for part in parts:
                schema = self.compiler.merger.lazy_and(schema, part)
            try:
                self._extra_values[ident] = self.compiler.start(schema)
            except Exception:  # noqa: BLE001 - an unsupported merge found mid-generation refuses the key
                self._extra_values[ident] = None
            self.compiler._keep.extend(parts)
        return self._extra_values[ident]


class ObjectParser(ObjectWalkHooks, MemoAllowed):
    """One JSON object; ``_pending`` is the key just read (named index or extra text) until its value starts."""

    __slots__ = ("_ctx", "_phase", "_seen", "_extras", "_ws", "_child", "_pending", "_allowed", "_key")

    def __init__(self, ctx: ObjectContext, phase: int, seen: int, extras: frozenset | int, ws: int,
                 child: CharacterParser | None, pending: int | str | None) -> None:  # fmt: skip
        self._ctx, self._phase, self._seen, self._extras, self._ws = ctx, phase, seen, extras, ws
        self._child, self._pending = child, pending
        self._allowed: CharSet | None = None
        self._key: Hashable | None = None

    def _with(self, phase: int, ws: int = 0, child: CharacterParser | None = None, pending=None) -> ObjectParser:  # noqa: ANN001
        return ObjectParser(self._ctx, phase, self._seen, self._extras, ws, child, pending)

    # --- bookkeeping ------------------------------------------------------------------------------------
    def _count(self) -> int:
        extras = self._extras
        return bin(self._seen).count("1") + (extras if isinstance(extras, int) else len(extras))

    def _missing(self, seen: int) -> int:
        """The names still needed before ``}``: required, added by a key seen, or by one of those."""
        ctx = self._ctx
        needed = ctx.required
        rest = seen
        while rest:
            low = rest & -rest
            needed |= ctx.deps[low.bit_length() - 1]
            rest ^= low
        return ctx.closure(needed) & ~seen

    def _available(self) -> int:
        """Named keys that may come next (memoised per (seen, extras) in the context)."""
        memo, ident = self._ctx.available, (self._seen, self._extras)
        done = memo.get(ident)
        if done is None:
            done = memo[ident] = self._new_available()
        return done

    def _new_available(self) -> int:
        ctx = self._ctx
        missing = self._missing(self._seen)
        candidates = ctx.live(ctx.usable & ~self._seen)
        if ctx.schema_order:
            if self._extras:
                return 0
            last = self._seen.bit_length()
            candidates &= ~((1 << last) - 1)
            if missing:
                first_missing = (missing & -missing).bit_length()
                candidates &= (1 << first_missing) - 1
        count, cap = self._count(), ctx.max_properties
        out = 0
        rest = candidates
        if not ctx.has_deps and rest:
            # no name brings in another: after the key ``low`` the names still needed are ``missing`` but
            # ``low``, so one check of them all answers every candidate (the same checks, in the same order)
            dead = missing & ~ctx.live(missing)
            size = bin(missing).count("1")
            while rest:
                low = rest & -rest
                rest ^= low
                if dead & ~low:
                    continue
                if cap is not None and count + size - (1 if missing & low else 0) + 1 > cap:
                    continue
                out |= low
            return out
        while rest:
            low = rest & -rest
            rest ^= low
            after = self._missing(self._seen | low)
            if after & ~ctx.live(after):
                continue
            if cap is not None and count + 1 + bin(after).count("1") > cap:
                continue
            out |= low
        return out

    def _extras_open(self) -> bool:
        ctx = self._ctx
        if ctx.extras is None:
            return False
        missing = self._missing(self._seen)
        if ctx.schema_order and missing:
            return False
        return ctx.max_properties is None or self._count() + 1 + bin(missing).count("1") <= ctx.max_properties

    def _key_start(self) -> StringParser | None:
        """The start of a key here (None when no key may come): memoised per (seen, extras) in the context."""
        memo, ident = self._ctx.key_starts, (self._seen, self._extras)
        try:
            return memo[ident]
        except KeyError:
            start = memo[ident] = self._new_key_start()
            return start

    def _new_key_start(self) -> StringParser | None:
        ctx = self._ctx
        available = self._available()
        extras = ctx.extras if self._extras_open() else None
        if not available and extras is None:
            return None
        memo = ctx.key_contents
        if extras is not None and ctx.any_extra_key:
            # Any key text is allowed and the names only decide what a closed key means: one key automaton
            # for every position of this object (so its vocabulary walk is cached once), with the names
            # still available checked by this state when the key closes (see _names_unavailable).
            ident: tuple = ("any",)
            content = memo.get(ident)
            if content is None:
                content = memo[ident] = KeyContent(ctx, ctx.usable, extras, frozenset(), shared=True)
        else:
            ident = (available, extras is not None, self._extras)
            content = memo.get(ident)
            if content is None:
                content = memo[ident] = KeyContent(ctx, available, extras, self._extras)
                if extras is not None and not content._live(content.start()):
                    # every extra key the automaton allows is a name or already seen: names only
                    content = memo[ident] = KeyContent(ctx, available, None, self._extras) if available else None
            if content is None:
                return None
        return StringParser(content, escapable=ctx.compiler.escapable)

    def _names_unavailable(self, key_state: CharacterParser) -> bool:
        """Whether the (shared) key automaton's text names a property that may not come here."""
        content = key_state._content  # type: ignore[attr-defined]
        if not content.shared:
            return False
        name = content.named(key_state.content_state)  # type: ignore[attr-defined]
        return name is not None and not self._available() >> name & 1

    def _closable(self) -> bool:
        memo, ident = self._ctx.closable, (self._seen, self._extras)
        done = memo.get(ident)
        if done is None:
            done = memo[ident] = not self._missing(self._seen) and self._count() >= self._ctx.min_properties
        return done

    def _finish_key(self, key_state: StringParser) -> ObjectParser:
        content: KeyContent = key_state._content  # type: ignore[assignment]
        state = key_state.content_state
        name = content.named(state)
        text = state[2]
        pending: int | str | _ExtraKey = name if name is not None else (EXTRA_KEY if text is None else text)
        return self._with(COLON, pending=pending)

    def _finish_value(self) -> ObjectParser:
        pending = self._pending
        seen, extras = self._seen, self._extras
        if isinstance(pending, int):
            seen |= 1 << pending
        elif pending is EXTRA_KEY:
            extras = extras + 1 if self._ctx.max_properties is not None else 1  # a count only where it matters
        else:
            extras = extras | {pending}
        return ObjectParser(self._ctx, AFTER, seen, extras, 0, None, None)

    # --- protocol ----------------------------------------------------------------------------------------
    def plain_key(self, text: str) -> bool:
        """Whether this object is reading a key and ``text`` is plain body text of it (``StringParser.
        plain_body``): no character of it can close the key."""
        child = self._child
        return self._phase == KEY and type(child) is StringParser and child.plain_body(text)

    def add_text(self, text: str) -> ObjectParser | None:  # type: ignore[override]
        # inside a key, each character gives a new key state and nothing else: step the key alone
        if not self.plain_key(text):
            return super().add_text(text)  # type: ignore[return-value]
        return self.add_key_text(text)

    def add_key_text(self, text: str) -> ObjectParser | None:
        """``add_text`` of a text ``plain_key`` admits (not checked again): the key alone steps it."""
        child = self._child.add_body_text(text)  # type: ignore[union-attr]
        return None if child is None else ObjectParser(self._ctx, KEY, self._seen, self._extras, 0, child, None)

    def add_character(self, ch: str) -> ObjectParser | None:
        phase, ctx = self._phase, self._ctx
        if phase == VALUE:
            child = self._child.add_character(ch)
            if child is not None:
                return ObjectParser(ctx, VALUE, self._seen, self._extras, 0, child, self._pending)
            if not self._child.can_end():
                return None
            return self._finish_value().add_character(ch)
        if phase == KEY:
            child = self._child.add_character(ch)
            if child is None:
                return None
            if child.can_end():
                return None if self._names_unavailable(child) else self._finish_key(child)
            return ObjectParser(ctx, KEY, self._seen, self._extras, 0, child, None)
        if phase == OPEN:
            return self._with(FIRST) if ch == "{" else None
        if phase == DONE:
            return None
        ws = ctx.ws.step(self._ws, ch) if ch in WHITESPACE_CHARS else None
        if ws is not None:
            return ObjectParser(ctx, phase, self._seen, self._extras, ws, None, self._pending)
        if not ctx.ws.can_stop(self._ws):
            return None
        if phase in (FIRST, AFTER) and ch == "}":
            return ObjectParser(ctx, DONE, 0, frozenset(), 0, None, None) if self._closable() else None
        if phase in (FIRST, NEXT) and ch == '"':
            start = self._key_start()
            child = None if start is None else start.add_character(ch)
            return None if child is None else self._with(KEY, child=child)
        if phase == AFTER and ch == ",":
            return self._with(NEXT) if self._key_start() is not None else None
        if phase == COLON and ch == ":":
            return self._with(BEFORE, pending=self._pending)
        if phase == BEFORE:
            start = ctx.value_start(self._pending)
            child = None if start is None else start.add_character(ch)
            if child is None:
                return None
            return ObjectParser(ctx, VALUE, self._seen, self._extras, 0, child, self._pending)
        return None

    def _compute_allowed(self) -> CharSet:
        phase, ctx = self._phase, self._ctx
        if phase == OPEN:
            return _OPEN
        if phase == DONE:
            return EMPTY
        if phase == KEY:
            allowed = self._child.allowed_characters()
            if '"' in allowed and self._names_unavailable(self._child.add_character('"')):
                allowed = allowed - _QUOTE
            return allowed
        if phase == VALUE:
            if not self._child.can_end():
                return self._child.allowed_characters()
            return union_memo(ctx.unions, (self._child.allowed_characters(), self._finish_value().allowed_characters()))
        ident = (phase, self._seen, self._extras, self._ws, self._pending)
        done = ctx.structural.get(ident)
        if done is None:
            done = ctx.structural[ident] = self._structural_allowed()
        return done

    def _structural_allowed(self) -> CharSet:
        """The characters allowed between a key and a value: whitespace and the structure (memoised)."""
        phase, ctx = self._phase, self._ctx
        parts = [ctx.ws.allowed(self._ws)]
        if ctx.ws.can_stop(self._ws):
            if phase in (FIRST, AFTER) and self._closable():
                parts.append(_CLOSE)
            if phase in (FIRST, NEXT) and self._key_start() is not None:
                parts.append(_QUOTE)
            if phase == AFTER and self._key_start() is not None:
                parts.append(_COMMA)
            if phase == COLON:
                parts.append(_COLON_SET)
            if phase == BEFORE:
                start = ctx.value_start(self._pending)
                if start is not None:
                    parts.append(start.allowed_characters())
        return union_memo(ctx.unions, tuple(parts))

    def can_end(self) -> bool:
        return self._phase == DONE

    def key(self) -> Hashable:
        if self._key is None:
            child = None if self._child is None else self._child.key()
            self._key = ("obj", id(self._ctx), self._phase, self._seen, self._extras, self._ws, child, self._pending)
        return self._key

    def __repr__(self) -> str:
        return f"ObjectParser(phase={self._phase}, seen={self._seen:b}, child={self._child!r})"
