"""The bank model on concrete addresses: one warp instruction, each lane's byte address.

32 banks of 4 bytes; bank = (address / 4) mod 32. Within a phase the cost is the
largest number of distinct 4-byte words any one bank must deliver (lanes that
read the same word share it; bytes of one word are not a conflict). Wavefronts
are the sum of the phases' costs.

This is the reference the symbolic encoding (`verify.engines.solver`) is tested
against, the replay of every counterexample, and `verify wavefronts`.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from itertools import combinations

from verify.errors import SpecError
from verify.model.instructions import WARP, Instruction, parse_instruction

BANKS = 32
WORD_BYTES = 4
SHARED_WINDOW = 1 << 32  # shared addresses are 32-bit


@dataclass(frozen=True)
class PhaseCost:
    lanes: range
    ways: int  # distinct words in the busiest bank (>= 1)
    worst_bank: int  # the lowest bank with `ways` words
    words: frozenset[int] = field(repr=False)  # the distinct words the phase touches

    @cached_property
    def words_by_bank(self) -> dict[int, frozenset[int]]:
        """Each bank the phase touches -> its distinct words, banks in order. Built
        when read (only the shown counterexamples and drawings read it): a replay
        needs only the counts."""
        by_bank: dict[int, set[int]] = defaultdict(set)
        for w in self.words:
            by_bank[w % BANKS].add(w)
        return {b: frozenset(ws) for b, ws in sorted(by_bank.items())}


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
    """The phase's distinct words (`lane_words` of each lane), counted per bank."""
    offsets = range(instr.words_per_address)
    words = frozenset(addresses[lane] // WORD_BYTES + j for lane in lanes for j in offsets)
    per_bank = [0] * BANKS
    for w in words:
        per_bank[w % BANKS] += 1
    ways = max(per_bank)
    return PhaseCost(lanes, ways, per_bank.index(ways), words)


def check_addresses(instr: Instruction, addresses: list[int]) -> list[int]:
    """Validated per-lane addresses: one per address lane, each inside the 32-bit
    shared window and naturally aligned.

    ldmatrix/stmatrix take exactly their address lanes (8, 16 or 32): a list of
    another length names lanes the instruction does not read (or misses some), so
    it is refused rather than cut, as is an address the hardware would wrap.
    """
    need = instr.address_lanes
    if len(addresses) != need:
        raise ValueError(
            f"{instr.name} takes {need} lane addresses (lanes 0-{need - 1}): "
            f"expected {need}, found {len(addresses)}"
        )
    for lane, a in enumerate(addresses):
        if a < 0:
            raise ValueError(f"{instr.name}: lane {lane} address {a} is negative")
        if a >= SHARED_WINDOW:
            raise ValueError(
                f"{instr.name}: lane {lane} address {a} is past the 32-bit shared "
                "window: expected less than 2^32"
            )
        if a % instr.bytes_per_address:
            raise ValueError(
                f"{instr.name}: lane {lane} address {a} is not "
                f"{instr.bytes_per_address}-byte aligned"
            )
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
    return all(addresses[2 * k] == addresses[2 * k + 1] for k in range(len(addresses) // 2)) or all(
        a == addresses[lane % 2] for lane, a in enumerate(addresses)
    )


def hardware_wavefronts(instr: Instruction, addresses: list[int]) -> int:
    """Wavefronts the H200 uses: the phase model, except for 64/128-bit loads, whose
    neighbouring phases go two at a time (64-bit: the two half-warps; 128-bit:
    quarters 0+1 and 2+3, each a half-warp). A pair whose own lanes come in equal
    pairs or alternate two addresses, and whose union is conflict-free, costs one
    wavefront (rule L). The condition is judged per pair, not over the warp: one odd
    lane stops only its own half-warp of a 128-bit load from merging (exact on all
    1680 earlier 64/128-bit loads and the 154 broadcast loads of
    benchmarks/results/ptx_h200.md)."""
    return rule_l(bank_cost(instr, addresses), addresses)


def rule_l(cost: BankCost, addresses: list[int]) -> int:
    """`hardware_wavefronts` from the phase model's cost of the same `addresses`
    (`bank_cost(cost.instruction, addresses)`), for a caller that has both."""
    instr = cost.instruction
    if not instr.merges_phases:
        return cost.wavefronts
    total = 0
    for a, b in zip(cost.phases[::2], cost.phases[1::2]):
        union = addresses[a.lanes.start : b.lanes.stop]
        merged = _merges(union) and _union_ways(instr.bytes_per_address, union) == 1
        total += 1 if merged else a.ways + b.ways
    return total


@dataclass(frozen=True)
class CopyPhase:
    lanes: range
    cost: int  # max over the phase's edges of out(a) + in(b) - both(a, b)
    edge: tuple[int, int]  # a (source bank, destination bank) edge attaining it


@dataclass(frozen=True)
class CopyCost:
    instruction: Instruction
    wavefronts: int
    phases: tuple[CopyPhase, ...]  # rule C's; empty for .cg, whose rules are warp-wide
    by_rule_s: bool = False  # a .cg figure from rule S (exact), not bound G

    @property
    def exact(self) -> bool:
        return self.instruction.hardware_exact or self.by_rule_s

    @property
    def ideal(self) -> int:
        return self.instruction.ideal_wavefronts

    @property
    def fidelity(self) -> str:
        """The label of this figure: a .cg copy is exact where rule S applies to its
        pattern, else the instruction's bound G."""
        if self.by_rule_s:
            return "exact (rule S: sector symmetries per line pair, matches H200 measurements)"
        return self.instruction.fidelity


def copy_edges(size: int, destination: int, source: int) -> list[tuple[int, int]]:
    """(source bank, destination bank) of each word one lane copies."""
    return [
        ((source // WORD_BYTES + k) % BANKS, (destination // WORD_BYTES + k) % BANKS)
        for k in range(size // WORD_BYTES)
    ]


def copy_phase(size: int, lanes: range, destinations: list[int], sources: list[int]) -> CopyPhase:
    """Rule C for one phase: every copied word is an edge, none shared between lanes."""
    edges = [e for lane in lanes for e in copy_edges(size, destinations[lane], sources[lane])]
    out: dict[int, int] = defaultdict(int)
    into: dict[int, int] = defaultdict(int)
    both: dict[tuple[int, int], int] = defaultdict(int)
    for a, b in edges:
        out[a] += 1
        into[b] += 1
        both[(a, b)] += 1
    edge = max(sorted(both), key=lambda e: out[e[0]] + into[e[1]] - both[e])
    return CopyPhase(lanes, out[edge[0]] + into[edge[1]] - both[edge], edge)


def copy_cost(instr: Instruction, destinations: list[int], sources: list[int]) -> CopyCost:
    """Shared-side wavefronts of one warp's cp.async, lane i copying global byte
    `sources[i]` to shared byte `destinations[i]`.

    .ca (rule C, exact on all 2258 measurements and 1350 held out): per phase (warp,
    half-warp or quarter-warp for 4, 8, 16 bytes), each copied word is an edge from
    its source bank to its destination bank, none shared; a phase costs the largest
    out(a) + in(b) - both(a, b) over its edges (a, b).
    .cg (16 bytes only): bound G, one wavefront per distinct 16-byte destination,
    never exceeded on any measurement. The engines use this figure; `cp_async_cost`
    gives rule S (`cg_cost`), exact on every measured pattern."""
    destinations = check_addresses(instr, destinations)
    sources = _checked_sources(instr, sources)
    if instr.cache == "cg":
        return CopyCost(instr, len(set(destinations)), ())
    phases = tuple(
        copy_phase(instr.bytes_per_address, p, destinations, sources) for p in instr.phases
    )
    return CopyCost(instr, sum(p.cost for p in phases), phases)


def _checked_sources(instr: Instruction, sources: list[int]) -> list[int]:
    """One global address per lane, non-negative and aligned to the copy size (PTX
    requires it); any 64-bit address is allowed, only its bank matters."""
    if len(sources) != WARP:
        raise ValueError(
            f"{instr.name} takes {WARP} source addresses (lanes 0-31): found {len(sources)}"
        )
    for lane, a in enumerate(sources):
        if a < 0 or a % instr.bytes_per_address:
            raise ValueError(
                f"{instr.name}: lane {lane} source address {a} is not a "
                f"non-negative multiple of {instr.bytes_per_address}"
            )
    return list(sources)


def cp_async_cost(
    size: int, destinations: list[int], sources: list[int], cache: str = "ca"
) -> CopyCost:
    """The H200's cost of ``cp.async.{cache}`` of `size` bytes (the measurements'
    spelling): rule C for .ca (`copy_cost`), rule S for .cg (`cg_cost`)."""
    try:
        instr = parse_instruction(f"cp.async.{cache}.{size}")
    except SpecError as e:
        raise ValueError(e.message) from None
    return hardware_copy_cost(instr, destinations, sources)


def hardware_copy_cost(instr: Instruction, destinations: list[int], sources: list[int]) -> CopyCost:
    """The H200's cost of one warp's cp.async: rule C for .ca, rule S for .cg."""
    if instr.cache == "cg":
        return cg_cost(instr, destinations, sources)
    return copy_cost(instr, destinations, sources)


# ---- cp.async.cg: rule S (benchmarks/results/hw_cg.md) ----

CHUNK_BYTES = 16
LINE_BYTES = 128
# The eight symmetries of a cycle of four 32-byte sectors, as sector -> sector maps:
# the rotations t -> t + r and the reflections t -> r - t.
SECTOR_SYMMETRIES = tuple(
    tuple((sign * t + r) % 4 for t in range(4)) for r in range(4) for sign in (1, -1)
)


def counted_lanes(destinations: list[int]) -> list[int]:
    """The lanes rule S counts: of the lanes writing one 16-byte destination, the lowest."""
    lowest: dict[int, int] = {}
    for lane, address in enumerate(destinations):
        lowest.setdefault(address // CHUNK_BYTES, lane)
    return sorted(lowest.values())


def copy_rounds(copies: list[tuple[int, int]]) -> list[list[tuple[int, int]]]:
    """One line pair's copies (source chunk p -> destination chunk q, 0-7, in lane
    order) split into rounds, which never share a wavefront: copies of one source
    chunk into one destination half (q % 2) go in separate rounds, the highest lane's
    in the first. Where no chunk is copied twice into one line there is one round."""
    seen: dict[tuple[int, int], int] = defaultdict(int)
    rounds: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for p, q in reversed(copies):
        rounds[seen[(p, q % 2)]].append((p, q))
        seen[(p, q % 2)] += 1
    return [sorted(rounds[k]) for k in sorted(rounds)]


def round_units(copies: list[tuple[int, int]]) -> list[list[tuple[int, int, int]]]:
    """One round's copies as units (source sector, destination sector, half swap) in
    the three classes a wavefront cannot mix: whole sectors (chunks 2t and 2t + 1
    into the two halves of one destination sector), then single halves read from the
    sector's first and second 16 bytes. A round copies a chunk into each destination
    half at most once, so a half's partner, if any, is unique."""
    into = {(p, q % 2): q for p, q in copies}
    whole: list[tuple[int, int, int]] = []
    halves: tuple[list[tuple[int, int, int]], ...] = ([], [])
    for p, q in copies:
        if into.get((p ^ 1, 1 - q % 2)) != q ^ 1:
            halves[p % 2].append((p // 2, q // 2, q % 2 ^ p % 2))
        elif p % 2 == 0:
            whole.append((p // 2, q // 2, q % 2))
    return [whole, *halves]


def sector_units(copies: list[tuple[int, int]]) -> list[list[tuple[int, int, int]]]:
    """One line pair's copies (in lane order) as unit classes, three per round
    (`copy_rounds`, `round_units`); each class costs `fewest_symmetries` on its own."""
    return [units for one in copy_rounds(copies) for units in round_units(one)]


def fewest_symmetries(units: list[tuple[int, int, int]]) -> int:
    """Wavefronts for one class of units: the fewest (sector symmetry, half swap)
    pairs that between them map every unit's source sector to its destination."""
    return _fewest_symmetries(tuple(units))


# A pure function of its units, searched over subsets: kept, since a copy's replays
# (every instance of a refuted cp.async, its counterexample's group) repeat a few.
@lru_cache(maxsize=4096)
def _fewest_symmetries(units: tuple[tuple[int, int, int], ...]) -> int:
    carried = {
        frozenset(i for i, (t, u, swap) in enumerate(units) if sym[t] == u and swap == s)
        for sym in SECTOR_SYMMETRIES
        for s in (0, 1)
    }
    carried.discard(frozenset())
    everything = frozenset(range(len(units)))
    for count in range(len(units) + 1):
        if any(frozenset().union(*pick) == everything for pick in combinations(carried, count)):
            return count
    raise AssertionError("every unit is carried by the symmetry that maps it")


def cg_cost(instr: Instruction, destinations: list[int], sources: list[int]) -> CopyCost:
    """Rule S, the H200's cost of one warp's cp.async.cg (exact on every .cg
    measurement, benchmarks/results/hw_cg.md). Copies are grouped by (global 128-byte
    line, shared 128-byte line), groups never sharing a wavefront; each group's
    rounds and unit classes (`sector_units`) cost `fewest_symmetries` each."""
    destinations = check_addresses(instr, destinations)
    sources = _checked_sources(instr, sources)
    groups: dict[tuple[int, int], list[tuple[int, int]]] = defaultdict(list)
    for lane in counted_lanes(destinations):
        src, dst = sources[lane], destinations[lane]
        chunk = (src % LINE_BYTES // CHUNK_BYTES, dst % LINE_BYTES // CHUNK_BYTES)
        groups[(src // LINE_BYTES, dst // LINE_BYTES)].append(chunk)
    wavefronts = sum(
        fewest_symmetries(units) for copies in groups.values() for units in sector_units(copies)
    )
    return CopyCost(instr, wavefronts, (), by_rule_s=True)
