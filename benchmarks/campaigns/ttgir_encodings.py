"""Where the Triton specs' encodings come from: Triton's own compiler, on a CPU.

    python -m benchmarks.campaigns.ttgir_encodings

Compiles a plain tl.dot kernel (num_warps 4, num_stages 3) for sm_80 and sm_90
with the installed triton (3.9.0 in the test extra; no GPU needed: the bundled
ptxas runs on the host) and prints the shared encodings of its TTGIR. Printed on
2026-11-30 with triton 3.9.0:

    80 fp16 128x128x64  vec 8, perPhase 1, maxPhase 8          (A and B)
    80 fp16 128x128x32  A: vec 8, perPhase 2, maxPhase 4; B: 8, 1, 8
    80 i8   128x128x64  A: vec 16, perPhase 2, maxPhase 4; B: vec 8, perPhase 1, maxPhase 16
    80 i8   128x128x128 A: vec 16, perPhase 1, maxPhase 8;  B: 8, 1, 16
    90 fp16 128x128x64  nvmma_shared, swizzlingByteWidth 128, elementBitWidth 16
"""

import re

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget


@triton.jit
def mm(a, b, c, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, 4):
        x = tl.load(a + rm[:, None] * BK + rk[None, :] + k * BM * BK)
        y = tl.load(b + rk[:, None] * BN + rn[None, :] + k * BN * BK)
        acc += tl.dot(x, y)
    tl.store(c + rm[:, None] * BN + rn[None, :], acc)


def run(cap, dt, BM, BN, BK):
    src = triton.compiler.ASTSource(
        mm,
        signature={
            "a": f"*{dt}",
            "b": f"*{dt}",
            "c": "*fp32",
            "BM": "constexpr",
            "BN": "constexpr",
            "BK": "constexpr",
        },
        constexprs={(3,): BM, (4,): BN, (5,): BK},
    )
    k = triton.compile(
        src, target=GPUTarget("cuda", cap, 32), options={"num_warps": 4, "num_stages": 3}
    )
    ttgir = k.asm["ttgir"]
    return sorted(set(re.findall(r"#ttg\.(?:swizzled_shared|nvmma_shared)<\{[^}]*\}>", ttgir)))


for cap, dt, BM, BN, BK in [
    (80, "fp16", 128, 128, 64),
    (80, "fp16", 128, 128, 32),
    (80, "i8", 128, 128, 64),
    (80, "i8", 128, 128, 128),
    (90, "fp16", 128, 128, 64),
]:
    try:
        print(cap, dt, BM, BN, BK, run(cap, dt, BM, BN, BK), flush=True)
    except Exception as e:
        print(cap, dt, BM, BN, BK, "ERR", repr(e)[:300], flush=True)
