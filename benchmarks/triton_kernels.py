"""Compile the kernels of specs/triton_kernels/ with the installed Triton on a CPU
and keep their TTGIR, then count the shared-memory instructions in their PTX.

    python benchmarks/triton_kernels.py          # from the repository root

For each kernel and target (sm_80, sm_90) writes
specs/triton_kernels/<kernel>.sm<NN>.ttgir and, in
benchmarks/results/triton_kernels.md, the ld/st.shared, ldmatrix, stmatrix,
cp.async and wgmma instructions of the PTX Triton produced next to what
``verify ttgir`` decided for the same kernel: the check on the lowering rule
(verify/ttgir/lowering.py). No GPU is needed: triton.compile takes a target.
Triton records absolute source paths in ``loc(...)``; the repository prefix is cut
so the committed TTGIR names specs/triton_kernels/<file>.py wherever it is checked.
"""
from __future__ import annotations

import importlib.util
import os
import re
import sys
from collections import Counter

import triton
from triton.backends.compiler import GPUTarget
from triton.experimental.gluon._runtime import GluonASTSource

KERNELS = "specs/triton_kernels"
RESULTS = "benchmarks/results/triton_kernels.md"
TARGETS = (80, 90)
PTX_SHARED = re.compile(r"\b((?:ld|st)\.shared(?:\.v\d)?\.\w+|ldmatrix[.\w]*|stmatrix[.\w]*|"
                        r"cp\.async\.c[ag]\.shared\.global|wgmma\.mma_async[.\w]*)")

MATMUL_SIGNATURE = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32",
                    "N": "i32", "K": "i32", "stride_am": "i32", "stride_ak": "constexpr",
                    "stride_bk": "i32", "stride_bn": "constexpr", "stride_cm": "i32",
                    "stride_cn": "constexpr", "BLOCK_SIZE_M": "constexpr",
                    "BLOCK_SIZE_N": "constexpr", "BLOCK_SIZE_K": "constexpr",
                    "GROUP_SIZE_M": "constexpr"}
# The launcher specialises unit strides to constants and 16-divisible integers
# with tt.divisibility; these are the values the tutorial's launch gives.
MATMUL_CONSTANTS = {"stride_ak": 1, "stride_bn": 1, "stride_cn": 1, "BLOCK_SIZE_M": 128,
                    "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 8}
MATMUL_DIVISIBLE = ("a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_bk",
                    "stride_cm")


def load(name: str):
    path = f"{KERNELS}/{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def divisible(signature: dict, names) -> dict:
    index = {n: i for i, n in enumerate(signature)}
    return {(index[n],): [["tt.divisibility", 16]] for n in names}


def sources():
    """(file stem, Triton source, compile options) of every catalog kernel."""
    mm = load("matmul").matmul_kernel
    yield "matmul", triton.compiler.ASTSource(
        mm, MATMUL_SIGNATURE, MATMUL_CONSTANTS,
        divisible(MATMUL_SIGNATURE, MATMUL_DIVISIBLE)), {"num_warps": 4, "num_stages": 3}
    tr = load("transpose").transpose_kernel
    sig = {"x_ptr": "*fp32", "y_ptr": "*fp32", "BLOCK": "constexpr"}
    yield "transpose", triton.compiler.ASTSource(
        tr, sig, {"BLOCK": 64}, divisible(sig, ("x_ptr", "y_ptr"))), {"num_warps": 4}
    gluon = load("gluon_transpose")
    sig = {"x_ptr": "*fp32", "y_ptr": "*fp32"}
    for kernel in ("transpose_plain", "transpose_swizzled"):
        yield f"gluon_{kernel}", GluonASTSource(
            getattr(gluon, kernel), sig, {}, divisible(sig, sig)), {"num_warps": 4}


def main() -> int:
    rows = []
    for stem, src, options in sources():
        for cap in TARGETS:
            compiled = triton.compile(src, target=GPUTarget("cuda", cap, 32), options=options)
            path = f"{KERNELS}/{stem}.sm{cap}.ttgir"
            with open(path, "w") as f:
                f.write(compiled.asm["ttgir"].replace(f'"{os.getcwd()}/', '"'))
            counts = Counter(PTX_SHARED.findall(compiled.asm["ptx"]))
            ptx = ", ".join(f"{n} {name}" for name, n in sorted(counts.items())) or "none"
            rows.append(f"| `{path}` | {ptx} |")
            print(path, ptx, flush=True)
    with open(RESULTS, "w") as f:
        f.write(f"# Shared-memory instructions in the PTX of the catalog kernels\n\n"
                f"Triton {triton.__version__}, compiled on a CPU by "
                f"`python benchmarks/triton_kernels.py` (static instruction counts).\n\n"
                "| TTGIR | PTX shared-memory instructions |\n| --- | --- |\n"
                + "\n".join(rows) + "\n")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    sys.exit(main())
