"""The object state's walk hooks (core/hooks.py): how the token walk may take an object's next characters
in bigger steps than one character, without changing which tokens are allowed.

- ``free_run``: flexible whitespace between tokens, and runs its key or value promises, passed through;
- ``lexeme``: the key being read (checked where it closes: a name already used, or not allowed yet, is
  refused), the colon-and-value start after a key (``SpacedMember``), the value start after the colon
  (``SpacedValue``), the whitespace-quote-and-key after a comma, and the value's own lexeme;
- ``alternatives`` and ``first_char_split``: the value's, put back in the object.

``ObjectParser`` (objects.py) inherits these; they read its fields and build its states, and say nothing
of what JSON allows, which objects.py decides.
"""

from __future__ import annotations

from ..core.hooks import FreeRun, Lexeme, nested_alternatives, nested_first_char_split, nested_lexeme
from ..core.protocol import CharacterParser
from .after_value import after_value_lexeme
from .object_phases import AFTER, BEFORE, COLON, DONE, KEY, NEXT, OPEN, VALUE
from .spaced import SpacedMember, SpacedValue
from .whitespace import JSON_WHITESPACE


class ObjectWalkHooks:
    """The walk hooks of ``ObjectParser`` (a mixin: no fields of its own)."""

    __slots__ = ()

    def free_run(self) -> FreeRun | None:
        state = type(self)
        # a run the child promises is consumed by the child alone: the object only swaps its child state
        if self._phase not in (KEY, VALUE):
            return self._whitespace_run()
        inner = self._child.free_run()
        if inner is None:
            return None
        ctx, phase, seen, extras, pending = self._ctx, self._phase, self._seen, self._extras, self._pending
        after = inner.after
        return FreeRun(inner.chars, inner.max_length,
                       lambda n: state(ctx, phase, seen, extras, 0, after(n), pending))  # fmt: skip

    def reads_key(self) -> bool | None:
        """None unless this object is reading a key; then whether the key's run is exact: ``free_run().after(n)``
        is the state ``n`` of its characters lead to, not a stand-in (a key whose text is kept, see
        ``KeyContent.free``)."""
        if self._phase != KEY:
            return None
        key = self._child
        return key._content.exact_free(key._state)

    def _whitespace_run(self) -> FreeRun | None:
        """Between tokens, flexible whitespace loops over its four characters up to the cap: a bounded run
        (indented layouts put newline-and-spaces tokens at every structural position)."""
        state = type(self)
        ctx, phase = self._ctx, self._phase
        room = ctx.ws.room(self._ws) if phase not in (OPEN, DONE) else 0
        if not room:
            return None
        seen, extras, ws, pending = self._seen, self._extras, self._ws, self._pending
        return FreeRun(JSON_WHITESPACE, room, lambda n: state(ctx, phase, seen, extras, ws + n, None, pending))

    def lexeme(self) -> Lexeme | None:
        state = type(self)
        phase = self._phase
        if phase == KEY:
            finish, ctx, seen, extras = self._finish_key, self._ctx, self._seen, self._extras
            unavailable = self._names_unavailable

            def key_resume(inner: CharacterParser) -> CharacterParser | None:
                if not inner.can_end():
                    return state(ctx, KEY, seen, extras, 0, inner, None)
                return None if unavailable(inner) else finish(inner)

            return Lexeme(self._child, key_resume, checked_ends=self._child._content.shared)
        if phase == BEFORE:
            return self._value_start_lexeme()
        if phase == COLON:
            return self._member_lexeme()
        if phase == NEXT:
            return self._key_start_lexeme()
        if phase == AFTER:
            return self._after_value_lexeme(self, self._ws)
        if phase != VALUE:
            return None
        child = self._child
        if child.can_end() and not child.allowed_characters():  # a closed string or container
            return self._after_value_lexeme(self._finish_value(), 0)
        ctx, seen, extras, pending = self._ctx, self._seen, self._extras, self._pending
        return nested_lexeme(
            child,
            lambda c: state(ctx, VALUE, seen, extras, 0, c, pending),
            lambda c: state(ctx, VALUE, seen, extras, 0, c, pending)._finish_value(),
        )

    def _after_value_lexeme(self, after: CharacterParser, run: int) -> Lexeme:
        """After a value (``after``: the state in AFTER), whitespace then ``,`` or ``}`` alone (after_value.py)."""
        state = type(self)
        ctx, seen, extras = after._ctx, after._seen, after._extras
        comma = after._key_start() is not None
        closer = "}" if after._closable() else None
        return after_value_lexeme(ctx.ws, run, comma, closer, lambda n: state(ctx, AFTER, seen, extras, n, None, None))

    def alternatives(self) -> tuple[CharacterParser, ...] | None:
        state = type(self)
        # JSON values delimit themselves: no branch that could end goes on with a character the object
        # reads after a value (whitespace , }), so the object over a union is the union of the objects
        if self._phase != VALUE:
            return None
        ctx, seen, extras, pending = self._ctx, self._seen, self._extras, self._pending
        return nested_alternatives(self._child, lambda c: state(ctx, VALUE, seen, extras, 0, c, pending))

    def first_char_split(self) -> tuple[CharacterParser, bytes] | None:
        state = type(self)
        # a value that has its own split (an item of a uniqueItems array of strings, see arrays.py)
        if self._phase != VALUE:
            return None
        ctx, seen, extras, pending = self._ctx, self._seen, self._extras, self._pending
        return nested_first_char_split(self._child, lambda c: state(ctx, VALUE, seen, extras, 0, c, pending))

    def _key_start_lexeme(self) -> Lexeme | None:
        """After ``,``, the whitespace, the quote and the key alone (see spaced.py): in an indented layout
        every member after the first starts with a newline-and-spaces token, and walking those with the
        whole object state costs more than half of an ``indent=2`` document's time. The key's end is
        checked here as in the KEY phase (a name already used, or not allowed yet, is refused)."""
        state = type(self)
        start = self._key_start()
        if start is None:
            return None
        ctx, seen, extras = self._ctx, self._seen, self._extras
        finish, unavailable = self._finish_key, self._names_unavailable

        def resume(inner: CharacterParser) -> CharacterParser | None:
            if isinstance(inner, SpacedValue):
                return state(ctx, NEXT, seen, extras, inner.run, None, None)
            if not inner.can_end():
                return state(ctx, KEY, seen, extras, 0, inner, None)
            return None if unavailable(inner) else finish(inner)

        return Lexeme(SpacedValue(ctx.ws, self._ws, start), resume, checked_ends=start._content.shared)

    def _member_lexeme(self) -> Lexeme | None:
        """After a key's closing quote, the colon, the whitespace and the value's start alone (see
        ``SpacedMember``): the same continuation for every position where this key closes."""
        return self._value_lexeme(SpacedMember)

    def _value_start_lexeme(self) -> Lexeme | None:
        """After ``"key":``, the whitespace and the value's start alone (see spaced.py)."""
        return self._value_lexeme(SpacedValue)

    def _value_lexeme(self, kind: type[SpacedMember] | type[SpacedValue]) -> Lexeme | None:
        """The lexeme of ``kind`` before the pending key's value; its states resume into this object's
        COLON (a SpacedMember), BEFORE (a SpacedValue) or VALUE phase (the value's own states)."""
        state = type(self)
        ctx, seen, extras, pending = self._ctx, self._seen, self._extras, self._pending
        start = ctx.value_start(pending)
        if start is None:
            return None

        def resume(inner: CharacterParser) -> CharacterParser:
            if isinstance(inner, SpacedMember):
                return state(ctx, COLON, seen, extras, inner.run, None, pending)
            if isinstance(inner, SpacedValue):
                return state(ctx, BEFORE, seen, extras, inner.run, None, pending)
            return state(ctx, VALUE, seen, extras, 0, inner, pending)

        return Lexeme(kind(ctx.ws, self._ws, start), resume)
