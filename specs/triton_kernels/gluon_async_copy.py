"""A 32x64 fp16 tile copied into shared memory with Gluon's Ampere async_load
(cp.async), rows `stride` elements apart, then read back and stored. Gluon's
copy carries no contiguity hint: the width is what Triton's AxisInfo proves
from the pointer (tt.divisibility of x_ptr and stride), so verify's lower bound
of AxisInfo (verify/ttgir/pointers.py) decides it."""
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.ampere import async_copy

ROWS = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])


@gluon.jit
def async_copy_rows(x_ptr, y_ptr, stride):
    rows = gl.arange(0, 32, layout=gl.SliceLayout(1, ROWS))[:, None]
    cols = gl.arange(0, 64, layout=gl.SliceLayout(0, ROWS))[None, :]
    smem = gl.allocate_shared_memory(gl.float16, [32, 64], gl.SwizzledSharedLayout(8, 1, 8, [1, 0]))
    async_copy.async_load(smem, x_ptr + rows * stride + cols)
    async_copy.commit_group()
    async_copy.wait_group(0)
    tile = smem.load(ROWS)
    gl.store(y_ptr + rows * 64 + cols, tile)
