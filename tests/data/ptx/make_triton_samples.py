"""Compile the catalog's Triton kernels to PTX on the CPU (no GPU needed) for the
PTX reader's tests: ``python tests/data/ptx/make_triton_samples.py`` from the
repository root writes tests/data/ptx/triton_<kernel>_sm<NN>.ptx. The kernels and
their signatures are benchmarks/campaigns/triton_kernels.py's catalog."""

from __future__ import annotations

import os

from benchmarks import triton_compile
from benchmarks.campaigns.triton_kernels import CATALOG, KERNELS
from verify.ttgir.kernel import compile_kernel

OUT = os.path.dirname(__file__)
WANTED = ("transpose", "softmax", "matmul", "attention")


def load(module: str, function: str):
    return getattr(triton_compile.load(f"{KERNELS}/{module}.py", f"_sample_{module}"), function)


def main() -> None:
    for kernel in CATALOG:
        if kernel.stem not in WANTED:
            continue
        fn = load(kernel.module, kernel.function)
        for target in ("sm_80", "sm_90"):
            compiled = compile_kernel(
                fn, target, kernel.constants, kernel.signature, **kernel.options
            )
            ptx = compiled.asm["ptx"].replace(os.getcwd() + "/", "")
            name = f"triton_{kernel.stem}_{target.replace('_', '')}.ptx"
            with open(os.path.join(OUT, name), "w", encoding="utf-8") as f:
                f.write(ptx)
            print(name, len(ptx))


if __name__ == "__main__":
    main()
