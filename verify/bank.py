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
