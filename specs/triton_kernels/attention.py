"""The forward pass of the Triton tutorial's fused attention
(python/tutorials/06-fused-attention.py: ``_attn_fwd`` and ``_attn_fwd_inner``,
non-causal, online softmax in base 2), with pointer loads where the tutorial
uses tensor descriptors (TMA descriptors are built at launch, and the catalog is
compiled without a GPU), small blocks (BLOCK_M 64, BLOCK_N 32, HEAD_DIM 64) and
fp16 Q, K, V, O of shape (Z*H, N_CTX, HEAD_DIM), contiguous."""
import triton
import triton.language as tl


@triton.jit
def _attn_fwd_inner(acc, l_i, m_i, q, k_ptrs, v_ptrs, qk_scale, N_CTX,
                    HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr):
    for start_n in range(0, N_CTX, BLOCK_N):
        k = tl.load(k_ptrs + start_n * HEAD_DIM)
        qk = tl.dot(q, tl.trans(k))
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        l_ij = tl.sum(p, 1)
        alpha = tl.math.exp2(m_i - m_ij)
        acc = acc * alpha[:, None]
        v = tl.load(v_ptrs + start_n * HEAD_DIM)
        acc = tl.dot(p.to(tl.float16), v, acc)
        l_i = l_i * alpha + l_ij
        m_i = m_ij
    return acc, l_i, m_i


@triton.jit
def attn_fwd(Q, K, V, Out, sm_scale, N_CTX, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
             BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    base = off_hz * N_CTX * HEAD_DIM
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504  # 1/log(2)
    q = tl.load(Q + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :])
    k_ptrs = K + base + offs_n[:, None] * HEAD_DIM + offs_d[None, :]
    v_ptrs = V + base + offs_n[:, None] * HEAD_DIM + offs_d[None, :]
    acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, k_ptrs, v_ptrs, qk_scale, N_CTX,
                                    HEAD_DIM, BLOCK_N)
    acc = acc / l_i[:, None]
    tl.store(Out + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :], acc.to(Out.type.element_ty))
