"""What Triton's GenericSwizzling picks for a catalog problem, read from the LLVM IR.

Overview
--------
Triton 3.9 exposes no Python entry point for ``optimalSwizzling``
(lib/Tools/GenericSwizzling.cpp; `triton._C.libtriton` has none), so each
problem is written as a one-warp Gluon kernel whose ``convert_layout`` moves the
tile from the writer's register layout to the reader's, compiled on this CPU
for sm_90, and the shared-memory traffic Triton emitted for the conversion is
read back from the LLVM IR: every ``addrspace(3)`` store, load, ldmatrix and
stmatrix, with each lane's byte address computed by evaluating the IR's integer
instructions for that lane (`lane_addresses`). Their costs are verify's
(`verify.api.wavefront_cost`), so the figures compare with `verify synth`'s on
the same bank model.

GenericSwizzling chooses the instructions as well as the layout (it may
vectorise across registers, or read with ldmatrix), so the comparison is of
totals for moving the whole tile: the wavefronts of every instruction of the
conversion, and the worst ways; `verify synth`'s side sums its optimum's
per-instance wavefronts over every instance (`benchmarks/speed/synth.py`).

The benchmark's Triton column (what Triton chooses for a catalog tile) is read
the same way, from a compiled kernel rather than guessed: a one-block ``tl.dot``
at the problem's block sizes (fp16, tf32, int8) compiled for sm_80, whose
operand's ``ttg.local_alloc`` names the ``swizzled_shared`` encoding in the
TTGIR (`dot_encodings`).

Worked example
--------------
The f32 32x32 transpose (writer: lane = column; reader: lane = row): Triton
emits 8 st.shared.v4.b32 (each lane 4 rows' words) and 8 ldmatrix.x4, each
1-way, 4 wavefronts: 64 in all, as ``Sw<5,0,5>`` with 32 st.shared.b32 and 32
ld.shared.b32 of 1 wavefront each.

    python benchmarks/campaigns/synth_triton.py
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
import textwrap
from typing import TypedDict

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from benchmarks import triton_compile  # noqa: E402
from verify.api import wavefront_cost  # noqa: E402


# Each problem: the writer's and reader's Gluon layouts of the tile, as the
# catalog spec's accesses (specs/synth/<name>.synth) place lanes and registers.
class Kernel(TypedDict):
    dtype: str
    shape: tuple[int, int]
    warps: int
    writer: str  # the Gluon layout that stores the tile
    reader: str  # the Gluon layout that loads it back


KERNELS: dict[str, Kernel] = {
    "f32_transpose_32x32": Kernel(
        dtype="fp32",
        shape=(32, 32),
        warps=1,
        writer="ttgl.BlockedLayout([1, 1], [1, 32], [1, 1], [1, 0])",
        reader="ttgl.BlockedLayout([1, 1], [32, 1], [1, 1], [0, 1])",
    ),
    "cutlass_sm80_f16_kmajor_64x64": Kernel(
        dtype="fp16",
        shape=(64, 64),
        warps=4,
        writer="ttgl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])",
        reader="ttgl.DotOperandLayout(0, ttgl.NVMMADistributedLayout([2, 0], [4, 1], [16, 8]), 8)",
    ),
    "b_operand_trans_32x64": Kernel(
        dtype="fp16",
        shape=(32, 64),
        warps=4,
        writer="ttgl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])",
        reader="ttgl.DotOperandLayout(1, ttgl.NVMMADistributedLayout([2, 0], [1, 4], [16, 8]), 8)",
    ),
}

SOURCE = """
from triton.experimental import gluon
from triton.experimental.gluon import language as ttgl


@gluon.jit
def convert(src, dst):
    W: ttgl.constexpr = {writer}
    R: ttgl.constexpr = {reader}
    r = ttgl.arange(0, {rows}, layout=ttgl.SliceLayout(1, W))
    c = ttgl.arange(0, {cols}, layout=ttgl.SliceLayout(0, W))
    x = ttgl.load(src + r[:, None] * {cols} + c[None, :])
    y = ttgl.convert_layout(x, R)
    r2 = ttgl.arange(0, {rows}, layout=ttgl.SliceLayout(1, R))
    c2 = ttgl.arange(0, {cols}, layout=ttgl.SliceLayout(0, R))
    ttgl.store(dst + r2[:, None] * {cols} + c2[None, :], y)
"""


def _module(name: str, text: str):
    """A Python module of `text`, loaded from a file (Triton reads a kernel's source)."""
    path = os.path.join(tempfile.mkdtemp(), f"{name}.py")
    with open(path, "w") as f:
        f.write(textwrap.dedent(text))
    return triton_compile.load(path, name)


def compile_llir(name: str) -> str:
    """The LLVM IR Triton emits for the problem's conversion kernel."""
    from verify.ttgir.kernel import compile_kernel

    k = KERNELS[name]
    text = SOURCE.format(
        writer=k["writer"], reader=k["reader"], rows=k["shape"][0], cols=k["shape"][1]
    )
    module = _module(name, text)
    ptr = f"*{k['dtype']}"
    compiled = compile_kernel(module.convert, "sm_90", {}, {"src": ptr, "dst": ptr}, k["warps"], 1)
    return compiled.asm["llir"]


# The shared encodings Triton picks for a tl.dot's operands: a one-block matmul
# C = A B (A is BM x BK, B is BK x BN, both row-major) compiled for sm_80 (mma v2:
# each operand staged through shared memory by ttg.local_alloc), 4 warps.
DOT_SOURCE = """
import triton
import triton.language as tl


@triton.jit
def dot(a_ptr, b_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
        PRECISION: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
    c = tl.dot(a, b, input_precision=PRECISION)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], c)
"""


class DotCase(TypedDict):
    dtype: str  # the operands' Triton type
    out: str  # the accumulator's
    precision: str  # tl.dot's input_precision ("tf32" makes an fp32 dot a tf32 mma)
    blocks: tuple[int, int, int]  # BM, BN, BK
    operand: str  # "a" or "b": the catalog problem's tile


# Catalog problems whose tile is a tl.dot operand, with the block sizes of the
# catalog's tile (the 8-row ldmatrix tile is below mma's 16 rows: its rows are
# those of the fp16 64x64 A operand, 128 bytes each, as in the catalog).
DOT_CASES: dict[str, DotCase] = {
    "cutlass_sm80_f16_kmajor_64x64": DotCase(
        dtype="fp16", out="fp32", precision="ieee", blocks=(64, 64, 64), operand="a"
    ),
    "b_operand_trans_32x64": DotCase(
        dtype="fp16", out="fp32", precision="ieee", blocks=(64, 64, 32), operand="b"
    ),
    "cutlass_sm80_tf32_kmajor_64x32": DotCase(
        dtype="fp32", out="fp32", precision="tf32", blocks=(64, 64, 32), operand="a"
    ),
    "cutlass_sm80_i8_kmajor_64x64": DotCase(
        dtype="i8", out="i32", precision="ieee", blocks=(64, 64, 64), operand="a"
    ),
}

_ALLOC = re.compile(
    r"ttg\.local_alloc %(?P<operand>[ab])_\d+ .*-> !ttg\.memdesc<(?P<rows>\d+)x(?P<cols>\d+)x"
    r"\w+, (?P<alias>#shared\d*)"
)


def compile_dot_ttgir(case: DotCase) -> str:
    """The TTGIR of the one-block tl.dot kernel, compiled for sm_80 on this CPU."""
    from verify.ttgir.kernel import compile_kernel

    module = _module("dot", DOT_SOURCE)
    bm, bn, bk = case["blocks"]
    constexprs = {"BM": bm, "BN": bn, "BK": bk, "PRECISION": case["precision"]}
    ptrs = {"a_ptr": f"*{case['dtype']}", "b_ptr": f"*{case['dtype']}", "c_ptr": f"*{case['out']}"}
    return compile_kernel(module.dot, "sm_80", constexprs, ptrs, 4, 3).asm["ttgir"]


def dot_encoding(ttgir: str, operand: str) -> str:
    """The shared encoding of operand "a" or "b" in a compiled TTGIR, with its shape:
    ``#ttg.swizzled_shared<{...}> shape (R, C)``, as specs and `verify map` take it."""
    for m in _ALLOC.finditer(ttgir):
        if m.group("operand") == operand:
            alias = re.search(rf"^{m.group('alias')} = (#ttg\.\w+<\{{[^}}]*\}}>)", ttgir, re.M)
            assert alias is not None, f"{m.group('alias')} is defined at the top of the TTGIR"
            return f"{alias.group(1)} shape ({m.group('rows')}, {m.group('cols')})"
    raise ValueError(f"no ttg.local_alloc of operand {operand} in the TTGIR")


def dot_encodings() -> dict[str, str]:
    """Per catalog problem that is a tl.dot operand: the encoding Triton chose."""
    return {
        name: dot_encoding(compile_dot_ttgir(case), case["operand"])
        for name, case in DOT_CASES.items()
    }


_ASSIGN = re.compile(r"^\s*%(\w+) = (.*?)(, !dbg.*)?$")
_BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "and": lambda a, b: a & b,
    "or": lambda a, b: a | b,
    "xor": lambda a, b: a ^ b,
    "shl": lambda a, b: a << b,
    "lshr": lambda a, b: a >> b,
}
_COMPARE = {
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "ult": lambda a, b: a < b,
    "ugt": lambda a, b: a > b,
    "slt": lambda a, b: a < b,
    "sgt": lambda a, b: a > b,
}
_FLAGS = {"nuw", "nsw", "disjoint", "exact", "nneg", "inbounds"}


def _value(token: str, env: dict):
    token = token.strip().rstrip(",")
    if token.startswith("%"):
        return env.get(token[1:])
    if token == "@global_smem":
        return 0
    return int(token) if re.fullmatch(r"-?\d+", token) else None


def _evaluate(rhs: str, env: dict):
    """The value of one instruction for the current lane, or None when it is not
    integer arithmetic on known values (loads of data, vectors, ...)."""
    words = [w for w in rhs.replace(",", " ").split() if w not in _FLAGS]
    if "@llvm.nvvm.read.ptx.sreg.tid.x" in rhs:
        return env["%tid"]
    if words[0] in _BINARY and len(words) == 4:
        a, b = _value(words[2], env), _value(words[3], env)
        return None if a is None or b is None else _BINARY[words[0]](a, b) & 0xFFFFFFFF
    if words[0] == "icmp" and words[1] in _COMPARE:
        a, b = _value(words[3], env), _value(words[4], env)
        return None if a is None or b is None else int(_COMPARE[words[1]](a, b))
    if words[0] == "select" and len(words) == 7:
        chosen = _value(words[2], env)
        return None if chosen is None else _value(words[4] if chosen else words[6], env)
    if words[0] in ("zext", "sext", "trunc"):
        return _value(words[2], env)
    if words[0] == "getelementptr" and "addrspace(3)" in rhs:
        m = re.search(
            r"getelementptr (?:inbounds )?(?:nuw )?i8, ptr addrspace\(3\) "
            r"(?:nonnull )?(\S+), i32 (\S+)",
            rhs,
        )
        if m:
            base, off = _value(m.group(1), env), _value(m.group(2), env)
            return None if base is None or off is None else base + off
    return None


def _access(line: str, env: dict):
    """(instruction, byte address) of a shared-memory access on this line, if any."""
    pointer = re.search(r"ptr addrspace\(3\) (?:nonnull )?(%\w+|@global_smem)", line)
    if pointer is None or "getelementptr" in line:
        return None
    address = _value(pointer.group(1), env)
    width = {"<4 x i32>": "v4.b32", "<2 x i32>": "v2.b32", "i32": "b32"}
    m = re.search(r"@llvm\.nvvm\.(ldmatrix|stmatrix)\.sync\.aligned\.m8n8\.(x\d)(\.trans)?", line)
    if m:
        return f"{m.group(1)}.sync.aligned.m8n8.{m.group(2)}{m.group(3) or ''}.shared.b16", address
    for op, pattern in (("st", r"store (<\d x i32>|i32) "), ("ld", r"load (<\d x i32>|i32), ")):
        m = re.search(pattern, line)
        if m:
            return f"{op}.shared.{width[m.group(1)]}", address
    return None


def lane_addresses(llir: str, warps: int) -> list[tuple[str, list[int]]]:
    """Every shared-memory instruction of the kernel, in program order per warp,
    with the byte address of each of the warp's 32 lanes (the kernel is
    straight-line code)."""
    body = llir[llir.index("define ptx_kernel") :].splitlines()
    out = []
    for warp in range(warps):
        per_lane = [_events(body, 32 * warp + lane) for lane in range(32)]
        out += [
            (per_lane[0][i][0], [per_lane[lane][i][1] for lane in range(32)])
            for i in range(len(per_lane[0]))
        ]
    return out


def _events(body: list[str], tid: int) -> list[tuple[str, int]]:
    env, events = {"%tid": tid}, []
    for line in body:
        m = _ASSIGN.match(line)
        if m:
            env[m.group(1)] = _evaluate(m.group(2), env)
        event = _access(line, env)
        if event:
            events.append(event)
    return events


def triton_figures(name: str) -> dict:
    """Per direction (store / load): the instructions, total wavefronts, worst ways."""
    out: dict[str, dict] = {}
    for instr, addresses in lane_addresses(compile_llir(name), KERNELS[name]["warps"]):
        cost = wavefront_cost(instr, addresses)
        side = out.setdefault(
            "write" if instr.startswith("st") else "read",
            {"instructions": {}, "wavefronts": 0, "max_ways": 0},
        )
        side["instructions"][instr] = side["instructions"].get(instr, 0) + 1
        side["wavefronts"] += cost.wavefronts
        side["max_ways"] = max(side["max_ways"], cost.max_ways)
    return out


if __name__ == "__main__":
    for problem in KERNELS:
        print(problem, triton_figures(problem))
    for problem, encoding in dot_encodings().items():
        print(problem, encoding)
