"""Proof time against vectorised enumeration as tiles grow.

    python -m benchmarks.speed.scaling [--max-enumeration-seconds 60]
        -> benchmarks/results/scaling.csv and scaling.md
    python -m benchmarks.speed.scaling --quick      # enumeration capped at 5 s
        -> benchmarks/results/scaling_quick.csv and scaling_quick.md

The same three questions at every size, for a Sw<3,3,3> fp16 tile R x C with S
stages (stage k at k * R*C*2 bytes) and a symbolic 128-byte-aligned base:
  bijective   -- no two (coordinate, stage) pairs share memory;
  ldmatrix.x4 -- max-ways of 16x16 fragment reads, over every fragment and stage;
  st.v4       -- max-ways of 128-bit producer stores, over every row group and stage.
The solver answers through `verify.engines.runner` with engine="z3"; what `auto` (the
default engine) chooses, and how long it takes, is recorded beside it. The
reference enumeration here is hand-written numpy over every
coordinate or instance (the base is fixed at 0: for element swizzles every aligned
base gives the same banks, so enumeration needs one). Where enumeration would
exceed the limit, its time is extrapolated linearly from the largest size run.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from benchmarks.speed.catalog import machine, write_csv
from verify.engines.runner import run_spec
from verify.spec.parser import parse_text

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RESULTS = os.path.join(ROOT, "benchmarks", "results")
SIZES = [
    (16, 64, 1),
    (64, 64, 1),
    (128, 128, 2),
    (256, 256, 4),
    (1024, 1024, 8),
    (4096, 4096, 1),
    (4096, 4096, 8),
]


def spec_text(rows: int, cols: int, stages: int) -> str:
    stage_bytes = rows * cols * 2
    frag_loops = f"for m in 0..{rows // 16}, k in 0..{cols // 16}"
    fill_loops = f"for i in 0..{rows // 4}, j in 0..{cols // 64}"
    return f"""dtype f16
buffer align 128 stages {stages} stage_bytes {stage_bytes}
layout T = Sw<3,3,3> o ({rows},{cols}):({cols},1)
access frag = ldmatrix.x4 T(16 * m + lane % 16, 8 * (lane / 16) + 16 * k) {frag_loops}
access fill = st.shared.v4.b32 T(4 * i + lane / 8, 8 * (lane % 8) + 64 * j) {fill_loops}
check bijective T
check conflict_free frag
check conflict_free fill
"""


def swizzle(x):
    return x ^ ((x & 0b111000000) >> 3)


def enum_bijective(rows, cols, stages) -> bool:
    r, c = np.meshgrid(
        np.arange(rows, dtype=np.int64), np.arange(cols, dtype=np.int64), indexing="ij"
    )
    offsets = swizzle(r * cols + c).ravel()
    addrs = 2 * offsets[None, :] + (np.arange(stages, dtype=np.int64) * rows * cols * 2)[:, None]
    return np.unique(addrs.ravel()).size == addrs.size


def max_ways(addresses: np.ndarray, words_per_lane: int, phase_lanes: int) -> int:
    """addresses: [instances, lanes] byte addresses -> worst distinct words in one bank."""
    inst, lanes = addresses.shape
    words = addresses[:, :, None] // 4 + np.arange(words_per_lane)[None, None, :]
    phase = np.broadcast_to((np.arange(lanes) // phase_lanes)[None, :, None], words.shape)
    index = np.broadcast_to(np.arange(inst)[:, None, None], words.shape)
    bank = words % 32
    group = (index * (lanes // phase_lanes) + phase) * 32 + bank
    pairs = np.unique(np.stack([group.ravel(), words.ravel()]), axis=1)
    return int(np.bincount(pairs[0]).max())


def enum_ldmatrix(rows, cols, stages) -> int:
    m, k, s, lane = np.meshgrid(
        np.arange(rows // 16),
        np.arange(cols // 16),
        np.arange(stages),
        np.arange(32),
        indexing="ij",
    )
    r, c = 16 * m + lane % 16, 8 * (lane // 16) + 16 * k
    addr = s * rows * cols * 2 + 2 * swizzle(r * cols + c)
    return max_ways(addr.reshape(-1, 32), 4, 8)


def enum_stores(rows, cols, stages) -> int:
    i, j, s, lane = np.meshgrid(
        np.arange(rows // 4),
        np.arange(max(1, cols // 64)),
        np.arange(stages),
        np.arange(32),
        indexing="ij",
    )
    r, c = 4 * i + lane // 8, 8 * (lane % 8) + 64 * j
    addr = s * rows * cols * 2 + 2 * swizzle(r * cols + c)
    return max_ways(addr.reshape(-1, 32), 4, 8)


def timed(fn, *args):
    start = time.perf_counter()
    value = fn(*args)
    return value, time.perf_counter() - start


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-enumeration-seconds", type=float, default=60.0)
    ap.add_argument(
        "--quick",
        action="store_true",
        help="--max-enumeration-seconds 5, written to scaling_quick.{csv,md}",
    )
    args = ap.parse_args()
    if args.quick:
        args.max_enumeration_seconds = 5.0
    rows_out = []
    last: dict[str, tuple[int, float]] = {}  # question -> (domain, seconds) last measured
    for rows, cols, stages in SIZES:
        spec = parse_text(spec_text(rows, cols, stages))
        results = {r.property: r for r in run_spec(spec, engine="z3")}
        auto = {r.property: r for r in run_spec(spec)}
        for question, prop, enum, domain in (
            ("bijective", "bijective T", enum_bijective, rows * cols * stages),
            (
                "ldmatrix.x4 max-ways",
                "conflict_free frag",
                enum_ldmatrix,
                rows * cols * stages // 8,
            ),
            ("st.v4 max-ways", "conflict_free fill", enum_stores, rows * cols * stages // 8),
        ):
            solver = results[prop]
            if (
                question in last
                and last[question][1] / last[question][0] * domain > args.max_enumeration_seconds
            ):
                seconds, value, note = (
                    last[question][1] / last[question][0] * domain,
                    None,
                    "extrapolated",
                )
            else:
                value, seconds = timed(enum, rows, cols, stages)
                last[question], note = (domain, seconds), "measured"
            agree = (
                value is None
                or value
                == (solver.status.value == "proved" if question == "bijective" else solver.max_ways)
            ) and (auto[prop].status, auto[prop].max_ways) == (solver.status, solver.max_ways)
            rows_out.append(
                {
                    "tile": f"{rows}x{cols}",
                    "stages": stages,
                    "question": question,
                    "coordinates_or_lane_rows": domain,
                    "verdict": solver.status.value,
                    "solver_ms": round(1000 * solver.seconds, 1),
                    "auto_engine": auto[prop].engine,
                    "auto_ms": round(1000 * auto[prop].seconds, 1),
                    "enumeration_ms": round(1000 * seconds, 1),
                    "enumeration": note,
                    "ratio": round(seconds / solver.seconds, 1),
                    "agree": agree,
                }
            )
            print(rows_out[-1], flush=True)
    write(rows_out, "scaling_quick" if args.quick else "scaling")
    return 0 if all(r["agree"] for r in rows_out) else 1


def write(rows, name: str):
    write_csv(os.path.join(RESULTS, f"{name}.csv"), rows)
    lines = [
        "| tile | stages | question | domain | verdict | solver | numpy enumeration | "
        "enumeration / solver | auto |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        enum = f"{r['enumeration_ms']:.0f} ms" + (
            " (extrapolated)" if r["enumeration"] == "extrapolated" else ""
        )
        lines.append(
            f"| {r['tile']} | {r['stages']} | {r['question']} | "
            f"{r['coordinates_or_lane_rows']} | {r['verdict']} | {r['solver_ms']} ms | "
            f"{enum} | {r['ratio']}x | {r['auto_ms']} ms by {r['auto_engine']} |"
        )
    with open(os.path.join(RESULTS, f"{name}.md"), "w") as f:
        f.write(
            f"# Scaling: proof vs vectorised enumeration\n\nMachine: {machine()}. Shared "
            "with other agents while measured: timings are noisy.\n\n" + "\n".join(lines) + "\n"
        )


if __name__ == "__main__":
    sys.exit(main())
