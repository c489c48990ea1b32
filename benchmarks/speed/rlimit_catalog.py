"""z3 resource units each catalog spec needs when the solver decides every check.

    python -m benchmarks.speed.rlimit_catalog   # benchmarks/results/rlimit_catalog.{csv,md}

Every bundled spec is run with the z3 engine and no limit at all; each check's
budget (`verify.smt.budget.Budget`: one per decision, shared by its queries) is
recorded, and a spec's figure is its largest budget's units. The tests' resource
limits (tests/engines/test_engines.py) are read off this table with headroom: units count
work, so they are the same on any machine and under any load
(tests/engines/test_solve.py checks that a query spends the same units every time).
"""

from __future__ import annotations

import csv
import glob
import os
import sys
import time
from dataclasses import dataclass

from benchmarks.speed.catalog import machine
from verify.engines.options import RunOptions
from verify.engines.runner import run_spec
from verify.smt.budget import Budget
from verify.spec.parser import parse_file

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RESULTS = os.path.join(ROOT, "benchmarks", "results")
SPECS = sorted(glob.glob(os.path.join(ROOT, "specs", "**", "*.spec"), recursive=True))


@dataclass(frozen=True)
class Recording(RunOptions):
    """RunOptions that keep every budget they hand out."""

    budgets: list | None = None

    def budget(self) -> Budget:
        budget = super().budget()
        assert self.budgets is not None
        self.budgets.append(budget)
        return budget


def units_of(path: str) -> tuple[list[int], float]:
    """The units of each budget the z3 engine spent on `path`, and its wall seconds."""
    options = Recording("z3", None, None, budgets=[])
    started = time.monotonic()
    run_spec(parse_file(path), options)
    assert options.budgets is not None
    return [b.units for b in options.budgets], time.monotonic() - started


def main() -> int:
    rows = []
    for path in SPECS:
        units, seconds = units_of(path)
        name = os.path.relpath(path, ROOT)
        rows.append((name, max(units, default=0), sum(units), len(units), seconds))
        print(name, rows[-1][1:], file=sys.stderr)
    with open(os.path.join(RESULTS, "rlimit_catalog.csv"), "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["spec", "max_units", "total_units", "budgets", "z3_seconds"])
        writer.writerows(rows)
    with open(os.path.join(RESULTS, "rlimit_catalog.md"), "w") as f:
        f.write(summary(rows))
    return 0


def summary(rows) -> str:
    ranked = sorted(rows, key=lambda r: -r[1])
    lines = [
        "# z3 resource units per catalog spec (benchmarks/speed/rlimit_catalog.py)",
        "",
        f"Machine: {machine()}.",
        "",
        f"{len(rows)} specs, every check decided by z3 with no limit; a spec's figure is",
        "the largest units one check's budget spent (a budget is shared by the queries of",
        "one decision). Seconds are wall time on the machine above, which other work kept",
        "at a load of 5-8 on its 2 cores: for scale only; the units do not change with it.",
        f"Largest: {ranked[0][1]:,} units ({ranked[0][0]}); total over the catalog "
        f"{sum(r[2] for r in rows):,} units in {sum(r[4] for r in rows):.0f} s of z3 time.",
        "",
        "| spec | largest budget (units) | all budgets (units) | budgets | z3 seconds |",
        "|---|---:|---:|---:|---:|",
    ]
    lines += [f"| {r[0]} | {r[1]:,} | {r[2]:,} | {r[3]} | {r[4]:.2f} |" for r in ranked]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
