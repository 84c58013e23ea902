"""The house: the layers of formatenforcer, read from the imports of its files (docs/architecture.md).

Each rule is a function of the import graph, so a test can also feed it a graph with a deliberate violation
and see it caught. Imports under ``if TYPE_CHECKING:`` are annotations, not dependencies, and are left out;
imports inside functions count like any other.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "formatenforcer"

Graph = dict[str, set[str]]


def _module_of(path: Path) -> str:
    relative = path.relative_to(ROOT).with_suffix("")
    parts = list(relative.parts)
    if parts[0] == "integrations":
        parts = [PACKAGE, *parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _runtime_imports(tree: ast.Module) -> list[ast.ImportFrom | ast.Import]:
    """Import statements outside ``if TYPE_CHECKING:`` blocks."""
    found: list[ast.ImportFrom | ast.Import] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return found


def import_graph() -> Graph:
    """Module -> the formatenforcer modules it imports (a package's ``from . import x`` counts as ``x``)."""
    files = {_module_of(p): p for base in (PACKAGE, "integrations") for p in (ROOT / base).rglob("*.py")}
    graph: Graph = {}
    for module, path in files.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        targets: set[str] = set()
        for node in _runtime_imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets.update(a.name for a in node.names if a.name.split(".")[0] == PACKAGE)
                continue
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            if source.split(".")[0] != PACKAGE:
                continue
            submodules = {f"{source}.{a.name}" for a in node.names if f"{source}.{a.name}" in files}
            targets.update(submodules)
            if len(submodules) < len(node.names):
                targets.add(source)
        targets.discard(module)
        graph[module] = {t for t in targets if t in files}
    return graph


def cycles(graph: Graph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _in(module: str, *prefixes: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


P = PACKAGE
WALK_SIDE = (f"{P}.core.walk", f"{P}.core.enforcer", f"{P}.core.matcher", f"{P}.core.position")
FORMATS = (f"{P}.parsers", f"{P}.jsonschema", f"{P}.grammar")
RULES: list[tuple[str, tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = [
    # (why, whose imports, may import only these (empty: anything), and never these)
    ("the core (trie, vocabulary, walk, enforcer) knows no parser", (f"{P}.core",), (f"{P}.core",), ()),
    ("parsers know the core's protocol, never the walk or the enforcer", FORMATS, (), WALK_SIDE),
    (
        "JSON Schema's stage one imports no parser and no format grammar",
        (f"{P}.jsonschema.schema",),
        (f"{P}.core.errors", f"{P}.core.charset", f"{P}.jsonschema.schema", f"{P}.jsonschema.ecma"),
        (),
    ),
    (
        "ECMA-262 patterns and format grammars know the core and the generic parsers, not the JSON parsers",
        (f"{P}.jsonschema.ecma", f"{P}.jsonschema.formats"),
        (f"{P}.core", f"{P}.parsers", f"{P}.jsonschema.ecma", f"{P}.jsonschema.formats"),
        (),
    ),
    ("integrations use the public API only", (f"{P}.integrations",), (P, f"{P}.integrations"), ()),
]


def violations(graph: Graph) -> list[str]:
    """Every import that breaks a layer rule, as 'importer -> imported: rule'."""
    found = []
    for why, owners, allowed, forbidden in RULES:
        for module, targets in graph.items():
            if not _in(module, *owners):
                continue
            for target in sorted(targets):
                exact_root = target == P  # the public package itself
                if allowed and not (
                    any(_in(target, a) if a != P else exact_root for a in allowed) or _in(target, *owners)
                ):
                    found.append(f"{module} -> {target}: {why}")
                elif _in(target, *forbidden):
                    found.append(f"{module} -> {target}: {why}")
    return found


@pytest.fixture(scope="module")
def graph() -> Graph:
    """The package's import graph, read when a test of this module first runs (not at collection, where
    every xdist worker would parse the package's files)."""
    return import_graph()


def test_the_graph_sees_the_package(graph: Graph) -> None:
    assert f"{P}.core.walk" in graph and f"{P}.jsonschema.objects" in graph and f"{P}.integrations.vllm" in graph
    assert f"{P}.core.protocol" in graph[f"{P}.core.walk"]


def test_no_import_circles(graph: Graph) -> None:
    assert cycles(graph) == []


def test_layer_rules_hold(graph: Graph) -> None:
    assert violations(graph) == []


@pytest.mark.parametrize(
    ("importer", "imported"),
    [
        (f"{P}.core.walk", f"{P}.parsers.regex"),
        (f"{P}.core.trie", f"{P}.jsonschema.strings"),
        (f"{P}.parsers.regex", f"{P}.core.walk"),
        (f"{P}.jsonschema.objects", f"{P}.core.enforcer"),
        (f"{P}.jsonschema.schema.ir", f"{P}.jsonschema.formats.patterns"),
        (f"{P}.jsonschema.schema.merge", f"{P}.jsonschema.numbers"),
        (f"{P}.jsonschema.schema.normalize", f"{P}.parsers.regex"),
        (f"{P}.integrations.vllm", f"{P}.core.bitmask"),
    ],
)
def test_a_deliberate_violation_is_caught(graph: Graph, importer: str, imported: str) -> None:
    bad = {module: set(targets) for module, targets in graph.items()}
    bad[importer].add(imported)
    assert any(v.startswith(f"{importer} -> {imported}:") for v in violations(bad))


def test_a_deliberate_circle_is_caught(graph: Graph) -> None:
    bad = {module: set(targets) for module, targets in graph.items()}
    bad[f"{P}.core.charset"].add(f"{P}.core.walk")
    assert any(f"{P}.core.charset" in c and f"{P}.core.walk" in c for c in cycles(bad))
