"""Error types shared by every stage.

`SpecError` is the user's fault (bad spec or bad command-line input): the CLI
prints it as ``file:line:col: error: message`` and exits 2, never with a traceback.
`InternalError` is ours: a solver model that does not replay, an impossible state.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Pos:
    """A position in a source file, 1-based like compilers print it."""

    line: int = 0
    col: int = 0


class SpecError(Exception):
    """Bad input: says what was expected, what was found, and where."""

    def __init__(self, message: str, pos: Pos | None = None, file: str | None = None):
        super().__init__(message)
        self.message = message
        self.pos = pos or Pos()
        self.file = file

    def located(self, file: str) -> "SpecError":
        """Return this error with the file name filled in (first one wins)."""
        return SpecError(self.message, self.pos, self.file or file)

    def __str__(self) -> str:
        where = self.file or "<input>"
        if self.pos.line:
            where = f"{where}:{self.pos.line}:{self.pos.col}"
        return f"{where}: error: {self.message}"


class InternalError(Exception):
    """A bug in verify itself, for example a counterexample that does not replay."""
