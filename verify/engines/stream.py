"""Checking many spec files with results shown as they come.

`outcomes` yields each file's results as soon as that file, and every file
before it, has been checked: **file order**, with `-j N` too (the workers
finish in any order; a finished file waits only for earlier ones), so the
output is the same whatever the machine's load. `Progress` keeps a
``[done/total] path`` line on stderr while files run, only when stderr is a
terminal (a log or a pipe gets the results alone).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import TextIO

from verify import api
from verify.engines.options import RunOptions
from verify.errors import SpecError, each_error
from verify.report.text import ErrorRecord


def check_one(path: str, options: RunOptions):
    """(results, errors): every error of the file, each with its source line, as
    plain data that crosses process boundaries."""
    try:
        return list(api.check(path, options=options)), []
    except SpecError as e:
        return [], [ErrorRecord.of(error) for error in each_error(e)]


def outcomes(
    files: list[str], options: RunOptions | float, jobs: int, engine: str | None = None
) -> Iterator[tuple]:
    """(path, results, errors) of each file, in file order, each as soon as it
    and the files before it are done; `jobs` worker processes when above 1.
    `options` as `run_spec` takes them (seconds and `engine`, the older pair, too)."""
    run = RunOptions.of(options, engine)
    if jobs == 1 or len(files) == 1:
        for path in files:
            yield (path, *check_one(path, run))
        return
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=min(jobs, len(files))) as pool:
        # Executor.map hands results back in submission order, each when ready.
        done = pool.map(check_one, files, [run] * len(files))
        for path, (results, errors) in zip(files, done):
            yield path, results, errors


class Progress:
    """``[3/36] specs/seed/f32_32x32_column.spec`` on a terminal's stderr, rewritten in
    place and cleared before anything else is printed."""

    def __init__(self, total: int, stream: TextIO | None = None):
        self.stream = stream or sys.stderr
        self.total = total
        self.active = total > 1 and self.stream.isatty()
        self.shown = False

    def show(self, done: int, path: str):
        if self.active:
            self.stream.write(f"\r\x1b[K[{done}/{self.total}] {path}")
            self.stream.flush()
            self.shown = True

    def clear(self):
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.shown = False
