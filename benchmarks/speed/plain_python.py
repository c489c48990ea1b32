"""The real-world class against plain-Python enumeration of the same questions.

    python -m benchmarks.speed.plain_python      # writes benchmarks/results/plain_python.md

For every access of every bundled spec (seed tiles, CUTLASS operand tiles, GMMA/TMA,
FlashAttention-2, Triton encodings, thread maps), the question "max-ways and
wavefronts over every instance" is answered twice in this process:

* by verify (`run_spec` on the access's own `conflict_free` check, default engine;
  the check's own wall time, as its report prints it);
* by the obvious plain-Python loop a person would write: every instance (loop
  values, stage, each aligned base of one period), every lane's address from
  `Access.lane_addresses` (verify's concrete evaluator, one Python call per lane)
  and `verify.model.bank.bank_cost` on the 32 addresses.

Both get the same answer (checked); the table compares their times, each the
fastest of REPEAT runs. The plain loop
is the baseline issue 13 names: verify must be no slower on this class.
"""

from __future__ import annotations

import itertools
import os
import statistics
import sys
import time

from benchmarks.speed.catalog import machine
from verify.api import spec_paths
from verify.engines.runner import run_spec
from verify.model.bank import bank_cost
from verify.model.program import BASE, Program
from verify.spec.parser import parse_file

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RESULTS = os.path.join(ROOT, "benchmarks", "results")
REPEAT = 3  # each side timed as its fastest of REPEAT runs (the load varies)


def plain_python(program: Program, access) -> tuple[int, int, float]:
    """(max-ways, wavefronts, seconds) by looping over every instance in Python."""
    started = time.perf_counter()
    names = access.instance_vars
    axes = [
        range(program.base_range(access.layout).hi)
        if n == BASE
        else range(access.ranges[n].lo, access.ranges[n].hi)
        for n in names
    ]
    ways = waves = 0
    for values in itertools.product(*axes):
        addresses = access.lane_addresses(dict(zip(names, values)))
        cost = bank_cost(access.instruction, addresses)
        ways, waves = max(ways, cost.max_ways), max(waves, cost.wavefronts)
    return ways, waves, time.perf_counter() - started


def by_verify(path: str, name: str) -> tuple[int, int, float]:
    """(max-ways, wavefronts, seconds) of verify's own check of the access: the
    check's wall time, as the report prints it (the spec's parsing and the access's
    resolution, which the plain loop is given ready-made, are not counted)."""
    spec = parse_file(path)
    spec.checks = [c for c in spec.checks if c.target == name and c.kind == "max_ways"][:1]
    result = next(
        r
        for r in run_spec(spec, timeout=60)
        if r.property.startswith(("conflict_free", "max_ways"))
    )
    assert result.max_ways is not None and result.wavefronts is not None, (
        "a max_ways check reports both"
    )
    return result.max_ways, result.wavefronts, result.seconds


def rows():
    for path in spec_paths([os.path.join(ROOT, "specs")]):
        spec = parse_file(path)
        program = Program(spec)
        for name, adef in spec.accesses.items():
            if not any(c.target == name and c.kind == "max_ways" for c in spec.checks):
                continue
            access = program.access(name, adef.pos)
            if any(
                a % access.instruction.bytes_per_address
                for a in access.lane_addresses(
                    {n: access.ranges[n].lo for n in access.instance_vars}
                )
            ):
                continue  # misaligned: no bank figures to compare
            mine = min((by_verify(path, name) for _ in range(REPEAT)), key=lambda r: r[2])
            theirs = min((plain_python(program, access) for _ in range(REPEAT)), key=lambda r: r[2])
            if mine[:2] != theirs[:2]:
                sys.exit(f"{path} {name}: verify {mine[:2]}, plain Python {theirs[:2]}")
            yield os.path.relpath(path, ROOT), name, mine[2], theirs[2]


def main() -> int:
    table = list(rows())
    ratio = [v / p for _, _, v, p in table]
    faster = sum(v <= p for _, _, v, p in table)
    lines = [
        "# The real-world class: verify against plain-Python enumeration",
        "",
        f"Machine: {machine()}; load average {os.getloadavg()[0]:.1f} at the start "
        "(the machine may be shared: timings are noisy).",
        "",
        f"{len(table)} accesses of the bundled specs; every figure equal. verify no "
        f"slower on {faster}; median time ratio verify / plain Python "
        f"{statistics.median(ratio):.2f}, worst {max(ratio):.2f}.",
        "",
        "| spec | access | verify ms | plain Python ms |",
        "| --- | --- | --- | --- |",
    ]
    lines += [f"| {p} | {n} | {1000 * v:.1f} | {1000 * q:.1f} |" for p, n, v, q in table]
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, "plain_python.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines[:5]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
