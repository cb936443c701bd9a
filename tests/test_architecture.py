"""The import graph of ``src/actsagent``, read from the source: no cycles, and no import pointing up the layers.

Every import that runs counts for cycles, at module level or inside a function: moving an import into a
function only hides a cycle, it does not remove it. An import under ``if TYPE_CHECKING:`` never runs, so it
cannot close a cycle, but it is a dependency all the same: it may not point up the layers either. The same
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
    "actsagent.errors": 0,
    "actsagent.config": 0,
    "actsagent.reporting": 0,
    "actsagent.batch_engine": 0,  # where batch items run (threads or Ray); beside reporting's log and pool
    "actsagent.naming": 0,
    "actsagent.schema": 0,
    "actsagent.prompts": 0,
    # 1: the only code that talks to a database driver; the package root re-exports it
    "actsagent.db": 1,
    "actsagent": 1,
    # 2: the guard, SafeQL, the LLM layer, SQL-name rewriting
    "actsagent.guard": 2,
    "actsagent.safeql": 2,
    "actsagent.llm": 2,
    "actsagent.sqlnames": 2,
    # 3-5: the agent's tools, its graphs, the agent
    "actsagent.tools": 3,
    "actsagent.kb": 3,  # the schema knowledge the tools' prompts retrieve from (db, guard, llm below it)
    "actsagent.graphs": 4,
    "actsagent.agent": 5,
    # 6: products built on the agent and the db layer
    "actsagent.web": 6,
    "actsagent.birdcritic": 6,
    "actsagent.clean": 6,
    "actsagent.integrations": 6,
    "actsagent.schema_refine": 6,
    "actsagent.demo": 6,
    "actsagent.benchmarks": 6,
    "actsagent.degrade": 6,
    # 7: the command line
    "actsagent.cli": 7,
}


# Cycles that exist and belong to code this test's author could not change: each says whose it is. The list
# may only shrink: a listed cycle that is gone fails the test until its entry is removed.
KNOWN_CYCLES: dict[frozenset[str], str] = {}


def _modules() -> dict[str, Path]:
    out = {}
    for path in (SRC / PACKAGE).rglob("*.py"):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _import_graph(modules: dict[str, Path], *, type_only: bool = True) -> dict[str, set[str]]:
    """module -> the actsagent modules it imports (``from pkg import mod`` names the module ``pkg.mod``);
    ``type_only=False`` leaves out the imports under ``if TYPE_CHECKING:``."""

    def known(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    def imports(node: ast.AST, package: str) -> list[str | None]:
        if isinstance(node, ast.Import):
            return [known(a.name) for a in node.names if a.name.split(".")[0] == PACKAGE]
        if not isinstance(node, ast.ImportFrom):
            return []
        if node.level:
            base = package.split(".")[: len(package.split(".")) - node.level + 1]
            source = ".".join(base + ([node.module] if node.module else []))
        else:
            source = node.module or ""
        if source.split(".")[0] != PACKAGE:
            return []
        return [known(f"{source}.{a.name}") if f"{source}.{a.name}" in modules else known(source) for a in node.names]

    def walk(node: ast.AST, out: list[ast.AST]) -> None:
        for child in ast.iter_child_nodes(node):
            if not type_only and isinstance(child, ast.If) and _is_type_checking(child.test):
                for other in child.orelse:
                    walk(other, out) if not isinstance(other, ast.Import | ast.ImportFrom) else out.append(other)
                continue
            out.append(child)
            walk(child, out)

    graph: dict[str, set[str]] = defaultdict(set)
    for mod, path in modules.items():
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        nodes: list[ast.AST] = []
        walk(ast.parse(path.read_text(encoding="utf-8"), str(path)), nodes)
        for node in nodes:
            graph[mod].update(t for t in imports(node, package) if t and t != mod)
    return graph


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


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


@pytest.fixture(scope="module")
def runtime_graph() -> dict[str, set[str]]:
    return _import_graph(_modules(), type_only=False)


def test_the_graph_is_read_from_the_source(graph):
    # known edges of each kind: module level, inside a function, through a package's __init__
    assert "actsagent.db.base" in graph["actsagent.db.postgres"]
    assert "actsagent.db.loader" in graph["actsagent.benchmarks"]  # imported inside pg_copy
    assert "actsagent.db" in graph["actsagent"]
    assert all(m.startswith(PACKAGE) for deps in graph.values() for m in deps)


def test_type_checking_imports_are_dependencies_but_never_run(graph, runtime_graph):
    typed = {(a, b) for a, deps in graph.items() for b in deps} - {
        (a, b) for a, deps in runtime_graph.items() for b in deps
    }
    assert ("actsagent.tools._scenarios", "actsagent.tools._context") in typed  # under TYPE_CHECKING there
    assert all(b in graph[a] for a, deps in runtime_graph.items() for b in deps)


def test_there_are_no_import_cycles(runtime_graph):
    cycles = _cycles(runtime_graph)
    new = [c for c in cycles if frozenset(c) not in KNOWN_CYCLES]
    assert not new, "import cycles:\n" + "\n".join(" -> ".join(c) for c in new)
    gone = [sorted(k) for k in KNOWN_CYCLES if k not in {frozenset(c) for c in cycles}]
    assert not gone, f"these cycles are gone: remove them from KNOWN_CYCLES: {gone}"


def test_no_module_imports_a_higher_layer(graph):
    upward = sorted(
        f"{a} (layer {_layer(a)}) imports {b} (layer {_layer(b)})"
        for a, deps in graph.items()
        for b in deps
        if _layer(b) > _layer(a)
    )
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
