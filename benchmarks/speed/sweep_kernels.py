"""Throughput of `verify sweep --triton`: a Gluon kernel's configurations, each
compiled by Triton on this machine's CPU and checked, in this process, on local
worker processes and on a local Dask cluster, and once more answered from the
cache. Every run must print the same table.

    python -m benchmarks.speed.sweep_kernels            # results/sweep_kernels.{csv,md}
    python -m benchmarks.speed.sweep_kernels --jobs 4

The kernel is tests/data/kernels/gluon_phase.py (a tile stored by rows, read down
its columns through a SwizzledSharedLayout whose max_phase is swept). Unlike a
template sweep, most of the time is Triton's compiler, which runs where the sweep's
tasks run, so the workers share it. Triton must be installed (the `triton` extra).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

from benchmarks.speed.catalog import machine
from benchmarks.speed.sweep import RESULTS, runners, timed, write_results

KERNEL = "tests/data/kernels/gluon_phase.py:column_reads"
PARAMS = ["ROWS=32,64,128", "MAX_PHASE=1,2,4,8,16,32", "num_warps=4,8"]
FIXED = ["--signature", "x_ptr:*fp32,y_ptr:*fp32", "--target", "sm_90"]
CONFIGURATIONS = 3 * 6 * 2


def sweep(where: list[str], cache: list[str]) -> tuple[float, str, str]:
    """(wall seconds, the table and failures, the summary line) of one kernel sweep."""
    command = [sys.executable, "-m", "verify.cli", "sweep", "--triton", KERNEL, *FIXED]
    command += [a for p in PARAMS for a in ("--param", p)] + where + cache
    with tempfile.TemporaryDirectory() as triton_cache:
        # Triton keeps compiled kernels in its own cache: a fresh one per run, so
        # every row compiles every configuration from scratch.
        env = {**os.environ, "TRITON_CACHE_DIR": triton_cache}
        return timed(command, "sweep_kernels.py", env)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--out", default=RESULTS)
    args = ap.parse_args(argv)
    from distributed import LocalCluster

    load = os.getloadavg()[0]
    rows, tables = [], set()
    with (
        LocalCluster(
            n_workers=args.jobs, threads_per_worker=1, processes=True, dashboard_address=":0"
        ) as cluster,
        tempfile.TemporaryDirectory() as cache_dir,
    ):
        places = runners(args.jobs, cluster.scheduler_address)
        for name, cores, where in places:
            wall, table, summary = sweep(where, ["--no-cache"])
            rows.append(_row(name, cores, wall, summary))
            tables.add(table)
            print(rows[-1], flush=True)
        cached = ["--cache-dir", cache_dir]
        sweep(["-j", str(args.jobs)], cached)  # fills the cache
        wall, table, summary = sweep(["-j", str(args.jobs)], cached)
        rows.append(_row("from the cache (compiling again)", args.jobs, wall, summary))
        tables.add(table)
    _write(args.out, rows, len(tables) == 1, load)
    return 0 if len(tables) == 1 else 1


def _row(runner: str, cores: int, wall: float, summary: str) -> dict:
    return {
        "runner": runner,
        "cores": cores,
        "configurations": CONFIGURATIONS,
        "wall_s": round(wall, 2),
        "per_s": round(CONFIGURATIONS / wall, 2),
        "per_s_per_core": round(CONFIGURATIONS / wall / cores, 2),
        "summary": summary,
    }


def _write(out: str, rows: list[dict], same: bool, load: float):
    os.makedirs(out, exist_ok=True)
    intro = [
        "# verify sweep --triton: throughput",
        "",
        f"Machine: {machine()}; load average {load:.1f} at the start, "
        f"{os.getloadavg()[0]:.1f} at the end.",
        "",
        f"Kernel `{KERNEL}`, {CONFIGURATIONS} configurations ("
        + ", ".join(f"`--param {p}`" for p in PARAMS)
        + "), each compiled by Triton on the CPU and checked. Wall time end to end; "
        "`--no-cache` except the last row, which still compiles every configuration "
        "(the TTGIR is the question) but checks none; Triton's own kernel cache is "
        "fresh for every run. "
        "Reproduce: `python -m benchmarks.speed.sweep_kernels`.",
        "",
        f"Every run printed the same table: **{'yes' if same else 'NO'}**.",
    ]
    columns = {"runner": "where", "cores": "cores", "wall_s": "wall s"}
    columns |= {"per_s": "configurations/s", "per_s_per_core": "per core", "summary": "summary"}
    write_results(os.path.join(out, "sweep_kernels"), rows, intro, columns)


if __name__ == "__main__":
    sys.exit(main())
