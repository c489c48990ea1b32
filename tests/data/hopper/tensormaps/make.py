"""Compile this folder's kernels for sm_90 with the installed Triton (no GPU needed)
and write, per kernel, its PTX, its TTGIR and its metadata's ``tensordesc_meta``
(what `verify.ptx.tensormaps` reads):

    python tests/data/hopper/tensormaps/make.py          # from the repository root

fp16 operands, 128x128x64 tiles, 4 warps, 3 stages; source paths in ``loc`` are
cut to the repository so that the files name tests/data/hopper/tensormaps/*.py.
"""

from __future__ import annotations

import json
import os
import sys

import triton
from triton.backends.compiler import GPUTarget
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource, GluonJITFunction

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(HERE))))
sys.path.insert(0, HERE)

import device_matmul  # noqa: E402
import gluon_tutorials  # noqa: E402
import tutorial09  # noqa: E402

DESC = "tensordesc<fp16[128,64]>"


def gluon_desc(dtype: str, block: list[int]) -> str:
    """A Gluon TensorDescriptor's type, as its ``__mangle__`` writes it, with the
    layout its tutorial gives it (NVMMASharedLayout.get_default_for)."""
    layout = gl.NVMMASharedLayout.get_default_for(block, getattr(gl, dtype))
    short = {"float16": "fp16", "float32": "fp32"}[dtype]
    return f"tensordesc<{short}[{','.join(map(str, block))}],{layout!r}>"


TILES = {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 8}
SIZES = {"M": "i32", "N": "i32", "K": "i32"}
KERNELS = {
    "gluon04_elementwise_add": (
        gluon_tutorials.elementwise_add_tma_kernel,
        {
            **{d: gluon_desc("float32", [32, 64]) for d in ("a_desc", "b_desc", "c_desc")},
            "xnumel": "i32",
            "ynumel": "i32",
        },
        {"XBLOCK": 32, "YBLOCK": 64, "num_buffers": 2},
    ),
    "gluon05_matmul_pipelined": (
        gluon_tutorials.blocked_matmul_pipelined_kernel,
        {
            "a_desc": gluon_desc("float16", [128, 64]),
            "b_desc": gluon_desc("float16", [64, 128]),
            "c_desc": gluon_desc("float16", [128, 128]),
        },
        {"num_warps": 4},
    ),
    "device_matmul": (
        device_matmul.device_matmul,
        {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", **SIZES},
        {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64},
    ),
    # stem: (function, signature, constants)
    "t09_tma": (
        tutorial09.matmul_kernel_tma,
        {"a_desc": DESC, "b_desc": DESC, "c_desc": "tensordesc<fp16[128,128]>", **SIZES},
        {**TILES, "FP8_OUTPUT": False, "WARP_SPECIALIZE": False},
    ),
    "t09_tma_persistent": (
        tutorial09.matmul_kernel_tma_persistent,
        {"a_desc": DESC, "b_desc": DESC, "c_desc": "tensordesc<fp16[128,128]>", **SIZES},
        {
            **TILES,
            "FP8_OUTPUT": False,
            "EPILOGUE_SUBTILE": False,
            "NUM_SMS": 132,
            "WARP_SPECIALIZE": False,
        },
    ),
    "t09_descriptor_persistent": (
        tutorial09.matmul_kernel_descriptor_persistent,
        {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", **SIZES},
        {
            **TILES,
            "EPILOGUE_SUBTILE": False,
            "NUM_SMS": 132,
            "WARP_SPECIALIZE": False,
            "FLATTEN": False,
        },
    ),
}


def compile_one(stem: str) -> None:
    fn, signature, constants = KERNELS[stem]
    signature = {**signature, **{name: "constexpr" for name in constants}}
    divisible = {
        (i,): [["tt.divisibility", 16]]
        for i, t in enumerate(signature.values())
        if t.startswith("*")
    }
    make = GluonASTSource if isinstance(fn, GluonJITFunction) else triton.compiler.ASTSource
    src = make(fn, signature, constants, divisible)
    kernel = triton.compile(
        src, target=GPUTarget("cuda", 90, 32), options={"num_warps": 4, "num_stages": 3}
    )
    prefix = f'"{ROOT}/'
    for kind in ("ptx", "ttgir"):
        with open(os.path.join(HERE, f"{stem}.sm90.{kind}"), "w") as f:
            f.write(kernel.asm[kind].replace(prefix, '"'))
    meta = {
        "name": kernel.metadata.name,
        "shared": kernel.metadata.shared,
        "tensordesc_meta": kernel.metadata.tensordesc_meta,
    }
    with open(os.path.join(HERE, f"{stem}.sm90.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    for stem in sys.argv[1:] or KERNELS:
        compile_one(stem)
