"""User-facing errors.

Anything a user can cause (a bad file, a missing column, an unknown policy) is raised
as :class:`InputError`. The CLI prints it without a traceback and exits with code 2.
"""
from __future__ import annotations

__all__ = ["InputError", "SchedlabError"]


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
