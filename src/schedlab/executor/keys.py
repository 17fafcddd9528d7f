"""The one cache-key rule of every independent run (``compare``, ``sweep``, ``reproduce``).

A run's key is the first 16 hex digits of SHA-256 over the canonical JSON (sorted keys, no
spaces) of ``{"run": WHAT, "depends": PARTS}``:

- ``WHAT`` names the run: the policy id or label, its parameters, the workload and cluster
  as written, the seed, the engine configuration (a reproduction: the job's function and
  its repr). Two runs with the same ``WHAT`` are the same run asked for again;
- ``PARTS`` is what its result depends on beyond those names, as content fingerprints:
  ``policy`` (a policy file's bytes; for a policy inside schedlab its module and the
  modules of its package that it imports; for another package's policy its module's bytes
  and the package's version), ``input`` (the workload's and the cluster's bytes; a trace
  folder by its files' names, sizes and times) and ``version`` (schedlab's version and the
  bytes of the source a simulation runs: the engine, the cluster and workload models, the
  baseline policies, metrics and inputs, less the policy's own files; so an edit there in a
  source checkout counts as a new version, and an edit of a report or the command line
  does not).

A stored result whose ``WHAT`` is asked for again under a different key was computed by
other code or on other inputs: it is run again, and the command names the part that
changed (:class:`schedlab.executor.Resume`).
"""
from __future__ import annotations

import ast
import hashlib
import importlib
import inspect
import json
import sys
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from schedlab._version import __version__

__all__ = [
    "PARTS",
    "RunKey",
    "canonical",
    "file_fingerprint",
    "module_fingerprint",
    "policy_fingerprint",
    "run_key",
    "schedlab_fingerprint",
]

#: the parts of a key, in the order a message names them
PARTS = ("policy", "input", "version")
_PACKAGE = Path(__file__).resolve().parents[1]          # src/schedlab
_HASHES: dict[tuple[str, int, int], str] = {}


def canonical(obj: Any) -> str:
    """JSON with sorted keys and no spaces (``default=str`` for anything else)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _file_hash(p: Path) -> str:
    """SHA-256 (16 hex digits) of a file's bytes, memoised per (path, size, mtime)."""
    st = p.stat()
    memo = (str(p.resolve()), st.st_size, st.st_mtime_ns)
    if memo not in _HASHES:
        h = hashlib.sha256()
        with p.open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
        _HASHES[memo] = h.hexdigest()[:16]
    return _HASHES[memo]


def file_fingerprint(spec: Any) -> str | None:
    """SHA-256 (16 hex digits) of a workload or cluster file's bytes, or of a trace folder's
    file names, sizes and modification times (folders can hold gigabytes); None for
    anything that is not an existing path (``builtin:`` names, ``from-trace``)."""
    try:
        p = Path(str(spec))
        if not p.exists():
            return None
    except (OSError, ValueError):
        return None
    if p.is_dir():
        h = hashlib.sha256()
        for f in sorted(q for q in p.rglob("*") if q.is_file()):
            fs = f.stat()
            h.update(f"{f.relative_to(p)}\0{fs.st_size}\0{fs.st_mtime_ns}\n".encode())
        return h.hexdigest()[:16]
    return _file_hash(p)


#: parts of schedlab that never change a run's result: how runs are asked for, stored and
#: shown (a paper's package counts as the policy part of its own runs)
NOT_SIMULATION = ("cli", "reports", "sweeps", "reproduce", "executor", "validate", "gym",
                  "testing", "papers", "__main__.py")


_LISTED: dict[Path, tuple[float, list[Path]]] = {}


def _sources(root: Path) -> list[Path]:
    """The simulation's source files under ``root`` (the listing is reused for 2 s; each
    file's bytes are checked by its size and time on every call)."""
    now = time.monotonic()
    if root not in _LISTED or now - _LISTED[root][0] > 2.0:
        _LISTED[root] = (now, sorted(p for p in root.rglob("*") if p.suffix in (".py", ".json")
                                     and "__pycache__" not in p.parts
                                     and p.relative_to(root).parts[0] not in NOT_SIMULATION))
    return _LISTED[root][1]


def _stamp(files: Iterable[Path]) -> tuple:
    out = []
    for f in sorted(files):
        try:
            st = f.stat()
            out.append((str(f), st.st_size, st.st_mtime_ns))
        except OSError:
            out.append((str(f), -1, -1))
    return tuple(out)


_SCHEDLAB: dict[tuple, str] = {}


def schedlab_fingerprint(exclude: Iterable[Path] = ()) -> str:
    """``<version>+<16 hex digits>``: schedlab's version and the bytes of the source files
    and packaged JSON a simulation runs (path and content; not :data:`NOT_SIMULATION`),
    less ``exclude`` (a policy's own files, which its ``policy`` part covers)."""
    files = _sources(_PACKAGE)
    skip = frozenset(Path(p).resolve() for p in exclude)
    memo = (skip, _stamp(files))
    if memo not in _SCHEDLAB:
        h = hashlib.sha256()
        for p in files:
            if p not in skip:
                h.update(str(p.relative_to(_PACKAGE)).encode() + b"\0" + _file_hash(p).encode())
        _SCHEDLAB[memo] = f"{__version__}+{h.hexdigest()[:16]}"
    return _SCHEDLAB[memo]


def _local_imports(path: Path, module: str) -> set[Path]:
    """The files of ``module``'s own package that ``path`` imports (one level)."""
    package = module.rpartition(".")[0]
    here = path.parent
    out: set[Path] = set()
    try:
        tree = ast.parse(path.read_text())
    except (OSError, SyntaxError, UnicodeDecodeError):
        return out
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                src = ".".join(base + ([node.module] if node.module else []))
            else:
                src = node.module or ""
            names = [src] + [f"{src}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        for n in names:
            if n.rpartition(".")[0] == package:
                for cand in (here / f"{n.rpartition('.')[2]}.py",
                             here / n.rpartition(".")[2] / "__init__.py"):
                    if cand.is_file():
                        out.add(cand.resolve())
    return out


def module_fingerprint(module: str) -> tuple[str, set[Path]]:
    """Fingerprint of an imported module's code and the files it covers.

    A module inside schedlab counts with the modules of its own package that it imports,
    transitively; another package's module counts by its file and the installed version
    of its distribution."""
    mod = sys.modules.get(module) or importlib.import_module(module)
    src = getattr(mod, "__file__", None)
    if not src:
        return _digest(f"module:{module}"), set()
    path = Path(src).resolve()
    files = {path}
    if _PACKAGE in path.parents:
        frontier = [(path, module)]
        while frontier:
            p, name = frontier.pop()
            for dep in _local_imports(p, name):
                if dep not in files:
                    files.add(dep)
                    rel = dep.relative_to(_PACKAGE.parent).with_suffix("")
                    parts = list(rel.parts)
                    if parts[-1] == "__init__":
                        parts.pop()
                    frontier.append((dep, ".".join(parts)))
        extra = ""
    else:
        extra = _dist_version(module)
    h = hashlib.sha256(extra.encode())
    for p in sorted(files):
        h.update(str(p.name).encode() + b"\0" + _file_hash(p).encode())
    return h.hexdigest()[:16], files


def _dist_version(module: str) -> str:
    from importlib import metadata
    top = module.split(".")[0]
    try:
        dists = metadata.packages_distributions().get(top, [])
        return ";".join(f"{d}=={metadata.version(d)}" for d in sorted(dists))
    except Exception:  # noqa: BLE001      # broken metadata: the file's bytes still count
        return ""


_POLICIES: dict[str, tuple[tuple, tuple[str | None, set[Path]]]] = {}


def policy_fingerprint(policy: str) -> tuple[str | None, set[Path]]:
    """Fingerprint of a policy's source and the files it covers (see
    :func:`_policy_fingerprint`), reused while none of those files changed."""
    spec = str(policy).strip()
    hit = _POLICIES.get(spec)
    if hit is not None and hit[1][1] and _stamp(hit[1][1]) == hit[0]:
        return hit[1]
    out = _policy_fingerprint(spec)
    _POLICIES[spec] = (_stamp(out[1]), out)
    return out


def _policy_fingerprint(policy: str) -> tuple[str | None, set[Path]]:
    """Fingerprint of a policy named as ``compare``, ``run`` and sweep specs name it (id,
    ``file.py[:Class]`` or ``package.module:Class``; no bracketed parameters) and the files
    it covers. A file is read as it is now: a policy file edited since this process
    imported it is imported again when next asked for."""
    spec = str(policy).strip()
    target = spec.rsplit(":", 1)[0] if ":" in spec else spec
    if target.endswith(".py"):
        p = Path(target)
        if not p.is_file():
            return None, set()
        fp = _file_hash(p)
        _forget_stale_file_module(p.resolve(), fp)
        return fp, {p.resolve()}
    from schedlab.policies.registry import policy_class
    try:
        cls = policy_class(spec)
    except Exception:  # noqa: BLE001          # an unknown id is reported where the policy is built
        return None, set()
    fp, files = module_fingerprint(cls.__module__)
    src = inspect.getsourcefile(cls)
    if src and Path(src).resolve() not in files:   # a class defined elsewhere than its module
        files.add(Path(src).resolve())
    return fp, files


_SEEN_FILES: dict[Path, str] = {}


def _forget_stale_file_module(path: Path, fp: str) -> None:
    """The policy registry imports a policy file once per process; when the file's bytes
    have changed since, drop that import so the edited code runs (a notebook's edit-and-
    rerun loop), not the code the key no longer describes."""
    old = _SEEN_FILES.get(path)
    _SEEN_FILES[path] = fp
    if old is not None and old != fp:
        from schedlab.policies import registry
        registry._FILE_MODULES.pop(path, None)


@dataclass(frozen=True)
class RunKey:
    """A run's cache key (``key``), the digest of what it is (``ident``, without the
    fingerprints) and its fingerprints by part."""

    key: str
    ident: str
    parts: Mapping[str, Any]

    def changed(self, old_parts: Mapping[str, Any]) -> list[str]:
        """The parts that differ from ``old_parts`` (a stored run of the same ident)."""
        return [p for p in PARTS if canonical(self.parts.get(p)) != canonical(old_parts.get(p))]


def run_key(what: Mapping[str, Any], *, policy: Any = None, input: Any = None,
            version: str | None = None) -> RunKey:
    """The key of the run ``what`` whose result depends on ``policy``, ``input`` and
    ``version`` (default: :func:`schedlab_fingerprint` of all of schedlab)."""
    parts = {"policy": policy, "input": input,
             "version": schedlab_fingerprint() if version is None else version}
    ident = json.loads(canonical(what))
    return RunKey(_digest(canonical({"run": ident, "depends": parts})),
                  _digest(canonical(ident)), json.loads(canonical(parts)))
