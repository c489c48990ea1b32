"""Benchmark of `verify synth` on specs/synth/: each problem in each family, timed,
and the optimum compared with what CUTLASS and Triton choose for the same tile.

Writes benchmarks/results/synth.csv and synth.md. Times are wall-clock on the
machine named in the output (a shared 2-core box: noisy).

    python benchmarks/synth.py [--timeout 60]
"""
from __future__ import annotations

import argparse
import csv
import os
import platform
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from verify.runner import run_spec                     # noqa: E402
from verify.spec.parser import parse_text              # noqa: E402
from verify.synth import synthesize_file               # noqa: E402
from verify.synth.certificate import spec_with         # noqa: E402
from verify.synth.problem import problem_of            # noqa: E402

FAMILIES = ("sw", "triton", "pad", "pad+sw", "xor")
TRITON_FP16 = "#ttg.swizzled_shared<{{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}}> shape ({}, {})"
# What the libraries choose for each problem (sources in the specs' comments and
# specs/cutlass_sm80, specs/triton): CuTe text, or None where the library has no
# layout for the case.
CHOICES = {
    "ldmatrix_x1_8x64": {"CUTLASS": "Sw<3,3,3> o (8,64):(64,1)",
                         "Triton": TRITON_FP16.format(8, 64)},
    "cutlass_sm80_f16_kmajor_64x64": {
        "CUTLASS": "tile_to_shape(Sw<3,3,3> o (8,64):(64,1), (64, 64))",
        "Triton": TRITON_FP16.format(64, 64)},
    "b_operand_trans_32x64": {
        "CUTLASS": "tile_to_shape(Sw<3,3,3> o (8,64):(64,1), (32, 64))",
        "CUTLASS #3172 (Sw<3,3,4>)": "tile_to_shape(Sw<3,3,4> o (8,64):(64,1), (32, 64))",
        "Triton": TRITON_FP16.format(32, 64)},
    "f32_transpose_32x32": {"seed article (pad 33)": "(32,32):(33,1)",
                            "Triton (vec 1, maxPhase 32)":
                                "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 32, "
                                "order = [1, 0]}> shape (32, 32)"},
    "two_consumers_64x64": {"CUTLASS": "tile_to_shape(Sw<3,3,3> o (8,64):(64,1), (64, 64))",
                            "Triton": TRITON_FP16.format(64, 64)},
}


def figures_of(path: str, layout: str) -> str:
    """max-ways per access of `layout` substituted into the problem, by the ordinary checks."""
    source = open(path).read()
    problem = problem_of(parse_text(source, path), source)
    claims = [f"check max_ways <= 32 {a.name}" for a in problem.accesses]
    results = run_spec(parse_text(spec_with(problem, layout, claims), path))
    banks = [r for r in results if r.property.startswith("max_ways <= 32")]
    return ", ".join(f"{r.property.split()[-1]} {r.max_ways}-way/{r.wavefronts} wf"
                     for r in banks)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--timeout", type=float, default=60.0)
    args = parser.parse_args()
    rows = []
    for name in CHOICES:
        path = os.path.join(ROOT, "specs", "synth", f"{name}.synth")
        for family in FAMILIES:
            started = time.monotonic()
            _, answer, cert = synthesize_file(path, family, args.timeout)
            seconds = time.monotonic() - started
            o = answer.objective
            rows.append({"problem": name, "family": family,
                         "layout": cert.layout if cert else "-",
                         "max_ways": o.max_ways if o else "-",
                         "wavefronts": o.wavefronts if o else "-",
                         "footprint": o.footprint if o else "-",
                         "xor_terms": o.xor_terms if o else "-",
                         "optimal": answer.optimal and o is not None,
                         "seconds": round(seconds, 2)})
            print(rows[-1], flush=True)
    write(rows)


def write(rows):
    out = os.path.join(ROOT, "benchmarks", "results")
    with open(os.path.join(out, "synth.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    machine = (f"{platform.node() and 'dev box'}: {os.cpu_count()} cores "
               f"({platform.processor() or platform.machine()}), Python "
               f"{platform.python_version()}, shared with other agents: times are noisy")
    lines = ["# verify synth on specs/synth/", "", f"Machine: {machine}.", "",
             "Synthesis and certificate (search, re-check of the whole spec) per family; "
             "wall seconds.", "",
             "| problem | family | layout | max-ways | weighted wavefronts | footprint | "
             "xor terms | optimal | s |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        lines.append("| " + " | ".join(str(v) for v in r.values()) + " |")
    lines += ["", "## What the libraries choose, by the ordinary checks", "",
              "| problem | library | layout | per access |", "| --- | --- | --- | --- |"]
    for name, choices in CHOICES.items():
        path = os.path.join(ROOT, "specs", "synth", f"{name}.synth")
        for library, layout in choices.items():
            lines.append(f"| {name} | {library} | `{layout}` | {figures_of(path, layout)} |")
    with open(os.path.join(out, "synth.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
