"""The four papers, one package each: ``schedlab.papers.<name>``.

Each package holds everything about its paper: ``algorithms.py`` (the paper's algorithms,
plain, as the reference), ``policy.py`` (the plug-in), the baselines only that paper uses,
its workloads, metrics, checks and reproduction. ``POLICIES`` in each package's
``__init__`` maps the policy ids it registers to their modules, so the registry can import
one policy without importing the others (DRS's pull in the MILP solver).

Papers import the generic core, never each other.
"""
from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["PAPERS", "paper_package", "reproduction"]

PAPERS = ("hybrid", "dress", "rose", "drs")


def paper_package(paper: str) -> ModuleType:
    return importlib.import_module(f"schedlab.papers.{paper}")


def reproduction(paper: str) -> ModuleType:
    """The module with the paper's ``reproduce(*, seeds, out, quick)``."""
    return importlib.import_module(f"schedlab.papers.{paper}.reproduce")
