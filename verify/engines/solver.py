"""The solver engine: properties as Z3 queries; the bank and cp.async encodings
here, the address questions (alignment, bounds, layouts, equivalence) in
`verify.engines.solver_addresses`, re-exported so this module is the whole engine
(`verify.engines.decide.Engine`).

Each property searches for a violation over every coordinate, lane, loop value,
stage and aligned base (see `verify.model.program`). UNSAT proves the property. A
model is decoded into plain integers and replayed by `verify.engines.witness` (the
concrete evaluator and bank model); only the replayed figures are ever reported.
`verify.engines.enumeration` answers the same questions by exhaustive evaluation and
`verify.engines.decide` chooses between the two.

Bank encoding (max-ways and wavefronts): lanes are instantiated one by one (a
warp has 32), instance variables stay symbolic. Per phase, item i (a lane's j-th
word) is "new" if no earlier item of the phase has the same word; with a
symbolic bank b_p per phase, cnt_p = #{new items in bank b_p}. Then
  max-ways >= k   <=>  OR_p  cnt_p >= k   is satisfiable
  wavefronts >= n <=>  SUM_p cnt_p >= n   is satisfiable
because choosing b_p as the busiest bank makes cnt_p that phase's cost. The sum
is not built as an adder: with each phase's maximum m_p known, Boolean steps
s_{p,k} -> "at least k of phase p's counted items hold" (k = 1..m_p) and "at
least n steps hold" say the same (at most cnt_p steps of phase p can hold, and
cnt_p of them can). Cardinality constraints over Booleans suit the solver far
better than a sum of bit-vector counts: a 4-phase ldmatrix maximum took 49 s
with the adder and 0.07 s so. (A single phase's maximum is faster with its
bit-vector count cnt_p >= k than with a cardinality constraint, so phases keep
theirs: 1.5 s against 3.1 s on a 32-lane 8-bit store.)

The H200's rules (docs/hardware.md) on top of that. Rule L, 64/128-bit loads: a
Boolean m_j per pair of neighbouring phases says the pair merges (the pair's own
lanes come in equal pairs or alternate two addresses, and no two lanes of the pair
put distinct words in one bank); a merged pair's phases count one each, so wavefronts
are SUM_p cnt_p - SUM_j m_j, which the ladder takes as "at least n + pairs of the
steps and the not-m_j". Rule C, cp.async.ca: per phase, symbolic banks (A_p, B_p)
that must be one of the phase's edges (source bank, destination bank of a copied
word), and cnt_p = #{edges leaving A_p or entering B_p} = out(A_p) + in(B_p) -
both(A_p, B_p), whose maximum is the phase's cost. Bound G, cp.async.cg: one count
over the warp, of lanes whose 16-byte destination no earlier lane has.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import partial

import z3

from verify.engines import cp_async as copies
from verify.engines.cp_async import CopyFigures
from verify.engines.solver_addresses import aligned as aligned
from verify.engines.solver_addresses import base_aligned as base_aligned
from verify.engines.solver_addresses import bijective as bijective
from verify.engines.solver_addresses import decode, in_ranges, query_context
from verify.engines.solver_addresses import equivalent as equivalent
from verify.engines.solver_addresses import footprint as footprint
from verify.engines.solver_addresses import in_bounds as in_bounds
from verify.engines.solver_addresses import overlap_query as overlap_query
from verify.errors import InternalError
from verify.model.bank import (
    CHUNK_BYTES,
    LINE_BYTES,
    WORD_BYTES,
    bank_cost,
    copy_cost,
    hardware_wavefronts,
)
from verify.model.expr import Expr, Range
from verify.model.program import GBASE, LANE, Access, Program
from verify.results import BankFigures
from verify.smt import bv
from verify.smt.solve import (
    SEED,
    Budget,
    Maximum,
    SearchStatus,
    maximize,
    new_solver,
    search,
)

COUNT_BITS = 16
# Rule S's geometry as bit positions: 16-byte chunks, 32-byte sectors, 128-byte lines.
CHUNK_BITS = CHUNK_BYTES.bit_length() - 1
SECTOR_BITS = CHUNK_BITS + 1
LINE_BITS = LINE_BYTES.bit_length() - 1
# A lane's round counts later lanes: at most 31.
ROUND_BITS = 5
# Random instances per global base that rule S's ladders start from (`RuleSQuery.samples`).
SAMPLES = 16


# -- bank conflicts ----------------------------------------------------------


class PhaseQuery:
    """Per-phase counts of one warp instruction, lanes concrete, instance symbolic.

    A subclass gives each phase's counted items (`_phase_items`: Booleans whose
    true count, maximised over the phase's symbolic choices, is the phase's cost)
    and the concrete costs the models are replayed with (`phase_score`, `total`).

    Max-ways is the largest per-phase maximum, each phase solved on its own
    (small queries). Wavefronts need the phases jointly: when every phase's
    maximum is 1 and no phases merge, the answer is the phase count with no query;
    otherwise one joint query asks whether the per-phase maxima are reached
    together, and only if not does a joint ascent run below that sum.
    """

    def __init__(self, access: Access, exprs: list[Expr]):
        self.access = access
        instr = access.instruction
        self.instance = access.instance_vars
        self.ctx = query_context(
            exprs, dict(access.ranges), extra=WORD_BYTES * instr.words_per_address
        )
        # Side conditions the symbolic choices of every query obey.
        self.constraints: list[z3.BoolRef] = []
        # Phase pairs served in one wavefront instead of two (rule L), or none.
        self.merged: list[z3.BoolRef] = []
        self.counted: list[list[z3.BoolRef]] = []
        self.counts: list[z3.BitVecRef] = []
        self._phase_max: list | None = None

    def _count_phases(self):
        """Each phase's items and their count (after the subclass lowered its lanes)."""
        self.counted = [self._phase_items(p, lanes) for p, lanes in enumerate(self.phases)]
        self.counts = [self.ctx.count_true(items, COUNT_BITS) for items in self.counted]

    @property
    def phases(self) -> list[range]:
        return self.access.instruction.phases

    def lane_terms(self, address: Expr) -> list[z3.BitVecRef]:
        """Each address lane's value of `address`, the instance symbolic."""
        lanes = range(self.access.instruction.address_lanes)
        return [self.ctx.lower(address, fixed={LANE: lane}) for lane in lanes]

    def _phase_items(self, phase: int, lanes: range) -> list[z3.BoolRef]:
        raise NotImplementedError

    def phase_ceiling(self, phase: int) -> int:
        """No instance's phase costs more: each counted item adds at most one."""
        return len(self.counted[phase])

    def phase_score(self, phase: int, values: dict[str, int]) -> int:
        raise NotImplementedError

    def total(self, values: dict[str, int]) -> int:
        raise NotImplementedError

    def _solver(self) -> z3.Solver:
        solver = new_solver(self.ctx)
        solver.add(in_ranges(self.ctx, self.instance))
        solver.add(self.constraints)
        return solver

    def _at_least(self, term: z3.BitVecRef, k: int) -> z3.BoolRef:
        return bv.uge(term, self.ctx.bits(k, COUNT_BITS))

    def decode(self, model: z3.ModelRef) -> dict[str, int]:
        return decode(self.ctx, model, self.instance)

    def start(self) -> dict[str, int]:
        return {n: self.access.ranges[n].lo for n in self.instance}

    def _all_phases_conflict_free(self, budget: Budget) -> bool:
        """One query for the common case: no phase of any instance reaches 2
        (UNSAT proves every per-phase maximum is 1 at once)."""
        start = self.start()
        if any(self.phase_score(p, start) > 1 for p in range(len(self.counts))):
            return False
        solver = self._solver()
        solver.add(self.ctx.any([self._at_least(c, 2) for c in self.counts]))
        return search(solver, budget).status == SearchStatus.UNSAT

    def phase_maxima(self, budget: Budget) -> list:
        """Each phase's maximum, searched once (a timed-out search would get no
        more time from the same budget) and shared by max_ways and wavefronts."""
        if self._phase_max is None and self._all_phases_conflict_free(budget):
            self._phase_max = [Maximum(1, self.start(), exact=True) for _ in self.counts]
        if self._phase_max is None:
            self._phase_max = [
                maximize(
                    self._solver,
                    partial(self._at_least, count),
                    self.decode,
                    partial(self.phase_score, p),
                    self.start(),
                    self.phase_ceiling(p),
                    budget,
                )
                for p, count in enumerate(self.counts)
            ]
        return self._phase_max

    def max_ways(self, budget: Budget) -> Maximum:
        maxima = self.phase_maxima(budget)
        best = max(maxima, key=lambda m: m.value)
        return Maximum(
            best.value,
            best.witness,
            all(m.exact for m in maxima),
            next((m.reason for m in maxima if m.reason), ""),
        )

    def wavefronts(self, budget: Budget) -> Maximum:
        maxima = self.phase_maxima(budget)
        ceiling = sum(m.value for m in maxima)
        start = max((m.witness for m in maxima), key=self.total)
        if not all(m.exact for m in maxima):
            return Maximum(
                self.total(start), start, False, next(m.reason for m in maxima if m.reason)
            )
        if all(m.value == 1 for m in maxima) and not self.merged:
            return Maximum(len(maxima), start, True)
        query, at_least = self.wavefront_encoding([m.value for m in maxima])
        return maximize(query, at_least, self.decode, self.total, start, ceiling, budget)

    def wavefront_encoding(self, caps: list[int]):
        """Fresh solvers for the wavefront ladder and "wavefronts >= n", given that
        phase p never counts more than caps[p]: steps s_{p,k} -> at least k of the
        phase's counted items, at least n steps (module doc). A merged pair costs
        one less than its two phases (one each), so "steps - merged >= n" is "at
        least n + pairs of the steps and the pairs that do not merge"."""
        steps, links = [], []
        for p, (items, cap) in enumerate(zip(self.counted, caps)):
            for k in range(1, cap + 1):
                step = self.ctx.fresh_bool(f"phase_{p}_reaches_{k}")
                links.append(bv.implies(step, self.ctx.at_least(items, k)))
                steps.append(step)
        unmerged = [bv.not_(m) for m in self.merged]

        def query() -> z3.Solver:
            solver = self._solver()
            solver.add(links)
            return solver

        return query, lambda n: self.ctx.at_least(steps + unmerged, n + len(unmerged))


class BankQuery(PhaseQuery):
    """Bank figures of a load or store: per phase, the distinct words in one bank
    (module doc), and rule L's merged phase pairs for 64/128-bit loads."""

    def __init__(self, access: Access):
        instr = access.instruction
        # Lanes' aligned groups of max(word, access) bytes: identical or disjoint.
        self.unit_bits = max(WORD_BYTES, instr.bytes_per_address).bit_length() - 1
        super().__init__(access, [access.address])
        self.addresses = self.lane_terms(access.address)
        self._count_phases()
        if instr.merges_phases:
            self.merged = self._merged_pairs()

    def _phase_items(self, phase: int, lanes: range) -> list[z3.BoolRef]:
        """One Boolean per item (a lane's word): it is the first of its word in
        the phase and lies in the phase's symbolic bank. cnt_p counts the true ones.

        Requires: naturally aligned addresses (bank checks run only after that
        is proved). Then two lanes' word groups are identical or disjoint, so a
        word is new exactly when its lane's group is: firstness is decided per
        lane, on the group index addr / max(word, bytes), with lanes^2/2 terms
        instead of (lanes*words)^2/2.
        """
        ctx, instr = self.ctx, self.access.instruction
        bank = ctx.fresh(f"bank_of_phase_{phase}", bv.BANK_BITS)
        groups: list[z3.BitVecRef] = []
        counted: list[z3.BoolRef] = []
        for lane in lanes:
            addr = self.addresses[lane]
            group = bv.shifted_down(addr, self.unit_bits)
            first = ctx.all([bv.ne(group, earlier) for earlier in groups])
            groups.append(group)
            counted += [
                ctx.all([first, bv.eq(bv.bank_of_word(addr, j, ctx), bank)])
                for j in range(instr.words_per_address)
            ]
        return counted

    def _merged_pairs(self) -> list[z3.BoolRef]:
        """Rule L (`verify.model.bank.hardware_wavefronts`), one Boolean per pair of
        neighbouring phases: the pair's own lanes come in equal pairs (2k, 2k+1) or
        alternate two addresses, and the pair's union is conflict-free."""
        pairs = zip(self.phases[::2], self.phases[1::2])
        return [self._merges(range(p.start, q.stop)) for p, q in pairs]

    def _merges(self, lanes: range) -> z3.BoolRef:
        ctx, addrs = self.ctx, self.addresses[lanes.start : lanes.stop]
        in_pairs = ctx.all([bv.eq(addrs[k], addrs[k + 1]) for k in range(0, len(addrs) - 1, 2)])
        alternating = ctx.all([bv.eq(a, addrs[i % 2]) for i, a in enumerate(addrs)])
        return ctx.all([ctx.any([in_pairs, alternating]), self._conflict_free(lanes)])

    def _conflict_free(self, lanes: range) -> z3.BoolRef:
        """At most one distinct word in every bank over `lanes`. Aligned groups of w
        words start at banks that are multiples of w, so two lanes put distinct
        words in one bank exactly when their groups differ and start at one bank:
        the per-bank count is at most one iff no pair of lanes does that."""
        ctx = self.ctx
        groups = [bv.shifted_down(self.addresses[lane], self.unit_bits) for lane in lanes]
        banks = [bv.bank_of_word(self.addresses[lane], 0, ctx) for lane in lanes]
        clashes = [
            ctx.all([bv.ne(groups[i], groups[j]), bv.eq(banks[i], banks[j])])
            for i in range(len(groups))
            for j in range(i)
        ]
        return bv.not_(ctx.any(clashes))

    def phase_ceiling(self, phase: int) -> int:
        """A lane's words lie in distinct banks: at most one per lane in any bank."""
        return self.access.instruction.phase_lanes

    def cost(self, values: dict[str, int]):
        return bank_cost(self.access.instruction, self.access.lane_addresses(values))

    def phase_score(self, phase: int, values: dict[str, int]) -> int:
        return self.cost(values).phases[phase].ways

    def total(self, values: dict[str, int]) -> int:
        return hardware_wavefronts(self.access.instruction, self.access.lane_addresses(values))


def bank_figures(access: Access, budget: Budget) -> BankFigures:
    """Max-ways and wavefronts of an access, searched under one shared budget."""
    query = BankQuery(access)
    return BankFigures(query.max_ways(budget), query.wavefronts(budget))


class CopyQuery(PhaseQuery):
    """A cp.async's shared-side cost (`verify.model.bank.copy_cost`), its global source
    `access.source` symbolic alongside the destination.

    Rule C (.ca): a phase costs max over its edges (a, b) of out(a) + in(b) -
    both(a, b), which is the number of the phase's edges that leave bank a or
    enter bank b. With symbolic banks (A_p, B_p) constrained to be an edge of the
    phase, cnt_p = #{edges with source bank A_p or destination bank B_p}: linear in
    the edges, and its maximum over (A_p, B_p) is the phase's cost.
    Bound G (.cg): one count over the warp, the lanes whose 16-byte destination no
    earlier lane has."""

    def __init__(self, access: Access):
        assert access.source is not None, f"{access.name}: a copy without its global source"
        self.source = access.source
        self.bound_g = access.instruction.cache == "cg"
        super().__init__(access, [access.address, access.source.address])
        self.destinations = self.lane_terms(access.address)
        self.sources = self.lane_terms(access.source.address)
        self._count_phases()

    @property
    def phases(self) -> list[range]:
        instr = self.access.instruction
        return [range(instr.address_lanes)] if self.bound_g else instr.phases

    def _phase_items(self, phase: int, lanes: range) -> list[z3.BoolRef]:
        return self._new_chunks(lanes) if self.bound_g else self._edges_at(phase, lanes)

    def _new_chunks(self, lanes: range) -> list[z3.BoolRef]:
        """Per lane: no earlier lane writes its (aligned) destination chunk."""
        chunk_bits = self.access.instruction.bytes_per_address.bit_length() - 1
        chunks = [bv.shifted_down(self.destinations[lane], chunk_bits) for lane in lanes]
        ctx = self.ctx
        return [ctx.all([bv.ne(c, seen) for seen in chunks[:i]]) for i, c in enumerate(chunks)]

    def _edges_at(self, phase: int, lanes: range) -> list[z3.BoolRef]:
        """Per edge (a lane's k-th word): it leaves bank A_p or enters bank B_p,
        where (A_p, B_p) is one of the phase's edges."""
        ctx = self.ctx
        a = ctx.fresh(f"source_bank_of_phase_{phase}", bv.BANK_BITS)
        b = ctx.fresh(f"destination_bank_of_phase_{phase}", bv.BANK_BITS)
        words = range(self.access.instruction.words_per_address)
        edges = [
            (
                bv.bank_of_word(self.sources[lane], k, ctx),
                bv.bank_of_word(self.destinations[lane], k, ctx),
            )
            for lane in lanes
            for k in words
        ]
        self.constraints.append(
            ctx.any([ctx.all([bv.eq(ea, a), bv.eq(eb, b)]) for ea, eb in edges])
        )
        return [ctx.any([bv.eq(ea, a), bv.eq(eb, b)]) for ea, eb in edges]

    def cost(self, values: dict[str, int]):
        return copy_cost(
            self.access.instruction,
            self.access.lane_addresses(values),
            self.source.lane_addresses(values),
        )

    def phase_score(self, phase: int, values: dict[str, int]) -> int:
        cost = self.cost(values)
        return cost.wavefronts if self.bound_g else cost.phases[phase].cost

    def total(self, values: dict[str, int]) -> int:
        return self.cost(values).wavefronts


@dataclass(frozen=True)
class _LaneCopy:
    """One lane's copy as rule S reads it (`RuleSQuery`): source chunk p = 2t + h of
    global line `source_line`, destination chunk q = 2u + h' of shared line
    `shared_line` (p, q: 3 bits; t, u: 2; h, h': 1)."""

    source_line: z3.BitVecRef
    shared_line: z3.BitVecRef
    p: z3.BitVecRef
    q: z3.BitVecRef

    @property
    def half(self) -> z3.BitVecRef:
        return bv.field(self.p, 0, 1)

    @property
    def swap(self) -> z3.BitVecRef:
        """h ^ h': whether the copy exchanges the sector's halves."""
        return bv.xor(self.half, bv.field(self.q, 0, 1))

    @property
    def rotation(self) -> z3.BitVecRef:
        """u - t mod 4: the rotation of the sector cycle that carries the copy."""
        return bv.cyclic_sub(bv.field(self.q, 1, 2), bv.field(self.p, 1, 2))

    @property
    def reflection(self) -> z3.BitVecRef:
        """u + t mod 4: the reflection that carries it."""
        return bv.cyclic_add(bv.field(self.q, 1, 2), bv.field(self.p, 1, 2))


class RuleSQuery:
    """Rule S (`verify.model.bank.cg_cost`) for a .cg copy, its instance and global base
    residue (`Program.global_bases`, the variable GBASE) symbolic, lanes concrete.

    Per lane: counted (no earlier lane writes its 16-byte destination), and its round
    (how many later counted lanes copy its source chunk into the same half of a sector
    of its shared line, `bank.copy_rounds`). A counted lane whose source sector's
    other half a counted lane of its round copies into the other half of its
    destination sector moves the sector whole (its first half stands for the unit,
    the second is no unit); any other counted lane moves a half of class h. A unit
    is carried by exactly one rotation (u - t mod 4) and one reflection (u + t) with
    its swap, so per set (global line, shared line, round, class, swap) the fewest
    symmetries are a minimum vertex cover of the bipartite graph whose edges are the
    set's units, which by Konig's theorem is its maximum matching. u - t and u + t
    have one parity, so the graph falls into two components, each within K(2,2),
    whose maximum matching is 1 with a unit and 2 with two disjoint units (neither
    rotation nor reflection shared). Rule S is thus a count of per-lane Booleans
    (`_rule_s_items`), and "rule S >= n" a cardinality constraint on them."""

    def __init__(self, program: Program, access: Access):
        assert access.source is not None, f"{access.name}: a copy without its global source"
        self.program, self.access = program, access
        step = program.global_bases(access).step
        ranges = {**access.ranges, GBASE: Range(0, LINE_BYTES)}
        self.ctx = query_context([access.address, access.source.address], ranges, extra=LINE_BYTES)
        self.instance = [*access.instance_vars, GBASE]
        gbase = self.ctx.var(GBASE)
        self.constraints = [bv.low_bits_zero(gbase, step.bit_length() - 1)]
        self.lanes = range(access.instruction.address_lanes)
        self.copies = []
        for lane in self.lanes:
            dst = self.ctx.lower(access.address, fixed={LANE: lane})
            src = bv.add(self.ctx.lower(access.source.address, fixed={LANE: lane}), gbase)
            self.copies.append(_lane_copy(src, dst))
        self.counted = self._counted()
        self.rounds = self._rounds()
        self.line_pair = {(i, j): self._same_set(i, j) for i, j in self._pairs()}
        self.items = self._rule_s_items()

    def _pairs(self) -> list[tuple[int, int]]:
        """Lane pairs (i, j), j < i."""
        return [(i, j) for i in self.lanes for j in range(i)]

    def _counted(self) -> list[z3.BoolRef]:
        """No earlier lane writes the lane's 16-byte destination."""
        ctx, c = self.ctx, self.copies
        return [
            ctx.all([bv.not_(self._same_destination(c[i], c[j])) for j in range(i)])
            for i in self.lanes
        ]

    def _same_destination(self, a: _LaneCopy, b: _LaneCopy) -> z3.BoolRef:
        return self.ctx.all([bv.eq(a.shared_line, b.shared_line), bv.eq(a.q, b.q)])

    def _rounds(self) -> list[z3.BitVecRef]:
        """Each lane's round: the later counted lanes copying its source chunk into
        the same destination half of its shared line."""
        ctx, c = self.ctx, self.copies

        def repeats(i: int, j: int) -> z3.BoolRef:
            return ctx.all(
                [
                    self.counted[j],
                    bv.eq(c[i].source_line, c[j].source_line),
                    bv.eq(c[i].p, c[j].p),
                    bv.eq(c[i].shared_line, c[j].shared_line),
                    bv.eq(bv.field(c[i].q, 0, 1), bv.field(c[j].q, 0, 1)),
                ]
            )

        later = [[repeats(i, j) for j in self.lanes if j > i] for i in self.lanes]
        return [ctx.count_true(items, ROUND_BITS) for items in later]

    def _same_set(self, i: int, j: int) -> z3.BoolRef:
        """Lanes i and j copy between one global line and one shared line, in one round."""
        a, b = self.copies[i], self.copies[j]
        return self.ctx.all(
            [
                bv.eq(a.source_line, b.source_line),
                bv.eq(a.shared_line, b.shared_line),
                bv.eq(self.rounds[i], self.rounds[j]),
            ]
        )

    def _together(self, i: int, j: int) -> z3.BoolRef:
        return self.line_pair[(max(i, j), min(i, j))]

    def _whole(self, i: int) -> z3.BoolRef:
        """A counted lane of lane i's round copies the other half of its source sector
        into the other half of its destination sector."""
        ctx, c = self.ctx, self.copies
        partner = bv.xor(c[i].p, ctx.bits(1, 3))
        other_half = bv.xor(c[i].q, ctx.bits(1, 3))
        return ctx.any(
            [
                ctx.all(
                    [
                        self.counted[j],
                        self._together(i, j),
                        bv.eq(c[j].p, partner),
                        bv.eq(c[j].q, other_half),
                    ]
                )
                for j in self.lanes
                if j != i
            ]
        )

    def _rule_s_items(self) -> list[z3.BoolRef]:
        """Booleans whose true count is rule S: a unit counts once if no earlier unit
        shares its component, and once more if the component uses both of its
        rotations and both of its reflections: edges touching all four vertices of
        K(2,2) always hold a perfect matching, while edges that miss a vertex all
        share the other vertex on its side, which covers them."""
        ctx, c = self.ctx, self.copies
        whole = [self._whole(i) for i in self.lanes]
        unit = [
            ctx.all(
                [self.counted[i], bv.not_(ctx.all([whole[i], bv.eq(c[i].half, ctx.bits(1, 1))]))]
            )
            for i in self.lanes
        ]
        component = {
            (i, j): ctx.all(
                [
                    unit[i],
                    unit[j],
                    self._together(i, j),
                    bv.eq(whole[i], whole[j]),
                    bv.eq(c[i].half, c[j].half),
                    bv.eq(c[i].swap, c[j].swap),
                    bv.eq(bv.field(c[i].rotation, 0, 1), bv.field(c[j].rotation, 0, 1)),
                ]
            )
            for i, j in self._pairs()
        }

        def joint(i: int, j: int) -> z3.BoolRef:
            return component[(max(i, j), min(i, j))]

        def differ(i: int, j: int, side: str) -> z3.BoolRef:
            return bv.ne(getattr(c[i], side), getattr(c[j], side))

        def both_used(i: int, side: str) -> z3.BoolRef:
            """Lane i's component uses both of its two rotations (or reflections)."""
            later = range(i + 1, len(self.lanes))
            return ctx.any([ctx.all([joint(i, j), differ(i, j, side)]) for j in later])

        first = [ctx.all([unit[i], *[bv.not_(joint(i, j)) for j in range(i)]]) for i in self.lanes]
        second = [
            ctx.all([first[i], both_used(i, "rotation"), both_used(i, "reflection")])
            for i in self.lanes
        ]
        return first + second

    def solver(self) -> z3.Solver:
        """A fresh solver holding the domain: instance, global base residue."""
        solver = new_solver(self.ctx)
        solver.add(in_ranges(self.ctx, self.instance))
        solver.add(self.constraints)
        return solver

    def at_least(self, n: int) -> z3.BoolRef:
        """Rule S costs at least n."""
        return self.ctx.at_least(self.items, n)

    def decode(self, model: z3.ModelRef) -> dict[str, int]:
        return decode(self.ctx, model, self.instance)

    def score(self, values: dict[str, int]) -> int:
        """The replayed cost (`bank.hardware_copy_cost`), which must be rule S's."""
        cost = copies.replayed_cost(self.program, self.access, values)
        if not cost.exact:
            raise InternalError(f"rule S replays as bound G {cost.wavefronts}: {values}")
        return cost.wavefronts

    def samples(self) -> list[dict[str, int]]:
        """Instances to start the ladder from, replayed concretely: both corners and
        SAMPLES seeded random ones at every global base. The ladder's first probe is
        one above its start, and a start at the maximum makes that probe the only
        hard (UNSAT) one."""
        ranges = {n: self.access.ranges[n] for n in self.access.instance_vars}
        rng = random.Random(SEED)
        picks = [{n: r.lo for n, r in ranges.items()}, {n: r.hi - 1 for n, r in ranges.items()}]
        picks += [{n: rng.randrange(r.lo, r.hi) for n, r in ranges.items()} for _ in range(SAMPLES)]
        bases = self.program.global_bases(self.access)
        return [{**values, GBASE: base} for base in bases for values in picks]

    def maximum(self, budget: Budget) -> Maximum:
        """The largest rule S figure over every instance and global base."""
        return maximize(
            self.solver,
            self.at_least,
            self.decode,
            self.score,
            max(self.samples(), key=self.score),
            self.access.instruction.address_lanes,
            budget,
        )


def _lane_copy(src: z3.BitVecRef, dst: z3.BitVecRef) -> _LaneCopy:
    return _LaneCopy(
        bv.shifted_down(src, LINE_BITS),
        bv.shifted_down(dst, LINE_BITS),
        bv.field(src, CHUNK_BITS, LINE_BITS - CHUNK_BITS),
        bv.field(dst, CHUNK_BITS, LINE_BITS - CHUNK_BITS),
    )


def copy_wavefronts(program: Program, access: Access, budget: Budget) -> CopyFigures:
    """A cp.async's largest cost over every instance (and global base), with an
    instance attaining it: rule C for .ca and rule S for .cg (`RuleSQuery`), both
    exact; bound G, an upper bound, for a .cg copy whose sources are known modulo 128
    bytes only (`Program.copy_rule_s`; bound G does not read the sources, so global
    base 0 stands for every one). Requires: destinations and sources naturally
    aligned (checked before)."""
    if program.copy_rule_s(access):
        return CopyFigures(RuleSQuery(program, access).maximum(budget), None)
    best = CopyQuery(access).wavefronts(budget)
    if access.instruction.cache == "cg":
        return CopyFigures(None, best)
    return CopyFigures(best, None)
