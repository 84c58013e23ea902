"""Draws the house: formatenforcer's layers (folders), the files in each and the imports between them.

Reads the same import graph as tests/test_architecture.py and writes docs/house.png, plus a table of each
folder's files and floors (the longest chain of imports inside it) on stdout.

    python tools/house.py
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from test_architecture import cycles, import_graph  # noqa: E402

LAYERS = [  # top to bottom, as docs/architecture.md draws them
    "formatenforcer.cli",
    "formatenforcer.integrations",
    "formatenforcer",
    "formatenforcer.jsonschema",
    "formatenforcer.grammar",
    "formatenforcer.jsonschema.formats",
    "formatenforcer.jsonschema.schema",
    "formatenforcer.jsonschema.ecma",
    "formatenforcer.parsers",
    "formatenforcer.core",
]


def layer_of(module: str) -> str:
    if module == "formatenforcer.__main__":
        return "formatenforcer.cli"  # ``python -m formatenforcer`` is the command line
    best = "formatenforcer"
    for layer in LAYERS:
        if (module == layer or module.startswith(layer + ".")) and len(layer) > len(best):
            best = layer
    if best == "formatenforcer.jsonschema.formats" or module.startswith("formatenforcer.jsonschema.formats."):
        return "formatenforcer.jsonschema.formats"
    return best


def floors(modules: list[str], graph: dict[str, set[str]]) -> int:
    inside = set(modules)
    memo: dict[str, int] = {}

    def depth(m: str, stack: tuple[str, ...] = ()) -> int:
        if m not in memo:
            memo[m] = 1 + max((depth(t, (*stack, m)) for t in graph[m] if t in inside and t not in stack), default=0)
        return memo[m]

    return max((depth(m) for m in modules), default=0)


def main() -> None:
    graph = import_graph()
    members: dict[str, list[str]] = {layer: [] for layer in LAYERS}
    for module in graph:
        members[layer_of(module)].append(module)
    edges: Counter[tuple[str, str]] = Counter()
    for module, targets in graph.items():
        for target in targets:
            a, b = layer_of(module), layer_of(target)
            if a != b:
                edges[(a, b)] += 1
    print("| folder | files | floors inside |")
    print("|---|---|---|")
    for layer in LAYERS:
        if members[layer]:
            print(f"| {layer.replace('formatenforcer', 'formatenforcer') + '/'} | {len(members[layer])} | "
                  f"{floors(members[layer], graph)} |")  # fmt: skip
    print(f"\nimport circles: {len(cycles(graph))}")

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = [layer for layer in LAYERS if members[layer]]
    y = {layer: len(shown) - i for i, layer in enumerate(shown)}
    fig, ax = plt.subplots(figsize=(11, 0.9 * len(shown) + 1))
    for layer in shown:
        name = layer.removeprefix("formatenforcer").lstrip(".").replace(".", "/") or "(the public API) "
        label = f"{name}/  ({len(members[layer])} files, {floors(members[layer], graph)} floors)"
        ax.text(0.62, y[layer], label, ha="center", va="center", fontsize=10,
                bbox={"boxstyle": "round", "facecolor": "#e8f0fe", "edgecolor": "#4a6fa5"})  # fmt: skip
    for (a, b), count in sorted(edges.items(), key=lambda e: y[e[0][0]] - y[e[0][1]]):
        span = y[a] - y[b]
        side = 1  # every import points down: drawn on the left
        ax.annotate("", xy=(0.3, y[b]), xytext=(0.3, y[a]),
                    arrowprops={"arrowstyle": "->", "color": "#667", "lw": 0.5 + 0.15 * min(count, 20),
                                "shrinkA": 9, "shrinkB": 9,
                                "connectionstyle": f"arc3,rad={side * min(0.9, 0.18 * abs(span))}"})  # fmt: skip
    ax.set_xlim(0, 1)
    ax.set_ylim(0.3, len(shown) + 0.7)
    ax.axis("off")
    ax.set_title("formatenforcer: each layer imports only those below it (arrows: imports, wider for more)")
    out = ROOT / "docs" / "house.png"
    fig.savefig(out, dpi=110, bbox_inches="tight")
    print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
