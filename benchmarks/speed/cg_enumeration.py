"""Rule S (cp.async.cg) in the enumeration engine: what evaluating it costs.

    python -m benchmarks.speed.cg_enumeration [--max-seconds 30]
        -> benchmarks/results/cg_enumeration.md

1. Per warp instance: `verify.engines.enumeration.cg_costs` (numpy, every instance at once)
   against `verify.model.bank.cg_cost` called once per instance, on the same random
   patterns (half with repeated chunks, so both branches of the rule run); the
   figures must be equal.
2. A spec: an SM80 producer, a 128x64 fp16 `Sw<3,3,3>` stage filled by
   cp.async.cg.16 from a row-major global matrix of K_TILES k-tiles, `global align
   16` (8 global bases), `conflict_free`, decided by enumeration while it takes
   under --max-seconds (rule S: REFUTED, 16 wavefronts at a global base 16 bytes
   past a line, where each row's 128 bytes straddle two global lines; at base 0 it
   is 4, one per quarter-warp) and by the solver (bound G: UNKNOWN, 32). The `auto`
   column is `verify.engines.decide`'s choice for the copy's figure.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from benchmarks.speed.catalog import machine
from verify.engines import decide, enumeration
from verify.engines.runner import run_spec
from verify.model.bank import cg_cost
from verify.model.instructions import parse_instruction
from verify.model.program import Program
from verify.spec.parser import parse_text

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RESULTS = os.path.join(ROOT, "benchmarks", "results", "cg_enumeration.md")
LOAD = os.getloadavg()[0]
K_TILES = [1, 8, 64, 512, 2048]
PRODUCER = """\
dtype f16
buffer align 128
global align 16
layout T = Sw<3,3,3> o (128,64):(64,1)
layout G = (128,{cols}):({cols},1)
access a = cp.async.cg.16 T(4 * i + lane / 8, 8 * (lane % 8)) from \
G(4 * i + lane / 8, 8 * (lane % 8) + 64 * k) for i in 0..32, k in 0..{k}
check conflict_free a
"""


def per_instance(count: int) -> dict:
    """Seconds per lane evaluation, vectorised and per instance, on `count` patterns."""
    rng = np.random.default_rng(7)
    dst = rng.integers(0, 64, size=(count, 32)) * 16
    src = rng.integers(0, 64, size=(count, 32)) * 16
    src[: count // 2] = rng.permuted(np.tile(np.arange(64), (count // 2, 1)), axis=1)[:, :32] * 16
    enumeration.cg_costs(dst[:1], src[:1])  # the vertex-cover table, built once
    started = time.perf_counter()
    costs, exact = enumeration.cg_costs(dst, src)
    vectorised = time.perf_counter() - started
    instr = parse_instruction("cp.async.cg.16")
    sample = min(count, 4000)
    started = time.perf_counter()
    replay = [
        cg_cost(instr, list(map(int, d)), list(map(int, s)))
        for d, s in zip(dst[:sample], src[:sample])
    ]
    looped = time.perf_counter() - started
    assert all(r.wavefronts == c for r, c in zip(replay, costs)), "numpy and bank.cg_cost differ"
    return {
        "instances": count,
        "exact": int(exact.sum()),
        "numpy_us_per_lane": 1e6 * vectorised / (32 * count),
        "bank_us_per_lane": 1e6 * looped / (32 * sample),
    }


def decided(text: str, engine: str):
    started = time.perf_counter()
    results = run_spec(parse_text(text, "producer.spec"), 600, engine)
    result = next(r for r in results if not r.implicit)
    return result, time.perf_counter() - started


def producer_rows(max_seconds: float) -> list[dict]:
    rows, enumerate_too = [], True
    for k in K_TILES:
        text = PRODUCER.format(cols=64 * k, k=k)
        program = Program(parse_text(text))
        access = program.access("a", None)
        points = decide.copy_points(program, access)
        solver, solver_s = decided(text, "z3")
        row = {
            "k_tiles": k,
            "points": points,
            "auto": decide.engine_for(decide.AUTO, points, decide.copy_limit(access)),
            "z3": f"{solver.status.value} {solver.wavefronts} ({solver_s:.2f} s)",
            "enumeration": "-",
        }
        if enumerate_too:
            result, seconds = decided(text, "enumeration")
            row["enumeration"] = f"{result.status.value} {result.wavefronts} ({seconds:.2f} s)"
            row["us_per_point"] = f"{1e6 * seconds / points:.2f}"
            enumerate_too = seconds < max_seconds
        rows.append(row)
        print(row, flush=True)
    return rows


def write(speeds: list[dict], rows: list[dict]):
    lines = [
        "# Rule S in the enumeration engine",
        "",
        "`python -m benchmarks.speed.cg_enumeration` (module doc says what is measured).",
        f"Machine: {machine()}; load average {LOAD:.1f} when the run began (the box is",
        "shared with other work, so times vary by about 2x).",
        "",
        "## Per warp instance",
        "",
        "| instances | rule S exact | numpy, us per lane | bank.cg_cost, us per lane |",
        "| --- | --- | --- | --- |",
    ]
    for s in speeds:
        lines.append(
            f"| {s['instances']} | {s['exact']} | {s['numpy_us_per_lane']:.2f} | "
            f"{s['bank_us_per_lane']:.2f} |"
        )
    lines += [
        "",
        "## An SM80 producer spec (conflict_free, 8 global bases)",
        "",
        "| k-tiles | lane evaluations | auto | z3 (bound G) | enumeration (rule S) | us/point |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        lines.append(
            f"| {r['k_tiles']} | {r['points']} | {r['auto']} | {r['z3']} | "
            f"{r['enumeration']} | {r.get('us_per_point', '-')} |"
        )
    with open(RESULTS, "w") as f:
        f.write("\n".join(lines) + "\n")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-seconds", type=float, default=30.0)
    args = ap.parse_args()
    speeds = [per_instance(n) for n in (4096, 65536)]
    for s in speeds:
        print(s, flush=True)
    write(speeds, producer_rows(args.max_seconds))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
