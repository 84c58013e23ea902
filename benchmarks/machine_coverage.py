"""What a compiled JSON machine would cover of MaskBench's strict compact pass, and what it would ask Python.

The planned machine (docs/architecture.md, "The decision: JSON's structure in C") walks the containers'
syntax in C and reads each container node's schema answers from tables Python fills once per (node, state).
This script runs the strict pass (each schema new, one vocabulary, as MaskBench's compact pass) and sorts
every mask that is computed (not a cache hit) by what its parser state holds beyond that first machine's
reach, with the CPU time those masks take:

- containers: a stack of one container per level (``union frame`` when a level holds several), objects by the
  kind of their extra keys (``open any``: every text may be an extra key; ``closed``; ``extras <content>``:
  keys under ``patternProperties`` or a length) and their other features (``order``, ``exists``, ``deps``,
  ``min/max props``), arrays with ``unique`` or ``contains``;
- the value being read: a string by the kind of its content and whether its automaton can be explored, a
  number as ``plain`` or ``bounded``, other parsers by name.

It also counts the distinct (object node, names seen, extra keys) and (array node, items read) states met:
the facts Python would answer for the machine in this pass.

    python benchmarks/machine_coverage.py
"""

from __future__ import annotations

import collections
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import maskbench  # noqa: E402

from formatenforcer import TokenEnforcer, Vocabulary  # noqa: E402
from formatenforcer.core import enforcer as enforcer_module  # noqa: E402
from formatenforcer.jsonschema.arrays import ArrayParser  # noqa: E402
from formatenforcer.jsonschema.depth import Deep  # noqa: E402
from formatenforcer.jsonschema.objects import ObjectParser  # noqa: E402
from formatenforcer.jsonschema.root import Leading, RootValue, Trailing  # noqa: E402

_VALUE = 5  # the object phase inside a value (object_phases.VALUE)


class Census:
    """The features of the states whose masks are computed, and the container facts met."""

    def __init__(self) -> None:
        self.masks: collections.Counter = collections.Counter()
        self.cpu: collections.Counter = collections.Counter()
        self.object_facts: set[tuple] = set()
        self.array_facts: set[tuple] = set()

    def object_features(self, state: ObjectParser) -> list[str]:
        ctx = state._ctx
        out = []
        if ctx.schema_order:
            out.append("order")
        if ctx.witnesses is not None:
            out.append("exists")
        if any(ctx.deps):
            out.append("deps")
        if len(ctx.names) > 64:
            out.append("over 64 names")
        if ctx.extras is None:
            out.append("closed")
        elif ctx.any_extra_key:
            out.append("open any")
        else:
            out.append("extras " + type(ctx.extras).__name__)
        if ctx.min_properties or ctx.max_properties is not None:
            out.append("min/max props")
        extras = state._extras
        self.object_facts.add((id(ctx), state._seen, extras if isinstance(extras, int) else len(extras)))
        return out

    def array_features(self, state: object) -> list[str]:
        if not isinstance(state, ArrayParser) or state._ctx.unique:  # (a unique array is a state of its own)
            return ["unique"]
        ctx = state._ctx
        self.array_facts.add((id(ctx), state._index))
        return ["contains"] if ctx.track else []

    @staticmethod
    def value_features(state: object) -> list[str]:
        name = type(state).__name__
        if name == "StringParser":
            if state.lexeme_automaton() is not None:  # type: ignore[attr-defined]
                return []
            if state.lexeme_tables() is not None:  # type: ignore[attr-defined]
                return ["string tables"]
            return ["string " + type(state._content).__name__]  # type: ignore[attr-defined]
        if name == "NumberParser":
            node = state._ctx.node  # type: ignore[attr-defined]
            plain = node.low is None and node.high is None and node.multiple_of is None and node.values is None
            return ["number plain" if plain else "number bounded"]
        return [name]

    def features(self, state: object) -> tuple[str, ...]:
        out: list[str] = []
        if isinstance(state, Leading):
            state = state._start
        elif isinstance(state, RootValue):
            state = state._value
        if isinstance(state, Trailing):
            return ("trailing",)
        if isinstance(state, Deep):
            frame = state._frame
            while frame is not None:
                if len(frame.edges) != 1:
                    out.append("union frame")
                    break
                template, frame = frame.edges[0]
                if isinstance(template, ObjectParser):
                    out += self.object_features(template)
                else:
                    out += self.array_features(template)
            state = state._top
        if isinstance(state, ObjectParser):
            out += self.object_features(state)
            if state._phase == _VALUE and state._child is not None:
                out += self.value_features(state._child)
        elif isinstance(state, ArrayParser):
            out += self.array_features(state)
            if state._child is not None:
                out += self.value_features(state._child)
        else:
            out += self.value_features(state)
        return tuple(sorted(set(out)))


def main() -> None:
    census = Census()
    original = enforcer_module.TokenEnforcer._mask

    def counted(self: TokenEnforcer, position: object) -> object:
        if self._cache.get(position.cache_key()) is not None:  # type: ignore[attr-defined]
            return original(self, position)
        features = census.features(position.state)  # type: ignore[attr-defined]
        start = time.thread_time()
        mask = original(self, position)
        census.masks[features] += 1
        census.cpu[features] += time.thread_time() - start
        return mask

    enforcer_module.TokenEnforcer._mask = counted  # type: ignore[method-assign]
    tokenizer = maskbench.llama3_tokenizer()
    vocabulary = Vocabulary.from_transformers(tokenizer)
    work = maskbench.compact_pass(tokenizer)
    maskbench.force_pass(vocabulary, work)
    total, cpu = sum(census.masks.values()), sum(census.cpu.values())
    print(f"{len(work)} cases, {total} computed masks, {cpu:.3f} CPU s")
    print(f"{'masks':>6} {'share':>6} {'CPU s':>7} {'share':>6}  features beyond a plain stack of containers")
    for features, count in sorted(census.masks.items(), key=lambda item: -census.cpu[item[0]]):
        share = census.cpu[features] / cpu
        print(f"{count:6d} {count / total:6.1%} {census.cpu[features]:7.3f} {share:6.1%}  {', '.join(features) or '-'}")
    print(f"object facts (node, seen, extras): {len(census.object_facts)}")
    print(f"array facts (node, items read): {len(census.array_facts)}")


if __name__ == "__main__":
    main()
