"""The H200's rules in the solver: cp.async (rule C, rule S) and 64/128-bit loads
(rule L) as their domains grow past what enumeration decides.

    python -m benchmarks.speed.hw_symbolic [--max-seconds 30]
        -> benchmarks/results/hw_symbolic.csv and hw_symbolic.md

An SM80-style producer: a 128x64 fp16 stage, `Sw<3,3,3> o (128,64):(64,1)`, filled by
16-byte cp.async from a global matrix of K_TILES tiles along k (one loop value per
k-tile, 4 row blocks, 3 stages), so the domain grows with K_TILES from 2^17 to 2^31
lane evaluations. Questions, each in its own spec:
  ca row-major  -- cp.async.ca.16 from a row-major global matrix: conflict_free
                   (rule C: each phase reads one 128-byte line) -> PROVED;
  ca gather     -- the same tile gathered from 4 rows at a time: the lanes of a
                   phase read 4 rows of 2 columns, so 4 lanes leave each source bank
                   -> conflict_free REFUTED (rule C gives 4 per phase, 16 in all);
  cg row-major  -- cp.async.cg.16 at every global base residue (global align 16):
                   wavefronts <= 16, PROVED by rule S (a row off its 128-byte global
                   line costs 4 wavefronts, not 1; bound G would say 32);
  ld.v4 pairs   -- a consumer's ld.shared.v4 whose neighbouring lanes read one
                   16-byte chunk: wavefronts == 2 by rule L (the phase model says 4).
Every question is asked of `engine="z3"`; enumeration is run too while it takes
less than --max-seconds, and both verdicts and figures must agree. The row's `auto`
column says which engine `auto` picks (`verify.engines.decide`, `copy_limit`), counting the
global bases of a .cg copy (`decide.copy_points`).
"""

from __future__ import annotations

import argparse
import os
import sys

from benchmarks.speed.catalog import machine, write_csv
from verify.engines import decide
from verify.engines.runner import run_spec
from verify.model.program import Program
from verify.spec.parser import parse_text

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LOAD = os.getloadavg()[0]  # other work on the machine when the run began
RESULTS = os.path.join(ROOT, "benchmarks", "results")
K_TILES = [8, 128, 1024, 8192, 131072]
ROWS, COLS, ROW_BLOCKS, STAGES = 128, 64, 4, 3

TILE = f"Sw<3,3,3> o ({ROWS},{COLS}):({COLS},1)"
LOOPS = "for i in 0..{i}, m in 0..{m}, k in 0..{k}"
# Lane l copies row 4i + l/8, 16-byte chunk l%8 of a row block's tile.
DESTINATION = "T(4 * i + lane / 8, 8 * (lane % 8))"
SOURCE = f"G(4 * i + lane / 8 + {ROWS} * m, 8 * (lane % 8) + {COLS} * k)"
GATHER = f"G(4 * i + lane % 4 + {ROWS} * m, 8 * (lane / 4) + {COLS} * k)"
QUESTIONS = {
    "ca row-major": f"cp.async.ca.16 {DESTINATION} from {SOURCE}",
    "ca gather": f"cp.async.ca.16 {DESTINATION} from {GATHER}",
    "cg row-major": f"cp.async.cg.16 {DESTINATION} from {SOURCE}",
    "ld.v4 pairs": "ld.shared.v4.b32 T(4 * i + lane / 16, 8 * (lane / 2 % 8))",
}
CHECKS = {"cg row-major": "wavefronts <= 16", "ld.v4 pairs": "wavefronts == 2"}


def spec_text(question: str, k_tiles: int) -> str:
    check = CHECKS.get(question, "conflict_free")
    m_rows, k_cols = ROWS * ROW_BLOCKS, COLS * k_tiles
    loops = LOOPS.format(i=ROWS // 4, m=ROW_BLOCKS, k=k_tiles)
    return (
        f"dtype f16\nbuffer align 128 stages {STAGES} stage_bytes {ROWS * COLS * 2}\n"
        f"layout T = {TILE}\nlayout G = ({m_rows},{k_cols}):({k_cols},1)\n"
        f"access a = {QUESTIONS[question]} {loops}\ncheck {check} a\n"
    )


def run(text: str, engine: str):
    results = run_spec(parse_text(text, "producer.spec"), 300, engine)
    return next(r for r in results if not r.implicit)


def answer(r) -> tuple:
    return (r.status.value, r.wavefronts)


def measure(question: str, k_tiles: int, enumerate_too: bool) -> dict:
    text = spec_text(question, k_tiles)
    program = Program(parse_text(text))
    access = program.access("a", None)
    copies = access.source is not None
    points = (decide.copy_points if copies else decide.access_points)(program, access)
    s = run(text, "z3")
    e = run(text, "enumeration") if enumerate_too else None
    return {
        "question": question,
        "k_tiles": k_tiles,
        "points": points,
        "auto": decide.engine_for(decide.AUTO, points, decide.copy_limit(access)),
        "z3_ms": round(1000 * s.seconds, 1),
        "enumeration_ms": None if e is None else round(1000 * e.seconds, 1),
        "verdict": s.status.value,
        "wavefronts": s.wavefronts,
        "agree": None if e is None else answer(s) == answer(e),
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-seconds", type=float, default=30.0)
    args = ap.parse_args()
    rows, too_slow = [], set()
    for question in QUESTIONS:
        for k_tiles in K_TILES:
            row = measure(question, k_tiles, question not in too_slow)
            if (
                row["enumeration_ms"] is not None
                and row["enumeration_ms"] > 1000 * args.max_seconds
            ):
                too_slow.add(question)
            rows.append(row)
            print(row, flush=True)
    write(rows)
    return 0 if all(r["agree"] is not False for r in rows) else 1


def write(rows: list[dict]):
    write_csv(os.path.join(RESULTS, "hw_symbolic.csv"), rows)
    lines = [
        "# The H200's rules in the solver: cp.async and 64/128-bit loads at scale\n",
        f"Machine: {machine()}. Shared with other agents while measured (load average "
        f"{LOAD:.1f} at the start): timings are noisy. Produced by "
        "`python -m benchmarks.speed.hw_symbolic`; the specs are in its module doc.\n",
        f"`auto` enumerates up to {decide.ENUMERATION_LIMIT:,} lane evaluations "
        f"({decide.CG_ENUMERATION_LIMIT:,} for a .cg copy's figure, global bases "
        "counted); above that it asks the solver. The solver encodes rule C and rule S "
        "(`verify.engines.solver.RuleSQuery`). Enumeration is skipped once it has taken "
        "longer than the run's --max-seconds at a smaller size.\n",
        "| question | k-tiles | lane evaluations | auto | z3 | enumeration | verdict "
        "| wavefronts | agree |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        e = "-" if r["enumeration_ms"] is None else f"{r['enumeration_ms']:,.0f} ms"
        agree = "-" if r["agree"] is None else "yes" if r["agree"] else "NO"
        lines.append(
            f"| {r['question']} | {r['k_tiles']:,} | {r['points']:,} | {r['auto']} | "
            f"{r['z3_ms']:,.0f} ms | {e} | {r['verdict']} | {r['wavefronts']} | {agree} |"
        )
    with open(os.path.join(RESULTS, "hw_symbolic.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
