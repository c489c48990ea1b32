"""The oracle's own hardware model: element sizes, instructions, phases, bank cost.

Overview
--------
Written from the README's instruction table and bank-model section (which cite
the PTX ISA and the CUDA C++ Best Practices Guide), not from verify's code:

* ``ld.shared`` / ``st.shared``: 32 lanes, each one address of 1..16 bytes
  (``.v2``/``.v4`` times the element type, ``.b32`` when no type is given);
  phases of 32 lanes (<= 32 bits), 16 (64 bits), 8 (128 bits).
* ``ldmatrix`` / ``stmatrix`` ``.x1/.x2/.x4`` (``.trans``): 8 address lanes per
  8x8 matrix, a 16-byte row each, one phase per matrix. The CuTe atoms
  ``SM75_U32x{1,2,4}_LDSM_N``, ``SM75_U16x{2,4,8}_LDSM_T``,
  ``SM90_U32x{1,2,4}_STSM_N``, ``SM90_U16x{2,4,8}_STSM_T`` issue .x1/.x2/.x4.

Worked example
--------------
ldmatrix.x1 on rows 128 bytes apart: lanes 0..7 read words 0-3, 32-35, ...,
224-227, all in banks 0-3: bank 0 delivers 8 distinct words, so 8-way and 8
wavefronts.

The math
--------
bank(word) = word mod 32, word = address / 4; a lane covers words address/4 ..
address/4 + max(1, bytes/4) - 1. A phase costs the largest number of distinct
words one bank delivers (a repeated word is broadcast; bytes of one word are
one word). Wavefronts = the sum over phases; max-ways = the largest phase.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from oracle.errors import OracleRefusal

BANKS = 32
WARP = 32

# dtype statement -> bytes per element (README "dtype").
DTYPE_BYTES = {
    **{t: 1 for t in ("i8", "u8", "s8", "b8", "f8", "e4m3", "e5m2")},
    **{t: 2 for t in ("f16", "bf16", "i16", "u16", "s16", "b16")},
    **{t: 4 for t in ("f32", "tf32", "i32", "u32", "s32", "b32")},
    **{t: 8 for t in ("f64", "i64", "u64", "s64", "b64")},
}

# Element types a GMMA atom or TMA box names (CUTLASS names and the dtypes) -> bits.
TYPE_BITS = {
    **{
        t: 8
        for t in (
            "int8_t",
            "uint8_t",
            "float_e4m3_t",
            "float_e5m2_t",
            "i8",
            "u8",
            "s8",
            "b8",
            "f8",
            "e4m3",
            "e5m2",
        )
    },
    **{t: 16 for t in ("half_t", "bfloat16_t", "f16", "bf16", "i16", "u16", "b16")},
    **{
        t: 32
        for t in ("float", "tfloat32_t", "int32_t", "uint32_t", "f32", "tf32", "i32", "u32", "b32")
    },
    # TMA also moves 64-bit elements (CU_TENSOR_MAP_DATA_TYPE_FLOAT64/INT64/UINT64).
    **{t: 64 for t in ("double", "int64_t", "uint64_t", "f64", "i64", "u64", "s64", "b64")},
}

_PTX_TYPE_BITS = {
    **{f"{p}{n}": n for p in "bsuf" for n in (8, 16, 32, 64)},
    "b128": 128,
    "bf16": 16,
    "f16x2": 32,
    "bf16x2": 32,
}
_NEUTRAL = {
    "sync",
    "aligned",
    "m8n8",
    "shared",
    "shared::cta",
    "volatile",
    "relaxed",
    "weak",
    "cta",
}


@dataclass(frozen=True)
class Instruction:
    """One warp instruction as the bank model sees it."""

    bytes_per_lane: int  # bytes one address covers; also its natural alignment
    address_lanes: int  # lanes 0 .. address_lanes-1 supply addresses
    phase_lanes: int  # lanes served together
    copy: str = ""  # cp.async's cache operator ("ca" or "cg"); "" for any other

    @property
    def words_per_lane(self) -> int:
        return max(1, self.bytes_per_lane // 4)

    @property
    def phases(self) -> int:
        return self.address_lanes // self.phase_lanes


def _copy_atom(name: str) -> Instruction | None:
    """SM75_U32x4_LDSM_N and friends: the .x count is the number of 8x8 matrices."""
    for sm, op in (("SM75", "LDSM"), ("SM90", "STSM")):
        for unit, trans, counts in (("U32", "N", (1, 2, 4)), ("U16", "T", (2, 4, 8))):
            for matrices, count in zip((1, 2, 4), counts):
                if name == f"{sm}_{unit}x{count}_{op}_{trans}":
                    return _matrix(matrices)
    return None


def _matrix(count: int) -> Instruction:
    return Instruction(16, 8 * count, 8)


def instruction(text: str) -> Instruction:
    """The instruction an access names (README spellings); anything else is refused."""
    atom = _copy_atom(text)
    if atom is not None:
        return atom
    head, *quals = text.split(".")
    if head == "cp" and quals[:1] == ["async"]:
        return _copy(quals[1:], text)
    if head in ("ld", "st") and ("shared" in quals or "shared::cta" in quals):
        return _vector(quals, text)
    if head in ("ldmatrix", "stmatrix"):
        counts = [int(q[1:]) for q in quals if q in ("x1", "x2", "x4")]
        other = [q for q in quals if q not in _NEUTRAL | {"x1", "x2", "x4", "trans", "b16"}]
        if len(counts) != 1 or other:
            raise OracleRefusal(
                f"instruction '{text}': expected one of .x1 .x2 .x4, and "
                "only .trans .b16 and neutral qualifiers"
            )
        return _matrix(counts[0])
    raise OracleRefusal(
        f"instruction '{text}': the oracle reads ld.shared*, st.shared*, "
        "ldmatrix*, stmatrix*, cp.async* and the CuTe LDSM/STSM atoms"
    )


def _copy(quals: list[str], text: str) -> Instruction:
    """cp.async.{ca,cg}[.shared][.global][.L2::...].{4,8,16} (README: the copy size,
    a PTX operand, written as a qualifier; .cg copies 16 bytes only)."""
    caches = [q for q in quals if q in ("ca", "cg")]
    sizes = [int(q) for q in quals if q in ("4", "8", "16")]
    other = [
        q
        for q in quals
        if q not in ("ca", "cg", "4", "8", "16", "shared", "shared::cta", "global")
        and not q.startswith("L2::")
    ]
    if len(caches) != 1 or len(sizes) != 1 or other or (caches[0] == "cg" and sizes[0] != 16):
        raise OracleRefusal(
            f"instruction '{text}': expected cp.async.ca.{{4,8,16}} or cp.async.cg.16"
        )
    return Instruction(sizes[0], WARP, {4: 32, 8: 16, 16: 8}[sizes[0]], caches[0])


def _vector(quals: list[str], text: str) -> Instruction:
    vec, bits = 1, 32
    for q in quals:
        if q in ("v2", "v4", "v8"):
            vec = int(q[1:])
        elif q in _PTX_TYPE_BITS:
            bits = _PTX_TYPE_BITS[q]
        elif q not in _NEUTRAL:
            raise OracleRefusal(f"instruction '{text}': unknown qualifier '.{q}'")
    total = vec * bits
    if total not in (8, 16, 32, 64, 128):
        raise OracleRefusal(f"instruction '{text}': {total} bits per lane, expected 8..128")
    return Instruction(total // 8, WARP, {64: 16, 128: 8}.get(total, WARP))


def tma_box(span: int, bits: int, inner: int, outer: int) -> tuple[tuple, tuple]:
    """(shape, stride) in elements of the box a TMA copy with a ``span``-byte swizzle
    leaves: rows of `inner` elements one after another (CUDA's cuTensorMapEncodeTiled:
    the inner box extent is a multiple of 16 bytes and at most the swizzle span)."""
    row = inner * bits // 8
    if row % 16 or row > span or inner * bits % 8:
        raise OracleRefusal(
            f"TMA box inner extent {inner} is {row} bytes: expected a "
            f"multiple of 16 bytes, at most the {span}-byte swizzle span"
        )
    return (inner, outer), (1, inner)


def bank_figures(instr: Instruction, addresses: np.ndarray) -> tuple[int, int]:
    """(max-ways, wavefronts) maximised over instances; `addresses` is
    (instances, address_lanes) of naturally aligned byte addresses."""
    count = addresses.shape[0]
    words = addresses // 4
    if instr.words_per_lane > 1:
        words = (words[:, :, None] + np.arange(instr.words_per_lane)).reshape(count, -1)
    rows = words.reshape(count * instr.phases, -1)
    rows = np.sort(rows, axis=1)
    first = np.ones_like(rows, dtype=bool)
    first[:, 1:] = rows[:, 1:] != rows[:, :-1]
    keys = np.arange(rows.shape[0])[:, None] * BANKS + rows % BANKS
    per_bank = np.bincount(keys[first], minlength=rows.shape[0] * BANKS)
    ways = per_bank.reshape(count, instr.phases, BANKS).max(axis=2)
    return int(ways.max()), int(ways.sum(axis=1).max())


def copy_cost(instr: Instruction, destinations: np.ndarray, sources: np.ndarray) -> np.ndarray:
    """cp.async's cost of every instance: rule C for .ca, bound G for .cg (docs/hardware.md).

    `destinations` and `sources` are (instances, 32) byte addresses, shared and global,
    naturally aligned. Rule C: per phase, every 4-byte word a lane copies is an edge
    from its source bank (global address / 4 mod 32) to its destination bank, nothing
    shared between lanes; a phase costs max over its edges (a, b) of out(a) + in(b) -
    both(a, b); the instance costs the sum over phases. Bound G (.cg, 16 bytes): the
    number of distinct 16-byte destinations of the warp, an upper bound only."""
    count = destinations.shape[0]
    if instr.copy == "cg":
        chunks = np.sort(destinations // 16, axis=1)
        return 1 + np.count_nonzero(chunks[:, 1:] != chunks[:, :-1], axis=1)
    words = np.arange(instr.words_per_lane)
    dst = ((destinations[:, :, None] // 4 + words) % BANKS).reshape(count * instr.phases, -1)
    src = ((sources[:, :, None] // 4 + words) % BANKS).reshape(count * instr.phases, -1)
    costs = np.zeros(count * instr.phases, dtype=np.int64)
    step = 4096
    for lo in range(0, dst.shape[0], step):
        d, s = dst[lo : lo + step], src[lo : lo + step]
        same_src = s[:, :, None] == s[:, None, :]  # [k, j]: edge j leaves edge k's source
        same_dst = d[:, :, None] == d[:, None, :]
        out = same_src.sum(axis=2)
        into = same_dst.sum(axis=2)
        both = (same_src & same_dst).sum(axis=2)
        costs[lo : lo + step] = (out + into - both).max(axis=1)
    return costs.reshape(count, instr.phases).sum(axis=1)


# The sixteen chunk moves one cp.async.cg wavefront can make inside a pair of
# 128-byte lines (docs/hardware.md, rule S): chunk c sits in 32-byte sector c // 2,
# half c % 2; the sectors are turned or mirrored as a square is (c // 2 -> r +- c // 2
# mod 4) and the halves are all kept or all exchanged.
CG_MOVES = tuple(
    tuple(2 * ((r + turn * (c // 2)) % 4) + (c % 2 ^ flip) for c in range(8))
    for r in range(4)
    for turn in (1, -1)
    for flip in (0, 1)
)


def _cg_passes(moves: list[tuple[int, int]]) -> list[list[tuple[int, int]]]:
    """One line pair's moves (source chunk, destination chunk), lowest lane first,
    dealt into passes that never share a wavefront: walking from the highest lane
    down, a move goes to the first pass holding no move of its source chunk into the
    same half (first or second 16 bytes) of a destination sector."""
    passes: list[list[tuple[int, int]]] = []
    for c, to in reversed(moves):
        free = [p for p in passes if all((c, to % 2) != (c2, to2 % 2) for c2, to2 in p)]
        if free:
            free[0].append((c, to))
        else:
            passes.append([(c, to)])
    return passes


def _cg_batches(moves: list[tuple[int, int]]) -> list[list[tuple[int, int]]]:
    """Split one pass's chunk moves into the kinds no wavefront mixes: sectors moved
    in one piece (chunks 2k and 2k + 1 landing in the two halves of one destination
    sector), lone first chunks, lone second chunks."""
    kinds: list[list[tuple[int, int]]] = [[], [], []]
    for c, to in moves:
        in_one_piece = (c ^ 1, to ^ 1) in moves
        if in_one_piece and c % 2 == 0:
            kinds[2].append((c, to))
        elif not in_one_piece:
            kinds[c % 2].append((c, to))
    return [k for k in kinds if k]


def _cg_batch_wavefronts(batch: list[tuple[int, int]]) -> int:
    """Fewest of the sixteen moves that together put every chunk of `batch` in place."""
    fits = [m for m in CG_MOVES if any(m[c] == to for c, to in batch)]
    for n in range(1, len(batch) + 1):
        for chosen in _choose(fits, n):
            if all(any(m[c] == to for m in chosen) for c, to in batch):
                return n
    raise AssertionError("a chunk's own move always puts it in place")


def _choose(items: list, n: int):
    if n == 0:
        yield ()
        return
    for i, first in enumerate(items):
        for rest in _choose(items[i + 1 :], n - 1):
            yield (first, *rest)


def cg_copy_costs(destinations: np.ndarray, sources: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """cp.async.cg's cost of every instance, and whether it is exact (rule S, from
    the H200 measurements in benchmarks/results/hw_cg.md; exact on every one of them).
    `destinations`/`sources`: (instances, 32) shared and full global byte addresses
    (16-byte aligned; the 128-byte lines of both matter, not only the banks). Of
    lanes writing one 16-byte destination only the lowest is done; its move lands in
    the pair (source line, shared line), dealt into passes (`_cg_passes`); each
    pass's kinds cost their fewest moves."""
    costs = np.zeros(destinations.shape[0], dtype=np.int64)
    for i, (dst, src) in enumerate(zip(destinations.tolist(), sources.tolist())):
        done: dict[int, int] = {}
        for d, s in zip(dst, src):
            done.setdefault(d // 16, s // 16)
        pairs: dict[tuple[int, int], list[tuple[int, int]]] = {}
        for d, s in done.items():
            pairs.setdefault((s // 8, d // 8), []).append((s % 8, d % 8))
        costs[i] = sum(
            _cg_batch_wavefronts(b)
            for moves in pairs.values()
            for one_pass in _cg_passes(moves)
            for b in _cg_batches(one_pass)
        )
    return costs, np.ones(destinations.shape[0], dtype=bool)
