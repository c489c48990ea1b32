"""Accesses whose lanes come from a library's thread map instead of a formula.

Overview
--------
``access NAME = INSTR LAYOUT by THREAD_MAP`` names who touches which element in
the library's own notation:

* ``#ttg.<distributed encoding><{...}> shape (D0, D1)`` -- Triton
  (`verify.notation.triton_threads`): (register, lane, warp) -> coordinate;
* ``TV_LAYOUT [tile (M, N)]`` -- a CuTe TiledCopy's thread-value layout with the
  copy atom as the instruction (`verify.notation.cute_tv`).

Each becomes an ordinary access once the layout it touches and the dtype are
known (`MappedAccessDef.expand`, called by `verify.model.program.Program`): one
coordinate per dimension, over ``lane``, a register-group loop ``r`` and a
``warp`` loop. Which registers (values) one instruction moves follows the
library's own lowering rule; the rest of verify sees a plain access.

Worked example
--------------
``access st = st.shared.v4.b32 A by #ttg.blocked<{sizePerThread = [1, 8],
threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}> shape (64, 64)``
with ``dtype f16`` and A row-major 64x64: registers 0..7 hold columns 0..7 of one
row, so Triton's ``largestVectorisation`` makes them one 16-byte vector and the
access is ``st.shared.v4.b32 A((lane >> 3 & 3) ^ (r & 3) * 16 ^ (warp & 3) * 4,
(lane & 7) * 8)`` for r in 0..4, warp in 0..4 (bits written as XORs).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field

from verify.errors import Pos, SpecError
from verify.model.expr import Expr, Range, Var, compiled
from verify.model.instructions import Instruction
from verify.model.layout import coordinate_vars
from verify.notation import triton_access, triton_threads
from verify.notation import triton_lowering as lowering
from verify.spec.ast import LayoutDef

MAX_POINTS = 1 << 20


# -- shared helpers -------------------------------------------------------------------


def layout_extents(ldef: LayoutDef) -> tuple[int, ...]:
    """The extent of each top-level coordinate the layout takes."""
    return tuple(r.size for _, r in coordinate_vars(ldef.function))


def element_offsets(ldef: LayoutDef, rank: int, elem_bytes: int):
    """coordinate -> element offset of `ldef` (a byte-address swizzle at base 0,
    where a buffer aligned to its pattern puts it)."""
    names = [f"d{i}" for i in range(rank)]
    value = compiled(ldef.value([Var(n) for n in names]))
    scale = elem_bytes if ldef.pointer_swizzle is not None else 1

    def offset(coord) -> int:
        return value(dict(zip(names, coord))) // scale

    return offset


# -- Triton ---------------------------------------------------------------------------


@dataclass(frozen=True)
class TritonThreads:
    """A Triton distributed encoding on a tensor shape, its bases from Triton."""

    encoding: triton_threads.Encoding = field(compare=False)
    shape: tuple[int, ...]
    bases: dict = field(compare=False)
    pos: Pos
    # The spec parser's expression reader: Triton's lowering rules give each
    # coordinate as spec text (`triton_lowering.access_for`), read as an access's are.
    read_expr: Callable[[str, Pos], Expr] = field(compare=False, repr=False)

    @classmethod
    def read(
        cls, text: str, shape: tuple[int, ...], pos: Pos, read_expr: Callable[[str, Pos], Expr]
    ) -> TritonThreads:
        enc = triton_threads.parse_encoding(text, pos)
        return cls(enc, shape, triton_threads.bases(enc, shape, pos), pos, read_expr)

    def coordinates(self, name: str, instr: Instruction, ldef: LayoutDef, elem_bytes: int):
        """(coordinates, loops) of the access: the registers Triton's lowering puts in
        one instruction (`verify.notation.triton_lowering`) form the lane's vector or ldmatrix
        rows; the other registers are the loop ``r``, the warps ``warp``."""
        if layout_extents(ldef) != self.shape:
            raise SpecError(
                f"the tensor is {'x'.join(map(str, self.shape))} but layout "
                f"'{ldef.name}' takes coordinates of extents "
                f"{layout_extents(ldef)}: expected the same shape",
                self.pos,
            )
        solve = element_offsets(ldef, len(self.shape), elem_bytes)
        check_linear(solve, self.shape, ldef.name, self.pos)
        cvt = lowering.make_cvt(self.bases, lambda coord: solve(tuple(coord)))
        low = self._lowering(cvt, instr, 8 * elem_bytes)
        access = triton_access.access_for(
            name, ("", 0), self.bases, cvt, low, list(self.shape), list(self.shape)
        )
        return (
            [self.read_expr(t, self.pos) for t in access.coords],
            [(v, Range(0, n)) for v, n in access.loops],
        )

    def _lowering(self, cvt, instr: Instruction, bits: int):
        """The `verify.notation.triton_lowering.Lowering` Triton's rule gives for the family
        `instr` names; a located error where its shape is not `instr`'s."""
        if instr.family in ("ld", "st"):
            v, chosen = lowering.largest_vectorisation(cvt, bits)
            if v * bits // 8 != instr.bytes_per_address:
                width = {16: ".v4.b32", 8: ".v2.b32", 4: ".b32", 2: ".b16", 1: ".b8"}
                raise SpecError(
                    f"Triton's largestVectorisation (lib/Tools/LayoutUtils.cpp) "
                    f"gives each lane {v} element(s) of {bits} bits here: "
                    f"expected {instr.family}.shared{width[v * bits // 8]}, "
                    f"found {instr.name}",
                    self.pos,
                )
            return lowering.Lowering(instr.name, v, tuple(chosen))
        elements = 1
        for n in self.shape:
            elements *= n
        # A whole buffer: no subslice offsets (mask span 0), one stage of the tile.
        plan = lowering.matrix_plan(cvt, bits, instr.trans, 0, elements)
        count = instr.address_lanes // 8
        if plan is None:
            raise SpecError(
                f"Triton's lowerLdStMatrix (third_party/nvidia/lib/"
                f"TritonNVIDIAGPUToLLVM/Utility.cpp) cannot lower this op to "
                f"{instr.name}: the registers do not hold whole 16-byte rows "
                f"of {bits}-bit elements{' in transposed order' if instr.trans else ''}"
                f"; Triton uses {'ld' if instr.family == 'ldmatrix' else 'st'}"
                f".shared instead",
                self.pos,
            )
        if plan.count != count:
            raise SpecError(
                f"Triton's lowerLdStMatrix gives {instr.family}.x{plan.count}"
                f"{'.trans' if instr.trans else ''} here: expected it, found "
                f"{instr.name}",
                self.pos,
            )
        return lowering.Lowering(instr.name, matrix=plan)


def check_linear(offset, shape: tuple[int, ...], name: str, pos: Pos):
    """Triton's lowering rules read the shared layout as a linear map over GF(2)
    (each coordinate bit moves the offset by a fixed XOR), as every Triton shared
    encoding is; a layout that is not (padding, a non-power-of-two stride) would
    make the vector and ldmatrix rows it derives wrong, so it is refused."""
    total = 1
    for n in shape:
        total *= n
    if total > MAX_POINTS:
        raise SpecError(f"tensor of {total} elements: expected at most {MAX_POINTS}", pos)
    seen: dict[tuple, int] = {}
    for coord in itertools.product(*(range(n) for n in shape)):
        got = offset(coord)
        bits = [
            (d, 1 << j) for d, c in enumerate(coord) for j in range(c.bit_length()) if c >> j & 1
        ]
        if len(bits) <= 1:  # the origin (offset 0) and the unit vectors
            expected = 0 if not bits else got
        else:
            dim, low = bits[0]
            rest = coord[:dim] + (coord[dim] ^ low,) + coord[dim + 1 :]
            unit = (0,) * dim + (low,) + (0,) * (len(shape) - dim - 1)
            expected = seen[rest] ^ seen[unit]
        if got != expected:
            raise SpecError(
                f"Triton's lowering rules need a shared layout linear over GF(2), "
                f"as Triton's encodings are: layout '{name}' puts {coord} at "
                f"element {got}, not {expected} (the XOR of its bits' offsets)",
                pos,
            )
        seen[coord] = got
