"""Throughput of `verify sweep`: the 1,000 configurations of sweep_template.spec, in
this process, on local worker processes and on a local Dask cluster, each with
the engine choice `auto` (enumeration for these small domains) and `z3`, and once
more answered from the cache. Every run must print the same table: where and how
a question is answered must not change its answer.

    python -m benchmarks.speed.sweep   # results/sweep.{csv,md}, sweep_table.txt.gz
    python -m benchmarks.speed.sweep --engines auto --jobs 4

Wall times are end to end (`verify sweep` as a command: start-up, parsing every
combination, the checks, the table), the cluster started beforehand as an
existing one would be.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import os
import subprocess
import sys
import tempfile
import time

from benchmarks.speed.catalog import machine, write_csv

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RESULTS = os.path.join(ROOT, "benchmarks", "results")
TEMPLATE = os.path.join("benchmarks", "speed", "sweep_template.spec")
PARAMS = [
    "ROWS=16,32,48,64,80,96,112,128,144,160",
    "PITCH=64,72,80,96,128",
    "SW=0,1,2,3",
    "READ=ldmatrix.x1,ldmatrix.x2,ldmatrix.x4,ldmatrix.x4.trans,ld.shared.v4.b32",
]
CONFIGURATIONS = 10 * 5 * 4 * 5


def sweep(engine: str, where: list[str], cache: list[str]) -> tuple[float, str, str]:
    """(wall seconds, the table and failures, the summary line) of one `verify sweep`."""
    command = [
        sys.executable,
        "-m",
        "verify.cli",
        "sweep",
        TEMPLATE,
        "--engine",
        engine,
        *(a for p in PARAMS for a in ("--param", p)),
        *where,
        *cache,
    ]
    return timed(command, "sweep.py")


def timed(command: list[str], script: str, env: dict | None = None) -> tuple[float, str, str]:
    """(wall seconds, the table and failures, the summary line) of the `verify sweep`
    `command`, run from the repository root; `script` names the caller if it fails."""
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1):
        sys.exit(f"{script}: {' '.join(command)} exited {done.returncode}:\n{done.stderr}")
    table, summary = done.stdout.rstrip("\n").rsplit("\n", 1)
    return wall, table, summary


def runners(jobs: int, scheduler: str) -> list[tuple[str, int, list[str]]]:
    """(name, cores, arguments) of each place a sweep runs."""
    return [
        ("this process (-j 1)", 1, ["-j", "1"]),
        (f"{jobs} local processes (-j {jobs})", jobs, ["-j", str(jobs)]),
        (f"Dask LocalCluster, {jobs} workers x 1 thread", jobs, ["--dask", scheduler]),
    ]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--engines", default="auto,z3")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--out", default=RESULTS)
    args = ap.parse_args(argv)
    from distributed import LocalCluster

    load = os.getloadavg()[0]
    rows, tables = [], {}
    with (
        LocalCluster(
            n_workers=args.jobs, threads_per_worker=1, processes=True, dashboard_address=":0"
        ) as cluster,
        tempfile.TemporaryDirectory() as cache_dir,
    ):
        for engine in args.engines.split(","):
            for name, cores, where in runners(args.jobs, cluster.scheduler_address):
                wall, table, summary = sweep(engine, where, ["--no-cache"])
                rows.append(_row(engine, name, cores, wall, table, summary))
                tables[(engine, name)] = table
                print(rows[-1], flush=True)
            cached = ["--cache-dir", cache_dir]
            sweep(engine, ["-j", str(args.jobs)], cached)  # fills the cache
            wall, table, summary = sweep(engine, ["-j", str(args.jobs)], cached)
            rows.append(_row(engine, "from the cache", 1, wall, table, summary))
            tables[(engine, "from the cache")] = table
            print(rows[-1], flush=True)
    same = len(set(tables.values())) == 1
    _write(args.out, rows, next(iter(tables.values())), same, load)
    return 0 if same else 1


def _row(engine: str, runner: str, cores: int, wall: float, table: str, summary: str) -> dict:
    return {
        "engine": engine,
        "runner": runner,
        "cores": cores,
        "configurations": CONFIGURATIONS,
        "wall_s": round(wall, 2),
        "per_s": round(CONFIGURATIONS / wall, 1),
        "per_s_per_core": round(CONFIGURATIONS / wall / cores, 1),
        "table_sha256": hashlib.sha256(table.encode()).hexdigest()[:16],
        "summary": summary,
    }


def _write(out: str, rows: list[dict], table: str, same: bool, load: float):
    os.makedirs(out, exist_ok=True)
    with gzip.open(os.path.join(out, "sweep_table.txt.gz"), "wt") as f:
        f.write(table + "\n")
    intro = [
        "# verify sweep: throughput",
        "",
        f"Machine: {machine()}; load average {load:.1f} at the start, "
        f"{os.getloadavg()[0]:.1f} at the end.",
        "",
        f"Template `{TEMPLATE}`, {CONFIGURATIONS} configurations ("
        + ", ".join(f"`--param {p}`" for p in PARAMS)
        + "). Wall time end to end, "
        "start-up included; `--no-cache` except the last row of each engine. "
        "Reproduce: `python -m benchmarks.speed.sweep`.",
        "",
        f"Every run printed the same table: **{'yes' if same else 'NO'}** "
        f"(sha256 {rows[0]['table_sha256']}..., kept in sweep_table.txt.gz).",
    ]
    columns = {"engine": "engine", "runner": "where", "cores": "cores", "wall_s": "wall s"}
    columns |= {"per_s": "configurations/s", "per_s_per_core": "per core"}
    write_results(os.path.join(out, "sweep"), rows, intro, columns)


def write_results(stem: str, rows: list[dict], intro: list[str], columns: dict[str, str]):
    """STEM.csv with every field of `rows`; STEM.md, the intro and a table of
    `columns` (field -> heading), also printed."""
    write_csv(stem + ".csv", rows)
    lines = [*intro, "", "| " + " | ".join(columns.values()) + " |"]
    lines.append("|" + "---|" * len(columns))
    lines += ["| " + " | ".join(str(r[k]) for k in columns) + " |" for r in rows]
    with open(stem + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
