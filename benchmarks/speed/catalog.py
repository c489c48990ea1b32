"""Per-check time on the bundled specs, and the wall time of the whole run.

    python -m benchmarks.speed.catalog            # writes benchmarks/results/catalog.{csv,md}

Each spec is checked REPEAT times in this process with the default engine (auto);
the CSV keeps every check's median wall time and the engine that decided it. The
summary records the machine, so figures can be compared, and the wall time of the
whole catalog in one process (start-up included; issue 23's target: under 2 s on
2 cores).
"""

from __future__ import annotations

import argparse
import csv
import os
import platform
import statistics
import subprocess
import sys
import time
from collections import Counter

import z3

from verify.api import check, spec_paths

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RESULTS = os.path.join(ROOT, "benchmarks", "results")
REPEAT = 3


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return (
        f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"z3 {z3.get_version_string()}"
    )


def write_csv(path: str, rows: list[dict]) -> None:
    """`rows` as the CSV `path` (its folder made), the first row's keys for the header."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def peak_memory_mb(path: str) -> float:
    """Peak resident memory of `verify PATH` in its own process (ru_maxrss, KiB on Linux)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "verify.cli", path],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _, _, usage = os.wait4(proc.pid, 0)
    return usage.ru_maxrss / 1024


def wall_seconds(*args: str) -> float:
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "verify.cli", *args], capture_output=True)
    return time.monotonic() - started


def main() -> int:
    argparse.ArgumentParser(description="Per-check time on the bundled specs").parse_args()
    load = os.getloadavg()[0]
    specs = spec_paths([os.path.join(ROOT, "specs")])
    times: dict[tuple, list[float]] = {}
    for _ in range(REPEAT):
        for path in specs:
            for r in check(path):
                times.setdefault(
                    (os.path.relpath(path, ROOT), r.line, r.property, r.status.value, r.engine), []
                ).append(r.seconds)
    rows = [(*key, statistics.median(ts)) for key, ts in times.items()]
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, "catalog.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["spec", "line", "property", "status", "engine", "median_seconds"])
        w.writerows([(*r[:5], f"{r[5]:.6f}") for r in rows])
    wall, wall_j2 = wall_seconds(*specs), wall_seconds("-j", "2", *specs)
    memory = {os.path.relpath(p, ROOT): peak_memory_mb(p) for p in specs}
    worst_memory = max(memory.items(), key=lambda kv: kv[1])
    per_check = sorted(r[5] for r in rows)
    worst = max(rows, key=lambda r: r[5])
    engines = Counter(r[4] for r in rows)
    summary = (
        f"# Catalog timing\n\nMachine: {machine()}. Shared with other agents while "
        f"measured (load average {load:.1f} at the start): timings are noisy.\n\n"
        f"| figure | value |\n| --- | --- |\n"
        f"| specs / checks | {len(specs)} / {len(rows)} |\n"
        f"| checks decided by enumeration / z3 | {engines['enumeration']} / "
        f"{engines['z3']} |\n"
        f"| median check | {1000 * statistics.median(per_check):.1f} ms |\n"
        f"| worst check | {1000 * worst[5]:.0f} ms ({worst[0]}:{worst[1]} {worst[2]}) |\n"
        f"| `verify specs/` wall time (one process, start-up included) | {wall:.2f} s |\n"
        f"| `verify -j 2 specs/` wall time | {wall_j2:.2f} s |\n"
        f"| peak memory of one spec's process (worst) | {worst_memory[1]:.0f} MB "
        f"({worst_memory[0]}) |\n"
    )
    with open(os.path.join(RESULTS, "catalog.md"), "w") as f:
        f.write(summary)
    print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
