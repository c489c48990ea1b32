"""What makes a run fail: one rule for the exit status and for every format.

By default a check passes when it ends as its ``expect`` clause says (proved
when it has none): an expected refutation is a pass, in the exit status, the
quiet text, GitHub annotations, SARIF results and JUnit failures alike. With
``raw`` (``--raw-verdicts``) the verdict alone decides: every refutation fails,
expected or not. An UNKNOWN check never passes (it proved nothing) and is a
warning rather than an error, with exit status 3 when nothing worse happened.

With a baseline, a check the baseline records fails only when a figure got
worse than recorded (`verify.report.baseline`); a failure the baseline already
accepts is a notice, and passes. Checks it does not record are judged on their
own.

`level` names what each format shows for a check: ``error``, ``warning``,
``notice`` or None (a pass, shown nowhere but in the full text report). The
quiet text lists what `fails`: errors and warnings.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from verify.report import baseline
from verify.verdicts import Status

if TYPE_CHECKING:
    from verify.results import CheckResult

EXIT_OK, EXIT_FAILED, EXIT_ERROR, EXIT_UNKNOWN = 0, 1, 2, 3
LEVELS = ("error", "warning", "notice")


class Gate:
    """Judges results (each file's, or a whole run's) as they arrive."""

    def __init__(self, raw: bool = False, recorded: dict | None = None):
        self.raw = raw
        self.recorded = recorded
        self._levels: dict[int, str | None] = {}
        self._kept: list[CheckResult] = []  # judged results, kept so their ids stay theirs
        self.comparison = baseline.Comparison()

    def fails_alone(self, r: CheckResult) -> bool:
        """Whether `r` fails with no baseline to accept it."""
        return r.status != Status.PROVED if self.raw else not r.passed

    def judge(self, results: list[CheckResult]) -> None:
        """Judge these results (all of a file's at once: a property written twice
        in one file is told apart by its order); judged ones are skipped."""
        fresh = [r for r in results if id(r) not in self._levels]
        if not fresh:
            return
        keyed = baseline.keyed(fresh)
        for key, r in keyed.items():
            self._levels[id(r)] = self._level(key, r)
            self._kept.append(r)

    def _level(self, key, r: CheckResult) -> str | None:
        entry = None if self.recorded is None else self.recorded.get(key)
        if entry is None:
            if self.recorded is not None:
                self.comparison.new.append(r)
            return self._alone(r)
        worse, better = baseline.differences(r, entry)
        self.comparison.compared += 1
        self.comparison.improvements += better
        if worse:
            self.comparison.regressions += [f"{r.file}:{r.line}: {r.property}: {w}" for w in worse]
            return "error"
        return "notice" if self.fails_alone(r) else None

    def _alone(self, r: CheckResult) -> str | None:
        if not self.fails_alone(r):
            return None
        return "warning" if r.status == Status.UNKNOWN else "error"

    def level(self, r: CheckResult) -> str | None:
        if id(r) not in self._levels:
            self.judge([r])
        return self._levels[id(r)]

    def fails(self, r: CheckResult) -> bool:
        """Whether `r` fails the run (an accepted failure, a notice, does not)."""
        return self.level(r) in ("error", "warning")

    def exit_status(self, results: list[CheckResult], errors: int) -> int:
        """2 on spec errors, else 1 when some check fails, else 3 when some check
        is unknown and not accepted, else 0."""
        self.judge(results)
        levels = {self.level(r) for r in results}
        if errors:
            return EXIT_ERROR
        if "error" in levels:
            return EXIT_FAILED
        return EXIT_UNKNOWN if "warning" in levels else EXIT_OK
