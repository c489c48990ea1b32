"""Compile the kernels of specs/triton_kernels/ with the installed Triton on a CPU
and keep their TTGIR, then count the shared-memory instructions in their PTX.

    python benchmarks/triton_kernels.py          # from the repository root

For each kernel and target (sm_80, sm_90) writes
specs/triton_kernels/<kernel>.sm<NN>.ttgir and, in
benchmarks/results/triton_kernels.md, the ld/st.shared, ldmatrix, stmatrix,
cp.async and wgmma instructions of the PTX Triton produced, then per Python line
of every op ``verify ttgir`` modelled: the instructions verify decided (kind x
count per warp, summed over the line's ops) next to the PTX's thread
shared-memory instructions under that line's ``.loc`` -- the check on the
lowering rules (verify/ttgir/lowering.py). No GPU is needed: triton.compile takes
a target.
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

from verify.ttgir.module import run_kernel

KERNELS = "specs/triton_kernels"
RESULTS = "benchmarks/results/triton_kernels.md"
TARGETS = (80, 90)
PTX_SHARED = re.compile(r"\b((?:ld|st)\.shared(?:\.v\d)?\.\w+|ldmatrix[.\w]*|stmatrix[.\w]*|"
                        r"cp\.async\.c[ag]\.shared\.global|wgmma\.mma_async[.\w]*)")

# ``.loc FILE LINE COL`` (the innermost frame comes first for inlined code).
PTX_LOC = re.compile(r"^\s*\.loc\s+\d+\s+(\d+)\s")
PTX_THREAD_OP = re.compile(r"^\s*(?:@%p\d+\s+)?((?:ld|st)\.shared(?:\.v\d)?\.[a-z]+(\d+)|"
                           r"(?:ld|st)matrix\.sync\.aligned\.m8n8\.(x\d)(\.trans)?)")
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


def verify_name(m: re.Match) -> str:
    """A PTX thread instruction in verify's spelling (ldmatrix.x4.trans, ld.shared.b32)."""
    if m[3]:
        return f"{m[1][:8]}.{m[3]}{m[4] or ''}"
    head = m[1].rsplit(".", 1)[0]
    return f"{head}.b{m[2]}"


def ptx_by_line(ptx: str) -> dict[int, Counter]:
    """Thread shared-memory instructions of the PTX per Python source line."""
    out: dict[int, Counter] = {}
    line = 0
    for text in ptx.splitlines():
        loc = PTX_LOC.match(text)
        if loc:
            line = int(loc[1])
            continue
        m = PTX_THREAD_OP.match(text)
        if m:
            out.setdefault(line, Counter())[verify_name(m)] += 1
    return out


def decided_by_line(ttgir_path: str) -> dict[int, Counter]:
    """verify's decision per Python line: instruction -> instructions per warp."""
    out: dict[int, Counter] = {}
    for d in run_kernel(ttgir_path).decisions:
        out.setdefault(d["line"], Counter())[d["instruction"]] += d["per_warp"]
    return out


def show(counts: Counter) -> str:
    return ", ".join(f"{n} {name}" for name, n in sorted(counts.items())) or "none"


def compare_rows(path: str, ptx: str) -> list[str]:
    """One row per Python line with a modelled op: verify's decision, the PTX's."""
    found = ptx_by_line(ptx)
    rows = []
    for line, decided in sorted(decided_by_line(path).items()):
        emitted = found.get(line, Counter())
        verdict = "same" if emitted == decided else "**differs**"
        rows.append(f"| `{path}` | {line} | {show(decided)} | {show(emitted)} | {verdict} |")
    return rows


def main() -> int:
    rows, per_line = [], []
    for stem, src, options in sources():
        for cap in TARGETS:
            compiled = triton.compile(src, target=GPUTarget("cuda", cap, 32), options=options)
            path = f"{KERNELS}/{stem}.sm{cap}.ttgir"
            with open(path, "w") as f:
                f.write(compiled.asm["ttgir"].replace(f'"{os.getcwd()}/', '"'))
            counts = Counter(PTX_SHARED.findall(compiled.asm["ptx"]))
            rows.append(f"| `{path}` | {show(counts)} |")
            per_line += compare_rows(path, compiled.asm["ptx"])
            print(path, show(counts), flush=True)
    with open(RESULTS, "w") as f:
        f.write(f"# Shared-memory instructions in the PTX of the catalog kernels\n\n"
                f"Triton {triton.__version__}, compiled on a CPU by "
                f"`python benchmarks/triton_kernels.py` (static instruction counts).\n\n"
                "| TTGIR | PTX shared-memory instructions |\n| --- | --- |\n"
                + "\n".join(rows) + "\n\n"
                "## verify's lowering against the PTX, per Python line\n\n"
                "For every line with an op `verify ttgir` models: the instruction it "
                "decided and how many one warp issues (summed over the line's ops), and "
                "the thread shared-memory instructions (ld/st.shared, ldmatrix, "
                "stmatrix) the PTX places under that line's `.loc`. Ops listed not "
                "modelled (cp.async, wgmma, convert_layout's scratch) are not in it.\n\n"
                "| TTGIR | line | verify decided | PTX | |\n| --- | --- | --- | --- | --- |\n"
                + "\n".join(per_line) + "\n")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    sys.exit(main())
