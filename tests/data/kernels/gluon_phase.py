"""A ROWS x 32 f32 tile stored row by row and read back down its columns, through a
SwizzledSharedLayout whose max_phase is a constexpr: with MAX_PHASE=1 every column
read puts its lanes on one bank; MAX_PHASE=32 XORs the row into the column."""

from triton.experimental import gluon
from triton.experimental.gluon import language as gl


@gluon.jit
def column_reads(x_ptr, y_ptr, ROWS: gl.constexpr, MAX_PHASE: gl.constexpr):
    writer: gl.constexpr = gl.BlockedLayout([1, 1], [1, 32], [gl.num_warps(), 1], [1, 0])
    reader: gl.constexpr = gl.BlockedLayout([1, 1], [32, 1], [1, gl.num_warps()], [0, 1])
    shared: gl.constexpr = gl.SwizzledSharedLayout(1, 1, MAX_PHASE, [1, 0])
    rows = gl.arange(0, ROWS, layout=gl.SliceLayout(1, writer))[:, None]
    cols = gl.arange(0, 32, layout=gl.SliceLayout(0, writer))[None, :]
    smem = gl.allocate_shared_memory(gl.float32, [ROWS, 32], shared)
    smem.store(gl.load(x_ptr + rows * 32 + cols))
    columns = smem.load(reader)
    out_rows = gl.arange(0, ROWS, layout=gl.SliceLayout(1, reader))[:, None]
    out_cols = gl.arange(0, 32, layout=gl.SliceLayout(0, reader))[None, :]
    gl.store(y_ptr + out_rows * 32 + out_cols, columns)
