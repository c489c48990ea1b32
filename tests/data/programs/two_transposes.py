"""A program that compiles two Gluon transposes for sm_80 on the CPU: a 32 x 32
f32 tile stored row by row and read back down its columns, through a plain
shared layout (each column read puts its 32 lanes on one bank: 32-way) and
through a swizzled one (max_phase 32 XORs the row into the column: conflict
free). It prints one line per kernel and exits with the status given as its
first argument (0 by default); a second argument is the compute capability to
compile for (80 by default)."""

import sys

import triton
from triton.backends.compiler import GPUTarget
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource


@gluon.jit
def transpose(x_ptr, y_ptr, MAX_PHASE: gl.constexpr):
    writer: gl.constexpr = gl.BlockedLayout([1, 1], [1, 32], [4, 1], [1, 0])
    reader: gl.constexpr = gl.BlockedLayout([1, 1], [32, 1], [1, 4], [0, 1])
    shared: gl.constexpr = gl.SwizzledSharedLayout(1, 1, MAX_PHASE, [1, 0])
    rows = gl.arange(0, 32, layout=gl.SliceLayout(1, writer))[:, None]
    cols = gl.arange(0, 32, layout=gl.SliceLayout(0, writer))[None, :]
    smem = gl.allocate_shared_memory(gl.float32, [32, 32], shared)
    smem.store(gl.load(x_ptr + rows * 32 + cols))
    columns = smem.load(reader)
    out_rows = gl.arange(0, 32, layout=gl.SliceLayout(1, reader))[:, None]
    out_cols = gl.arange(0, 32, layout=gl.SliceLayout(0, reader))[None, :]
    gl.store(y_ptr + out_rows * 32 + out_cols, columns)


def compile_for_sm80(max_phase: int, capability: int = 80):
    signature = {"x_ptr": "*fp32", "y_ptr": "*fp32", "MAX_PHASE": "constexpr"}
    source = GluonASTSource(transpose, signature, {"MAX_PHASE": max_phase}, {})
    target = GPUTarget("cuda", capability, 32)
    return triton.compile(source, target=target, options={"num_warps": 4})


if __name__ == "__main__":
    capability = int(sys.argv[2]) if len(sys.argv) > 2 else 80
    for phase in (1, 32):
        kernel = compile_for_sm80(phase, capability)
        print(f"compiled {kernel.name} with max_phase {phase}")
    sys.exit(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
