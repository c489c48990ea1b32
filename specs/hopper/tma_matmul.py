"""A matmul whose tiles TMA loads through host-built tensor descriptors (Triton 3.9,
``TensorDescriptor`` arguments), compiled for sm_90a into
tests/data/hopper/tma_matmul.sm90.ptx: per k-tile one 128x64 box of A (a_desc) and
two 64x64 boxes of B (b_desc's 64x128 block, split by Triton), all 128B-swizzled
(Triton's ``tensordesc_meta``: swizzle 3), read by 8 wgmma m64n128k16."""

import triton
import triton.language as tl


@triton.jit
def tma_matmul(a_desc, b_desc, c_ptr, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
               BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = a_desc.load([pid_m * BLOCK_M, k])
        b = b_desc.load([k, pid_n * BLOCK_N])
        acc = tl.dot(a, b, acc)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.store(c_ptr + offs_m[:, None] * 512 + offs_n[None, :], acc.to(tl.float16))
