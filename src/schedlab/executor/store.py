"""Finished runs on disk, by key, and the ledger that says which key each run had last.

:class:`PickleStore` keeps one ``<key>.pkl`` per finished run (``compare``'s ``OUT/runs/``
and a reproduction's ``OUT/runs/``); a sweep keeps its own Parquet rows
(:mod:`schedlab.sweeps.store`) behind the same two calls, ``load`` and ``save``. Every file
is written to a temporary name and renamed into place, so an interruption leaves the whole
file or nothing.

:class:`Ledger` (``keys.json`` beside the results) maps each run's ident to the key and
fingerprints it was last stored under: a run asked for again with another key is one
whose policy, input or version changed, and the command can say which.
"""
from __future__ import annotations

import json
import os
import pickle
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from schedlab.executor.keys import RunKey

__all__ = ["MISSING", "Ledger", "PickleStore", "Store"]

MISSING = object()


class Store(Protocol):
    ledger: Ledger | None

    def load(self, key: str) -> Any:
        """The stored result of ``key``, or :data:`MISSING`."""

    def save(self, rk: RunKey, value: Any) -> None:
        """Keep ``value`` under ``rk.key`` (and record it in the ledger)."""


def _atomic_bytes(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


class Ledger:
    """``ident -> {"key": ..., "parts": {...}}`` in one JSON file, rewritten atomically."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            data = json.loads(self.path.read_text())
            self.entries: dict[str, dict[str, Any]] = data if isinstance(data, dict) else {}
        except (OSError, json.JSONDecodeError):
            self.entries = {}
        self._dirty, self._flushed = False, 0.0

    def previous(self, ident: str) -> Mapping[str, Any] | None:
        return self.entries.get(ident)

    def record(self, rk: RunKey) -> None:
        self.entries[rk.ident] = {"key": rk.key, "parts": dict(rk.parts)}
        self._dirty = True
        if time.monotonic() - self._flushed > 2.0:     # at most every 2 s; and at the end
            self.flush()

    def flush(self) -> None:
        if not self._dirty:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        _atomic_bytes(self.path, json.dumps(self.entries, indent=1, sort_keys=True).encode())
        self._dirty, self._flushed = False, time.monotonic()


class PickleStore:
    """``DIR/<key>.pkl`` per finished run and ``DIR/keys.json`` (the ledger)."""

    def __init__(self, directory: str | Path) -> None:
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        for p in self.dir.glob(".*.tmp"):      # left by an interrupted write
            p.unlink(missing_ok=True)
        self.ledger = Ledger(self.dir / "keys.json")

    def path(self, key: str) -> Path:
        return self.dir / f"{key}.pkl"

    def load(self, key: str) -> Any:
        p = self.path(key)
        try:
            return pickle.loads(p.read_bytes())
        except FileNotFoundError:
            return MISSING
        except Exception:  # noqa: BLE001                      # damaged by a crash: run it again
            p.unlink(missing_ok=True)
            return MISSING

    def save(self, rk: RunKey, value: Any) -> None:
        _atomic_bytes(self.path(rk.key), pickle.dumps(value))
        self.ledger.record(rk)
