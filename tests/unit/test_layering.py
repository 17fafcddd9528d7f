"""Dependencies point one way: the engine talks to policies only through the contract in
``schedlab.cluster``, and policies take contract types from there too."""
from __future__ import annotations

import ast
from pathlib import Path

import schedlab

SRC = Path(schedlab.__file__).parent


def _imported_modules(path: Path) -> set[str]:
    """Every module named by an import statement in ``path`` (also inside functions and
    ``TYPE_CHECKING`` blocks)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
    return out


def test_engine_never_imports_policies():
    files = sorted((SRC / "engine").rglob("*.py"))
    assert files
    bad = {f"{p.relative_to(SRC)}: {m}" for p in files for m in _imported_modules(p)
           if m == "schedlab.policies" or m.startswith("schedlab.policies.")}
    assert not bad, f"engine modules import policies: {sorted(bad)}"


def test_cluster_never_imports_policies():
    files = sorted((SRC / "cluster").rglob("*.py"))
    bad = {f"{p.relative_to(SRC)}: {m}" for p in files for m in _imported_modules(p)
           if m.startswith("schedlab.policies")}
    assert not bad, f"cluster modules import policies: {sorted(bad)}"


def test_policies_take_contract_types_from_cluster():
    contract = {"Place", "Enqueue", "Dequeue", "Preempt", "Drop", "Promote", "Reserve",
                "Unreserve", "Action", "Status", "Trigger"}
    bad = []
    for p in sorted((SRC / "policies").rglob("*.py")):
        if p.name in ("base.py", "__init__.py"):      # the re-exports for existing user code
            continue
        for node in ast.walk(ast.parse(p.read_text())):
            if (isinstance(node, ast.ImportFrom) and node.module == "schedlab.policies.base"
                    and contract & {a.name for a in node.names}):
                bad.append(str(p.relative_to(SRC)))
    assert not bad, f"import actions from schedlab.cluster.actions: {bad}"


def test_old_import_paths_still_work():
    from schedlab.cluster import actions
    from schedlab.policies import base
    for name in ("Place", "Preempt", "Status", "Trigger", "Action"):
        assert getattr(base, name) is getattr(actions, name)
