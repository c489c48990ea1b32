"""The bank model on concrete addresses: one warp instruction, each lane's byte address.

32 banks of 4 bytes; bank = (address / 4) mod 32. Within a phase the cost is the
largest number of distinct 4-byte words any one bank must deliver (lanes that
read the same word share it; bytes of one word are not a conflict). Wavefronts
are the sum of the phases' costs.

This is the reference the symbolic encoding (`verify.properties`) is tested
against, the replay of every counterexample, and `verify wavefronts`.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from verify.instructions import Instruction

BANKS = 32
WORD_BYTES = 4
SHARED_WINDOW = 1 << 32           # shared addresses are 32-bit


@dataclass(frozen=True)
class PhaseCost:
    lanes: range
    ways: int                    # distinct words in the busiest bank (>= 1)
    worst_bank: int
    words_by_bank: dict[int, frozenset[int]]


@dataclass(frozen=True)
class BankCost:
    instruction: Instruction
    phases: list[PhaseCost]

    @property
    def wavefronts(self) -> int:
        return sum(p.ways for p in self.phases)

    @property
    def max_ways(self) -> int:
        return max(p.ways for p in self.phases)

    @property
    def ideal(self) -> int:
        return self.instruction.ideal_wavefronts


def lane_words(instr: Instruction, address: int) -> list[int]:
    """Words touched by one lane's (naturally aligned) access."""
    first = address // WORD_BYTES
    return [first + j for j in range(instr.words_per_address)]


def phase_cost(instr: Instruction, lanes: range, addresses: list[int]) -> PhaseCost:
    words_by_bank: dict[int, set[int]] = defaultdict(set)
    for lane in lanes:
        for w in lane_words(instr, addresses[lane]):
            words_by_bank[w % BANKS].add(w)
    worst = max(sorted(words_by_bank), key=lambda b: len(words_by_bank[b]))
    return PhaseCost(lanes, len(words_by_bank[worst]), worst,
                     {b: frozenset(ws) for b, ws in sorted(words_by_bank.items())})


def check_addresses(instr: Instruction, addresses: list[int]) -> list[int]:
    """Validated per-lane addresses: one per address lane, each inside the 32-bit
    shared window and naturally aligned.

    ldmatrix/stmatrix take exactly their address lanes (8, 16 or 32): a list of
    another length names lanes the instruction does not read (or misses some), so
    it is refused rather than cut, as is an address the hardware would wrap.
    """
    need = instr.address_lanes
    if len(addresses) != need:
        raise ValueError(f"{instr.name} takes {need} lane addresses (lanes 0-{need - 1}): "
                         f"expected {need}, found {len(addresses)}")
    for lane, a in enumerate(addresses):
        if a < 0:
            raise ValueError(f"{instr.name}: lane {lane} address {a} is negative")
        if a >= SHARED_WINDOW:
            raise ValueError(f"{instr.name}: lane {lane} address {a} is past the 32-bit shared "
                             "window: expected less than 2^32")
        if a % instr.bytes_per_address:
            raise ValueError(f"{instr.name}: lane {lane} address {a} is not "
                             f"{instr.bytes_per_address}-byte aligned")
    return list(addresses)


def bank_cost(instr: Instruction, addresses: list[int]) -> BankCost:
    """Cost of one warp instruction whose lane i accesses byte `addresses[i]`."""
    addresses = check_addresses(instr, addresses)
    return BankCost(instr, [phase_cost(instr, p, addresses) for p in instr.phases])


# ---- What the H200 does beyond the phase model (benchmarks/results/hw_rules.md) ----

def _union_ways(instr_bytes: int, addresses: list[int]) -> int:
    by_bank: dict[int, set[int]] = defaultdict(set)
    for a in addresses:
        for w in range(a // WORD_BYTES, a // WORD_BYTES + max(1, instr_bytes // WORD_BYTES)):
            by_bank[w % BANKS].add(w)
    return max(len(ws) for ws in by_bank.values())


def _merges(addresses: list[int]) -> bool:
    """Lanes in equal pairs (2k, 2k+1), or two addresses alternating lane by lane."""
    return (all(addresses[2 * k] == addresses[2 * k + 1] for k in range(len(addresses) // 2))
            or all(a == addresses[lane % 2] for lane, a in enumerate(addresses)))


def hardware_wavefronts(instr: Instruction, addresses: list[int]) -> int:
    """Wavefronts the H200 uses: the phase model, except for 64/128-bit loads whose
    lanes come in equal pairs or alternate two addresses; there neighbouring phases
    go two at a time and a pair with a conflict-free union costs one wavefront
    (rule L: exact on all 1080 measured 64/128-bit loads)."""
    cost = bank_cost(instr, addresses)
    if instr.family != "ld" or instr.bytes_per_address <= WORD_BYTES or not _merges(addresses):
        return cost.wavefronts
    total = 0
    for a, b in zip(cost.phases[::2], cost.phases[1::2]):
        union = [addresses[lane] for lane in list(a.lanes) + list(b.lanes)]
        total += 1 if _union_ways(instr.bytes_per_address, union) == 1 else a.ways + b.ways
    return total


CP_ASYNC_PHASE_LANES = {4: 32, 8: 16, 16: 8}


@dataclass(frozen=True)
class CopyCost:
    wavefronts: int
    exact: bool                  # False: an upper bound (cp.async.cg)


def _copy_edges(size: int, dst: int, src: int) -> list[tuple[int, int]]:
    return [((src // WORD_BYTES + k) % BANKS, (dst // WORD_BYTES + k) % BANKS)
            for k in range(size // WORD_BYTES)]


def cp_async_cost(size: int, destinations: list[int], sources: list[int],
                  cache: str = "ca") -> CopyCost:
    """Shared-side wavefronts of one warp's cp.async of `size` bytes per lane, lane i
    copying global byte `sources[i]` to shared byte `destinations[i]`.

    .ca (rule C, exact on all 2258 measurements): per phase (warp, half-warp or
    quarter-warp for 4, 8, 16 bytes), each copied word is an edge from its source
    bank to its destination bank, none shared; a phase costs the largest
    out(a) + in(b) - both(a, b) over its edges (a, b).
    .cg (16 bytes only; bound G, never exceeded in 904 measurements): at most one
    wavefront per distinct destination; the exact cost is not known."""
    if size not in CP_ASYNC_PHASE_LANES or cache not in ("ca", "cg") or \
            (cache == "cg" and size != 16):
        raise ValueError(f"cp.async.{cache} of {size} bytes: expected .ca of 4, 8 or 16 "
                         "bytes, or .cg of 16")
    if len(destinations) != 32 or len(sources) != 32:
        raise ValueError("cp.async takes 32 destination and 32 source addresses")
    for a in list(destinations) + list(sources):
        if a < 0 or a % size:
            raise ValueError(f"cp.async.{cache}: address {a} is not {size}-byte aligned")
    if cache == "cg":
        return CopyCost(len(set(destinations)), exact=False)
    n, total = CP_ASYNC_PHASE_LANES[size], 0
    for p in range(0, 32, n):
        edges = [e for lane in range(p, p + n)
                 for e in _copy_edges(size, destinations[lane], sources[lane])]
        out, into = defaultdict(int), defaultdict(int)
        both: dict[tuple[int, int], int] = defaultdict(int)
        for a, b in edges:
            out[a] += 1
            into[b] += 1
            both[(a, b)] += 1
        total += max(out[a] + into[b] - both[(a, b)] for a, b in edges)
    return CopyCost(total, exact=True)
