"""What the computed masks of MaskBench's strict compact pass are made of, for planning the compiled core: the
parser classes each mask's state holds (a container machine in C covering a set of them would answer those
masks), and the parser steps the masks make (``add_character`` calls, nested calls counted) against the
distinct (state key, character) pairs among them (what a memo of steps by state key could save at most).

    python benchmarks/mask_anatomy.py            # both
    python benchmarks/mask_anatomy.py --classes  # the classes only (no step counting: wall times closer)

The cases run as the strict pass runs them (MaskBench's order, each schema new, one vocabulary for the
process); times are wall times of the masks themselves, for shares rather than absolute figures.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import maskbench  # noqa: E402

from formatenforcer import Vocabulary  # noqa: E402
from formatenforcer.core import enforcer  # noqa: E402
from formatenforcer.core.protocol import CharacterParser  # noqa: E402


def _held(value: object) -> Iterator[object]:
    """The objects a parser state holds in its slots and attributes."""
    names = [name for klass in type(value).__mro__ for name in getattr(klass, "__slots__", ())]
    yield from (getattr(value, name, None) for name in names if isinstance(name, str))
    yield from getattr(value, "__dict__", {}).values()


def _opened(value: object) -> bool:
    """Whether to look inside ``value``: a parser state, or a slotted object of the JSON parsers (the frames
    of the containers a ``Deep`` stack holds below its top, which hold their own parser states)."""
    if isinstance(value, CharacterParser):
        return True
    klass = type(value)
    return klass.__module__.startswith("formatenforcer.jsonschema") and hasattr(klass, "__slots__")


def parser_classes(state: CharacterParser) -> frozenset[str]:
    """The classes of the parser states reachable from ``state`` through what they hold."""
    seen: set[int] = set()
    names: set[str] = set()
    stack: list[object] = [state]
    while stack:
        value = stack.pop()
        if isinstance(value, (tuple, list)):
            stack.extend(value)
            continue
        if id(value) in seen or not _opened(value) or callable(value):
            continue
        seen.add(id(value))
        if isinstance(value, CharacterParser):
            names.add(type(value).__name__)
        stack.extend(_held(value))
    return frozenset(names)


def _subclasses(klass: type) -> Iterator[type]:
    for sub in klass.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--classes", action="store_true", help="the parser classes only, no step counting")
    args = parser.parse_args()
    tokenizer = maskbench.llama3_tokenizer()
    vocabulary = Vocabulary.from_transformers(tokenizer)
    work = maskbench.compact_pass(tokenizer)

    inside = [0]
    steps = [0]
    distinct: set[tuple] = set()
    if not args.classes:
        for klass in {k for k in _subclasses(CharacterParser) if "add_character" in k.__dict__}:
            plain = klass.__dict__["add_character"]

            def counted(self, ch, _plain=plain):  # noqa: ANN001, ANN202
                if inside[0]:
                    steps[0] += 1
                    distinct.add((self.key(), ch))
                return _plain(self, ch)

            klass.add_character = counted  # type: ignore[attr-defined]

    masks: list[tuple[int, frozenset[str]]] = []
    plain_mask = enforcer.budgeted_mask

    def recorded(*arguments):  # noqa: ANN002, ANN202
        inside[0] += 1
        start = time.perf_counter_ns()
        try:
            return plain_mask(*arguments)
        finally:
            took = time.perf_counter_ns() - start
            inside[0] -= 1
            masks.append((took, parser_classes(arguments[1])))

    enforcer.budgeted_mask = recorded
    maskbench.force_pass(vocabulary, work)

    total = sum(took for took, _ in masks) or 1
    print(f"{len(masks)} computed masks, {total / 1e6:.0f} ms")
    if not args.classes:
        print(f"parser steps in masks: {steps[0]}, distinct (state key, character): {len(distinct)}")
    count: collections.Counter = collections.Counter()
    spent: collections.Counter = collections.Counter()
    for took, names in masks:
        count[names] += 1
        spent[names] += took
    print("parser classes held by the state, by share of mask time:")
    for names, took in spent.most_common(12):
        print(f"  {100 * took / total:5.1f}%  {count[names]:5d} masks  {', '.join(sorted(names))}")


if __name__ == "__main__":
    main()
