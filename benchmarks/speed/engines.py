"""Both engines on one question as its domain grows: where the threshold comes from.

    python -m benchmarks.speed.engines [--max-seconds 20]
        -> benchmarks/results/engines.csv and engines.md

Two tile families, each at sizes whose domains run from about 2^10 to 2^24 points:
  element -- Sw<3,3,3> o (R,C):(C,1) fp16, S stages, 128-byte-aligned base (one base);
  pointer -- Sw<3,4,3> o smem_ptr[16b] o (R,C):(C,1), 16-byte-aligned base (the
             swizzle reads address bits up to 9: 64 bases per period).
Each asks, in a spec of its own, bijective or max-ways/wavefronts of ldmatrix.x4
fragment reads or of st.v4 row stores, checked once by `engine="z3"` and once by
`engine="enumeration"`; a row is one check with its domain points
(`verify.engines.decide`), both wall times and both verdicts and figures, which must
agree. Enumeration is skipped for a question once it has taken more than
--max-seconds at a smaller size.
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
SIZES = [
    (16, 64, 1),
    (64, 64, 1),
    (64, 128, 2),
    (128, 128, 4),
    (256, 256, 2),
    (256, 256, 8),
    (512, 512, 4),
    (1024, 1024, 2),
    (1024, 1024, 8),
    (2048, 2048, 8),
]
QUESTIONS = {
    "bijective T": "bijective",
    "conflict_free frag": "ldmatrix.x4",
    "conflict_free fill": "st.v4",
}


def spec_text(family: str, rows: int, cols: int, stages: int, check: str) -> str:
    if family == "element":
        buffer, layout = "buffer align 128", f"Sw<3,3,3> o ({rows},{cols}):({cols},1)"
    else:
        buffer = "buffer align 16"
        layout = f"Sw<3,4,3> o smem_ptr[16b](unset) o ({rows},{cols}):({cols},1)"
    frag_loops = f"for m in 0..{rows // 16}, k in 0..{cols // 16}"
    fill_loops = f"for i in 0..{rows // 4}, j in 0..{cols // 64}"
    return f"""dtype f16
{buffer} stages {stages} stage_bytes {rows * cols * 2}
layout T = {layout}
access frag = ldmatrix.x4 T(16 * m + lane % 16, 8 * (lane / 16) + 16 * k) {frag_loops}
access fill = st.shared.v4.b32 T(4 * i + lane / 8, 8 * (lane % 8) + 64 * j) {fill_loops}
check {check}
"""


def points_of(spec, prop: str) -> int:
    program = Program(spec)
    kind, target = prop.split()
    if kind == "bijective":
        return decide.layout_points(program, program.layout(target, None))
    return decide.access_points(program, program.access(target, None))


def answer(r) -> tuple:
    return (r.status.value, r.max_ways, r.wavefronts, r.facts.get("cosize"))


def run(text: str, prop: str, engine: str):
    return next(
        r for r in run_spec(parse_text(text, "tile.spec"), 120, engine) if r.property == prop
    )


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-seconds", type=float, default=20.0)
    args = ap.parse_args()
    rows, too_slow = [], set()
    for family in ("element", "pointer"):
        for rows_, cols, stages in SIZES:
            for prop, question in QUESTIONS.items():
                text = spec_text(family, rows_, cols, stages, prop)
                s = run(text, prop, "z3")
                e = None if (family, question) in too_slow else run(text, prop, "enumeration")
                row = {
                    "family": family,
                    "tile": f"{rows_}x{cols}",
                    "stages": stages,
                    "question": question,
                    "points": points_of(parse_text(text), prop),
                    "z3_ms": round(1000 * s.seconds, 1),
                    "enumeration_ms": None if e is None else round(1000 * e.seconds, 1),
                    "verdict": s.status.value,
                    "max_ways": s.max_ways,
                    "agree": None if e is None else answer(s) == answer(e),
                }
                if e is not None and e.seconds > args.max_seconds:
                    too_slow.add((family, question))
                rows.append(row)
                print(row, flush=True)
    write(rows)
    return 0 if all(r["agree"] is not False for r in rows) else 1


def write(rows: list[dict]):
    write_csv(os.path.join(RESULTS, "engines.csv"), rows)
    lines = [
        f"# Engines: z3 against enumeration as the domain grows\n\nMachine: {machine()}. "
        f"Shared with other agents while measured (load average {LOAD:.1f} at the "
        "start): timings are noisy.\n",
        f"`auto` enumerates up to {decide.ENUMERATION_LIMIT:,} points "
        "(`verify.engines.decide.ENUMERATION_LIMIT`).\n",
        "| family | tile | stages | question | points | z3 | enumeration | per point | agree |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        e = "-" if r["enumeration_ms"] is None else f"{r['enumeration_ms']:.0f} ms"
        per = (
            "-"
            if r["enumeration_ms"] is None
            else f"{1000 * r['enumeration_ms'] / r['points']:.2f} us"
        )
        lines.append(
            f"| {r['family']} | {r['tile']} | {r['stages']} | {r['question']} | "
            f"{r['points']:,} | {r['z3_ms']:.0f} ms | {e} | {per} | "
            f"{'-' if r['agree'] is None else 'yes' if r['agree'] else 'NO'} |"
        )
    with open(os.path.join(RESULTS, "engines.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
