"""Dependencies point one way, through the layers of ``src/schedlab``, bottom up:

``_version``/``errors``/``stats``/``draws`` -> ``cluster`` -> ``workload`` -> ``engine`` ->
``policies`` -> ``metrics`` -> ``inputs``/``config`` -> ``executor`` -> ``run``/``gym``/``validate`` ->
``reports``/``sweeps`` ->
``schedlab`` (the package itself: the public API) -> ``reproduce`` -> ``papers`` ->
``testing`` -> ``cli``.

A module may import its own layer and the layers below, never one above; no group of
modules imports itself in a cycle; a paper's package imports the core and itself, never
another paper. Every import statement counts, also inside functions and ``TYPE_CHECKING``
blocks.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

import schedlab

SRC = Path(schedlab.__file__).parent

LAYERS = (
    ("schedlab._version", "schedlab.errors", "schedlab.stats", "schedlab.draws",
     "schedlab._limits", "schedlab._workers"),
    ("schedlab.cluster",),
    ("schedlab.workload",),
    ("schedlab.engine",),
    ("schedlab.policies",),
    ("schedlab.metrics",),
    ("schedlab.inputs", "schedlab.config"),
    ("schedlab.executor",),
    ("schedlab.run", "schedlab.gym"),
    ("schedlab.reports", "schedlab.sweeps"),
    ("schedlab.validate",),
    ("schedlab",),
    ("schedlab.reproduce",),
    ("schedlab.papers",),
    ("schedlab.testing",),
    ("schedlab.cli", "schedlab.__main__"),
)
PAPERS = LAYERS.index(("schedlab.papers",))


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(SRC.rglob("*.py"))}


def _owner(name: str) -> str:
    """The module of ours that ``name`` (a module, or a name imported from one) is in."""
    while name not in MODULES:
        name = name.rpartition(".")[0]
    return name


def _imports(module: str, text: str | None = None) -> set[str]:
    """Our modules named by any import statement of ``module`` (relative ones resolved)."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text() if text is None else text)):
        if isinstance(node, ast.Import):
            out.update(_owner(a.name) for a in node.names if a.name.split(".")[0] == "schedlab")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            if source.split(".")[0] != "schedlab":
                continue
            for a in node.names:     # ``from pkg import module`` names the module itself
                full = f"{source}.{a.name}"
                out.add(full if full in MODULES else _owner(source))
    out.discard(module)
    return out


GRAPH = {m: _imports(m) for m in MODULES}


def _layer(module: str) -> int:
    for i, prefixes in enumerate(LAYERS):
        if any(module == p or (p != "schedlab" and module.startswith(p + ".")) for p in prefixes):
            return i
    msg = f"{module} is in no layer: add it to LAYERS"
    raise AssertionError(msg)


def _paper(module: str) -> str | None:
    """The paper package a module belongs to (``schedlab.papers.<name>.*``), if any."""
    parts = module.split(".")
    if len(parts) > 2 and parts[1] == "papers" and MODULES[".".join(parts[:3])].name == "__init__.py":
        return parts[2]
    return None


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
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
            v, edges = work[-1]
            w = next(edges, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def test_every_module_is_in_a_layer():
    assert len(MODULES) > 100
    for m in MODULES:
        _layer(m)


def test_no_module_imports_a_higher_layer():
    up = sorted(f"{m} -> {d}" for m, deps in GRAPH.items() for d in deps
                if _layer(d) > _layer(m))
    assert not up, "imports that run up the layers:\n" + "\n".join(up)


def test_no_import_cycles():
    cycles = _cycles(GRAPH)
    assert not cycles, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_the_core_never_imports_the_papers():
    bad = sorted(f"{m} -> {d}" for m, deps in GRAPH.items() for d in deps
                 if _layer(m) < PAPERS and d.startswith("schedlab.papers"))
    assert not bad, "\n".join(bad)


def test_papers_never_import_each_other():
    bad = sorted(f"{m} -> {d}" for m, deps in GRAPH.items() for d in deps
                 if _paper(m) and d.startswith("schedlab.papers") and _paper(d) != _paper(m))
    assert not bad, "\n".join(bad)


def test_engine_and_cluster_never_import_policies():
    bad = sorted(f"{m} -> {d}" for m, deps in GRAPH.items() for d in deps
                 if m.startswith(("schedlab.engine", "schedlab.cluster"))
                 and d.startswith("schedlab.policies"))
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("graph, expected", [
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
    ({"a": {"b"}, "b": set(), "c": {"b"}}, []),
    ({"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"c"}}, [["a", "b"], ["c", "d"]]),
])
def test_cycle_finder(graph, expected):
    assert sorted(_cycles(graph)) == expected


def test_import_parser_sees_function_level_and_type_checking_imports():
    text = ("from typing import TYPE_CHECKING\n"
            "if TYPE_CHECKING:\n    from schedlab.papers import rose\n"
            "def f():\n    import schedlab.reports.html\n    from . import events\n"
            "    from .state import ClusterState\n")
    assert _imports("schedlab.engine.apply", text) == {
        "schedlab.papers.rose", "schedlab.reports.html", "schedlab.engine.events",
        "schedlab.engine.state"}
