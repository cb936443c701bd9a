"""The import graph of ``src/actsagent``, read from the source (every import statement: module level,
inside functions, under ``TYPE_CHECKING``): no cycles, and no import pointing up the layers.

An import moved into a function still counts: it would only hide the cycle, not remove it. The same
layer may import itself (the cycle check covers that); a lower layer never imports a higher one.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "actsagent"

# The layers, lowest first. The most specific entry names a module's layer; a package or module
# missing here fails the test (say where it belongs).
LAYERS: dict[str, int] = {
    # 0: typed models and resources that depend on nothing of actsagent but each other
    "actsagent.errors": 0, "actsagent.config": 0, "actsagent.reporting": 0, "actsagent.naming": 0,
    "actsagent.schema": 0, "actsagent.prompts": 0,
    # 1: the only code that talks to a database driver; the package root re-exports it
    "actsagent.db": 1, "actsagent": 1,
    # 2: the guard, SafeQL, the LLM layer, SQL-name rewriting
    "actsagent.guard": 2, "actsagent.safeql": 2, "actsagent.llm": 2, "actsagent.sqlnames": 2,
    # 3-5: the agent's tools, its graphs, the agent
    "actsagent.tools": 3,
    "actsagent.graphs": 4,
    "actsagent.agent": 5,
    # 6: products built on the agent and the db layer
    "actsagent.web": 6, "actsagent.birdcritic": 6, "actsagent.clean": 6, "actsagent.integrations": 6,
    "actsagent.kb": 6, "actsagent.schema_refine": 6, "actsagent.demo": 6, "actsagent.benchmarks": 6,
    "actsagent.degrade": 6,
    # 7: the command line
    "actsagent.cli": 7,
}


def _modules() -> dict[str, Path]:
    out = {}
    for path in (SRC / PACKAGE).rglob("*.py"):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """module -> the actsagent modules it imports (``from pkg import mod`` names the module ``pkg.mod``)."""
    def known(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = defaultdict(set)
    for mod, path in modules.items():
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            targets: list[str | None] = []
            if isinstance(node, ast.Import):
                targets = [known(a.name) for a in node.names if a.name.split(".")[0] == PACKAGE]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                if source.split(".")[0] != PACKAGE:
                    continue
                targets = [known(f"{source}.{a.name}") if f"{source}.{a.name}" in modules else known(source)
                           for a in node.names]
            graph[mod].update(t for t in targets if t and t != mod)
    return graph


def _layer(module: str) -> int:
    owner = max((k for k in LAYERS if module == k or module.startswith(k + ".")), key=len, default=None)
    if owner is None or (owner == PACKAGE and module != PACKAGE):
        raise AssertionError(f"{module} has no layer: add its package to LAYERS in tests/test_architecture.py")
    return LAYERS[owner]


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), each as a closed path."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(_path_through(sorted(comp), graph))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _path_through(component: list[str], graph: dict[str, set[str]]) -> list[str]:
    """One cycle inside ``component``, from its first module back to it (for the failure message)."""
    members, start = set(component), component[0]
    paths = {start: [start]}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(graph.get(v, ()) & members):
            if w == start:
                return paths[v] + [start]
            if w not in paths:
                paths[w] = paths[v] + [w]
                queue.append(w)
    return component


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return _import_graph(_modules())


def test_the_graph_is_read_from_the_source(graph):
    # known edges of each kind: module level, inside a function, through a package's __init__
    assert "actsagent.db.base" in graph["actsagent.db.postgres"]
    assert "actsagent.db.loader" in graph["actsagent.benchmarks"]  # imported inside pg_copy
    assert "actsagent.db" in graph["actsagent"]
    assert all(m.startswith(PACKAGE) for deps in graph.values() for m in deps)


def test_there_are_no_import_cycles(graph):
    cycles = _cycles(graph)
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_no_module_imports_a_higher_layer(graph):
    upward = sorted(f"{a} (layer {_layer(a)}) imports {b} (layer {_layer(b)})"
                    for a, deps in graph.items() for b in deps if _layer(b) > _layer(a))
    assert not upward, "imports pointing up the layers:\n" + "\n".join(upward)


def test_every_module_has_a_layer():
    for module in _modules():
        _layer(module)


def test_the_checks_catch_what_they_are_for():
    ring = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(ring) == [["a", "b", "c", "a"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []
    assert _layer("actsagent.db.admin") < _layer("actsagent.tools.run_sql") < _layer("actsagent.cli.chat")
    with pytest.raises(AssertionError, match="no layer"):
        _layer("actsagent.newpackage")
