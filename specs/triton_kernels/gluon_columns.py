"""A 32x64 fp16 tile kept one row per lane (lanes down a column), written to and
read back from shared memory through SwizzledSharedLayout(vec=1, per_phase=1,
max_phase=8): the XOR of the row into the column's low three bits that spreads
eight 32-bit rows over eight banks. With 16-bit elements two columns share a
word, so the eight phases reach only four banks, each with eight rows' words:
8-way, where Gluon's ``bank_conflicts`` counts 3 excess accesses
(benchmarks/results/gluon_compare.md; the H200 measured 8 wavefronts)."""
from triton.experimental import gluon
from triton.experimental.gluon import language as gl

ROW_PER_LANE = gl.BlockedLayout([1, 1], [32, 1], [1, 4], [0, 1])
COALESCED = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])


@gluon.jit
def columns_swizzled_fp16(x_ptr, y_ptr):
    rows = gl.arange(0, 32, layout=gl.SliceLayout(1, COALESCED))[:, None]
    cols = gl.arange(0, 64, layout=gl.SliceLayout(0, COALESCED))[None, :]
    tile = gl.convert_layout(gl.load(x_ptr + rows * 64 + cols), ROW_PER_LANE)
    smem = gl.allocate_shared_memory(gl.float16, [32, 64], gl.SwizzledSharedLayout(1, 1, 8, [1, 0]))
    smem.store(tile)
    back = gl.convert_layout(smem.load(ROW_PER_LANE), COALESCED)
    gl.store(y_ptr + rows * 64 + cols, back)
