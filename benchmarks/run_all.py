"""Every benchmark, one command: `python -m benchmarks.run_all [--quick]`
(after `pip install -e '.[test,bench]'`).

Runs, in order, each writing its CSV and summary under benchmarks/results/:
  speed/catalog.py            per-check time on specs/, wall time, peak memory
  speed/slow_cases.py         the random campaign's 200 slowest cases, rerun (auto and z3)
  speed/engines.py            both engines as the domain grows: where auto's threshold is
  speed/scaling.py            proof time against vectorised numpy enumeration, 16x64..4096x4096
  speed/solver_backends.py    z3 against bitwuzla on the catalog's queries
  campaigns/gluon_compare.py  verify against Triton Gluon's bank_conflicts (needs triton)
  campaigns/differential.py   the solver against brute-force enumeration (--cases 2000 here;
                              the 100,000-case campaign is `differential.py --cases 100000`)
--quick runs scaling.py --quick (a 5-second enumeration limit) and 200 cases.
"""

from __future__ import annotations

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def main() -> int:
    quick = "--quick" in sys.argv[1:]
    steps = [
        ["speed.catalog"],
        ["speed.slow_cases", "--engine", "auto"],
        ["speed.slow_cases", "--engine", "z3"],
        ["speed.engines", "--max-seconds", "2" if quick else "15"],
        ["speed.scaling", "--quick"] if quick else ["speed.scaling"],
        ["speed.solver_backends"],
        ["campaigns.gluon_compare"],
        [
            "campaigns.differential",
            "--cases",
            "200" if quick else "2000",
            "--out",
            os.path.join(HERE, "results", "differential_quick"),
        ],
    ]
    failed = []
    for step in steps:
        print(f"== {' '.join(step)}", flush=True)
        # Each script is a module of the benchmarks package, run from the root.
        if subprocess.run(
            [sys.executable, "-m", f"benchmarks.{step[0]}", *step[1:]], cwd=ROOT
        ).returncode:
            failed.append(step[0])
    if failed:
        print("failed:", ", ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
