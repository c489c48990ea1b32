"""Compile the kernels of specs/triton_kernels/ with the installed Triton on a CPU
and keep their TTGIR, then count the shared-memory instructions in their PTX.

    python -m benchmarks.campaigns.triton_kernels          # from the repository root

For each kernel of `CATALOG` and target (sm_80, sm_90) writes
specs/triton_kernels/<kernel>.sm<NN>.ttgir; for sm_90 also the cubin and its
launch metadata under benchmarks/hardware/triton_h200/ (kernels.json: entry name,
threads, shared bytes, the PTX ``.entry`` parameters); and, in
benchmarks/results/triton_kernels.md, the ld/st.shared, ldmatrix, stmatrix,
cp.async and wgmma instructions of the PTX Triton produced, then per Python line
of every op ``verify ttgir`` modelled: the instructions verify decided (kind x
count per warp, summed over the line's ops) next to the PTX's thread
shared-memory instructions under that line's ``.loc`` -- the check on the
lowering rules (verify/notation/triton_lowering.py). No GPU is needed: triton.compile takes
a target (benchmarks/triton_compile.py, the compile path shared with the tutorials and tests).
Triton records absolute source paths in ``loc(...)``; the repository prefix is cut
so the committed TTGIR names specs/triton_kernels/<file>.py wherever it is checked.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections import Counter
from dataclasses import dataclass

import triton

from benchmarks import triton_compile
from benchmarks.triton_compile import ATTENTION, SOFTMAX, TILE_SUM
from verify.ttgir.module import run_kernel

KERNELS = "specs/triton_kernels"
RESULTS = "benchmarks/results/triton_kernels.md"
# The sm_90 cubins and their launch metadata, for the H200 (benchmarks/hardware/triton_h200.py).
CUBINS = "benchmarks/hardware/triton_h200"
TARGETS = (80, 90)
PTX_SHARED = re.compile(
    r"\b((?:ld|st)\.shared(?:\.v\d)?\.\w+|ldmatrix[.\w]*|stmatrix[.\w]*|"
    r"cp\.async\.c[ag]\.shared\.global|wgmma\.mma_async[.\w]*)"
)

# ``.loc FILE LINE COL`` (the innermost frame comes first for inlined code).
PTX_LOC = re.compile(r"^\s*\.loc\s+\d+\s+(\d+)\s")
PTX_THREAD_OP = re.compile(
    r"^\s*(?:@%p\d+\s+)?((?:ld|st)\.shared(?:\.v\d)?\.[a-z]+(\d+)|"
    r"(?:ld|st)matrix\.sync\.aligned\.m8n8\.(x\d)(\.trans)?)"
)
# ``cp.async.cg.shared.global [ %r5 + 0 ], [ %rd6 + 0 ], 0x10, %r6;``: the copy
# size is an operand; verify spells it as a qualifier (cp.async.cg.16).
PTX_CP_ASYNC = re.compile(
    r"^\s*(?:@%p\d+\s+)?cp\.async\.(c[ag])\.shared\.global\S*\s+\[[^\]]*\],\s*"
    r"\[[^\]]*\],\s*(0x[0-9a-fA-F]+|\d+)"
)
# The launcher specialises unit strides to constants and 16-divisible integers
# with tt.divisibility; each kernel's hints are those its launch gives
# (benchmarks/hardware/triton_h200.py launches them with those values).
MATMUL_SIGNATURE = {
    "a_ptr": "*fp16",
    "b_ptr": "*fp16",
    "c_ptr": "*fp16",
    "M": "i32",
    "N": "i32",
    "K": "i32",
    "stride_am": "i32",
    "stride_ak": "constexpr",
    "stride_bk": "i32",
    "stride_bn": "constexpr",
    "stride_cm": "i32",
    "stride_cn": "constexpr",
    "BLOCK_SIZE_M": "constexpr",
    "BLOCK_SIZE_N": "constexpr",
    "BLOCK_SIZE_K": "constexpr",
    "GROUP_SIZE_M": "constexpr",
}
GLUON_TRANSPOSE = {"x_ptr": "*fp32", "y_ptr": "*fp32"}


@dataclass(frozen=True)
class Kernel:
    """One catalog kernel: ``specs/triton_kernels/<module>.py:<function>`` compiled
    with these signature, constants, 16-divisible parameters and options into
    ``<stem>.sm<NN>.ttgir``."""

    stem: str
    module: str
    function: str
    signature: dict
    constants: dict
    divisible: tuple
    options: dict
    # Written as an sm_90 cubin for benchmarks/hardware/triton_h200.py (which launches it).
    h200: bool = True


CATALOG = (
    Kernel(
        "matmul",
        "matmul",
        "matmul_kernel",
        MATMUL_SIGNATURE,
        {
            "stride_ak": 1,
            "stride_bn": 1,
            "stride_cn": 1,
            "BLOCK_SIZE_M": 128,
            "BLOCK_SIZE_N": 128,
            "BLOCK_SIZE_K": 64,
            "GROUP_SIZE_M": 8,
        },
        ("a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_bk", "stride_cm"),
        {"num_warps": 4, "num_stages": 3},
    ),
    Kernel(
        "transpose",
        "transpose",
        "transpose_kernel",
        {"x_ptr": "*fp32", "y_ptr": "*fp32", "BLOCK": "constexpr"},
        {"BLOCK": 64},
        ("x_ptr", "y_ptr"),
        {"num_warps": 4},
    ),
    Kernel(
        "softmax",
        "softmax",
        "softmax_kernel",
        SOFTMAX,
        {"BLOCK_SIZE": 1024, "num_stages": 2},
        ("output_ptr", "input_ptr", "input_row_stride", "output_row_stride"),
        {"num_warps": 4},
    ),
    Kernel(
        "attention",
        "attention",
        "attn_fwd",
        ATTENTION,
        {"HEAD_DIM": 64, "BLOCK_M": 64, "BLOCK_N": 32},
        ("Q", "K", "V", "Out", "N_CTX"),
        {"num_warps": 4, "num_stages": 3},
    ),
    *(
        Kernel(
            f"gluon_{name}",
            "gluon_transpose",
            name,
            GLUON_TRANSPOSE,
            {},
            tuple(GLUON_TRANSPOSE),
            {"num_warps": 4},
        )
        for name in ("transpose_plain", "transpose_swizzled", "transpose_disagree")
    ),
    Kernel(
        "gluon_columns_swizzled_fp16",
        "gluon_columns",
        "columns_swizzled_fp16",
        {"x_ptr": "*fp16", "y_ptr": "*fp16"},
        {},
        ("x_ptr", "y_ptr"),
        {"num_warps": 4},
    ),
    Kernel(
        "gluon_async_copy",
        "gluon_async_copy",
        "async_copy_rows",
        {"x_ptr": "*fp16", "y_ptr": "*fp16", "stride": "i32"},
        {},
        ("x_ptr", "y_ptr", "stride"),
        {"num_warps": 4},
        h200=False,
    ),
    *(
        Kernel(
            f"tile_sum_{columns}",
            "tile_sum",
            "tile_sum",
            TILE_SUM,
            {"BLOCK_M": 32, "BLOCK_N": columns},
            ("x_ptr", "out_ptr", "stride_xm"),
            {"num_warps": 4},
            h200=False,
        )
        for columns in (64, 32)
    ),
)


def source(kernel: Kernel):
    """Triton's (or Gluon's) ASTSource of a catalog kernel."""
    fn = getattr(triton_compile.load(f"{KERNELS}/{kernel.module}.py"), kernel.function)
    attrs = triton_compile.divisible(kernel.signature, kernel.divisible)
    return triton_compile.source(fn, kernel.signature, kernel.constants, attrs)


def sources():
    """(file stem, Triton source, compile options) of every catalog kernel."""
    for kernel in CATALOG:
        yield kernel.stem, source(kernel), kernel.options


# ``.param .u64 .ptr .global .align 1 NAME_param_0,``: one kernel parameter.
PTX_PARAM = re.compile(
    r"^\s*\.param\s+\.(?P<type>[usfb]\d+)\b.*?(?P<name>\w+_param_\d+)", re.MULTILINE
)


def entry_params(ptx: str) -> list[str]:
    """The PTX types of the kernel's ``.entry`` parameters, in order (``u64``,
    ``u32``, ``f32``...): the signature's non-constexpr parameters, then the
    scratch pointers Triton 3.9 appends (global and profile scratch)."""
    head = ptx[ptx.index(".entry") :]
    head = head[: head.index(")")]
    return [m["type"] for m in PTX_PARAM.finditer(head)]


def launch_metadata(kernel: Kernel, compiled) -> dict:
    """What launching the cubin needs (benchmarks/hardware/triton_h200.py): the entry name,
    threads, dynamic shared memory, parameters (the signature's runtime ones by
    name, then Triton's scratch pointers) with their PTX types, and the scratch
    sizes Triton's launcher would allocate (bytes per CTA)."""
    md = compiled.metadata
    runtime = [
        n for n, ty in kernel.signature.items() if ty != "constexpr" and n not in kernel.constants
    ]
    types = entry_params(compiled.asm["ptx"])
    names = runtime + ["global_scratch", "profile_scratch"][: len(types) - len(runtime)]
    if len(names) != len(types):
        raise RuntimeError(
            f"{kernel.stem}: the PTX entry takes {len(types)} parameters, "
            f"the signature gives {len(runtime)} and at most 2 scratch"
        )
    return {
        "stem": kernel.stem,
        "name": md.name,
        "num_warps": md.num_warps,
        "num_ctas": md.num_ctas,
        "shared": md.shared,
        "params": [
            {"name": n, "ptx": t, "signature": kernel.signature.get(n, "*i8")}
            for n, t in zip(names, types)
        ],
        "global_scratch_size": md.global_scratch_size,
        "global_scratch_align": md.global_scratch_align,
        "profile_scratch_size": md.profile_scratch_size,
        "profile_scratch_align": md.profile_scratch_align,
        "triton_version": md.triton_version,
        "cubin": f"{kernel.stem}.sm90.cubin",
    }


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
        copy = PTX_CP_ASYNC.match(text)
        if copy:
            name = f"cp.async.{copy[1]}.{int(copy[2], 0)}"
            out.setdefault(line, Counter())[name] += 1
    return out


def decided_by_line(ttgir_path: str) -> tuple[dict[int, Counter], dict[int, Counter]]:
    """verify's decision per Python line (instruction -> instructions per warp),
    and the ops it listed not modelled per line (op -> count)."""
    checker = run_kernel(ttgir_path)
    decided: dict[int, Counter] = {}
    for d in checker.decisions + checker.copies:
        decided.setdefault(d["line"], Counter())[d["instruction"]] += d["per_warp"]
    listed: dict[int, Counter] = {}
    for r in checker.results:
        if r.property.startswith("not modelled: "):
            listed.setdefault(r.line, Counter())[r.property.split()[2]] += 1
    return decided, listed


def show(counts: Counter) -> str:
    return ", ".join(f"{n} {name}" for name, n in sorted(counts.items())) or "none"


def compare_rows(path: str, ptx: str) -> list[str]:
    """One row per Python line with a modelled op: verify's decision, the PTX's,
    and, where they differ, the same instructions the PTX places under lines with
    no modelled op (LLVM may give an instruction the line of its use, not of
    the op that made it)."""
    found = ptx_by_line(ptx)
    decided_lines, listed = decided_by_line(path)
    rows = []
    for line, decided in sorted(decided_lines.items()):
        emitted = found.get(line, Counter())
        verdict = "same" if emitted == decided else "**differs**"
        elsewhere = (
            []
            if emitted == decided
            else [
                f"{n} {name} at {other}"
                for other, counts in sorted(found.items())
                if other not in decided_lines
                for name, n in sorted(counts.items())
                if name in decided
            ]
        )
        if emitted != decided and line in listed:
            elsewhere.append(f"listed not modelled on this line: {show(listed[line])}")
        rows.append(
            f"| `{path}` | {line} | {show(decided)} | {show(emitted)} | {verdict} | "
            f"{', '.join(elsewhere)} |"
        )
    return rows


def main() -> int:
    rows, per_line, launches = [], [], []
    os.makedirs(CUBINS, exist_ok=True)
    for kernel in CATALOG:
        src = source(kernel)
        for cap in TARGETS:
            compiled = triton_compile.compile_for(src, cap, kernel.options)
            path = f"{KERNELS}/{kernel.stem}.sm{cap}.ttgir"
            with open(path, "w") as f:
                f.write(compiled.asm["ttgir"].replace(f'"{os.getcwd()}/', '"'))
            counts = Counter(PTX_SHARED.findall(compiled.asm["ptx"]))
            rows.append(f"| `{path}` | {show(counts)} |")
            per_line += compare_rows(path, compiled.asm["ptx"])
            print(path, show(counts), flush=True)
            if cap == 90 and kernel.h200:
                with open(f"{CUBINS}/{kernel.stem}.sm90.cubin", "wb") as f:
                    f.write(compiled.asm["cubin"])
                launches.append(launch_metadata(kernel, compiled))
    with open(f"{CUBINS}/kernels.json", "w") as f:
        json.dump(launches, f, indent=1)
        f.write("\n")
    with open(RESULTS, "w") as f:
        f.write(
            f"# Shared-memory instructions in the PTX of the catalog kernels\n\n"
            f"Triton {triton.__version__}, compiled on a CPU by "
            f"`python -m benchmarks.campaigns.triton_kernels` (static instruction counts).\n\n"
            "| TTGIR | PTX shared-memory instructions |\n| --- | --- |\n" + "\n".join(rows) + "\n\n"
            "## verify's lowering against the PTX, per Python line\n\n"
            "For every line with an op `verify ttgir` models: the instruction it "
            "decided and how many one warp issues (summed over the line's ops), and "
            "the thread shared-memory instructions (ld/st.shared, ldmatrix, "
            "stmatrix, cp.async with its size and cache operator) the PTX places "
            "under that line's `.loc`. Ops listed not modelled (wgmma, "
            "convert_layout's and reductions' scratch, a cp.async whose global "
            "source is not traced) are not in it; a line that also holds such an "
            "op says so in the last column. Where a line differs, the last column lists the same "
            "instructions under Python lines that have no modelled op: LLVM may "
            "give an instruction the line of its first use (the attention's Q "
            "store into shared memory sits under the line of the call that uses "
            "Q), and a convert_layout's or reduction's scratch accesses sit under "
            "their own lines.\n\n"
            "| TTGIR | line | verify decided | PTX | | PTX elsewhere |\n"
            "| --- | --- | --- | --- | --- | --- |\n" + "\n".join(per_line) + "\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
