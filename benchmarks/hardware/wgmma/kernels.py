"""Score `kernels.sh`'s profiles against verify's per-instruction gmma count.

    python -m benchmarks.hardware.wgmma.kernels DIR CUTE_PTX

DIR holds kernels.sh's ncu CSVs (committed: benchmarks/results/wgmma_kernels_h200/);
CUTE_PTX is CuTe's hopper/wgmma_sm90.cu compiled here (``nvcc -arch=sm_90a -lineinfo
-std=c++17 --expt-relaxed-constexpr -I$CUTLASS/include -I$CUTLASS/tools/util/include
-ptx``). For each kernel, verify (``check_ptx`` with ``--shared-align 1024``) gives
the wavefronts of every wgmma instruction; all of them sit in the k-tile loop, so
the launch's prediction is their sum x the loop's trips (K / 64) x the CTAs. The
measured figure is ``l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma.sum``; per
instruction it is that over ``sm__inst_executed_pipe_tensor_op_gmma.sum`` / 4 (the
counter counts each of the warpgroup's 4 warps). Writes
benchmarks/results/wgmma_kernels_h200.{csv,md}.
"""

from __future__ import annotations

import csv
import os
import sys

from verify.ptx.check import Options, check_ptx

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
RESULTS = os.path.join(ROOT, "benchmarks", "results", "wgmma_kernels_h200")
WAVEFRONTS = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma.sum"
CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_gmma.sum"
INSTRUCTIONS = "sm__inst_executed_pipe_tensor_op_gmma.sum"
MM = 512  # M = N = K of every launch; 128 x 128 x 64 tiles
CTAS, TRIPS = (MM // 128) ** 2, MM // 64

# (label, ncu CSV, PTX: None for CuTe's, the entry: a substring of its name)
KERNELS = [
    (
        "Triton 03-matrix-multiplication",
        "triton_matmul.csv",
        "tests/data/hopper/matmul.sm90.ptx",
        "matmul_kernel",
    ),
    ("CuTe wgmma_sm90 NT (A, B MN-major)", "cute_NT.csv", None, "MajorE1ELS1D_1E"),
    ("CuTe wgmma_sm90 TN (A, B K-major)", "cute_TN.csv", None, "MajorE0ELS1F_0E"),
]


def measured(path: str) -> dict[str, float]:
    """The gmma counters of the one profiled launch in ncu's raw CSV."""
    with open(path) as f:
        text = f.read()
    rows = list(csv.DictReader(text[text.find('"ID"') :].splitlines()))
    launch = rows[1]  # rows[0] holds the units
    return {k: float(launch[k].replace(",", "")) for k in (WAVEFRONTS, CONFLICTS, INSTRUCTIONS)}


def predicted(ptx: str, entry: str) -> tuple[int, int]:
    """(wgmma instructions, their wavefronts summed) of the entry, by verify."""
    with open(ptx) as f:
        names = [line for line in f if line.startswith((".visible .entry", ".entry"))]
    kernel = next(n.split()[-1].rstrip("(") for n in names if entry in n)
    results = check_ptx(ptx, Options(kernel=kernel, shared_align=1024, block=(128,)))
    cost = [r for r in results if r.property.startswith("wavefronts operand")]
    lines = {r.facts["ptx_line"] for r in cost}
    return len(lines), sum(r.wavefronts or 0 for r in cost)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    folder, cute_ptx = argv
    rows = []
    for label, csv_name, ptx, entry in KERNELS:
        got = measured(os.path.join(folder, csv_name))
        instructions, per_iteration = predicted(ptx or cute_ptx, entry)
        executed = got[INSTRUCTIONS] / 4
        rows.append(
            {
                "kernel": label,
                "wgmma_in_loop": instructions,
                "model_per_instruction": per_iteration / instructions,
                "measured_per_instruction": got[WAVEFRONTS] / executed,
                "model_total": per_iteration * TRIPS * CTAS,
                "measured_total": int(got[WAVEFRONTS]),
                "wgmma_executed": int(executed),
                "bank_conflicts": int(got[CONFLICTS]),
            }
        )
    with open(RESULTS + ".csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    for r in rows:
        print(r)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
