"""Which shared-memory instruction Triton's NVIDIA lowering emits for an op.

Everything here works on Triton's own linear layouts (lists of basis vectors):
the register tensor's ``register``/``lane``/``warp`` bases (coordinates) and the
shared encoding's ``offset`` bases (offset bit -> coordinate). Both are linear
over GF(2), so the map (register, lane, warp) -> shared offset is too: each input
basis has one offset, and any input's offset is the XOR of its bits' offsets
(Triton calls this map ``cvt = regLayout.invertAndCompose(sharedLayout)``).

The rules, from triton-lang/triton (the 3.9 line of the NVIDIA backend):

1. ``local_load`` (on sm_75+, ``TargetInfo::supportLdMatrix``) and
   ``local_store`` / ``local_alloc`` with a value (on sm_90+, ``supportStMatrix``)
   first try ``ldmatrix`` / ``stmatrix``:
   third_party/nvidia/lib/TritonNVIDIAGPUToLLVM/MemoryOpToLLVM.cpp (its own
   ``lowerLdStMatrix`` wrapper: broadcast registers removed, ``cvt`` without the
   block dimension) calls ``LLVM::NVIDIA::lowerLdStMatrix``
   (third_party/nvidia/lib/TritonNVIDIAGPUToLLVM/Utility.cpp) with ``transpose``
   false, then true, at a higher pattern benefit than the generic path. The
   installed libtriton.so carries that version's assertion texts ("matrix
   instructions use at most two row reg bits", "regsPerCoreTile * bitwidth").
   `matrix_plan` follows it step by step: ``regPermForDivide`` + ``divideLeft``
   by the 16-byte row tile, ``getLdStMatrixRowPermutation`` (transposed only),
   ``vec`` matrices per instruction, and ``addrToOffset`` for the row each lane
   supplies. ``actionAdditiveStrides`` only reorders the registers past one
   instruction's (an add where bits are disjoint equals the XOR modelled here).
2. Otherwise ``ld.shared`` / ``st.shared`` (lib/Conversion/TritonGPUToLLVM/
   Utility.cpp, ``lowerLdSt``), vectorised by ``largestVectorisation``
   (lib/Tools/LayoutUtils.cpp): the largest power of two v <= 128/bitwidth such
   that some v registers hold offsets 0..v-1 (bases 1, 2, ..., v/2, in any
   register order) and every lane and warp basis is a multiple of v. A register
   basis outside the vector need not be: offsets are XORs, so each remaining
   register combination still holds one aligned block of v offsets, in an order
   of its own, and Triton 3.9 emits the vector with its registers permuted to
   match (issue 24: ``st.shared.v4.b32 [%r45+256], {%r11, %r12, %r9, %r10}``,
   tests/data/ttgir_ptx/permuted_store.sm80.ptx:110; a lane basis that is not a
   multiple would need an order per lane, which one instruction cannot name).
   One instruction per warp per remaining register combination; lane l of it
   accesses the v elements of the block holding cvt(that combination, l, warp).
"""

from __future__ import annotations

from dataclasses import dataclass

BITS = {
    **{t: 8 for t in ("i8", "ui8", "f8E4M3FN", "f8E5M2", "f8E4M3FNUZ", "f8E5M2FNUZ", "i1")},
    **{t: 16 for t in ("f16", "bf16", "i16")},
    **{t: 32 for t in ("f32", "i32", "tf32")},
    **{t: 64 for t in ("f64", "i64")},
}
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
    rows = []  # (packed coordinate, offset)
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
    return Cvt(
        tuple(solve(list(b)) for b in regs),
        tuple(solve(b) for b in tensor["lane"]),
        tuple(solve(b) for b in tensor["warp"]),
        tuple(regs),
    )


def _multiples(values, tile: int) -> bool:
    return all(v % tile == 0 for v in values)


def _log2(n: int) -> int:
    return n.bit_length() - 1


def gf2_rank(vectors) -> int:
    """Rank over GF(2) of integers read as bit-vectors."""
    pivots: dict[int, int] = {}
    for v in vectors:
        while v:
            top = v.bit_length() - 1
            if top not in pivots:
                pivots[top] = v
                break
            v ^= pivots[top]
    return len(pivots)


def row_conflicts(phase: list[int], rows: int) -> int:
    """Triton's ``bankConflicts(phase, phase, smem)`` as ``getLdStMatrixRowPermutation``
    calls it (lib/Tools/GenericSwizzling.cpp): with offsets in 16-byte rows, the
    first min(8, rows) rows are the "bank" bases and the rest "segment" bases; the
    cost is 2^dim(span(segment) & span(phase)) - 1. ``intersectionBasis`` counts
    shared powers of two when every vector is one and otherwise intersects the
    spans; both give that dimension."""
    bank_rows = min(8, rows)
    segment = [1 << j for j in range(_log2(bank_rows), _log2(rows))]
    shared = gf2_rank(segment) + gf2_rank(phase) - gf2_rank(segment + phase)
    return (1 << shared) - 1


@dataclass(frozen=True)
class MatrixPlan:
    """One ldmatrix/stmatrix lowering, as ``lowerLdStMatrix`` builds it.

    ``address_bits[k]`` is the input basis -- ``("lane", i)`` or ``("register", i)``,
    indices into the op's `Cvt` -- whose row start lane bit k of the instruction
    selects (Triton's ``addrToOffset``); ``instruction_registers`` index the
    instructions (every register past those one instruction consumes)."""

    transpose: bool
    count: int  # matrices per instruction: .x1/.x2/.x4
    address_bits: tuple[tuple[str, int], ...]
    instruction_registers: tuple[int, ...]


def _divide_registers(registers: tuple[int, ...], tile: list[int]) -> list[int] | None:
    """``regPermForDivide(cvt, tile, left=true)`` (lib/Tools/LayoutUtils.cpp): for
    each tile register basis in order, the first unused register with exactly that
    offset; then the others in their order. None where one is missing."""
    chosen: list[int] = []
    for offset in tile:
        match = next((i for i, r in enumerate(registers) if r == offset and i not in chosen), None)
        if match is None:
            return None
        chosen.append(match)
    return chosen + [i for i in range(len(registers)) if i not in chosen]


def _plain_plan(cvt: Cvt, bits: int, mask_span: int) -> MatrixPlan | None:
    """Not transposed: ``tile`` = 32/bits registers holding consecutive offsets,
    then lanes 0 and 1 (one 16-byte row); ``fullTile`` adds lanes 2, 3, 4 as the
    row (address) bits; no register row bits, so no row permutation."""
    if bits > 32:
        return None
    per_word = 32 // bits
    tile = 4 * per_word
    order = _divide_registers(cvt.register, [1 << j for j in range(_log2(per_word))])
    if order is None or cvt.lane[:2] != (per_word, 2 * per_word) or mask_span & (tile - 1):
        return None
    rows = order[_log2(per_word) :]
    if not _multiples([cvt.register[i] for i in rows] + list(cvt.lane[2:]) + list(cvt.warp), tile):
        return None
    vec_bits = min(2, len(rows))  # vec = min(128/bits, regs) / (32/bits)
    address = [("lane", 2), ("lane", 3), ("lane", 4)] + [("register", i) for i in rows[:vec_bits]]
    return MatrixPlan(False, 1 << vec_bits, tuple(address), tuple(rows[vec_bits:]))


def _transposed_plan(cvt: Cvt, mask_span: int, stage_elements: int) -> MatrixPlan | None:
    """Transposed, 16-bit (``.b8`` needs sm_100): lanes are permuted (2, 3, 4, 0, 1)
    so that lanes 2, 3, 4 hold offsets 1, 2, 4 (the row's 8 elements); the row
    bits are one register (the 32-bit word's two halves sit in two rows) and lanes
    0, 1. ``getLdStMatrixRowPermutation`` (third_party/nvidia/lib/
    TritonNVIDIAGPUToLLVM/Utility.cpp) picks that register: the fewest
    `row_conflicts` over it and lanes 0, 1, then the register that was first (it
    keeps a packed word's halves), then the earliest."""
    tile = 8
    if not cvt.register or cvt.lane[2:5] != (1, 2, 4) or mask_span & (tile - 1):
        return None
    if not _multiples(list(cvt.register) + list(cvt.lane[:2]) + list(cvt.warp), tile):
        return None
    lanes = [cvt.lane[0] // tile, cvt.lane[1] // tile]

    def cost(i: int):
        phase = [cvt.register[i] // tile] + lanes
        return (row_conflicts(phase, max(1, stage_elements // tile)), -(i == 0), -(i == 0))

    best = min(range(len(cvt.register)), key=cost)
    rest = [i for i in range(len(cvt.register)) if i != best]
    vec_bits = min(2, len(rest))  # vec = min(8, regs) / 2
    address = [("register", best), ("lane", 0), ("lane", 1)] + [
        ("register", i) for i in rest[:vec_bits]
    ]
    return MatrixPlan(True, 1 << vec_bits, tuple(address), tuple(rest[vec_bits:]))


def matrix_plan(
    cvt: Cvt, bits: int, transpose: bool, mask_span: int, stage_elements: int
) -> MatrixPlan | None:
    """The ldmatrix/stmatrix lowering ``lowerLdStMatrix`` (third_party/nvidia/lib/
    TritonNVIDIAGPUToLLVM/Utility.cpp) finds for `cvt`, or None where it fails.
    Both variants divide ``cvt`` on the left by a 16-byte row tile (``divideLeft``:
    the tile's bases exactly, every other basis a multiple of the tile) and refuse
    a subslice whose offsets (``getMaskSpanOffsets``) reach into the tile. Each
    instruction takes ``vec`` = min(128/bits, registers) / (registers per 8x8
    matrix) matrices; lane a supplies ``addrToOffset(a)``: the offset of the input
    whose ``fullTileVec`` address is a, with the tile's own bits cleared -- the
    first element of its row."""
    if transpose:
        return _transposed_plan(cvt, mask_span, stage_elements) if bits == 16 else None
    return _plain_plan(cvt, bits, mask_span)


def largest_vectorisation(
    cvt: Cvt, bits: int, limit: int = 1 << 30, permuted_groups: bool = True
) -> tuple[int, list[int]]:
    """(v, indices of the registers forming the vector), rule 2 of the module doc;
    at most `limit` elements (``lowerLdSt``'s ``maxVecElems``). With
    `permuted_groups` (ld/st.shared), a register basis outside the vector may
    move offsets within the vector's block; without it (cp.async, whose
    ``maxVecElems`` forbids permutations) every other basis is a multiple of v."""
    v = max(1, min(128 // bits, limit))
    while v > 1:
        wanted = [1 << j for j in range(v.bit_length() - 1)]
        if set(wanted) <= set(cvt.register):
            chosen = [cvt.register.index(w) for w in wanted]
            rest = [o for i, o in enumerate(cvt.register) if i not in chosen]
            others = list(cvt.lane) + list(cvt.warp) + ([] if permuted_groups else rest)
            if _multiples(others, v):
                return v, chosen
        v //= 2
    return 1, []


@dataclass(frozen=True)
class Lowering:
    instruction: str | None  # verify's spelling, e.g. "st.shared.v4.b32"
    elements: int = 1  # elements per lane per instruction
    vector_registers: tuple[int, ...] = ()
    matrix: MatrixPlan | None = None
    reason: str = ""  # why it is not modelled, when instruction is None


def choose(
    cvt: Cvt,
    bits: int,
    store: bool,
    capability: int,
    mask_span: int = 0,
    stage_elements: int = 1 << 30,
) -> Lowering:
    """The instruction Triton emits for one local_load / local_store / local_alloc:
    ldmatrix (sm_75+, ``supportLdMatrix``) or stmatrix (sm_90+, ``supportStMatrix``),
    not transposed then transposed, where `matrix_plan` succeeds; else ld/st.shared."""
    family = "st.shared" if store else "ld.shared"
    matrix = "stmatrix" if store else "ldmatrix"
    if capability >= (90 if store else 75):
        for transpose in (False, True):
            plan = matrix_plan(cvt, bits, transpose, mask_span, stage_elements)
            if plan is not None:
                name = f"{matrix}.x{plan.count}" + (".trans" if transpose else "")
                return Lowering(name, matrix=plan)
        if bits == 8 and capability >= 100:
            # supportLdStMatrixB8: the transposed .b8 shapes (m16n16, m16n8) are
            # outside verify's instruction table, so no verdict either way.
            return Lowering(
                None,
                reason=(
                    f"on sm_100+ Triton may lower 8-bit data with {matrix}.trans .b8, "
                    "which verify's instruction table does not model"
                ),
            )
    v, chosen = largest_vectorisation(cvt, bits)
    nbytes = v * bits // 8
    suffix = {16: ".v4.b32", 8: ".v2.b32", 4: ".b32", 2: ".b16", 1: ".b8"}[nbytes]
    return Lowering(family + suffix, v, tuple(chosen))


def copy_lowering(cvt: Cvt, bits: int, hint: int, bound: int, cache: str) -> Lowering:
    """The cp.async Triton 3.9 emits for one ``ttg.async_copy_global_to_local``
    (``AsyncCopyGlobalToLocalOpConversion``, third_party/nvidia/lib/
    TritonNVIDIAGPUToLLVM/LoadStoreOpToLLVM.cpp):

    * ``maxVec = max(min(AxisInfo contiguity of the pointers, mask alignment),
      op.getContiguity())``, at most 128 bits; then ``lowerLdSt`` with that
      ``maxVec`` vectorises as for st.shared (`largest_vectorisation`), one
      cp.async per vector, copying ``vec * bits / 8`` bytes from the vector's
      first pointer;
    * fewer than 4 bytes is an error ("cp.async does not support transfers
      smaller than 4 bytes");
    * ``.cg`` for 16 bytes unless the op's cache modifier is ``ca``; ``.ca``
      otherwise (``.cg`` takes only 16 bytes).

    verify does not rerun AxisInfo: `hint` is the op's ``contiguity`` (what
    the pipeliner recorded; 1 when absent), a lower bound of ``maxVec``, and
    `bound` an upper bound of what AxisInfo can prove (`verify.ttgir.pointers`:
    the traced addresses and the mask, for every value the hints admit). Where
    the two give different instructions, the width is not decided: no verdict."""
    top = 128 // bits
    low = largest_vectorisation(cvt, bits, min(hint, top), permuted_groups=False)
    high = largest_vectorisation(
        cvt, bits, max(min(hint, top), min(bound, top)), permuted_groups=False
    )
    if low[0] != high[0]:
        return Lowering(
            None,
            reason=(
                f"Triton copies {low[0]} to {high[0]} elements per cp.async here, as "
                "its AxisInfo proves the pointers contiguous and the mask aligned; "
                "verify does not rerun AxisInfo"
            ),
        )
    v, chosen = low
    nbytes = v * bits // 8
    if nbytes < 4:
        return Lowering(
            None,
            reason=f"Triton refuses a {nbytes}-byte cp.async (4 bytes at least)",
        )
    kind = "cg" if nbytes == 16 and cache != "ca" else "ca"
    return Lowering(f"cp.async.{kind}.{nbytes}", v, tuple(chosen))
