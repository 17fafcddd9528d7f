"""Policies registered by id (after Gymnasium's registry), or loaded from your own code.

``register`` is a class decorator; ``make_policy("fifo", {"strict": True})`` builds one with
validated parameters, and an unknown id or parameter is an :class:`InputError`.

A policy may be named in four ways, everywhere a policy is asked for (``schedlab run -p``,
``compare``, sweep specs, ``schedlab.simulate``):

- a registered id: ``fifo``;
- a Python file and a class in it: ``path/to/my_policy.py:MyPolicy`` (``path/to/my_policy.py``
  alone if the file defines exactly one policy class);
- an importable module and a class: ``mypackage.policies:MyPolicy``;
- an id that an installed package declares in the ``schedlab.policies`` entry-point group
  (``[project.entry-points."schedlab.policies"] my-id = "mypackage.policies:MyPolicy"``).
"""
from __future__ import annotations

import difflib
import hashlib
import importlib
import importlib.util
import inspect
import pkgutil
import re
import sys
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from schedlab.errors import InputError
from schedlab.policies.base import Policy

__all__ = ["register", "make_policy", "policy_ids", "policy_class", "describe_policies",
           "policy_parameters", "load_policy_class", "ENTRY_POINT_GROUP", "POLICY_PACKAGES"]

ENTRY_POINT_GROUP = "schedlab.policies"

_REGISTRY: dict[str, type[Policy]] = {}
#: Packages whose subpackages each list their policies in a ``POLICIES`` dict (policy id ->
#: module name in the subpackage): the papers. They are found by name when a policy is
#: looked up, as entry points are, so the registry (a lower layer) never imports them.
POLICY_PACKAGES = ("schedlab.papers",)
# Policy modules are discovered (every public module of this package, and the modules
# that the policy packages list) and imported lazily, so the engine never imports policies
# and a new policy needs no edit here.
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


def _paper_policy_modules() -> dict[str, str]:
    """Policy id -> module, for every subpackage of :data:`POLICY_PACKAGES` with ``POLICIES``."""
    found: dict[str, str] = {}
    for parent in POLICY_PACKAGES:
        for info in sorted(pkgutil.iter_modules(importlib.import_module(parent).__path__),
                           key=lambda i: i.name):
            if not info.ispkg:
                continue
            pkg = importlib.import_module(f"{parent}.{info.name}")
            for pid, mod in getattr(pkg, "POLICIES", {}).items():
                found[pid] = f"{parent}.{info.name}.{mod}"
    return found


def _load_all() -> None:
    global _loaded
    if _loaded:
        return
    for info in sorted(pkgutil.iter_modules([str(Path(__file__).parent)]), key=lambda i: i.name):
        if info.name.startswith("_") or info.name in ("base", "registry"):
            continue
        importlib.import_module(f"schedlab.policies.{info.name}")
    for module in sorted(set(_paper_policy_modules().values())):
        importlib.import_module(module)
    _loaded = True
    for name in _entry_points():
        if name not in _REGISTRY:
            try:
                _REGISTRY[name] = _load_entry_point(name)
            except InputError:
                continue   # a broken plug-in must not hide the others; naming it reports why


# -- policies from entry points, files and modules ------------------------------------------

def _entry_points() -> dict[str, Any]:
    from importlib.metadata import entry_points
    try:
        return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}
    except Exception:   # a broken distribution's metadata must not break the registry
        return {}


def _load_entry_point(name: str) -> type[Policy]:
    ep = _entry_points()[name]
    try:
        obj = ep.load()
    except Exception as exc:
        msg = f"policy {name!r} (entry point {ep.value}) cannot be loaded: {type(exc).__name__}: {exc}"
        raise InputError(msg) from None
    return _as_policy_class(obj, f"entry point {name!r} ({ep.value})", name)


def _as_policy_class(obj: Any, where: str, spec: str) -> type[Policy]:
    if not (isinstance(obj, type) and issubclass(obj, Policy)):
        raise InputError(f"{where} is not a Policy subclass", expected="a class derived from "
                         "schedlab.policies.base.Policy")
    if not obj.name:
        obj.name = spec   # a policy needs a name for its results; the spec that loaded it
    return obj


_FILE_MODULES: dict[Path, Any] = {}


def _import_file(path: Path) -> Any:
    path = path.resolve()
    if path in _FILE_MODULES:
        return _FILE_MODULES[path]
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:8]
    stem = re.sub(r"\W", "_", path.stem)
    mod_name = f"schedlab_user_policy_{stem}_{digest}"
    spec = importlib.util.spec_from_file_location(mod_name, path)
    if spec is None or spec.loader is None:
        raise InputError("cannot be imported as Python", file=str(path))
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[mod_name]
        raise InputError(f"importing it failed: {type(exc).__name__}: {exc}", file=str(path)) from None
    _FILE_MODULES[path] = module
    return module


def _is_source_spec(spec: str) -> bool:
    target = spec.rsplit(":", 1)[0] if ":" in spec else spec
    return target.endswith(".py") or ":" in spec


def load_policy_class(spec: str) -> type[Policy]:
    """Load ``file.py:Class``, ``file.py`` (its one policy class) or ``package.module:Class``."""
    target, _, cls_name = spec.partition(":") if ":" in spec else (spec, "", "")
    if target.endswith(".py"):
        path = Path(target)
        if not path.is_file():
            raise InputError("policy file not found", file=target,
                             expected="path/to/file.py:ClassName")
        module = _import_file(path)
        where = str(path)
    else:
        try:
            module = importlib.import_module(target)
        except ImportError as exc:
            msg = f"policy {spec!r}: cannot import module {target!r} ({exc})"
            raise InputError(msg, expected="package.module:ClassName, importable from here") from None
        except Exception as exc:
            msg = f"policy {spec!r}: importing {target!r} failed: {type(exc).__name__}: {exc}"
            raise InputError(msg) from None
        where = target
    if not cls_name:
        found = [v for v in vars(module).values() if isinstance(v, type) and issubclass(v, Policy)
                 and v is not Policy and v.__module__ == module.__name__]
        if len(found) != 1:
            names = ", ".join(c.__name__ for c in found) or "none"
            raise InputError(f"defines {len(found)} policy classes ({names}); name one",
                             file=where, expected=f"{target}:ClassName")
        return _as_policy_class(found[0], where, spec)
    if not hasattr(module, cls_name):
        known = [k for k, v in vars(module).items() if isinstance(v, type) and issubclass(v, Policy)
                 and v is not Policy]
        hint = difflib.get_close_matches(cls_name, known, n=1)
        msg = f"no class {cls_name!r}" + (f"; did you mean {hint[0]!r}?" if hint else "") \
            + (f" (policy classes there: {', '.join(known)})" if known else "")
        raise InputError(msg, file=where)
    return _as_policy_class(getattr(module, cls_name), f"{where}:{cls_name}", spec)


def policy_ids() -> list[str]:
    _load_all()
    return sorted(_REGISTRY)


def policy_class(policy_id: str) -> type[Policy]:
    """The class for a registered id, an entry-point id, ``file.py:Class`` or ``module:Class``."""
    policy_id = str(policy_id).strip()
    if policy_id not in _REGISTRY and _is_source_spec(policy_id):
        return load_policy_class(policy_id)
    if policy_id not in _REGISTRY:
        # most ids name their module (``pri-k`` aside): importing just that one keeps a
        # single run from importing every policy (the DRS ones pull in the MILP solver)
        module = policy_id.replace("-", "_")
        paper_module = _paper_policy_modules().get(policy_id)
        if paper_module is not None:
            importlib.import_module(paper_module)
        elif module.isidentifier() and not module.startswith("_") and module not in ("base", "registry"):
            try:
                importlib.import_module(f"schedlab.policies.{module}")
            except ModuleNotFoundError as exc:
                if exc.name != f"schedlab.policies.{module}":
                    raise
    if policy_id not in _REGISTRY and policy_id in _entry_points():
        _REGISTRY[policy_id] = _load_entry_point(policy_id)
    if policy_id not in _REGISTRY:
        _load_all()
    if policy_id not in _REGISTRY:
        hint = difflib.get_close_matches(policy_id, list(_REGISTRY), n=1)
        msg = (f"unknown policy {policy_id!r}" + (f"; did you mean {hint[0]!r}?" if hint else "")
               + f" (known: {', '.join(sorted(_REGISTRY))})")
        raise InputError(msg, expected="an id listed by `schedlab policies`, path/to/file.py:Class "
                                       "or package.module:Class")
    return _REGISTRY[policy_id]


def make_policy(policy_id: str, params: dict[str, Any] | None = None, *,
                source: str | None = None) -> Policy:
    cls = policy_class(policy_id)
    try:
        return cls(params or {})
    except ValidationError as exc:
        raise InputError(params_error_text(policy_id, cls, exc), file=source) from None


def params_error_text(policy_id: str, cls: type[Policy], exc: ValidationError) -> str:
    """Plain words for a pydantic error: the parameter, what is wrong, and a did-you-mean."""
    allowed = list(cls.Params.model_fields)
    lines = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"])
        if err["type"] == "extra_forbidden":
            hint = difflib.get_close_matches(str(err["loc"][0]), allowed, n=1)
            lines.append(f"unknown parameter {loc!r}" + (f"; did you mean {hint[0]!r}?" if hint else ""))
        else:
            lines.append(f"parameter {loc!r}: {err['msg'].lower()}, got {err.get('input')!r}")
    return (f"policy {policy_id!r}, bad parameters: " + "; ".join(lines)
            + f" (its parameters: {', '.join(allowed) or 'none'}; see `schedlab policies {policy_id}`)")


def describe_policies() -> list[tuple[str, str]]:
    _load_all()
    return [(pid, _REGISTRY[pid].description) for pid in sorted(_REGISTRY)]


def policy_parameters(cls: type[Policy]) -> list[dict[str, str]]:
    """Each parameter of a policy: name, type, default and description.

    The description is the field's ``description``, else the ``#:`` comment above the field
    or the ``#`` comment after it in the policy's source.
    """
    comments = _field_comments(cls.Params)
    out = []
    for name, f in cls.Params.model_fields.items():
        ann = f.annotation
        import typing
        tname = getattr(ann, "__name__", None) if isinstance(ann, type) and not typing.get_args(ann) \
            else None
        tname = tname or str(ann).replace("typing.", "")
        default = "(required)" if f.is_required() else repr(f.get_default(call_default_factory=True))
        out.append({"name": name, "type": tname, "default": default,
                    "description": f.description or comments.get(name, "")})
    return out


def _field_comments(model: type) -> dict[str, str]:
    out: dict[str, str] = {}
    for klass in reversed(model.__mro__):
        if klass in (object,) or not hasattr(klass, "model_fields"):
            continue
        try:
            src = inspect.getsource(klass)
        except (OSError, TypeError):
            continue
        pending: list[str] = []
        for line in src.splitlines():
            st = line.strip()
            if st.startswith("#:"):
                pending.append(st[2:].strip())
                continue
            m = re.match(r"^(\w+)\s*:[^=]*(?:=.*?)?(?:#\s*(.*))?$", st)
            if m and m.group(1) in klass.model_fields:
                text = " ".join(pending) or (m.group(2) or "").strip()
                if text:
                    out[m.group(1)] = text
            pending = []
    return out
