"""A 32x32 f32 tile written to shared memory row by row (lanes along a row) and
read back column by column (lanes down a column), with hand-chosen Gluon layouts.

* transpose_plain: SwizzledSharedLayout(vec=1, per_phase=1, max_phase=1): rows of
  32 words, so a column read puts all 32 lanes on one bank: 32-way.
* transpose_swizzled: max_phase=32 XORs the row into the column: conflict-free.
"""
from triton.experimental import gluon
from triton.experimental.gluon import language as gl

ROWS_ALONG_LANES = gl.BlockedLayout([1, 1], [32, 1], [1, 4], [0, 1])
COLS_ALONG_LANES = gl.BlockedLayout([1, 1], [1, 32], [4, 1], [1, 0])


@gluon.jit
def transpose_plain(x_ptr, y_ptr):
    _transpose(x_ptr, y_ptr, gl.SwizzledSharedLayout(1, 1, 1, [1, 0]))


@gluon.jit
def transpose_swizzled(x_ptr, y_ptr):
    _transpose(x_ptr, y_ptr, gl.SwizzledSharedLayout(1, 1, 32, [1, 0]))


@gluon.jit
def _transpose(x_ptr, y_ptr, shared: gl.constexpr):
    rows = gl.arange(0, 32, layout=gl.SliceLayout(1, COLS_ALONG_LANES))[:, None]
    cols = gl.arange(0, 32, layout=gl.SliceLayout(0, COLS_ALONG_LANES))[None, :]
    tile = gl.load(x_ptr + rows * 32 + cols)
    smem = gl.allocate_shared_memory(gl.float32, [32, 32], shared)
    smem.store(tile)
    column_major = smem.load(ROWS_ALONG_LANES)
    out_rows = gl.arange(0, 32, layout=gl.SliceLayout(1, ROWS_ALONG_LANES))[:, None]
    out_cols = gl.arange(0, 32, layout=gl.SliceLayout(0, ROWS_ALONG_LANES))[None, :]
    gl.store(y_ptr + out_cols * 32 + out_rows, column_major)


@gluon.jit
def transpose_disagree(x_ptr, y_ptr):
    """Stored through transpose_swizzled's layout, read back through a
    ``reinterpret`` view of the same bytes with transpose_plain's: the reader
    finds the writer's elements at other addresses (each row's words permuted)."""
    rows = gl.arange(0, 32, layout=gl.SliceLayout(1, COLS_ALONG_LANES))[:, None]
    cols = gl.arange(0, 32, layout=gl.SliceLayout(0, COLS_ALONG_LANES))[None, :]
    tile = gl.load(x_ptr + rows * 32 + cols)
    smem = gl.allocate_shared_memory(gl.float32, [32, 32], gl.SwizzledSharedLayout(1, 1, 32, [1, 0]))
    smem.store(tile)
    plain = smem.reinterpret(layout=gl.SwizzledSharedLayout(1, 1, 1, [1, 0]))
    column_major = plain.load(ROWS_ALONG_LANES)
    out_rows = gl.arange(0, 32, layout=gl.SliceLayout(1, ROWS_ALONG_LANES))[:, None]
    out_cols = gl.arange(0, 32, layout=gl.SliceLayout(0, ROWS_ALONG_LANES))[None, :]
    gl.store(y_ptr + out_cols * 32 + out_rows, column_major)
