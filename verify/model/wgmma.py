"""What `wgmma.mma_async` reads from shared memory: its 64-bit matrix descriptors.

Overview
--------
On sm_90 a warpgroup MMA reads its A and B operands itself, through a matrix
descriptor held in a register (PTX ISA, "Asynchronous Warpgroup Level Matrix
Shared Memory Layout": 9.7.15.5.1.2 "Shared Memory Matrix Layout" and
9.7.15.5.1.2.2 "Matrix Descriptor Format"). This module decodes a descriptor
and gives, for an instruction shape, element type and major-ness, the byte
address of every element (row, k) the instruction reads, as one `Expr` of
`verify.model.expr` (so enumeration and the solver see one function) and as
integers (`read_address`, `read_map`: the same `Expr`, evaluated).

The descriptor (`MatrixDescriptor.decode`), fields in 16-byte units where
PTX's ``matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4`` applies:

======  ===========================================================
bits    field
======  ===========================================================
0-13    start address >> 4
16-29   leading dimension byte offset (LBO) >> 4
32-45   stride dimension byte offset (SBO) >> 4
49-51   base offset (3 bits; not used by the no-swizzle mode)
62-63   swizzle mode: 0 none ("interleave"), 1 128B, 2 64B, 3 32B
======  ===========================================================

CUTLASS's ``GmmaDescriptor`` (cute/arch/mma_sm90_desc.hpp) lays out the same
bits and names mode 0 ``INTERLEAVE``, 1 ``B128``, 2 ``B64``, 3 ``B32``.

The bit layout is a table entry (`DescriptorFormat`, `DESCRIPTOR_FORMATS`): sm_90's
(`SM90_WGMMA`, the default, validated on the H200) and sm_100 tcgen05's
(`SM100_TCGEN05`: the layout type at 61-63, a fixed 0b001 at 46-48, the
leading-dimension mode bit 52), on paper only: no sm_100 machine was measured.

The address of element (row, k) -- row along M (operand A) or N (operand B), k
along K -- is start + a canonical offset + the element's byte in its 16-byte
chunk, then the mode's XOR on the absolute address. With T elements in a
16-byte chunk and W = 1/2/4/8 chunks in one swizzle row (none/32B/64B/128B),
the offsets in chunks are CUTLASS's canonical layouts (make_gmma_desc in
cute/atom/mma_traits_sm90_gmma.hpp, in units of uint128_t):

* K-major (transpose immediate 0), chunk column kc = k / T:
  none: (row%8) + (row/8)*SBO + kc*LBO; swizzled: (row%8)*W + (row/8)*SBO + kc.
  A core matrix is 8 rows of 16 bytes; LBO steps along K (unused when swizzled).
* MN-major (transpose immediate 1), chunk mc = row / T:
  none: mc*SBO + (k%8) + (k/8)*LBO;
  swizzled: (mc%W) + (mc/W)*LBO + (k%8)*W + (k/8)*SBO.

The XOR is CuTe's ``Swizzle<B,4,3>`` (B = 3/2/1 for 128B/64B/32B) on the byte
address: bits [4, 4+B) ^= bits [7, 7+B), so the pattern repeats every
1024/512/256 bytes. PTX: the base offset is 0 when the pattern starts on such a
boundary, else ``(pattern start address >> 7) & 7``. This model reads the base
offset as naming the row of the pattern at which it starts: the XOR takes
((address >> 7) - base offset) mod 2^B (`swizzled_address`), which equals
Swizzle<B,4,3> of the address relative to the pattern start.

Worked example: K-major f16, 128B swizzle, start 0, SBO 1024 (CUTLASS's
``Layout_K_SW128_Atom<half_t>`` tiled to 64x64): element (row 1, k 8) is at
chunk 1*8 + 0 + 1 = 9, byte 144; bits [7,10) of 144 are 1, so bits [4,7)
(1) become 0: byte 128. Its neighbour k 0 of row 1 lands at 128 ^ 16 = 144.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import IntEnum
from functools import cached_property

from verify.errors import InternalError, SpecError
from verify.model.dtypes import DTYPE_BYTES, canonical_dtype
from verify.model.expr import BinOp, Const, Expr, Var, add, compiled, evaluate, mul, render
from verify.model.layout import Formula

# 14-bit fields of 16-byte units: the largest byte value a descriptor holds.
_FIELD_BYTES = 1 << 18


class SwizzleMode(IntEnum):
    """The layout type in bits 62-63, by its PTX encoding."""

    NONE = 0
    B128 = 1
    B64 = 2
    B32 = 3

    @property
    def bits(self) -> int:
        """B of the equivalent ``Swizzle<B,4,3>`` on byte addresses."""
        return {0: 0, 1: 3, 2: 2, 3: 1}[self.value]

    @property
    def row_chunks(self) -> int:
        """W: 16-byte chunks in one row of the swizzle atom (1 when unswizzled)."""
        return 1 << self.bits

    @property
    def repeat_bytes(self) -> int:
        """Bytes after which the XOR pattern repeats (PTX's pattern boundary)."""
        return 128 << self.bits if self.bits else 16

    @property
    def label(self) -> str:
        return "none" if self is SwizzleMode.NONE else f"{16 << self.bits}B"


def _field(value: int, lo: int, width: int) -> int:
    return (value >> lo) & ((1 << width) - 1)


@dataclass(frozen=True)
class DescriptorFormat:
    """One architecture's bit layout of a shared-memory matrix descriptor: a table
    entry (`DESCRIPTOR_FORMATS`). Fields are (low bit, width); start, LBO and SBO
    hold bytes >> 4 in both formats known. `swizzle_codes` maps the layout-type
    field's codes to the modes this module models (a code not listed is refused as
    not modelled); `fixed` are (low bit, width, value) the format requires;
    `unmodelled` are (low bit, width, meaning) fields modelled only at 0.
    `validated` says where the format was checked against hardware, "" where it was
    not (then it is on paper: decoded and encoded, never measured)."""

    name: str
    source: str
    validated: str
    start: tuple[int, int]
    leading: tuple[int, int]
    stride: tuple[int, int]
    base_offset: tuple[int, int]
    swizzle: tuple[int, int]
    swizzle_codes: tuple[tuple[int, SwizzleMode], ...]
    fixed: tuple[tuple[int, int, int], ...] = ()
    unmodelled: tuple[tuple[int, int, str], ...] = ()

    def mode(self, code: int) -> SwizzleMode:
        for c, mode in self.swizzle_codes:
            if c == code:
                return mode
        known = ", ".join(f"{c} ({m.label})" for c, m in self.swizzle_codes)
        raise SpecError(
            f"{self.name} descriptor layout type: expected one of {known}, found {code} "
            "(not modelled)"
        )

    def code(self, mode: SwizzleMode) -> int:
        return next(c for c, m in self.swizzle_codes if m is mode)


# sm_90 wgmma: PTX ISA 9.7.15.5.1.2.2 "Matrix Descriptor Format"; CUTLASS
# cute/arch/mma_sm90_desc.hpp GmmaDescriptor (layout_type_ at 62-63: INTERLEAVE 0,
# B128 1, B64 2, B32 3).
SM90_WGMMA = DescriptorFormat(
    name="sm_90 wgmma",
    source="PTX ISA 9.7.15.5.1.2.2 (Matrix Descriptor Format); CUTLASS GmmaDescriptor",
    validated="H200: 42 descriptors' read maps, 58 launches' wavefronts (wgmma_h200.md)",
    start=(0, 14),
    leading=(16, 14),
    stride=(32, 14),
    base_offset=(49, 3),
    swizzle=(62, 2),
    swizzle_codes=(
        (0, SwizzleMode.NONE),
        (1, SwizzleMode.B128),
        (2, SwizzleMode.B64),
        (3, SwizzleMode.B32),
    ),
)

# sm_100 tcgen05.mma (UMMA): PTX ISA 9.7.16 "TensorCore 5th Generation", its shared
# memory descriptor (docs.nvidia.com/cuda/parallel-thread-execution/
# #tcgen05-shared-memory-desc-layout); CUTLASS cute/arch/mma_sm100_desc.hpp
# UMMA::SmemDescriptor and UMMA::LayoutType. What differs from sm_90: a 3-bit layout
# type at 61-63 (0 none, 1 128B with 32-byte atoms, 2 128B, 4 64B, 6 32B), a fixed
# 0b001 at 46-48 (CUTLASS's version_ = 1), and bit 52, the leading-dimension mode
# (1: LBO is an absolute address, for 48-byte K tiles). Not validated: no sm_100
# machine here; the element addresses of `read_address` are sm_90's canonical
# layouts, which CUTLASS's make_umma_desc builds alike, but nothing was measured.
SM100_TCGEN05 = DescriptorFormat(
    name="sm_100 tcgen05",
    source="PTX ISA tcgen05 shared memory descriptor; CUTLASS UMMA::SmemDescriptor",
    validated="",
    start=(0, 14),
    leading=(16, 14),
    stride=(32, 14),
    base_offset=(49, 3),
    swizzle=(61, 3),
    swizzle_codes=(
        (0, SwizzleMode.NONE),
        (2, SwizzleMode.B128),
        (4, SwizzleMode.B64),
        (6, SwizzleMode.B32),
    ),
    fixed=((46, 3, 0b001),),
    unmodelled=((52, 1, "leading-dimension mode 1 (LBO an absolute address)"),),
)

DESCRIPTOR_FORMATS = {"sm90": SM90_WGMMA, "sm100": SM100_TCGEN05}


@dataclass(frozen=True)
class MatrixDescriptor:
    """The fields of a wgmma matrix descriptor, in bytes (start, LBO, SBO).

    Requires: start, LBO and SBO multiples of 16 below 2^18, base offset in 0..7.
    """

    start_address: int
    leading_byte_offset: int
    stride_byte_offset: int
    swizzle: SwizzleMode
    base_offset: int = 0

    def __post_init__(self):
        for name in ("start_address", "leading_byte_offset", "stride_byte_offset"):
            value = getattr(self, name)
            if value % 16 or not 0 <= value < _FIELD_BYTES:
                raise SpecError(
                    f"wgmma descriptor {name.replace('_', ' ')}: expected a multiple of 16 "
                    f"in [0, {_FIELD_BYTES}), found {value}"
                )
        if not 0 <= self.base_offset < 8:
            raise SpecError(
                f"wgmma descriptor base offset: expected 0..7, found {self.base_offset}"
            )

    @classmethod
    def decode(cls, value: int, fmt: DescriptorFormat = SM90_WGMMA) -> MatrixDescriptor:
        """The fields of a 64-bit descriptor value in `fmt` (bits outside the fields
        ignored; a fixed field that is not its value, or an unmodelled one set, is
        refused)."""
        if not 0 <= value < 1 << 64:
            raise SpecError(f"{fmt.name} descriptor: expected a 64-bit value, found {value:#x}")
        for lo, width, want in fmt.fixed:
            if _field(value, lo, width) != want:
                raise SpecError(
                    f"{fmt.name} descriptor bits {lo}-{lo + width - 1}: expected {want:#b}, "
                    f"found {_field(value, lo, width):#b}"
                )
        for lo, width, meaning in fmt.unmodelled:
            if _field(value, lo, width):
                raise SpecError(f"{fmt.name} descriptor: {meaning} is not modelled")
        return cls(
            start_address=_field(value, *fmt.start) << 4,
            leading_byte_offset=_field(value, *fmt.leading) << 4,
            stride_byte_offset=_field(value, *fmt.stride) << 4,
            base_offset=_field(value, *fmt.base_offset),
            swizzle=fmt.mode(_field(value, *fmt.swizzle)),
        )

    def encode(self, fmt: DescriptorFormat = SM90_WGMMA) -> int:
        """The 64-bit value in `fmt` (`decode`'s inverse on the fields)."""
        value = (
            (self.start_address >> 4) << fmt.start[0]
            | (self.leading_byte_offset >> 4) << fmt.leading[0]
            | (self.stride_byte_offset >> 4) << fmt.stride[0]
            | self.base_offset << fmt.base_offset[0]
            | fmt.code(self.swizzle) << fmt.swizzle[0]
        )
        for lo, _, want in fmt.fixed:
            value |= want << lo
        return value

    def __str__(self) -> str:
        return (
            f"desc(start={self.start_address}, lbo={self.leading_byte_offset}, "
            f"sbo={self.stride_byte_offset}, base_offset={self.base_offset}, "
            f"swizzle={self.swizzle.label})"
        )


# Element types of wgmma's shared-memory operands and their bits (PTX .atype/.btype).
OPERAND_BITS = {"f16": 16, "bf16": 16, "tf32": 32, "e4m3": 8, "e5m2": 8, "s8": 8, "u8": 8}
# Dense K is 32 bytes of every type (k16 for 16-bit types, k8 tf32, k32 8-bit).
_K_BYTES = 32
_SHAPE = re.compile(r"m(?P<m>\d+)n(?P<n>\d+)k(?P<k>\d+)$")


@dataclass(frozen=True)
class Operand:
    """One shared-memory operand as wgmma sees it: `rows` along M (A) or N (B),
    `k` along K, `elem_bits` per element, stored K-major or MN-major."""

    rows: int
    k: int
    elem_bits: int
    major: str

    def __post_init__(self):
        if self.major not in ("K", "MN"):
            raise SpecError(f"wgmma operand major-ness: expected K or MN, found {self.major}")
        if self.rows % 8 or self.k * self.elem_bits != 8 * _K_BYTES:
            raise SpecError(
                f"wgmma operand {self.rows}x{self.k} of {self.elem_bits}-bit elements: expected "
                f"rows a multiple of 8 and k spanning {_K_BYTES} bytes"
            )
        if self.major == "MN" and self.elem_bits != 16:
            raise SpecError(
                "wgmma transposes (MN-major) only .f16/.bf16 operands, found "
                f"{self.elem_bits}-bit elements"
            )

    @property
    def elem_bytes(self) -> int:
        return self.elem_bits // 8

    @property
    def per_chunk(self) -> int:
        """T: elements in one 16-byte chunk."""
        return 16 // self.elem_bytes


def parse_shape(text: str) -> tuple[int, int, int]:
    """(m, n, k) of ``m64nNkK``; m is always 64 on sm_90, N a multiple of 8 up to 256."""
    m = _SHAPE.match(text)
    if not m:
        raise SpecError(f"wgmma shape: expected m64nNkK, found {text}")
    shape = int(m["m"]), int(m["n"]), int(m["k"])
    if shape[0] != 64 or shape[1] % 8 or not 8 <= shape[1] <= 256:
        raise SpecError(f"wgmma shape {text}: expected m64 and N a multiple of 8 in 8..256")
    return shape


def operand(shape: str, elem: str, which: str, transpose: int = 0) -> Operand:
    """The operand `which` ('A' or 'B') of ``wgmma.mma_async`` of `shape` (``m64n128k16``)
    on `elem` elements (PTX .atype/.btype), with its transpose immediate (imm-trans-a /
    imm-trans-b: 0 K-major, 1 MN-major)."""
    m, n, k = parse_shape(shape)
    bits = OPERAND_BITS.get(elem)
    if bits is None:
        raise SpecError(
            f"wgmma operand type: expected one of {', '.join(OPERAND_BITS)}, found {elem}"
        )
    if which not in ("A", "B"):
        raise SpecError(f"wgmma operand: expected A or B, found {which}")
    if k * bits != 8 * _K_BYTES:
        raise SpecError(f"wgmma {shape} on .{elem}: expected k{8 * _K_BYTES // bits}")
    if transpose not in (0, 1):
        raise SpecError(f"wgmma transpose immediate: expected 0 or 1, found {transpose}")
    return Operand(m if which == "A" else n, k, bits, "MN" if transpose else "K")


def _chunk(desc: MatrixDescriptor, op: Operand, row: Expr, k: Expr) -> Expr:
    """The element's 16-byte chunk, counted from the start address (CUTLASS's
    canonical layouts, module doc)."""
    w = desc.swizzle.row_chunks
    lbo, sbo = desc.leading_byte_offset // 16, desc.stride_byte_offset // 16
    t = op.per_chunk
    if op.major == "K":
        kc = _div(k, t)
        if desc.swizzle is SwizzleMode.NONE:
            return _sum(_mod(row, 8), mul(_div(row, 8), Const(sbo)), mul(kc, Const(lbo)))
        return _sum(mul(_mod(row, 8), Const(w)), mul(_div(row, 8), Const(sbo)), kc)
    mc = _div(row, t)
    if desc.swizzle is SwizzleMode.NONE:
        return _sum(mul(mc, Const(sbo)), _mod(k, 8), mul(_div(k, 8), Const(lbo)))
    return _sum(
        _mod(mc, w),
        mul(_div(mc, w), Const(lbo)),
        mul(_mod(k, 8), Const(w)),
        mul(_div(k, 8), Const(sbo)),
    )


def _in_chunk(op: Operand, row: Expr, k: Expr) -> Expr:
    """The element's byte inside its chunk: along K (K-major) or along rows (MN-major)."""
    along = k if op.major == "K" else row
    return mul(_mod(along, op.per_chunk), Const(op.elem_bytes))


def swizzled_address(address: Expr, mode: SwizzleMode, base_offset: int | Expr = 0) -> Expr:
    """The mode's XOR on an absolute byte address: bits [4, 4+B) ^= the pattern row,
    ((address >> 7) - base offset) mod 2^B (module doc). Identity when unswizzled."""
    if mode is SwizzleMode.NONE:
        return address
    rows = 1 << mode.bits
    # 8 - base offset, non-negative for a base offset of 3 bits (a constant or an Expr).
    complement = (
        Const(8 - base_offset)
        if isinstance(base_offset, int)
        else BinOp("-", Const(8), base_offset)
    )
    row = BinOp("%", add(BinOp(">>", address, Const(7)), complement), Const(rows))
    return BinOp("^", address, BinOp("<<", row, Const(4)))


def read_address(
    desc: MatrixDescriptor,
    op: Operand,
    row: Expr,
    k: Expr,
    start: Expr | None = None,
    base_offset: Expr | None = None,
) -> Expr:
    """Byte address wgmma reads element (row, k) of `op` from, under `desc`.

    `start` replaces the descriptor's start address (bytes) where a kernel computes
    it (a stage's base plus a k-block's offset), `base_offset` its base offset field
    (in 0..7); the other fields are constants.
    """
    origin = Const(desc.start_address) if start is None else start
    linear = _sum(origin, mul(_chunk(desc, op, row, k), Const(16)), _in_chunk(op, row, k))
    return swizzled_address(
        linear, desc.swizzle, desc.base_offset if base_offset is None else base_offset
    )


@dataclass(frozen=True)
class ReadMap:
    """Every element an instruction reads through one descriptor, on integers."""

    desc: MatrixDescriptor
    op: Operand

    @cached_property
    def _at(self):
        return compiled(read_address(self.desc, self.op, Var("row"), Var("k")))

    def address(self, row: int, k: int) -> int:
        if not (0 <= row < self.op.rows and 0 <= k < self.op.k):
            raise SpecError(f"element ({row}, {k}) outside the {self.op.rows}x{self.op.k} operand")
        return self._at({"row": row, "k": k})

    def table(self) -> list[list[int]]:
        """addresses[row][k]."""
        return [[self.address(r, k) for k in range(self.op.k)] for r in range(self.op.rows)]


def _sum(*terms: Expr) -> Expr:
    total: Expr = Const(0)
    for t in terms:
        total = add(total, t)
    return total


def _div(e: Expr, n: int) -> Expr:
    return e if n == 1 else BinOp("/", e, Const(n))


def _mod(e: Expr, n: int) -> Expr:
    return Const(0) if n == 1 else BinOp("%", e, Const(n))


def core_matrices(op: Operand) -> list[list[tuple[int, int]]]:
    """The (row, k) of the first element of each 16-byte row of every core matrix of
    `op`: 8 rows of 16 bytes, along K (K-major: 8 rows, one chunk of k) or along the
    rows (MN-major: 8 k, one chunk of rows)."""
    t = op.per_chunk
    if op.major == "K":
        return [
            [(8 * g + r, t * c) for r in range(8)]
            for g in range(op.rows // 8)
            for c in range(op.k // t)
        ]
    return [
        [(t * c, 8 * g + r) for r in range(8)]
        for c in range(op.rows // t)
        for g in range(op.k // 8)
    ]


def read_wavefronts(op: Operand) -> int:
    """Shared-memory wavefronts of one instruction's reads of `op`: one per core
    matrix, operand bytes / 128.

    Exact on the H200 for every descriptor measured (benchmarks/results/wgmma_h200.md:
    42 layouts of a 64x16 f16 operand, canonical and not, 16 wavefronts each; A and B
    from shared memory add). Why no layout costs more: the 8 rows of a core matrix lie
    W*16 bytes apart under the mode's XOR, which puts them in 8 distinct 16-byte bank
    groups whatever the start, LBO and SBO (`core_matrix_bank_groups`; tests enumerate
    it). Shapes and types other than f16 N=64 follow the same count, unmeasured.
    """
    return op.rows * op.k * op.elem_bytes // 128


def core_matrix_bank_groups(desc: MatrixDescriptor, op: Operand) -> list[list[int]]:
    """The 16-byte bank group (address / 16 mod 8) of each row of each core matrix."""
    reads = ReadMap(desc, op)
    return [[reads.address(r, k) // 16 % 8 for r, k in rows] for rows in core_matrices(op)]


# -- Writer = reader, as spec text ----------------------------------------------------
#
# The model sits below the spec language and the engines, which import it; the
# functions below are the bridge up, so they import verify.spec and verify's runner
# when called, never at module load.

# Buffer bases are checked at every residue modulo this many bytes, or modulo the
# span of the bits a writer's pointer swizzle reads and writes where that is larger:
# wgmma's XOR and CuTe's, TMA's and the GMMA atoms' pointer swizzles touch address
# bits below 2^10, so bases equal modulo the period give the same addresses up to a
# common shift (a swizzle of element offsets is relative to the base already).
BASE_PERIOD = 4096


@dataclass(frozen=True)
class Mismatch:
    """An element the writer put in one place and wgmma reads from another."""

    row: int
    k: int
    base: int
    written: int
    read: int

    def __str__(self) -> str:
        return (
            f"element (row {self.row}, k {self.k}) with the buffer at byte {self.base}: "
            f"written at byte {self.written}, read from byte {self.read}"
        )


def writer_reader_spec(
    writer: str,
    dtype: str,
    desc: MatrixDescriptor,
    op: Operand,
    *,
    align: int,
    coords: tuple[str, str] = ("row", "k"),
    base_offset_from_base: bool = False,
    at_base: int | None = None,
) -> str:
    """Spec text proving that what `writer` put in shared memory is what wgmma reads.

    `writer` is the layout the producer wrote, in any notation a spec reads (CuTe
    ``Sw<3,4,3> o smem_ptr[16b] o (_64,_64):(_64,_1)``, ``tma(SWIZZLE_128B, f16, (64,
    64))``, a GMMA atom; a Triton encoding is not: it needs a shape). `coords` are its
    coordinates of wgmma's element (row, k), as spec expressions (``("k", "row")`` for
    a TMA box, whose inner extent is K; ``("row", "k + 16")`` for a second k-block).
    `desc.start_address` is read as the offset of the descriptor's start from the
    buffer's base. The buffer's base is every multiple of `align` below BASE_PERIOD
    (the variable `slot`: base = align * slot); the writer's address follows verify's
    LayoutDef (base + element bytes * layout, a pointer swizzle on the whole address).
    With `base_offset_from_base` the descriptor's base offset is PTX's
    ``(pattern start >> 7) & 7`` for the buffer's base as the pattern start, instead
    of `desc.base_offset`. With `at_base` the buffer is at that one base instead (a
    kernel whose descriptor changes with the base is decided base by base).

    One ``check equivalent`` compares, for every (row, k, slot), the byte written
    (left) with the byte read (right); a counterexample names the element and both.
    """
    return _writer_reader(writer, dtype, desc, op, align, coords, base_offset_from_base, at_base)[0]


def check_writer_reader(
    writer: str,
    dtype: str,
    desc: MatrixDescriptor,
    op: Operand,
    *,
    align: int,
    coords: tuple[str, str] = ("row", "k"),
    base_offset_from_base: bool = False,
    at_base: int | None = None,
):
    """Run `writer_reader_spec` with verify's runner (what verify.api.check_text runs,
    less its repair suggestions; called directly so that the API, which may come to
    read kernels that use this module, stays above it in the import graph): the
    Report, and the first element written and read at different bytes (replayed on
    integers from the counterexample), or None unless it is REFUTED (an UNKNOWN is
    never a pass: read the report)."""
    from verify.engines.runner import run_spec  # the bridge up (module comment)
    from verify.report.text import Report
    from verify.spec.parser import parse_text

    text, written, read = _writer_reader(
        writer, dtype, desc, op, align, coords, base_offset_from_base, at_base
    )
    report = Report(run_spec(parse_text(text, "<writer=reader>")))
    cex = next(r for r in report if r.property.startswith("equivalent")).counterexample
    if cex is None:
        return report, None
    env = {name: cex.instance[name] for name in ("row", "k", "slot")}
    base = align * env["slot"] if at_base is None else at_base
    mismatch = Mismatch(env["row"], env["k"], base, evaluate(written, env), evaluate(read, env))
    if mismatch.written == mismatch.read:
        raise InternalError(f"writer = reader counterexample does not replay: {mismatch}")
    return report, mismatch


def _writer_reader(
    writer: str,
    dtype: str,
    desc: MatrixDescriptor,
    op: Operand,
    align: int,
    coords: tuple[str, str],
    base_offset_from_base: bool,
    at_base: int | None = None,
) -> tuple[str, Expr, Expr]:
    """The spec text of `writer_reader_spec` and its two addresses."""
    from verify.spec.layout_text import parse_layout

    if align % 16 or not 0 < align <= BASE_PERIOD or BASE_PERIOD % align:
        raise SpecError(f"buffer alignment: expected a power of two 16..4096, found {align}")
    layout = parse_layout(writer, dtype=dtype)
    swizzle = layout.pointer_swizzle
    span = 1 << (swizzle.source_mask | swizzle.target_mask).bit_length() if swizzle else 1
    slots = max(BASE_PERIOD, span) // align if at_base is None else 1
    domain = f"row in 0..{op.rows}, k in 0..{op.k}, slot in 0..{slots}"
    base = mul(Const(align), Var("slot")) if at_base is None else Const(at_base)
    elem_bytes = DTYPE_BYTES[canonical_dtype(dtype) or dtype]
    written = _written_address(layout, [_coordinate(c, domain) for c in coords], base, elem_bytes)
    pattern_row = BinOp("%", BinOp(">>", base, Const(7)), Const(8))
    read = read_address(
        desc,
        op,
        Var("row"),
        Var("k"),
        start=add(base, Const(desc.start_address)),
        base_offset=pattern_row if base_offset_from_base else None,
    )
    base_offset = "(base >> 7) & 7" if base_offset_from_base else str(desc.base_offset)
    text = "\n".join(
        [
            f"# writer = reader: {writer.strip()} ({dtype}), buffer aligned to {align} bytes",
            f"# read by wgmma through {desc} (start from the buffer base, base offset",
            f"# {base_offset}), a {op.rows}x{op.k} {op.major}-major operand; the writer's",
            f"# coordinates of element (row, k): ({', '.join(coords)}); "
            + (f"base = {align} * slot." if at_base is None else f"base = {at_base}."),
            "# Left: the byte written; right: the byte wgmma reads.",
            f"dtype {dtype}",
            f"layout Written({domain}) = {render(written)}",
            f"layout Read({domain}) = {render(read)}",
            f"check equivalent Written(row, k, slot) == Read(row, k, slot) for {domain}",
            "",
        ]
    )
    return text, written, read


def _coordinate(text: str, domain: str) -> Expr:
    """A coordinate written as a spec expression of row and k, parsed by the spec parser."""
    from verify.spec.layout_text import parse_layout

    function = parse_layout(f"C({domain}) = {text}").function
    assert isinstance(function, Formula), "a formula statement gives a formula layout"
    return function.body


def _written_address(layout, coords: list[Expr], base: Expr, elem_bytes: int) -> Expr:
    """Byte address of `coords` in `layout` (a LayoutDef) for a buffer at `base`."""
    if len(coords) != len(layout.function.mode_sizes):
        raise SpecError(
            f"writer layout takes {len(layout.function.mode_sizes)} coordinates, "
            f"found {len(coords)}"
        )
    absolute = add(base, mul(Const(elem_bytes), layout.function.crd2idx(coords)))
    swizzle = layout.pointer_swizzle
    return absolute if swizzle is None else swizzle.apply_expr(absolute)
