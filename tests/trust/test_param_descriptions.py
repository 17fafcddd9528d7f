"""Every parameter of every policy says what it does, where ``schedlab policies ID`` shows it."""
from __future__ import annotations

import importlib
import inspect
import pkgutil

from typer.testing import CliRunner

import schedlab.papers
import schedlab.policies
from schedlab.cli.main import app
from schedlab.policies.base import Policy
from schedlab.policies.registry import policy_class, policy_ids, policy_parameters


def _undescribed(cls: type[Policy]) -> list[str]:
    return [r["name"] for r in policy_parameters(cls) if not r["description"].strip()]


def _policy_classes() -> dict[str, type[Policy]]:
    """Every Policy subclass defined in the policies and papers packages, registered or not
    (a paper's private baselines too), by qualified name."""
    found: dict[str, type[Policy]] = {}
    for pkg in (schedlab.policies, schedlab.papers):
        for info in pkgutil.walk_packages(pkg.__path__, prefix=pkg.__name__ + "."):
            module = importlib.import_module(info.name)
            for _, obj in inspect.getmembers(module, inspect.isclass):
                if issubclass(obj, Policy) and obj is not Policy and obj.__module__ == info.name:
                    found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return found


def test_every_registered_parameter_has_a_description():
    missing = {pid: names for pid in policy_ids() if (names := _undescribed(policy_class(pid)))}
    assert not missing, f"parameters without a description: {missing}"


def test_every_policy_class_parameter_has_a_description():
    classes = _policy_classes()
    # the scan reaches the unregistered baselines as well as the registry
    assert {"schedlab.papers.dress.baselines.YarnContainers",
            "schedlab.policies.capacity.CapacityPolicy"} <= set(classes)
    missing = {name: names for name, cls in classes.items() if (names := _undescribed(cls))}
    assert not missing, f"parameters without a description: {missing}"


def _table_rows(output: str) -> dict[str, list[str]]:
    """The rows of a printed table, by the first cell: each cell's text, wrapped lines joined."""
    rows: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in output.splitlines():
        if not line.startswith("│"):
            continue
        cells = [c.strip() for c in line.strip("│").split("│")]
        if cells[0]:
            current = rows.setdefault(cells[0], cells)
        elif current is not None:
            for i, c in enumerate(cells):
                if c:
                    current[i] = f"{current[i]} {c}"
    return rows


def test_policies_command_shows_the_descriptions():
    params = policy_parameters(policy_class("capacity"))
    assert [r["name"] for r in params] == ["queues", "max_capacity", "resource_calculator"]
    result = CliRunner().invoke(app, ["policies", "capacity"])
    assert result.exit_code == 0, result.output
    shown = _table_rows(result.output)
    for r in params:
        # the table wraps (or folds) long text: compare without the white space
        assert "".join(shown[r["name"]][3].split()) == "".join(r["description"].split())
