"""What every CLI command shares: the consoles, the one-line error exit, ``--param`` parsing."""
from __future__ import annotations

import json
from typing import Any, NoReturn

import typer
from rich.console import Console

from schedlab.errors import InputError

__all__ = ["console", "err_console", "fail", "parse_params"]

console = Console()
err_console = Console(stderr=True)


def fail(exc: InputError) -> NoReturn:
    """Print a user mistake in one red line (no traceback) and exit with code 2."""
    err_console.print(f"[bold red]error:[/] {exc}", soft_wrap=True)
    raise typer.Exit(2)


def parse_params(items: list[str] | None) -> dict[str, Any]:
    """``["a=1", "b=x"]`` -> ``{"a": 1, "b": "x"}`` (values parsed as JSON when they can be)."""
    out: dict[str, Any] = {}
    for item in items or []:
        if "=" not in item:
            raise InputError(f"--param {item!r} is not KEY=VALUE", expected="e.g. --param strict=true")
        k, v = item.split("=", 1)
        try:
            out[k.strip()] = json.loads(v)
        except json.JSONDecodeError:
            out[k.strip()] = v
    return out
