"""Policies registered by id (after Gymnasium's registry).

``register`` is a class decorator; ``make_policy("fifo", {"strict": True})`` builds one with
validated parameters, and an unknown id or parameter is an :class:`InputError`.
"""
from __future__ import annotations

import importlib
from typing import Any

from pydantic import ValidationError

from schedlab.errors import InputError
from schedlab.policies.base import Policy

__all__ = ["register", "make_policy", "policy_ids", "policy_class", "describe_policies"]

_REGISTRY: dict[str, type[Policy]] = {}
# Policy modules are discovered (every public module of schedlab.policies) and imported
# lazily, so the engine never imports policies and a new policy needs no edit here.
_loaded = False


def register(cls: type[Policy]) -> type[Policy]:
    if not cls.name:
        msg = f"{cls.__name__} has no registry name"
        raise ValueError(msg)
    if cls.name in _REGISTRY and _REGISTRY[cls.name] is not cls:
        msg = f"policy id {cls.name!r} is registered twice"
        raise ValueError(msg)
    _REGISTRY[cls.name] = cls
    return cls


def _load_all() -> None:
    global _loaded
    if _loaded:
        return
    import pkgutil

    import schedlab.policies as pkg
    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda i: i.name):
        if info.name.startswith("_") or info.name in ("base", "registry"):
            continue
        importlib.import_module(f"schedlab.policies.{info.name}")
    _loaded = True


def policy_ids() -> list[str]:
    _load_all()
    return sorted(_REGISTRY)


def policy_class(policy_id: str) -> type[Policy]:
    if policy_id not in _REGISTRY:
        # most ids name their module (``pri-k`` aside): importing just that one keeps a
        # single run from importing every policy (the DRS ones pull in the MILP solver)
        module = policy_id.replace("-", "_")
        if module.isidentifier() and not module.startswith("_") and module not in ("base", "registry"):
            try:
                importlib.import_module(f"schedlab.policies.{module}")
            except ModuleNotFoundError as exc:
                if exc.name != f"schedlab.policies.{module}":
                    raise
    if policy_id not in _REGISTRY:
        _load_all()
    if policy_id not in _REGISTRY:
        msg = f"unknown policy {policy_id!r}; known: {', '.join(sorted(_REGISTRY))}"
        raise InputError(msg, expected="an id listed by `schedlab policies`")
    return _REGISTRY[policy_id]


def make_policy(policy_id: str, params: dict[str, Any] | None = None, *,
                source: str | None = None) -> Policy:
    cls = policy_class(policy_id)
    try:
        return cls(params or {})
    except ValidationError as exc:
        lines = []
        for err in exc.errors():
            loc = ".".join(str(p) for p in err["loc"])
            lines.append(f"{loc}: {err['msg']}")
        allowed = ", ".join(cls.Params.model_fields)
        msg = (f"bad parameters for policy {policy_id!r}: " + "; ".join(lines)
               + f" (allowed: {allowed or 'none'})")
        raise InputError(msg, file=source) from None


def describe_policies() -> list[tuple[str, str]]:
    _load_all()
    return [(pid, _REGISTRY[pid].description) for pid in sorted(_REGISTRY)]
