"""Which schemas have a finite instance: the least fixpoint over what a value must contain.

A value of an object must hold its required names (with those ``dependentRequired`` adds), a value of an
array its first ``minItems`` items, a union one of its options. A schema whose every instance would contain
an instance of itself (``{"properties": {"a": {"$ref": "#"}}, "required": ["a"]}``) has none: generation
could only stop early. The check reads the schema's nodes, builds no state, and follows only what a value
must contain, so optional recursion (trees, linked lists) costs one visit per node.

Whether an object or array node leaves any value at all (``no_object``/``no_array``) may need a merge or a
key automaton the parsers cannot enforce (``Unsupported``, refused where the node is built) or a reference
that needs itself (``CycleError``, reported by the normalizer): then the check cannot decide and answers
"possible". An automaton that ran out of the build's time limit is different: the node's own build may
finish next time and find no value, so the answer would depend on the machine's load. That node is refused
(``TimedOut``: the compiler reports it as the node's UnsupportedSchemaError, or relaxes it when lenient), and
asked again it answers "possible" without building anything (``timed_out`` keeps it: the compiler refuses
it at its own start, so the two agree).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from ..parsers.regex import timed_out
from .arrays import no_array
from .object_exists import member_values
from .object_names import _named_values, no_object
from .schema.ir import Array, CycleError, Never, Node, Object, String, Union, Unsupported, deref, union_of

if TYPE_CHECKING:
    from .schema.merge import Merger


_NESTING = frozenset({Array, Object, Union})
"""The nodes whose smallest value may open an array or an object."""


class TimedOut(Unsupported):
    """The check of ``node`` ran out of the build's time limit (``parsers.regex.COMPILE_SECONDS``)."""

    def __init__(self, problem: Unsupported, node: Node) -> None:
        super().__init__(problem.keyword, problem.reason)
        self.node = node
        self.named = getattr(problem, "named", None)
        """The node the refusal names when not ``node`` (a ``contains`` schema: ``arrays.no_array``)."""


class FiniteCheck:
    """Memoised per schema (per Compiler): ``finite(node)`` for any node reached from it."""

    def __init__(self, merger: Merger, has_start: Callable[[Node], bool] | None = None) -> None:
        self._merger = merger
        # whether a string node has a value (its content automaton: a pattern may match nothing within the
        # lengths): the compiler's start, which strings build without asking this check
        self._has_start = has_start
        self._known: dict[int, bool] = {}
        self._keep: list[Node] = []
        self._need_memo: dict[int, tuple[Node, tuple[str, list[Node]]]] = {}
        """id(node) -> (node, its needs): asked by ``finite`` and again by ``min_depth`` (holds the node, so
        its id stays unique)."""
        self.timed_out: dict[int, TimedOut] = {}
        """id(node) -> the refusal of a node whose check ran out of time (holds the node): see the module notes."""

    def finite(self, node: Node) -> bool:
        root = _concrete(node)
        known = self._known.get(id(root))
        if known is not None:
            return known
        # most nodes need nothing, or only nodes already settled or needing nothing (a flat object of
        # scalars): decided here, without the fixpoint below
        rule, children = self._needs(root)
        settled = [self._settled(child) for child in children]
        if None not in settled:
            value = any(settled) if rule == "any" else all(settled)
            self._known[id(root)] = value
            self._keep.append(root)
            return value
        # the nodes a value of ``root`` must contain, found without recursion (schemas may nest deeply)
        needs: dict[int, tuple[str, list[Node]]] = {}
        nodes: dict[int, Node] = {}
        stack = [root]
        while stack:
            current = stack.pop()
            key = id(current)
            if key in needs or key in self._known:
                continue
            rule, children = self._needs(current)
            needs[key] = (rule, children)
            nodes[key] = current
            stack.extend(child for child in children if id(child) not in needs)
        # the least fixpoint by propagation from what is settled: each node and edge once (a chain of n
        # nested required values takes n steps, not n passes of n)
        value = {key: False for key in needs}
        parents: dict[int, list[int]] = {}
        waiting: dict[int, int] = {}  # "all" nodes: children in ``needs`` not yet known finite
        ready: list[int] = []
        for key, (rule, children) in needs.items():
            ids = {id(child) for child in children}
            if rule == "any":
                if any(self._known.get(c) for c in ids):
                    ready.append(key)
                    continue
            elif any(self._known.get(c) is False for c in ids):
                continue
            open_ids = [c for c in ids if c in needs]
            if rule == "all":
                waiting[key] = len(open_ids)
                if not open_ids:
                    ready.append(key)
            for c in open_ids:
                parents.setdefault(c, []).append(key)
        while ready:
            key = ready.pop()
            if value[key]:
                continue
            value[key] = True
            for parent in parents.get(key, ()):
                if value[parent]:
                    continue
                if parent not in waiting:
                    ready.append(parent)
                else:
                    waiting[parent] -= 1
                    if not waiting[parent]:
                        ready.append(parent)
        for key, ok in value.items():
            self._known[key] = ok
            self._keep.append(nodes[key])
        return self._known[id(root)]

    def _settled(self, node: Node) -> bool | None:
        """Whether ``node`` has a finite value when that is known or it needs no other node; else None."""
        known = self._known.get(id(node))
        if known is not None:
            return known
        rule, children = self._needs(node)
        if children:
            return None
        value = rule == "all"  # all of nothing holds, one of nothing does not
        self._known[id(node)] = value
        self._keep.append(node)
        return value

    def culprit(self, node: Node) -> Node:
        """Where a node without a finite value fails: followed down what its value must contain to the
        first node with none (a union of such options, rules that leave no value at all, or the node
        where the need comes back round to itself), to name it in the error."""
        current, seen = _concrete(node), set()
        while id(current) not in seen:
            seen.add(id(current))
            rule, children = self._needs(current)
            bad = next((c for c in children if not self.finite(c)), None) if rule == "all" else None
            if bad is None:
                return current
            current = bad
        return current

    def exceeds_depth(self, node: Node, limit: int) -> bool:
        """Whether the fewest arrays and objects open at once in a value of ``node`` (``min_depth``) are more
        than ``limit``. A value of the fewest nests along needs that never repeat a node, so when ``node``'s
        finiteness is settled (every node its value may need then has its needs read, in ``_need_memo``) and
        those nodes number at most ``limit``, the answer is no without the search (a schema of a few hundred
        nodes against ``JsonConfig.max_depth``)."""
        root = _concrete(node)
        if root.__class__ not in _NESTING:
            return False  # a scalar (or no value): nothing open
        if id(root) in self._known and len(self._need_memo) <= limit:
            return False
        needed = self.min_depth(root)
        return needed is not None and needed > limit

    def min_depth(self, node: Node) -> int | None:
        """The fewest arrays and objects open at once in a value of ``node`` (``[[1]]``: 2), None when it has
        no finite value. Knuth's generalisation of Dijkstra over the same needs: a container adds one level
        to the deepest of what it must contain, a union takes its shallowest option; settled in order of
        depth, each node once."""
        return self.min_depths(node).get(id(_concrete(node)))

    def min_depths(self, node: Node) -> dict[int, int]:
        """``min_depth`` of every node a value of ``node`` may need, by ``id`` of the (dereferenced) node, from
        one pass (the nodes with no finite value left out)."""
        root = _concrete(node)
        needs: dict[int, tuple[str, list[Node]]] = {}
        level: dict[int, int] = {}
        stack = [root]
        while stack:
            current = stack.pop()
            if id(current) in needs:
                continue
            rule, children = self._needs(current)
            needs[id(current)] = (rule, children)
            level[id(current)] = 1 if isinstance(current, (Array, Object)) else 0
            stack.extend(child for child in children if id(child) not in needs)
        parents: dict[int, list[int]] = {}
        waiting: dict[int, int] = {}
        deepest: dict[int, int] = {}
        heap: list[tuple[int, int]] = []
        for key, (rule, children) in needs.items():
            ids = {id(child) for child in children}
            if rule == "all":
                waiting[key] = len(ids)
                deepest[key] = 0
                if not ids:
                    heap.append((level[key], key))
            for c in ids:
                parents.setdefault(c, []).append(key)
        heapq.heapify(heap)
        done: dict[int, int] = {}
        while heap:
            depth, key = heapq.heappop(heap)
            if key in done:
                continue
            done[key] = depth
            for parent in parents.get(key, ()):
                if parent in done:
                    continue
                if parent not in waiting:
                    heapq.heappush(heap, (depth + level[parent], parent))
                else:
                    waiting[parent] -= 1
                    deepest[parent] = max(deepest[parent], depth)
                    if not waiting[parent]:
                        heapq.heappush(heap, (deepest[parent] + level[parent], parent))
        return done

    def _needs(self, node: Node) -> tuple[str, list[Node]]:
        """("all" | "any", the concrete nodes a value of ``node`` must contain all or one of), memoised."""
        hit = self._need_memo.get(id(node))
        if hit is not None and hit[0] is node:
            return hit[1]
        found = self._find_needs(node)
        self._need_memo[id(node)] = (node, found)
        return found

    def _find_needs(self, node: Node) -> tuple[str, list[Node]]:
        if isinstance(node, Never):
            return "any", []  # none: never finite
        if isinstance(node, Union):
            return "any", [_concrete(o) for o in node.options]
        if isinstance(node, String) and not self._has_value(node):
            return "any", []
        if isinstance(node, Array):
            if self._no_array(node):
                return "any", []
            positions = [*node.prefix, *[node.items] * max(0, node.min_items - len(node.prefix))][: node.min_items]
            needs = [_concrete(p) for p in positions]
            match = self._contains_match(node)
            if match is not None:
                needs.append(match)
            return "all", needs
        if isinstance(node, Object) and self._no_object(node):
            return "any", []
        if isinstance(node, Object) and node.exists:
            members = self._members(node)
            required = self._find_needs(replace(node, exists=())) if node.required else ("all", [])
            return "all", required[1] + members
        if isinstance(node, Object) and node.required:
            deps = dict(node.dependent_required)
            names, todo = set(node.required), list(node.required)
            while todo:
                for name in deps.get(todo.pop(), ()):
                    if name not in names:
                        names.add(name)
                        todo.append(name)
            ordered = tuple(sorted(names))
            return "all", [_concrete(v) for v in _named_values(node, ordered, self._merger)]
        return "all", []

    def _members(self, node: Object) -> list[Node]:
        """For an object that must hold members (``Object.exists``): per member, a node whose values are the
        values such a member can have (object_exists.py), so the object has a finite value only if each
        member has one."""
        try:
            members = member_values(node, self._merger)
        except Unsupported:  # refused where the object is built
            return []
        self._keep.extend(members)
        return [_concrete(m) for m in members]

    def _contains_match(self, node: Array) -> Node | None:
        """For an array that must hold a ``contains`` match: a node whose values are the matches its positions
        can hold (the union, over the tuple's positions and the rest, of the position's schema with
        ``contains``), so that the array has a finite value only if some match has one. ``no_array`` sees
        only matches that merge to nothing (or to a string no text satisfies): an item array that cannot
        exist (``maxItems: 0`` with a ``contains`` of its own) passed it, and the outer array then built
        and dead-ended after ``[``. None when no match is required, or with several ``contains`` (counted
        jointly, see arrays.py)."""
        if node.contains is None or node.min_contains <= 0 or node.also_contains:
            return None
        positions = len(node.prefix) + 1
        if node.max_items is not None:
            positions = min(positions, node.max_items)
        try:
            match = union_of([self._merger.intersect(s, node.contains) for s in [*node.prefix, node.items][:positions]])
        except Unsupported:  # an unsupported merge: reported where ArrayContext builds the match
            return None
        self._keep.append(match)
        return _concrete(match)

    def _no_object(self, node: Object) -> bool:
        """The object rules that leave no object at all, whatever the values (``object_names.no_object``,
        as ``ObjectContext.start`` decides)."""
        if id(node) in self.timed_out:
            return False
        try:
            return no_object(node, self._merger)
        except (Unsupported, CycleError) as problem:  # reported where the node is built (or normalized)
            return self._undecided(node, problem)

    def _has_value(self, node: String) -> bool:
        """Whether some text satisfies the string ``node`` (the compiler's ``string_has_value``); a build out of
        time is refused like a key automaton's (``TimedOut`` naming ``node``), then answered "possible"."""
        if self._has_start is None or id(node) in self.timed_out:
            return True
        try:
            return self._has_start(node)
        except Unsupported as problem:
            return not self._undecided(node, problem)

    def _no_array(self, node: Array) -> bool:
        """The array rules that leave no array at all, whatever the items (``arrays.no_array``, which
        ``ArrayContext.start`` reads too, so the two never disagree)."""
        if id(node) in self.timed_out:
            return False
        try:
            return no_array(node, self._merger, self._has_start)
        except (Unsupported, CycleError) as problem:  # reported where the node is built (or normalized)
            return self._undecided(node, problem)

    def _undecided(self, node: Node, problem: Exception) -> bool:
        """Answers "possible" for a check that cannot be decided here; raises ``TimedOut`` the first time it is
        for lack of time (see the module notes)."""
        if not isinstance(problem, Unsupported) or not timed_out(problem):
            return False
        refusal = self.timed_out[id(node)] = TimedOut(problem, node)
        raise refusal


def _concrete(node: Node) -> Node:
    try:
        return deref(node)
    except CycleError:
        return Never("a reference that needs itself")  # (reported where the schema is built)
