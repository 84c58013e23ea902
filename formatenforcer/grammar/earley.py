"""An Earley recognizer over lexemes, with its item sets shared and interned so they are cheap to key.

``CompiledGrammar`` numbers a checked grammar (ir.py, check.py): productions over nonterminals (ints >= 0)
and terminals (``-1 - t``), the nullable nonterminals, and one pruned automaton per terminal. An
``EarleySet`` is the set of Earley items after some sequence of lexemes. An item is ``(production, dot,
origin)`` where ``origin`` is the ``EarleySet`` the item was predicted in, or None for "this very set";
since sets are interned by their items (and their origins, recursively, by identity), two sets with equal
items are one object: equal futures share one object, hashing is by identity, and a parser state's key is a
handful of object references.

Nullable symbols follow Aycock and Horspool: predicting a nullable nonterminal also moves past it, so no
item ever completes into its own set. Left recursion, ambiguity and empty rules need nothing special.

Lexemes that end at the same text position in one parser state have their sets merged (``merge``), so a
state holds one set per position, as a character-indexed Earley chart would, however the text was cut.

Cost: ``scan(t)`` (advance over one lexeme, complete, predict) is computed once per (set, terminal) and
memoised on the set; a set holds at most (items of the grammar) x (sets it points back to), so the work per
lexeme is polynomial (cubic over a whole text in the worst case, linear for the usual unambiguous grammars
written with ``*``, which expand left-recursively). Right recursion at a rule's last symbol keeps one set
however deep it nests (``EarleySet.chain_base``, Leo's shortcut): an item names the base of the chain as its
origin, so ``atom: "-" atom`` read 96 times makes the same set from the second minus on.
"""

from __future__ import annotations

import weakref

from ..core.charset import EMPTY, CharSet
from ..parsers.regex import CompiledRegex
from .check import check_productive, check_symbols, compile_terminals
from .ir import Grammar, Symbol
from .json_lexer import ParserLexer

Item = tuple  # (production, dot, origin EarleySet | None)
_SETS_PER_EPOCH = 1 << 16
"""Sets made before the memo tables of older sets are let go (see ``CompiledGrammar._intern``)."""


class CompiledGrammar:
    """A checked grammar, numbered for the recognizer (see the module notes). Read-only after building,
    except for the intern table of sets and the memo tables hanging off each set."""

    def __init__(self, grammar: Grammar) -> None:
        check_symbols(grammar)
        dfas = compile_terminals(grammar)
        productive = check_productive(grammar, dfas)
        self.grammar = grammar
        self.terminal_names: list[str] = []
        self.dfas: list[CompiledRegex | ParserLexer] = []
        terminal_ids: dict[str, int] = {}
        for name, dfa in dfas.items():
            if dfa is not None and dfa.charset(0):  # it matches some non-empty string
                terminal_ids[name] = len(self.dfas)
                self.terminal_names.append(name)
                self.dfas.append(dfa)
        rule_ids = {name: i for i, name in enumerate(sorted(productive, key=lambda n: n != grammar.start))}
        self.rule_names = list(rule_ids)
        self.lhs: list[int] = []
        self.rhs: list[tuple[int, ...]] = []
        nullable_terminals: dict[str, int] = {}  # terminal matching "" -> its "optional" nonterminal

        def number(symbol: Symbol) -> int | None:
            if symbol.kind == "rule":
                return rule_ids.get(symbol.name)
            dfa = dfas.get(symbol.name)
            if dfa is None:
                return None
            if 0 not in dfa.finals:
                return -1 - terminal_ids[symbol.name]
            # a lexeme is never empty: a terminal that also matches "" is "that terminal, or nothing"
            wrapper = nullable_terminals.get(symbol.name)
            if wrapper is None:
                wrapper = nullable_terminals[symbol.name] = len(self.rule_names)
                self.rule_names.append(f"{symbol.name}?")
                self._add(wrapper, ())
                if symbol.name in terminal_ids:
                    self._add(wrapper, (-1 - terminal_ids[symbol.name],))
            return wrapper

        for name in productive:
            for rhs in grammar.rules[name]:
                numbered = [number(symbol) for symbol in rhs]
                if all(n is not None for n in numbered):
                    self._add(rule_ids[name], tuple(numbered))  # type: ignore[arg-type]
        self.start_production = len(self.lhs)
        self._add(len(self.rule_names), (rule_ids[grammar.start],))  # the augmented start S' -> start
        self.rule_names.append(f"{grammar.start}'")
        # per production, per dot: the terminal symbol scanned there, or 0 (a nonterminal, or the end)
        self.next_terminal: list[tuple[int, ...]] = [
            tuple(symbol if symbol < 0 else 0 for symbol in rhs) + (0,) for rhs in self.rhs
        ]
        self.by_lhs: list[list[int]] = [[] for _ in self.rule_names]
        for production, lhs in enumerate(self.lhs):
            self.by_lhs[lhs].append(production)
        self.nullable = self._nullable()
        # per nonterminal: whether a production of it ends with it (``atom: "-" atom``), the only case where
        # ``EarleySet.chain_base`` may name an earlier set
        self.right_recursive = [False] * len(self.rule_names)
        for production, lhs in enumerate(self.lhs):
            if self.rhs[production][-1:] == (lhs,):
                self.right_recursive[lhs] = True
        self.ignore: list[int] = []  # lexer ids of %ignore terminals: after the grammar's own terminals
        for name in grammar.ignore:
            dfa = dfas[name]
            if dfa is not None and dfa.charset(0):
                self.ignore.append(len(self.dfas))
                self.terminal_names.append(f"%ignore {name}")
                self.dfas.append(dfa)
        self.terminal_count = len(terminal_ids)
        self.finals = [dfa.finals for dfa in self.dfas]
        self._sets: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
        self.epoch, self._made = 0, 0  # see _intern
        self._final_chars: dict[tuple[int, int], CharSet] = {}
        self._overlaps: dict[tuple, bool] = {}  # see ``ends_overlap``
        self._merged: dict[frozenset, EarleySet] = {}
        self._predicted: dict[int, frozenset] = {}
        self._statics: dict[frozenset, tuple[frozenset, dict[int, tuple[Item, ...]]]] = {}
        self._start_chars: dict[tuple[int, ...], CharSet] = {}  # by expected terminals (EarleySet.start_chars)
        # expected terminals -> {character: EarleySet.starts}: one table shared by every set expecting them
        self._starts: dict[tuple[int, ...], dict[str, tuple[tuple[int, int], ...]]] = {}
        self.root = self._intern(self._closure([(self.start_production, 0, None)]))

    def _add(self, lhs: int, rhs: tuple[int, ...]) -> None:
        self.lhs.append(lhs)
        self.rhs.append(rhs)

    def _nullable(self) -> list[bool]:
        nullable = [False] * len(self.rule_names)
        changed = True
        while changed:
            changed = False
            for production, lhs in enumerate(self.lhs):
                if not nullable[lhs] and all(s >= 0 and nullable[s] for s in self.rhs[production]):
                    nullable[lhs] = changed = True
        return nullable

    def _closure(self, seeds: list[Item]) -> frozenset:
        """The items of a set: ``seeds`` (scanned items, origins resolved) closed under completion and
        prediction."""
        dynamic, predicted = self._closure_parts(seeds)
        return self._static(predicted)[0].union(dynamic)

    def _closure_parts(self, seeds: list[Item]) -> tuple[set, frozenset]:
        """``_closure`` in two parts: the items reached from the seeds by completion and by moving past
        nullable symbols (their origins are earlier sets), and the nonterminals predicted on the way. What
        predicting adds depends on those nonterminals alone (``_static``), so it is added in one piece."""
        rhs_of, lhs_of, nullable = self.rhs, self.lhs, self.nullable
        items: set = set()
        predicted: set[int] = set()
        todo = list(seeds)
        while todo:
            item = todo.pop()
            if item in items:
                continue
            items.add(item)
            production, dot, origin = item
            rhs = rhs_of[production]
            if dot == len(rhs):
                if origin is not None:  # (an empty completion is handled by moving past nullables)
                    for waiting, wdot, worigin in origin.waiting(lhs_of[production]):
                        worigin = origin if worigin is None else worigin
                        todo.append((waiting, wdot + 1, worigin.chain_base(lhs_of[waiting])))
                continue
            symbol = rhs[dot]
            if symbol >= 0:
                predicted.add(symbol)
                if nullable[symbol]:
                    todo.append((production, dot + 1, origin))
        return items, frozenset(predicted)

    def _static(self, predicted: frozenset) -> tuple[frozenset, dict[int, tuple[Item, ...]]]:
        """The items predicting these nonterminals adds (all made in the set itself: origin None), and
        those items by the terminal they scan (see ``EarleySet``); the same few combinations recur."""
        found = self._statics.get(predicted)
        if found is None:
            found = self._made_static(predicted)
        return found

    def _made_static(self, predicted: frozenset) -> tuple[frozenset, dict[int, tuple[Item, ...]]]:
        """``_static`` where not memoised yet (apart: its generator would make ``self`` a cell at every
        call of ``_static``)."""
        items = frozenset().union(*(self._predictions(symbol) for symbol in predicted))
        rhs_of = self.rhs
        scanning: dict[int, list[Item]] = {}
        for item in items:
            rhs = rhs_of[item[0]]
            if item[1] < len(rhs) and rhs[item[1]] < 0:
                scanning.setdefault(rhs[item[1]], []).append(item)
        if len(self._statics) >= 1 << 14:
            self._statics.clear()
        found = self._statics[predicted] = (items, {symbol: tuple(got) for symbol, got in scanning.items()})
        return found

    def _predictions(self, nonterminal: int) -> frozenset:
        """The items predicting ``nonterminal`` adds to a set, all made in that set (origin None): its
        productions at dot 0, closed under prediction and moving past nullable symbols."""
        found = self._predicted.get(nonterminal)
        if found is None:
            rhs_of, by_lhs, nullable = self.rhs, self.by_lhs, self.nullable
            items: set = set()
            todo = [(production, 0, None) for production in by_lhs[nonterminal]]
            while todo:
                item = todo.pop()
                if item in items:
                    continue
                items.add(item)
                production, dot, _ = item
                rhs = rhs_of[production]
                if dot < len(rhs) and rhs[dot] >= 0:
                    todo.extend((predicted, 0, None) for predicted in by_lhs[rhs[dot]])
                    if nullable[rhs[dot]]:
                        todo.append((production, dot + 1, None))
            found = self._predicted[nonterminal] = frozenset(items)
        return found

    def _intern(self, items: frozenset, parts: tuple | None = None) -> EarleySet:
        """The one set of these items; ``parts`` (the items reached from the seeds, and the scanning table
        of the predicted ones) spares a new set going through all its items."""
        found = self._sets.get(items)
        if found is None:
            self._made += 1
            if self._made >= _SETS_PER_EPOCH:
                # sets memoise the sets after them, so the chain from the root would keep every set ever
                # made alive: a new epoch makes each set drop its memo when next asked (live ones rebuild)
                self.epoch, self._made = self.epoch + 1, 0
                self._merged.clear()
            found = EarleySet(self, items, parts)
            self._sets[items] = found
        return found

    def release(self) -> None:
        """Drops the sets' memos of the sets after them and the merge table (see ``_Compiled.release``):
        a set then points only back, to the sets its items started in. Sets still in use rebuild their
        memos (a new epoch)."""
        self.epoch, self._made = self.epoch + 1, 0
        self._merged.clear()
        for found in list(self._sets.values()):
            found._scans, found._waiting = None, None

    def merge(self, sets: frozenset) -> EarleySet:
        """The one set of a text position that several lexemes end at (``a`` ``a`` and ``aa``): the union of
        their sets' items, all of this position (a closed set's own items are predictions made here), so
        the union is closed too. Without it every way of cutting a text into lexemes would keep a chain of
        sets of its own: exponentially many for ``x: "a" | "aa"``."""
        if len(sets) == 1:
            return next(iter(sets))
        found = self._merged.get(sets)
        if found is None:
            items = frozenset().union(*(s.items for s in sets))
            if len(self._merged) >= 1 << 14:
                self._merged.clear()
            found = self._merged[sets] = self._intern(items)
        return found

    def final_chars(self, lexer: int, state: int) -> CharSet:
        """The characters that can follow a point where terminal ``lexer`` may end, on its way on from
        ``state``: the union of the allowed characters of the final states reachable from ``state``."""
        key = (lexer, state)
        found = self._final_chars.get(key)
        if found is None:
            dfa = self.dfas[lexer]
            seen, todo = {state}, [state]
            intervals: list[tuple[int, int]] = []
            while todo:
                current = todo.pop()
                if current in dfa.finals:
                    intervals.extend(dfa.charset(current).intervals)
                for target in dfa.transitions[current].values():
                    if target not in seen:
                        seen.add(target)
                        todo.append(target)
            found = self._final_chars[key] = CharSet(intervals) if intervals else EMPTY
        return found

    def ends_overlap(self, lexer: int, state: int, after: EarleySet) -> bool:
        """Whether a character that terminal ``lexer`` may read on with, past a point where it may end on its
        way on from ``state``, could also start a lexeme in ``after`` (``final_chars`` against ``after``'s
        start characters). Memoised by ``after``'s expected terminals, which decide its start characters:
        the same few combinations recur at every position."""
        key = (lexer, state, after.expected)
        found = self._overlaps.get(key)
        if found is None:
            if len(self._overlaps) >= 1 << 14:
                self._overlaps.clear()
            found = self._overlaps[key] = bool(self.final_chars(lexer, state) & after.start_chars())
        return found


class EarleySet:
    """The Earley items after a sequence of lexemes; interned by ``CompiledGrammar._intern``, so compared
    and hashed by identity. Memoises what the parser asks of it: the lexemes that may start here, the
    set after each of them, and which characters can begin one."""

    __slots__ = ("grammar", "items", "_waiting", "_scanning", "expected", "accepting", "_scans", "_starts",
                 "_start_chars", "_epoch", "__weakref__")  # fmt: skip

    def __init__(self, grammar: CompiledGrammar, items: frozenset, parts: tuple | None = None) -> None:
        self.grammar = grammar
        self.items = items
        self._waiting: dict[int, list[Item]] | None = None
        # terminal symbol -> the items it advances; from the predicted items' shared table when given
        scanning: dict[int, tuple[Item, ...]]
        if parts is None:
            own, scanning = items, {}
        else:
            own, scanning = parts[0], dict(parts[1])
        next_terminal = grammar.next_terminal
        for item in own:
            symbol = next_terminal[item[0]][item[1]]
            if symbol:
                scanning[symbol] = (*scanning.get(symbol, ()), item)
        self._scanning = scanning
        self.expected: tuple[int, ...] = tuple(sorted([-1 - symbol for symbol in scanning]))
        # the augmented start S' -> start is predicted at the root alone, so its completed item is made
        # in the root itself (a nullable start: origin None) or in a later set (origin the root)
        start = grammar.start_production
        self.accepting = (start, 1, None) in items or (start, 1, getattr(grammar, "root", None)) in items
        # made on first use; ``_starts`` is the table shared by the sets expecting the same terminals (fewer
        # containers per set for the cycle collector to visit)
        self._scans: dict[int, EarleySet] | None = None
        self._epoch = grammar.epoch
        self._starts: dict[str, tuple[tuple[int, int], ...]] | None = None
        self._start_chars: CharSet | None = None

    def waiting(self, nonterminal: int) -> list[Item]:
        """The items of this set whose next symbol is ``nonterminal`` (they advance when it completes)."""
        table = self._waiting
        if table is None:
            table = self._waiting_table()
        return table.get(nonterminal, [])

    def _waiting_table(self) -> dict[int, list[Item]]:
        table: dict[int, list[Item]] = {}
        rhs_of = self.grammar.rhs
        for item in self.items:
            rhs = rhs_of[item[0]]
            if item[1] < len(rhs) and rhs[item[1]] >= 0:
                table.setdefault(rhs[item[1]], []).append(item)
        self._waiting = table
        return table

    def chain_base(self, nonterminal: int) -> EarleySet:
        """The set an item of ``nonterminal`` started here may name as its origin instead of this one: where
        the one item here waiting for ``nonterminal`` is ``nonterminal -> ... . nonterminal`` (a right-recursive
        rule at its last symbol, ``atom: "-" atom``) from an earlier set ``o``, completing ``nonterminal`` here
        only completes it again at ``o``, so an item naming ``o`` has the same future (the completed item in
        between changes nothing after the set is built). Leo's right-recursion shortcut, as origins: a chain
        of nested minus signs keeps one set, not one per nesting depth, and positions share it."""
        if not self.grammar.right_recursive[nonterminal]:
            return self  # (no production of it ends with it: the test below would fail)
        table = self._waiting
        if table is None:
            table = self._waiting_table()
        found = table.get(nonterminal)
        if found is None or len(found) != 1:
            return self
        production, dot, origin = found[0]
        grammar = self.grammar
        if origin is None or grammar.lhs[production] != nonterminal or dot != len(grammar.rhs[production]) - 1:
            return self
        return origin

    def scan(self, lexer: int) -> EarleySet:
        """The set after a lexeme of ``lexer`` read here (itself for an %ignore terminal)."""
        grammar = self.grammar
        scans = self._scans
        if scans is None or self._epoch != grammar.epoch:
            scans = self._scans = {}
            self._epoch = grammar.epoch
        found = scans.get(lexer)
        if found is None:
            if lexer >= grammar.terminal_count:
                found = self
            else:
                lhs_of, chained = grammar.lhs, grammar.right_recursive
                seeds = []
                for p, d, origin in self._scanning.get(-1 - lexer, ()):
                    origin = self if origin is None else origin
                    seeds.append((p, d + 1, origin.chain_base(lhs_of[p]) if chained[lhs_of[p]] else origin))
                dynamic, predicted = grammar._closure_parts(seeds)
                static, scanning = grammar._static(predicted)
                found = grammar._intern(static.union(dynamic), (dynamic, scanning))
            scans[lexer] = found
        return found

    def lexers(self) -> tuple[int, ...]:
        """The terminals (lexer ids) a lexeme starting here may belong to: the expected ones and %ignore."""
        return (*self.expected, *self.grammar.ignore)

    def starts(self, ch: str) -> tuple[tuple[int, int], ...]:
        """``(lexer, automaton state)`` for each lexeme that may start here with ``ch``."""
        table = self._starts
        if table is None:
            shared = self.grammar._starts  # by expected terminals: the same at every set expecting them
            table = shared.get(self.expected)
            if table is None:
                if len(shared) >= 1 << 14:
                    shared.clear()  # (sets keep the tables they hold)
                table = shared[self.expected] = {}
            self._starts = table
        found = table.get(ch)
        if found is None:
            found = self._started(ch)
            if len(table) < 4096:
                table[ch] = found
        return found

    def _started(self, ch: str) -> tuple[tuple[int, int], ...]:
        """``starts`` where not memoised yet (apart: its generator's closure would make cells at every
        call of ``starts``)."""
        dfas = self.grammar.dfas
        return tuple((lexer, q) for lexer in self.lexers() if (q := dfas[lexer].step(0, ch)) is not None)

    def start_chars(self) -> CharSet:
        """The characters a lexeme may start with here."""
        found = self._start_chars
        if found is None:
            memo = self.grammar._start_chars
            found = memo.get(self.expected)
            if found is None:
                if len(memo) >= 1 << 14:
                    memo.clear()
                found = memo[self.expected] = _first_chars(self.grammar.dfas, self.lexers())
            self._start_chars = found
        return found

    def __repr__(self) -> str:
        return f"EarleySet({len(self.items)} items, expects {[self.grammar.terminal_names[t] for t in self.expected]})"


def _first_chars(dfas: list, lexers: tuple[int, ...]) -> CharSet:
    """The characters that start a lexeme of one of these terminals (apart from ``EarleySet.start_chars``,
    whose every call would otherwise make its ``self`` a cell)."""
    intervals = [iv for lexer in lexers for iv in dfas[lexer].charset(0).intervals]
    return CharSet(intervals) if intervals else EMPTY
