"""A tile transpose in plain Triton: loaded row-wise, stored column-wise, so the
compiler converts the register layout (ttg.convert_layout) between the two."""
import triton
import triton.language as tl


@triton.jit
def transpose_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    rows = tl.arange(0, BLOCK)[:, None]
    cols = tl.arange(0, BLOCK)[None, :]
    tile = tl.load(x_ptr + rows * BLOCK + cols)
    tl.store(y_ptr + cols * BLOCK + rows, tile)
