"""Issue 24's permuted-register store: an f32 64x32 tile in a blocked layout
(sizePerThread=[4,4], threadsPerWarp=[4,8], warpsPerCTA=[4,1]) stored into
#ttg.swizzled_shared<{vec=2, perPhase=2, maxPhase=8, order=[1,0]}>. Triton 3.9
vectorises over each thread's aligned 4-element block as a set and emits
st.shared.v4.b32 with the registers permuted inside the vector; the H200 measures 4
wavefronts per instruction, the ideal. Compiled by make_samples.py."""

from triton.experimental import gluon
from triton.experimental.gluon import language as gl

BLOCKED = gl.BlockedLayout([4, 4], [4, 8], [4, 1], [1, 0])
SHARED = gl.SwizzledSharedLayout(2, 2, 8, [1, 0])


@gluon.jit
def permuted_store(x_ptr, y_ptr):
    rows = gl.arange(0, 64, layout=gl.SliceLayout(1, BLOCKED))[:, None]
    cols = gl.arange(0, 32, layout=gl.SliceLayout(0, BLOCKED))[None, :]
    tile = gl.load(x_ptr + rows * 32 + cols)
    smem = gl.allocate_shared_memory(gl.float32, [64, 32], SHARED)
    smem.store(tile)
    back = smem.load(BLOCKED)
    gl.store(y_ptr + rows * 32 + cols, back)
