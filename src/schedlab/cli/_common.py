"""What every CLI command shares: the consoles, the one-line error exit, ``--param`` parsing,
and the exit codes."""
from __future__ import annotations

import json
from typing import Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.text import Text

from schedlab.errors import EXIT_LIMIT, EXIT_POLICY, InputError, exit_code_of

__all__ = ["console", "err_console", "fail", "parse_params", "policy_params", "EXIT_CODES_HELP",
           "EXIT_OK", "EXIT_FAILED", "EXIT_INPUT", "EXIT_STRICT", "EXIT_POLICY", "EXIT_LIMIT",
           "EXIT_INTERRUPTED", "interrupted", "escape", "say", "VERBOSE"]

EXIT_OK = 0
EXIT_FAILED = 1          # reproduce: acceptance checks failed; sweep: some trials failed
EXIT_INPUT = 2           # a mistake in the command or its inputs (one line, no traceback)
EXIT_STRICT = 3          # --strict: the run ended stuck or with many rejected actions
# EXIT_POLICY = 4: a policy raised an exception of its own (schedlab.errors)
# EXIT_LIMIT = 5: a run passed its time or memory bound, or its clock stalled
EXIT_INTERRUPTED = 130   # Ctrl-C (what was kept is printed)

EXIT_CODES_HELP = ("Exit codes: 0 success; 1 a reproduction's acceptance checks failed, or sweep "
                   "trials failed; 2 bad input (one line naming the file, row, column or "
                   "parameter); 3 a run ended stuck or with many rejected actions and --strict "
                   "was given; 4 a policy raised an exception (-v shows its traceback); 5 a run "
                   "was stopped by its time or memory bound; 130 interrupted (Ctrl-C).")

console = Console()
err_console = Console(stderr=True)
#: set by ``schedlab -v``: errors print their full traceback too
VERBOSE = {"on": False}


def say(con: Console, *parts: str | tuple[str, str], **kwargs: Any) -> None:
    """Print pieces verbatim, a ``(text, style)`` pair styled: no user text is ever read as
    markup (an id ``[red]j[/red]`` or a path ``o[/x]`` prints as written)."""
    con.print(Text.assemble(*parts), soft_wrap=True, **kwargs)


def fail(exc: BaseException) -> NoReturn:
    """Print a user mistake (or a policy's error, or a run stopped by a bound) in one red
    line, without a traceback unless ``-v`` was given, and exit with its code (2, 4, 5)."""
    if VERBOSE["on"]:
        details = getattr(exc, "details", "")
        if details:
            say(err_console, details.rstrip())
        else:
            import traceback
            say(err_console, "".join(traceback.format_exception(exc)).rstrip())
    say(err_console, ("error:", "bold red"), " ", str(exc))
    raise typer.Exit(exit_code_of(exc))


def parse_params(items: list[str] | None) -> dict[str, Any]:
    """``["a=1", "b=x"]`` -> ``{"a": 1, "b": "x"}`` (values parsed as JSON when they can be).

    A value that starts like JSON (``{``, ``[`` or ``"``) must be valid JSON; anything else
    that is not JSON is kept as a string (``placement=best-fit``).
    """
    out: dict[str, Any] = {}
    for item in items or []:
        if "=" not in item:
            raise InputError(f"--param {item!r} is not KEY=VALUE",
                             expected="e.g. --param strict=true or --param fifo.strict=true")
        k, v = item.split("=", 1)
        k = k.strip()
        if not k:
            raise InputError(f"--param {item!r}: the parameter name is empty")
        try:
            out[k] = json.loads(v)
        except json.JSONDecodeError as exc:
            if v.lstrip()[:1] in ("{", "[", '"'):
                raise InputError(f"--param {k}: bad JSON in {v!r}: {exc.msg} at character {exc.pos}",
                                 expected='e.g. --param \'queues={"prod": 0.7, "dev": 0.3}\'') from None
            out[k] = v
    return out


def policy_params(items: list[str] | None, labels: list[str]) -> dict[str, dict[str, Any]]:
    """``--param [POLICY.]KEY=VALUE`` for the policies ``labels``: ``{label or "*": {key: value}}``.

    ``KEY=VALUE`` applies to every policy; ``POLICY.KEY=VALUE`` (POLICY a label or a policy
    id) to that one. The same syntax serves ``run``, ``compare`` and ``reproduce``-style
    commands.
    """
    out: dict[str, dict[str, Any]] = {}
    for k, v in parse_params(items).items():
        pol, key = ("*", k)
        if "." in k:
            head, tail = k.rsplit(".", 1)
            pol, key = head, tail
        out.setdefault(pol, {})[key] = v
    return out


def interrupted(message: str) -> NoReturn:
    say(err_console, ("interrupted:", "yellow"), " ", message)
    raise typer.Exit(EXIT_INTERRUPTED)
