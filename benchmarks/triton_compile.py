"""Triton kernels compiled on this machine's CPU, one way for the scripts and tests that
compile their own (no GPU is needed: ``triton.compile`` takes a target):

    fn = load("specs/triton_kernels/tile_sum.py").tile_sum
    src = source(fn, TILE_SUM, {"BLOCK_M": 32, "BLOCK_N": 64}, divisible(TILE_SUM, ["x_ptr"]))
    compiled = compile_for(src, 80, {"num_warps": 4})   # .asm["ttgir"], ["ptx"], ["cubin"]

Used by benchmarks/campaigns/triton_kernels.py (the catalog),
benchmarks/hardware/ptx/triton_tutorials.py (the tutorials, built here and launched on
the H200), benchmarks/campaigns/synth_triton.py (its loader), tests/ttgir/test_ttgir_copies.py
(variants of the catalog's kernels) and the sample generators under tests/data/. Beside
it, the signatures of the catalog kernels that more than one of them types. `verify
triton` has its own path (verify/ttgir/kernel.py: compile_kernel), which derives the
signature and the hints from the kernel; this one takes them as given. Triton is imported
only when a kernel is compiled, so the signatures import without it.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterable
from types import ModuleType

SOFTMAX = {
    "output_ptr": "*fp32",
    "input_ptr": "*fp32",
    "input_row_stride": "i32",
    "output_row_stride": "i32",
    "n_rows": "i32",
    "n_cols": "i32",
    "BLOCK_SIZE": "constexpr",
    "num_stages": "constexpr",
}
ATTENTION = {
    "Q": "*fp16",
    "K": "*fp16",
    "V": "*fp16",
    "Out": "*fp16",
    "sm_scale": "fp32",
    "N_CTX": "i32",
    "HEAD_DIM": "constexpr",
    "BLOCK_M": "constexpr",
    "BLOCK_N": "constexpr",
}
TILE_SUM = {
    "x_ptr": "*fp16",
    "out_ptr": "*fp32",
    "stride_xm": "i32",
    "n_tiles": "i32",
    "BLOCK_M": "constexpr",
    "BLOCK_N": "constexpr",
}


def load(path: str, name: str | None = None) -> ModuleType:
    """The kernel file `path` imported as a module named `name` (default: the file's
    stem); its @jit functions are its attributes."""
    name = name or os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None, f"{path}: a .py file has a loader"
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def divisible(signature: dict, hints: dict[str, int] | Iterable[str]) -> dict:
    """``ASTSource``'s attrs: tt.divisibility on the parameters named, 16 for a list of
    names, as given for a mapping (parameter -> divisor); indices are `signature`'s order."""
    given = hints if isinstance(hints, dict) else dict.fromkeys(hints, 16)
    index = {p: i for i, p in enumerate(signature)}
    return {(index[p],): [["tt.divisibility", d]] for p, d in given.items()}


def source(fn, signature: dict, constants: dict, attrs: dict):
    """Triton's ``ASTSource`` of the @jit function `fn`, or Gluon's for a @gluon.jit one."""
    import triton
    from triton.experimental.gluon._runtime import GluonASTSource, GluonJITFunction

    make = GluonASTSource if isinstance(fn, GluonJITFunction) else triton.compiler.ASTSource
    return make(fn, signature, constants, attrs)


def compile_for(src, capability: int, options: dict):
    """``triton.compile`` of `src` for sm_`capability` (80, 90) with Triton's `options`
    (num_warps, num_stages), on the CPU."""
    import triton
    from triton.backends.compiler import GPUTarget

    # Triton 3.9 warns unless this is set; "1" is its default (fused multiply-adds).
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    return triton.compile(src, target=GPUTarget("cuda", capability, 32), options=options)
