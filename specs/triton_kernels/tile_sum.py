"""Sums BLOCK_M x BLOCK_N fp16 tiles down a matrix with a runtime row stride: a
pipelined loop (tl.range with num_stages=3) whose load Triton turns into
cp.async on sm_80+, asked for with cache_modifier=".ca" (16-byte copies would
be .cg otherwise). One quarter-warp copies 128 bytes of the tile: one row when
BLOCK_N = 64, two rows when BLOCK_N = 32, which then share source banks for
row strides that are multiples of 64 elements (rule C, docs/hardware.md)."""
import triton
import triton.language as tl


@triton.jit
def tile_sum(x_ptr, out_ptr, stride_xm, n_tiles, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    ptrs = x_ptr + rows[:, None] * stride_xm + cols[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in tl.range(0, n_tiles, num_stages=3):
        acc += tl.load(ptrs, cache_modifier=".ca").to(tl.float32)
        ptrs += BLOCK_M * stride_xm
    tl.store(out_ptr + rows[:, None] * BLOCK_N + cols[None, :], acc)
