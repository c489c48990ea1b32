"""Error types shared by every stage.

`SpecError` is the user's fault (bad spec or bad command-line input): the CLI
prints it as ``file:line:col: error: message`` and exits 2, never with a traceback.
Where the source is known the offending line follows, with a caret under the
column, as compilers print it. `SpecErrors` carries every error of one file.
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

    def __init__(
        self,
        message: str,
        pos: Pos | None = None,
        file: str | None = None,
        source_line: str | None = None,
    ):
        super().__init__(message)
        self.message = message
        self.pos = pos or Pos()
        self.file = file
        self.source_line = source_line

    def located(self, file: str) -> SpecError:
        """Return this error with the file name filled in (first one wins)."""
        return SpecError(self.message, self.pos, self.file or file, self.source_line)

    def with_source(self, text: str) -> SpecError:
        """This error with its line of `text` (the whole source) to show under it."""
        lines = text.splitlines()
        if self.source_line is not None or not 0 < self.pos.line <= len(lines):
            return self
        return SpecError(self.message, self.pos, self.file, lines[self.pos.line - 1])

    @property
    def header(self) -> str:
        """The first line, ``file:line:col: error: message``."""
        where = self.file or "<input>"
        if self.pos.line:
            where = f"{where}:{self.pos.line}:{self.pos.col}"
        return f"{where}: error: {self.message}"

    def __str__(self) -> str:
        if self.source_line is None:
            return self.header
        return "\n".join([self.header, *source_excerpt(self.source_line, self.pos)])


class SpecErrors(SpecError):
    """Every error found in one input, in source order; reads as its first error
    where one is expected (`message`, `pos`)."""

    def __init__(self, errors: list[SpecError]):
        first = errors[0]
        super().__init__(first.message, first.pos, first.file, first.source_line)
        self.errors = list(errors)

    def located(self, file: str) -> SpecErrors:
        return SpecErrors([e.located(file) for e in self.errors])

    def with_source(self, text: str) -> SpecErrors:
        return SpecErrors([e.with_source(text) for e in self.errors])

    def __str__(self) -> str:
        return "\n".join(str(e) for e in self.errors)


def each_error(error: SpecError) -> list[SpecError]:
    """The single errors inside `error` (itself, unless it carries several)."""
    return list(error.errors) if isinstance(error, SpecErrors) else [error]


def source_excerpt(line: str, pos: Pos) -> list[str]:
    """The line and a caret under column `pos.col`, gutter numbered like gcc's:

    4 | access rd = ldmatrix.x1 B(lane, 0)
      |                        ^
    """
    number = str(pos.line)
    # Tabs before the column stay tabs, so the caret lines up however they render.
    lead = "".join(c if c == "\t" else " " for c in line[: max(0, pos.col - 1)])
    gutter = " " * len(number)
    return [f" {number} | {line.rstrip()}", f" {gutter} | {lead}^"]


class InternalError(Exception):
    """A bug in verify itself, for example a counterexample that does not replay."""
