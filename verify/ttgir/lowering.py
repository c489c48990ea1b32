"""Which shared-memory instruction Triton's NVIDIA lowering emits for an op.

Everything here works on Triton's own linear layouts (lists of basis vectors):
the register tensor's ``register``/``lane``/``warp`` bases (coordinates) and the
shared encoding's ``offset`` bases (offset bit -> coordinate). Both are linear
over GF(2), so the map (register, lane, warp) -> shared offset is too: each input
basis has one offset, and any input's offset is the XOR of its bits' offsets
(Triton calls this map ``cvt = regLayout.invertAndCompose(sharedLayout)``).

The rules, from triton-lang/triton (the 3.9 line of the NVIDIA backend):

1. ``local_load`` (on sm_75+) and ``local_store`` / ``local_alloc`` with a value
   (on sm_90+) first try ``ldmatrix`` / ``stmatrix``:
   third_party/nvidia/lib/TritonNVIDIAGPUToLLVM/MemoryOpToLLVM.cpp calls
   ``lowerLdStMatrix`` (third_party/nvidia/lib/TritonNVIDIAGPUToLLVM/Utility.cpp)
   with ``transpose`` false, then true, at a higher pattern benefit than the
   generic path. That function fails unless the 16-byte tile of one matrix row
   divides ``cvt`` on the left: not transposed, ``32/bitwidth`` registers hold
   consecutive offsets (after a register permutation, ``regPermForDivide``) and
   lanes 0 and 1 the next two 4-byte steps; transposed (16-bit, or 8-bit on
   sm_100+), lanes 2, 3, 4 hold offsets 1, 2, 4 and there are at least two
   registers; every other basis a multiple of the tile. `matrix_possible` decides
   that; where it holds, verify does not model the op yet (the register order
   and row addresses come from ``getLdStMatrixRowPermutation``).
2. Otherwise ``ld.shared`` / ``st.shared`` (lib/Conversion/TritonGPUToLLVM/
   Utility.cpp, ``lowerLdSt``), vectorised by ``largestVectorisation``
   (lib/Tools/LayoutUtils.cpp): the largest power of two v <= 128/bitwidth such
   that some v registers hold offsets 0..v-1 (bases 1, 2, ..., v/2, in any
   register order) and every other basis is a multiple of v. One instruction per
   warp per remaining register combination; lane l of it accesses the v
   elements starting at cvt(those registers, l, warp).
"""
from __future__ import annotations

from dataclasses import dataclass

BITS = {**{t: 8 for t in ("i8", "ui8", "f8E4M3FN", "f8E5M2", "f8E4M3FNUZ", "f8E5M2FNUZ",
                          "i1")},
        **{t: 16 for t in ("f16", "bf16", "i16")},
        **{t: 32 for t in ("f32", "i32", "tf32")},
        **{t: 64 for t in ("f64", "i64")}}
VERIFY_DTYPE = {8: "b8", 16: "b16", 32: "b32", 64: "b64"}


def element_bits(element: str) -> int | None:
    """Bits Triton stores per element in shared memory (i1 is stored as a byte)."""
    return BITS.get(element)


# -- linear algebra over GF(2) ----------------------------------------------------

def _pack(coord: list[int], shape: list[int]) -> int:
    """A coordinate as one bit-vector: dim 0 in the low bits (extents are powers of 2)."""
    value, shift = 0, 0
    for c, n in zip(coord, shape):
        value |= c << shift
        shift += n.bit_length() - 1
    return value


def offset_solver(offset_bases: list[list[int]], shape: list[int]):
    """coordinate -> shared offset, inverting Triton's offset -> coordinate bases
    (Gaussian elimination over GF(2); the encodings are bijective on their shape)."""
    rows = []                                   # (packed coordinate, offset)
    for bit, basis in enumerate(offset_bases):
        rows.append((_pack(basis, shape), 1 << bit))
    pivots: list[tuple[int, int]] = []
    for vec, off in rows:
        for pv, po in pivots:
            if vec ^ pv < vec:
                vec, off = vec ^ pv, off ^ po
        if vec:
            pivots.append((vec, off))
            pivots.sort(reverse=True)

    def solve(coord: list[int]) -> int:
        vec, off = _pack(coord, shape), 0
        for pv, po in pivots:
            if vec ^ pv < vec:
                vec, off = vec ^ pv, off ^ po
        if vec:
            raise ValueError(f"coordinate {coord} is outside the shared layout")
        return off
    return solve


@dataclass(frozen=True)
class Cvt:
    """(register, lane, warp) -> shared offset, one offset per basis; registers
    that broadcast (zero coordinate) are dropped, as Triton's
    ``actionRemoveBroadcastedRegs`` does before lowering."""

    register: tuple[int, ...]
    lane: tuple[int, ...]
    warp: tuple[int, ...]
    register_coords: tuple[tuple[int, ...], ...]


def make_cvt(tensor: dict, solve) -> Cvt:
    regs = [tuple(b) for b in tensor["register"] if any(b)]
    return Cvt(tuple(solve(list(b)) for b in regs),
               tuple(solve(b) for b in tensor["lane"]),
               tuple(solve(b) for b in tensor["warp"]), tuple(regs))


def _multiples(values, tile: int) -> bool:
    return all(v % tile == 0 for v in values)


def matrix_possible(cvt: Cvt, bits: int, transpose: bool, capability: int) -> bool:
    """Whether ``lowerLdStMatrix`` could succeed (rule 1 of the module doc)."""
    if not transpose:
        if bits > 32:
            return False
        per_word = 32 // bits
        wanted = [1 << j for j in range(per_word.bit_length() - 1)]
        if not set(wanted) <= set(cvt.register) or len(cvt.lane) < 2:
            return False
        if cvt.lane[:2] != (per_word, 2 * per_word):
            return False
        rest = list(cvt.register)
        for w in wanted:
            rest.remove(w)
        tile = 4 * per_word
        return _multiples(rest + list(cvt.lane[2:]) + list(cvt.warp), tile)
    if not (bits == 16 or (bits == 8 and capability >= 100)) or len(cvt.lane) < 5:
        return False
    if cvt.lane[2:5] != (1, 2, 4) or len(cvt.register) < 1:
        return False
    reg_tile = [8 * (1 << j) for j in range((16 // bits).bit_length() - 1)]
    if not set(reg_tile) <= set(cvt.register):
        return False
    rest = list(cvt.register)
    for w in reg_tile:
        rest.remove(w)
    tile = 8 * (16 // bits)
    return _multiples(rest + list(cvt.lane[:2]) + list(cvt.warp), tile)


def largest_vectorisation(cvt: Cvt, bits: int) -> tuple[int, list[int]]:
    """(v, indices of the registers forming the vector), rule 2 of the module doc."""
    v = max(1, 128 // bits)
    while v > 1:
        wanted = [1 << j for j in range(v.bit_length() - 1)]
        if set(wanted) <= set(cvt.register):
            chosen = [cvt.register.index(w) for w in wanted]
            rest = [o for i, o in enumerate(cvt.register) if i not in chosen]
            if _multiples(rest + list(cvt.lane) + list(cvt.warp), v):
                return v, chosen
        v //= 2
    return 1, []


@dataclass(frozen=True)
class Lowering:
    instruction: str | None        # verify's spelling, e.g. "st.shared.v4.b32"
    elements: int = 1              # elements per lane per instruction
    vector_registers: tuple[int, ...] = ()
    reason: str = ""               # why it is not modelled, when instruction is None


def choose(cvt: Cvt, bits: int, store: bool, capability: int) -> Lowering:
    """The instruction Triton emits for one local_load / local_store / local_alloc."""
    family = "st.shared" if store else "ld.shared"
    matrix = "stmatrix" if store else "ldmatrix"
    if capability >= (90 if store else 75):
        for transpose in (False, True):
            if matrix_possible(cvt, bits, transpose, capability):
                return Lowering(None, reason=(
                    f"Triton lowers this with {matrix}{'.trans' if transpose else ''} "
                    "(lowerLdStMatrix); its register order and row addresses are not "
                    "modelled yet"))
    v, chosen = largest_vectorisation(cvt, bits)
    nbytes = v * bits // 8
    suffix = {16: ".v4.b32", 8: ".v2.b32", 4: ".b32", 2: ".b16", 1: ".b8"}[nbytes]
    return Lowering(family + suffix, v, tuple(chosen))
