"""User-facing errors and the exit code each one ends a command with.

Anything a user can cause (a bad file, a missing column, an unknown policy, an action
with a malformed field) is raised as :class:`InputError`: the CLI prints it in one line
without a traceback and exits with code 2. A policy's own exception becomes a
:class:`PolicyError` (exit 4); a run stopped by one of the engine's bounds (event count,
a clock that no longer advances, the memory guard) a :class:`RunLimitError` (exit 5).
``docs/guides/errors.md`` lists them all.
"""
from __future__ import annotations

import traceback
from pathlib import Path

__all__ = ["InputError", "SchedlabError", "PolicyError", "RunLimitError", "exit_code_of",
           "EXIT_INPUT", "EXIT_POLICY", "EXIT_LIMIT"]

EXIT_INPUT = 2
EXIT_POLICY = 4
EXIT_LIMIT = 5


class SchedlabError(Exception):
    """Base class for schedlab errors."""


class InputError(SchedlabError):
    """A user's input is wrong. Names the file, row (1-based data line) and column when known."""

    def __init__(self, message: str, *, file: str | None = None, row: int | None = None,
                 column: str | None = None, expected: str | None = None) -> None:
        self.file = file
        self.row = row
        self.column = column
        self.expected = expected
        self.message = message
        super().__init__(self.__str__())

    def __reduce__(self):
        # pool workers send errors back pickled; keep every field
        return (_rebuild_input_error, (self.message, self.file, self.row, self.column,
                                       self.expected))

    def __str__(self) -> str:
        where = []
        if self.file is not None:
            where.append(str(self.file))
        if self.row is not None:
            where.append(f"row {self.row}")
        if self.column is not None:
            where.append(f"column '{self.column}'")
        text = (": ".join([", ".join(where), self.message]) if where else self.message)
        if self.expected:
            text += f" (expected {self.expected})"
        return text


def _rebuild_input_error(message, file, row, column, expected) -> InputError:
    return InputError(message, file=file, row=row, column=column, expected=expected)


class PolicyError(SchedlabError):
    """A policy raised an exception of its own.

    The message names the policy, the simulated time, what the policy was asked for
    (``__init__``, ``reset``, ``decide`` on a trigger...), the exception, and the deepest
    frame of the traceback outside schedlab (the user's line). ``details`` keeps the full
    formatted traceback (``-v`` prints it); it survives pickling, unlike ``__cause__``.
    """

    def __init__(self, policy: str, during: str, error: str, *, time: float | None = None,
                 frame: str = "", details: str = "") -> None:
        self.policy, self.during, self.error = policy, during, error
        self.time, self.frame, self.details = time, frame, details
        super().__init__(self.__str__())

    @classmethod
    def wrap(cls, exc: BaseException, policy: str, during: str,
             time: float | None = None) -> "PolicyError":
        tb = traceback.extract_tb(exc.__traceback__)
        package = str(Path(__file__).resolve().parent)
        own = [f for f in tb if not str(Path(f.filename).resolve()).startswith(package)]
        last = own[-1] if own else (tb[-1] if tb else None)
        frame = f"{last.filename}:{last.lineno} in {last.name}" if last else ""
        details = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        return cls(policy, during, f"{type(exc).__name__}: {exc}", time=time, frame=frame,
                   details=details)

    def __reduce__(self):
        return (_rebuild_policy_error, (self.policy, self.during, self.error, self.time,
                                        self.frame, self.details))

    def __str__(self) -> str:
        at = f" at t={self.time:g} s" if self.time is not None else ""
        text = f"policy {self.policy!r} raised in {self.during}{at}: {self.error}"
        return text + (f" ({self.frame})" if self.frame else "")


def _rebuild_policy_error(policy, during, error, time, frame, details) -> PolicyError:
    return PolicyError(policy, during, error, time=time, frame=frame, details=details)


class RunLimitError(SchedlabError):
    """A run was stopped by one of the engine's bounds before it could run away."""


def exit_code_of(exc: BaseException) -> int:
    """The documented exit code for a schedlab error (1 for anything else)."""
    if isinstance(exc, InputError):
        return EXIT_INPUT
    if isinstance(exc, PolicyError):
        return EXIT_POLICY
    if isinstance(exc, RunLimitError):
        return EXIT_LIMIT
    return 1
