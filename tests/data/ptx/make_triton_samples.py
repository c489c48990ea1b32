"""Compile the catalog's Triton kernels to PTX on the CPU (no GPU needed) for the
PTX reader's tests: ``python tests/data/ptx/make_triton_samples.py`` from the
repository root writes tests/data/ptx/triton_<kernel>_sm<NN>.ptx. The kernels and
their signatures are benchmarks/campaigns/triton_kernels.py's catalog. With
``--hinted`` it writes only triton_matmul_hinted_sm80.ptx: the catalog's matmul
(BLOCK 128x128x64) specialised as Triton's launcher does at M = N = K = 4096 and
unit inner strides (tt.divisibility 16 on every size and stride), the pipelined
kernel whose cp.async sources divide by a value derived from the block's id."""

from __future__ import annotations

import os
import sys

from benchmarks import triton_compile
from benchmarks.campaigns.triton_kernels import CATALOG, KERNELS
from verify.ttgir.kernel import compile_kernel

OUT = os.path.dirname(__file__)
WANTED = ("transpose", "softmax", "matmul", "attention")
HINTED = [f"{n}=4096" for n in ("M", "N", "K", "stride_am", "stride_bk", "stride_cm")]
UNIT = [f"{n}=1" for n in ("stride_ak", "stride_bn", "stride_cn")]


def load(module: str, function: str):
    return getattr(triton_compile.load(f"{KERNELS}/{module}.py", f"_sample_{module}"), function)


def write(name: str, compiled) -> None:
    ptx = compiled.asm["ptx"].replace(os.getcwd() + "/", "")
    with open(os.path.join(OUT, name), "w", encoding="utf-8") as f:
        f.write(ptx)
    print(name, len(ptx))


def main() -> None:
    for kernel in CATALOG:
        if kernel.stem not in WANTED:
            continue
        fn = load(kernel.module, kernel.function)
        for target in ("sm_80", "sm_90"):
            compiled = compile_kernel(
                fn, target, kernel.constants, kernel.signature, **kernel.options
            )
            write(f"triton_{kernel.stem}_{target.replace('_', '')}.ptx", compiled)
    hinted()


def hinted() -> None:
    matmul = next(k for k in CATALOG if k.stem == "matmul")
    compiled = compile_kernel(
        load(matmul.module, matmul.function),
        "sm_80",
        {k: v for k, v in matmul.constants.items() if k.isupper()},
        {p: t for p, t in matmul.signature.items() if p.endswith("_ptr")},
        assume=HINTED + UNIT,
        **matmul.options,
    )
    write("triton_matmul_hinted_sm80.ptx", compiled)


if __name__ == "__main__":
    hinted() if sys.argv[1:] == ["--hinted"] else main()
