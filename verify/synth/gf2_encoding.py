"""The general family: invertible XOR maps on the element offset's bits, by the solver.

Overview
--------
On a 2^a x 2^b tile the row-major offset o = C*r + c has n = a + b bits. A layout
of this family is ``L(o) = M o`` over GF(2), M an invertible n x n bit matrix:
every CuTe swizzle of a power-of-two tile, every Triton swizzled_shared and
nvmma_shared encoding, every bit permutation (row- and column-major) is one.
The n^2 entries of M are the unknowns; this module states the hard constraints
and the bank figures as Boolean and cardinality constraints over them, and
`minimise` walks the objective down with UNSAT proofs at each step.

This is the second module (after `verify.smt.bv`) that builds Z3 terms. It builds no
bit-vectors at all: every term is a Boolean (an entry of M, a parity of
entries) or a cardinality / pseudo-Boolean constraint over Booleans, so there is
no width to overflow and no adder to wrap.

Worked example
--------------
ldmatrix.x1 on an 8x64 fp16 tile: a lane's 16-byte row is a unit, units are
offset bits 3..8 (o >> 3), its bank group ("slot") bits 3..5. Lanes r = 0..7 at
column 0 have o = 64 r. Max-ways 1 means: two lanes in one slot hold one unit;
for lanes r, r' with d = 64 (r ^ r'), slot bits of M d all zero implies unit
bits of M d all zero. Sw<3,3,3> (M = I plus ones at (3,6), (4,7), (5,8)) puts
M d's slot bits at r ^ r' != 0: conflict-free.

The math
--------
* Invertible: there is a W with M W = I (n^3 products of two entries, XORed).
* A lane's unit is bits [k0, n) of L(o), k0 = log2(max(4, width) / eb); its slot
  (4-byte bank, or 8/16-byte bank group) is bits [k0, k0 + log2(128/max(4, width))).
  The bank figures depend only on differences d = o ^ o' (L is linear), so each
  phase is translated to start at 0 and phases equal after that share variables.
* Distinct units per slot: lane l is first of its unit if no earlier lane has
  the same unit; the phase costs w_p >= 1 + #steps_p with, per slot s,
  ``AtMost(first_l and slot_l = s ..., not steps_p ..., K_p)``.
* Wavefronts: per access, ladder t_a with sum of steps over an instance's phases
  <= #t_a (one AtMost per instance); the weighted sum of #t_a is the objective.
* Aligned: low log2(width/eb) bits of L(o) are 0 for every accessed o (a basis
  of their span suffices: L is linear); vectors whole: M e_j = e_j for the low
  log2(vector) columns j, so L(o + j) = L(o) ^ j = L(o) + j.
* XOR terms: entries where M differs from the identity.
* Lower bounds for every member: a pigeonhole count (`phase_lower_bound`) gives
  a candidate bound on a phase's cost; z3 proves it on a smaller encoding (that
  phase alone, L one-to-one on its span, the alignment that forces low bits to
  0: `prove_phase_bound`) before the search uses it. Every step of a
  certificate is a z3 answer (or, for a padded family's other pitches, an
  exhaustive enumeration of slot counts); no step rests on an argument written
  in code.
* Views: M may act on another offset than the row-major one. A padded family
  (`verify.synth.params.PaddedSw`) has a `View` per row pitch (o = P r + c),
  chosen by the pitch's flag: its alignment, its instances and its phases'
  bounds hold under that flag only (equal phases share their ladders).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import reduce

import numpy as np
import z3

from verify.errors import InternalError, SpecError
from verify.smt.solve import SEED, Budget, search
from verify.synth.cost import Objective, hard_name, score
from verify.synth.problem import Problem, SynthAccess


def _log2(value: int) -> int:
    return value.bit_length() - 1


@dataclass(frozen=True)
class Phase:
    """A phase's lanes as offsets translated to start at 0 (distinct, sorted)."""

    offsets: tuple[int, ...]
    unit_shift: int  # k0: the unit is bits [k0, n)
    slot_bits: int


@dataclass
class Step:
    """One step of the certificate: a z3 query and its answer.

    A lemma (`phase_lower_bound`'s bound on one phase, for every member) is a step
    like any other: `prove_phase_bound` asks z3 whether the phase can cost less on a
    smaller encoding, and only an UNSAT answer makes the bound usable."""

    query: str
    answer: str  # "sat", "unsat" or "unknown" from z3
    seconds: float


@dataclass
class Lemma:
    """A phase's candidate lower bound (`phase_lower_bound`), to be proved by a query:
    `forced` low bits of L vanish on the phase's span, by the alignment `cause`."""

    phase: Phase
    bound: int
    forced: int
    cause: str
    access: str
    slots: int  # the slot values the phase's lanes can take


@dataclass(frozen=True)
class View:
    """The offsets M acts on: o = pitch * r + c (the row-major offset when the pitch
    is the tile's width), in force when `guard` holds (None: always). A padded
    family (`verify.synth.params.PaddedSw`) has one view per row pitch, its guard
    the pitch's flag; every other family has the one row-major view."""

    guard: z3.BoolRef | None
    pitch: int

    def offsets(self, access: SynthAccess) -> np.ndarray:
        return access.coords[..., 0] * self.pitch + access.coords[..., 1]

    def when(self, constraint: z3.BoolRef) -> z3.BoolRef:
        return constraint if self.guard is None else z3.Implies(self.guard, constraint)


@dataclass
class Encoding:
    """Constraints over M's entries, built once; each query adds a few to a fresh solver."""

    problem: Problem
    n: int
    ctx: z3.Context
    m: list
    views: list
    hard: list = field(default_factory=list)
    tracked: dict = field(default_factory=dict)  # name -> constraint (unsat cores)
    phase_steps: dict = field(default_factory=dict)  # phase id -> ladder Booleans
    access_extra: dict = field(default_factory=dict)  # access -> wavefront ladder
    # (access, view index) -> phase ids per instance
    access_instances: dict = field(default_factory=dict)
    pairs: dict = field(default_factory=dict)  # phase id -> (slot-eq, unit-eq) pairs
    # (phase id, view index) -> proved lower bound (1: none) and candidate Lemma
    phase_low: dict = field(default_factory=dict)
    lemmas: dict = field(default_factory=dict)
    # (view index, basis, low bits forced zero on its span, the alignment's name)
    aligned_spans: list = field(default_factory=list)
    _parity: dict = field(default_factory=dict)

    # -- terms ----------------------------------------------------------------

    def parity(self, bit: int, o: int) -> z3.BoolRef:
        """Bit `bit` of L(o): the XOR of M[bit][j] over the set bits j of o."""
        key = (bit, o)
        if key not in self._parity:
            terms = [self.m[bit][j] for j in range(self.n) if o >> j & 1]
            self._parity[key] = (
                reduce(lambda a, b: z3.Xor(a, b, self.ctx), terms)
                if terms
                else z3.BoolVal(False, self.ctx)
            )
        return self._parity[key]

    def low_zero(self, basis: list[int], low: int) -> z3.BoolRef:
        """The low `low` bits of L vanish on the span of `basis`."""
        terms = [z3.Not(self.parity(i, o)) for o in basis for i in range(low)]
        return z3.And(terms + [z3.BoolVal(True, self.ctx)])

    def zero(self, bits: range, d: int) -> z3.BoolRef:
        """Bits `bits` of L(d) are all 0 (two offsets d apart agree there)."""
        return z3.And([z3.Not(self.parity(i, d)) for i in bits] or [z3.BoolVal(True, self.ctx)])

    def bits(self, model: z3.ModelRef) -> np.ndarray:
        """M of a model as a 0/1 array."""
        return np.array(
            [
                [z3.is_true(model.eval(self.m[i][j], model_completion=True)) for j in range(self.n)]
                for i in range(self.n)
            ],
            dtype=np.int64,
        )

    def phases_of(self, accesses) -> set[tuple[int, int]]:
        """(phase id, view index) of every phase of the accesses, in every view."""
        return {
            (p, v)
            for a in accesses
            for v in range(len(self.views))
            for inst in self.access_instances[a, v]
            for p in inst
        }

    # -- queries --------------------------------------------------------------

    def solver(self, extra: list) -> z3.Solver:
        solver = z3.SolverFor("QF_FD", ctx=self.ctx)
        solver.set("random_seed", SEED)
        solver.add(self.hard)
        solver.add(list(self.tracked.values()))
        solver.add(extra)
        return solver

    def ways_at_most(self, k: int, accesses=None) -> list:
        """Every phase of the accesses (default: all) costs at most k, in the view in
        force (a phase of another pitch's view is not bound)."""
        names = accesses or [a.name for a in self.problem.accesses]
        phases = self.phases_of(names)
        out = [
            self.views[v].when(z3.Not(self.phase_steps[p][k - 1]))
            for p, v in phases
            if k - 1 < len(self.phase_steps[p])
        ]
        if k == 1:  # the pairwise form: same slot implies same unit
            out += [
                self.views[v].when(z3.Implies(slot, unit))
                for p, v in phases
                for slot, unit in self.pairs[p]
            ]
        return out

    def extra_at_most(self, total: int) -> list:
        """Weighted extra wavefronts (beyond one per phase) at most `total`."""
        weighted = [(t, a.weight) for a in self.problem.accesses for t in self.access_extra[a.name]]
        return [z3.PbLe(weighted, total)] if weighted else []

    def access_waves_at_most(self, access: SynthAccess, bound: int) -> z3.BoolRef:
        phases = access.instruction.ideal_wavefronts
        ladder = self.access_extra[access.name]
        if bound < phases:
            return z3.BoolVal(False, self.ctx)
        return z3.AtMost(*ladder, bound - phases) if ladder else z3.BoolVal(True, self.ctx)


class AnyLinear:
    """The xor family itself: every invertible M; an XOR term is an entry of M
    that differs from the identity. A parametric family (`verify.synth.params`)
    offers the same four methods over its own unknowns."""

    name = "xor"
    invertible = True

    def constrain(self, enc: Encoding) -> list:
        return []

    def terms(self, enc: Encoding) -> list:
        return [
            enc.m[i][j] if i != j else z3.Not(enc.m[i][i])
            for i in range(enc.n)
            for j in range(enc.n)
        ]

    def decode(self, enc: Encoding, model: z3.ModelRef, bits: np.ndarray) -> tuple[None, int]:
        """(notation, XOR terms) of a model: the formula is written by the caller."""
        return None, differing(bits)

    def views(self, problem: Problem, ctx: z3.Context) -> list[View]:
        return [View(None, problem.shape[1])]

    def table(self, enc: Encoding, model: z3.ModelRef, bits: np.ndarray) -> np.ndarray:
        return table_of(bits, enc.problem.shape)


def differing(bits: np.ndarray) -> int:
    return int((bits != np.eye(bits.shape[0], dtype=np.int64)).sum())


def table_of(bits: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """T[r, c] = M (C r + c) over GF(2)."""
    rows, cols = shape
    return applied(bits, np.arange(rows * cols, dtype=np.int64)).reshape(rows, cols)


def applied(bits: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """M o over GF(2) for every offset o of an integer array."""
    columns = (bits << np.arange(bits.shape[0], dtype=np.int64)[:, None]).sum(axis=0)
    out = np.zeros_like(offsets)
    for j, column in enumerate(columns):
        out ^= ((offsets >> j) & 1) * int(column)
    return out


def bits_of(table: np.ndarray) -> np.ndarray | None:
    """M of a layout table if the layout is linear over GF(2) (every Sw of a
    power-of-two tile is), else None: column j is L(2^j)."""
    flat = table.ravel()
    n = _log2(flat.size)
    if flat.size != 1 << n:
        return None
    bits = np.array(
        [[(int(flat[1 << j]) >> i) & 1 for j in range(n)] for i in range(n)], dtype=np.int64
    )
    return bits if np.array_equal(table_of(bits, table.shape), table) else None


def encode(
    problem: Problem, invertible: bool = True, views: list | None = None, ctx=None
) -> Encoding:
    """The bank and hard constraints over M; `invertible` adds M W = I (a family whose
    members are invertible by construction, `verify.synth.params`, leaves it out).
    `views`: the offsets M acts on (default: the row-major offset alone); M has as
    many bits as the widest view's largest offset; `ctx` is the z3 context their
    guards live in."""
    rows, cols = problem.shape
    if rows & (rows - 1) or cols & (cols - 1):
        raise SpecError(
            f"the xor family needs power-of-two extents: found ?({rows}, {cols})",
            problem.unknown.pos,
            problem.spec.file,
        )
    views = views or [View(None, cols)]
    n = max((v.pitch * (rows - 1) + cols - 1).bit_length() for v in views)
    ctx = ctx or z3.Context()
    m = [[z3.Bool(f"M_{i}_{j}", ctx) for j in range(n)] for i in range(n)]
    enc = Encoding(problem, n, ctx, m, views)
    if invertible:
        _invertible(enc)
    phase_ids: dict = {}
    for access in problem.accesses:
        _access_hard(enc, access)
    for access in problem.accesses:
        _access_banks(enc, access, phase_ids)
    return enc


def hard_only(problem: Problem, views: list, ctx: z3.Context, n: int) -> Encoding:
    """An encoding with the per-access hard constraints (aligned, vectors whole)
    and no phase: whether any member meets them at all is a small query."""
    m = [[z3.Bool(f"M_{i}_{j}", ctx) for j in range(n)] for i in range(n)]
    enc = Encoding(problem, n, ctx, m, views)
    for access in problem.accesses:
        _access_hard(enc, access)
    return enc


def _invertible(enc: Encoding):
    """M W = I for some W: M is invertible."""
    n, ctx = enc.n, enc.ctx
    w = [[z3.Bool(f"W_{i}_{j}", ctx) for j in range(n)] for i in range(n)]
    for i in range(n):
        for k in range(n):
            products = [z3.And(enc.m[i][j], w[j][k]) for j in range(n)]
            enc.hard.append(
                reduce(lambda a, b: z3.Xor(a, b, ctx), products) == z3.BoolVal(i == k, ctx)
            )


def _basis(values) -> list[int]:
    """A GF(2) basis of the span of `values` (Gaussian elimination on integers)."""
    basis: list[int] = []
    for v in values:
        for b in basis:
            v = min(v, v ^ b)
        if v:
            basis.append(v)
    return basis


def _access_hard(enc: Encoding, access: SynthAccess):
    eb = enc.problem.elem_bytes
    width = access.instruction.bytes_per_address
    low = min(_log2(width // eb) if width > eb else 0, enc.n)
    name = hard_name("aligned", access, eb)
    aligned = []
    for index, view in enumerate(enc.views):
        basis = _basis(sorted(set(int(o) for o in view.offsets(access).ravel())))
        enc.aligned_spans.append((index, basis, low, name))
        aligned.append(view.when(enc.low_zero(basis, low)))
    enc.tracked[name] = z3.And(aligned)
    vector = _log2(access.vector(eb))
    if vector:
        fixed = [
            enc.m[i][j] == z3.BoolVal(i == j, enc.ctx)
            for j in range(min(vector, enc.n))
            for i in range(enc.n)
        ]
        enc.tracked[hard_name("vectors", access, eb)] = z3.And(fixed)


def _unit(enc: Encoding, access: SynthAccess) -> tuple[int, int]:
    eb, unit_bytes = enc.problem.elem_bytes, max(4, access.instruction.bytes_per_address)
    if unit_bytes < eb:
        raise SpecError(
            f"access '{access.name}' reads less than one element: the xor family "
            "needs accesses at least an element wide",
            access.access.definition.pos,
        )
    return _log2(unit_bytes // eb), _log2(128 // unit_bytes)


def _access_banks(enc: Encoding, access: SynthAccess, phase_ids: dict):
    """Phase ladders (shared between equal phases, of any view) and the access's
    wavefront ladder, bound by the instances of the view in force."""
    shift, slot_bits = _unit(enc, access)
    for index, view in enumerate(enc.views):
        instances = set()
        for row in view.offsets(access):
            ids = []
            for lanes in access.instruction.phases:
                first = int(row[lanes.start])
                phase = Phase(
                    tuple(sorted({int(o) ^ first for o in row[lanes.start : lanes.stop]})),
                    shift,
                    slot_bits,
                )
                ids.append(_phase_id(enc, phase, phase_ids))
                _note_lemma(enc, phase, ids[-1], index, access.name)
            instances.add(tuple(sorted(ids)))
        enc.access_instances[access.name, index] = sorted(instances)
    length = max(
        sum(len(enc.phase_steps[p]) for p in inst)
        for index in range(len(enc.views))
        for inst in enc.access_instances[access.name, index]
    )
    ladder = [z3.Bool(f"{access.name}_extra_{j}", enc.ctx) for j in range(1, length + 1)]
    enc.hard += [z3.Implies(b, a) for a, b in zip(ladder, ladder[1:])]
    for index, view in enumerate(enc.views):
        for inst in enc.access_instances[access.name, index]:
            steps = [s for p in inst for s in enc.phase_steps[p]]
            if steps:
                enc.hard.append(view.when(z3.AtMost(*steps, *[z3.Not(t) for t in ladder], length)))
    enc.access_extra[access.name] = ladder


def _phase_id(enc: Encoding, phase: Phase, phase_ids: dict) -> int:
    key = (phase.unit_shift, phase.slot_bits, phase.offsets)
    if key not in phase_ids:
        phase_ids[key] = len(phase_ids)
        _phase(enc, phase_ids[key], phase)
    return phase_ids[key]


def _note_lemma(enc: Encoding, phase: Phase, pid: int, view: int, access: str):
    """The phase's lower bound in this view: 1 until a lemma is proved."""
    if (pid, view) in enc.phase_low:
        return
    enc.phase_low[pid, view] = 1
    lemma = phase_lower_bound(enc, phase, access, view)
    if lemma is not None:
        enc.lemmas[pid, view] = lemma


def _in_span(value: int, basis: list[int]) -> bool:
    for b in basis:
        value = min(value, value ^ b)
    return value == 0


def phase_lower_bound(enc: Encoding, phase: Phase, access: str, view: int = 0) -> Lemma | None:
    """A candidate bound on the phase's cost for every member (a pigeonhole count),
    or None when the count gives nothing above 1. A candidate is not a proof:
    `prove_phase_bound` asks z3 for it, and the search uses only proved ones.

    Let V be the span of the phase's offsets (translated to contain 0) and z the
    most low bits that alignment forces to 0 on a span containing V (some
    access's aligned offsets span it). If z >= k0, two distinct lanes o, o' have
    distinct units: L(o ^ o') != 0 as M is invertible, and its bits below k0 are
    0. Their slots are the slot bits at or above z of L(V): at most
    2^min(free slot bits, dim V) values. So some slot holds ceil(K / that) units.
    """
    basis = _basis(phase.offsets)
    forced, cause = max(
        [
            (low, name)
            for index, span, low, name in enc.aligned_spans
            if index == view and all(_in_span(b, span) for b in basis)
        ],
        default=(0, None),
    )
    if forced < phase.unit_shift or cause is None or len(basis) > MAX_LEMMA_DIM:
        return None
    top = min(enc.n, phase.unit_shift + phase.slot_bits)
    free = max(0, top - max(forced, phase.unit_shift))
    slots = 1 << min(free, len(basis))
    bound = -(-len(phase.offsets) // slots)
    return Lemma(phase, bound, forced, cause, access, slots) if bound > 1 else None


# A lemma's query states "L is one-to-one on the phase's span" as one constraint per
# nonzero vector of the span: 2^dim - 1 of them (a phase of 32 lanes spans at most
# 5 dimensions in every catalog problem; larger spans are left without a lemma).
MAX_LEMMA_DIM = 10


def prove_phase_bound(problem: Problem, n: int, lemma: Lemma, bound: int, budget: Budget) -> Step:
    """Ask z3 whether the phase can cost at most bound - 1; UNSAT proves that it
    costs at least `bound` in every layout of every family.

    The encoding is smaller than the search's: only this phase's lanes (the same
    `_phase` constraints the search uses), L one-to-one on the span V of their
    offsets (every invertible M is, so every member of every family is), and the
    low `forced` bits of L zero on V (what the alignment `cause` imposes on V).
    Each of these is implied by the search's constraints, so UNSAT here is UNSAT
    there. z3 answers it in about a second where the whole encoding timed out at
    120 s."""
    ctx = z3.Context()
    m = [[z3.Bool(f"M_{i}_{j}", ctx) for j in range(n)] for i in range(n)]
    small = Encoding(problem, n, ctx, m, [])
    basis = _basis(lemma.phase.offsets)
    for pick in range(1, 1 << len(basis)):
        v = reduce(lambda a, b: a ^ b, (x for i, x in enumerate(basis) if pick >> i & 1))
        small.hard.append(z3.Not(small.zero(range(n), v)))
    small.hard += [z3.Not(small.parity(i, o)) for o in basis for i in range(lemma.forced)]
    _phase(small, 0, lemma.phase)
    label = (
        f"lemma: a phase of {lemma.access} ({len(lemma.phase.offsets)} lanes) costs <= "
        f"{bound - 1} given {lemma.cause}, L one-to-one on its span"
    )
    started = time.monotonic()
    result = search(small.solver([z3.Not(small.phase_steps[0][bound - 2])]), budget)
    return Step(label, result.status, time.monotonic() - started)


def prove_by_slot_counts(lemma: Lemma, bound: int) -> Step:
    """The lemma's counting step, by exhaustive enumeration: every way of putting
    at most bound - 1 of the K lanes in each slot, slot by slot, collapsed to the
    totals reachable so far; K is not reachable ("unsat": no such placement)
    proves some slot holds `bound` lanes. This is the slot-count abstraction of a
    phase: it holds for every layout in which the lanes have distinct units and
    take only `lemma.slots` slot values (`phase_lower_bound` says when: an
    invertible L with the alignment's low bits zero on the phase's span), and it
    depends on no offset, so one enumeration serves every pitch of a padded
    family. (z3 given the same pigeonhole as one-hot lanes took over 40 s.)"""
    lanes, started = len(lemma.phase.offsets), time.monotonic()
    reachable = {0}
    for _ in range(lemma.slots):
        reachable = {t + c for t in reachable for c in range(bound) if t + c <= lanes}
    label = (
        f"lemma (slot counts, enumerated): {lanes} lanes of {lemma.access} with distinct "
        f"units in at most {lemma.slots} slots (given {lemma.cause}), at most {bound - 1} a slot"
    )
    answer = "sat" if lanes in reachable else "unsat"
    return Step(label, answer, time.monotonic() - started)


def view_lower_bounds(
    problem: Problem, view: View, n: int, budget: Budget, steps: list[Step], proved: dict
) -> tuple[int, int]:
    """Max-ways and weighted wavefronts that no layout acting on this view's offsets
    goes below: 1-way and a wavefront a phase, raised where a phase's lemma is
    proved by its slot counts (`prove_by_slot_counts`; `proved` keeps the answers,
    so one query serves every view). Built without the search's encoding: a padded
    family's pitches other than the tile's width are bounded this way before any
    of their phases is encoded."""
    shell = Encoding(problem, n, z3.Context(), [], [view])
    for access in problem.accesses:
        eb, width = problem.elem_bytes, access.instruction.bytes_per_address
        offsets = sorted(set(int(o) for o in view.offsets(access).ravel()))
        low = min(_log2(width // eb) if width > eb else 0, n)
        shell.aligned_spans.append((0, _basis(offsets), low, hard_name("aligned", access, eb)))
    ways, waves = 1, 0
    for access in problem.accesses:
        shift, slot_bits = _unit(shell, access)
        worst = 0
        for row in view.offsets(access):
            total = 0
            for lanes in access.instruction.phases:
                first = int(row[lanes.start])
                lanes_at = tuple(sorted({int(o) ^ first for o in row[lanes.start : lanes.stop]}))
                lemma = phase_lower_bound(shell, Phase(lanes_at, shift, slot_bits), access.name)
                cost = _slot_bound(lemma, budget, steps, proved) if lemma else 1
                ways, total = max(ways, cost), total + cost
            worst = max(worst, total)
        waves += access.weight * worst
    return ways, waves


def _slot_bound(lemma: Lemma, budget: Budget, steps: list[Step], proved: dict) -> int:
    key = (len(lemma.phase.offsets), lemma.slots, lemma.bound)
    if key not in proved:
        step = prove_by_slot_counts(lemma, lemma.bound)
        if step.answer == "sat":
            raise InternalError(f"the pigeonhole count is wrong: {step.query} is SAT")
        proved[key] = step.answer == "unsat"
        steps += [step] if proved[key] else []
    return lemma.bound if proved[key] else 1


def _phase(enc: Encoding, pid: int, phase: Phase):
    """Ladder steps_p[k-2] <=> "the phase may cost k": each slot's distinct units
    are at most 1 + #steps."""
    n, lanes = enc.n, phase.offsets
    unit_bits = range(phase.unit_shift, n)
    slot_bits = range(phase.unit_shift, min(n, phase.unit_shift + phase.slot_bits))
    first = []
    pairs = []
    for i, o in enumerate(lanes):
        same = [enc.zero(unit_bits, o ^ e) for e in lanes[:i]]
        pairs += [(enc.zero(slot_bits, o ^ e), s) for e, s in zip(lanes[:i], same)]
        first.append(z3.And([z3.Not(s) for s in same] + [z3.BoolVal(True, enc.ctx)]))
    enc.pairs[pid] = pairs
    steps = [z3.Bool(f"phase_{pid}_costs_{k}", enc.ctx) for k in range(2, len(lanes) + 1)]
    enc.phase_steps[pid] = steps
    enc.hard += [z3.Implies(b, a) for a, b in zip(steps, steps[1:])]
    if not steps:
        return
    for slot in range(1 << len(slot_bits)):
        items = [
            z3.And(
                f,
                *[
                    enc.parity(i, o) if slot >> t & 1 else z3.Not(enc.parity(i, o))
                    for t, i in enumerate(slot_bits)
                ],
            )
            for f, o in zip(first, lanes)
        ]
        enc.hard.append(z3.AtMost(*items, *[z3.Not(s) for s in steps], len(lanes)))


# -- the search ------------------------------------------------------------------


@dataclass
class Found:
    bits: np.ndarray
    table: np.ndarray
    objective: Objective
    per_access: dict
    notation: str | None = None  # the family's own notation (None: a formula)


@dataclass
class XorResult:
    best: Found | None
    optimal: bool
    steps: list[Step]
    core: list[str] | None = None
    reason: str = ""
    dominated: bool = False  # UNSAT: no member beats the incumbent given to minimise


def _requirements(enc: Encoding) -> dict:
    out = {}
    accesses = {a.name: a for a in enc.problem.accesses}
    for r in enc.problem.requirements:
        if r.metric == "ways":
            out[r.describe()] = z3.And(
                enc.ways_at_most(r.bound, [r.access]) + [z3.BoolVal(True, enc.ctx)]
            )
        else:
            out[r.describe()] = enc.access_waves_at_most(accesses[r.access], r.bound)
    return out


def _ask(enc: Encoding, family, label: str, extra: list, budget: Budget, steps: list[Step]):
    started = time.monotonic()
    result = search(enc.solver(extra), budget)
    steps.append(Step(label, result.status, time.monotonic() - started))
    if result.status != "sat":
        return result.status, None
    bits = enc.bits(result.model)
    table = family.table(enc, result.model, bits)
    notation, terms = family.decode(enc, result.model, bits)
    figures = score(enc.problem, table, terms)
    if not figures.feasible:
        raise InternalError(f"{family.name} model breaks {figures.broken} on replay ({label})")
    return "sat", Found(bits, table, figures.found, figures.per_access, notation)


def _replayed(found: Found, label: str, value: int, bound: int) -> Found:
    if value > bound:
        raise InternalError(f"xor model scores {value} on replay but satisfied {label}")
    return found


def minimise(
    problem: Problem,
    budget: Budget,
    start: np.ndarray | None = None,
    family=None,
    incumbent: Objective | None = None,
) -> XorResult:
    """The lexicographic minimum over invertible M (or over the members of a
    parametric `family`, default `AnyLinear`): max-ways, then weighted
    wavefronts, then XOR terms (the footprint is always R*C). Each figure is
    found by bisection between a lower bound and the best layout found; the
    certificate is the UNSAT query just below each final figure.

    `start`, a feasible linear layout (the best CuTe swizzle), saves the solver
    the search for a first layout: on 64x64 tiles that search is the slowest
    query (about 45 s here), while the UNSAT proofs below a good start take
    well under a second each.

    `incumbent`, the best figures of another family (`--family all`), is to be
    beaten: one query asks for a member lexicographically better; UNSAT ends the
    search (``dominated``: none is), SAT starts it from that member."""
    family = family or AnyLinear()
    ctx = z3.Context()
    enc = encode(problem, family.invertible, family.views(problem, ctx), ctx)
    enc.hard += family.constrain(enc)
    requirements = _requirements(enc)
    enc.tracked.update(requirements)
    steps: list[Step] = []
    _prove_lemmas(enc, budget, steps)
    core = _below_lemma(enc)
    if core is not None:
        return XorResult(None, True, steps, core=core)
    best = _start(enc, start)
    if incumbent is not None:
        status, best = _ask(
            enc,
            family,
            f"better than {incumbent.key()}",
            [_better(enc, family, incumbent)],
            budget,
            steps,
        )
        if status != "sat":
            return XorResult(None, status == "unsat", steps, dominated=status == "unsat")
    if best is None:
        status, best = _ask(
            enc, family, "a layout meeting every hard constraint and requirement", [], budget, steps
        )
        if status == "unsat":
            return XorResult(None, True, steps, core=_core(enc, budget))
        if best is None:
            return XorResult(None, False, steps, reason=f"timeout after {budget.seconds:g} s")
    phases = sum(a.weight * a.instruction.ideal_wavefronts for a in problem.accesses)
    ways_low, waves_low = _proved_lows(enc, family, phases, budget, steps)
    stages = [
        ("max_ways", ways_low, lambda f: f.objective.max_ways, lambda k: enc.ways_at_most(k)),
        (
            "weighted wavefronts",
            waves_low,
            lambda f: f.objective.wavefronts,
            lambda k: enc.extra_at_most(k - phases),
        ),
        *(
            [
                (
                    "footprint",
                    problem.shape[0] * problem.shape[1],
                    lambda f: f.objective.footprint,
                    lambda k: family.footprint_at_most(enc, k),
                )
            ]
            if hasattr(family, "footprint_at_most")
            else []
        ),
        (
            "xor terms",
            0,
            lambda f: f.objective.xor_terms,
            lambda k: [z3.AtMost(*family.terms(enc), k)],
        ),
    ]
    fixed: list = []
    optimal = True
    for name, low, figure, constraint in stages:
        best, proved = _descend(
            enc, family, name, low, figure, constraint, fixed, best, budget, steps
        )
        optimal &= proved
        if not proved:
            break
        fixed += constraint(figure(best))
    return XorResult(
        best, optimal, steps, reason="" if optimal else f"timeout after {budget.seconds:g} s"
    )


def _better(enc: Encoding, family, bar: Objective) -> z3.BoolRef:
    """Lexicographically better than `bar`: fewer ways; or as few and fewer
    wavefronts; or both as few and a smaller footprint; or all three as small
    and fewer XOR terms. The footprint is R*C in a family linear on the tile, and
    stated by the family where it varies (`footprint_at_most`)."""
    phases = sum(a.weight * a.instruction.ideal_wavefronts for a in enc.problem.accesses)
    false, true = z3.BoolVal(False, enc.ctx), z3.BoolVal(True, enc.ctx)

    def ways(k: int) -> z3.BoolRef:
        return z3.And([*enc.ways_at_most(k), true]) if k >= 1 else false

    def waves(k: int) -> z3.BoolRef:
        return z3.And([*enc.extra_at_most(k - phases), true]) if k >= phases else false

    def footprint(k: int) -> z3.BoolRef:
        if hasattr(family, "footprint_at_most"):
            return z3.And([*family.footprint_at_most(enc, k), true])
        rows, cols = enc.problem.shape
        return true if rows * cols <= k else false

    fewer_terms = z3.AtMost(*family.terms(enc), bar.xor_terms - 1) if bar.xor_terms else false
    as_good = z3.And(ways(bar.max_ways), waves(bar.wavefronts))
    return z3.Or(
        ways(bar.max_ways - 1),
        z3.And(ways(bar.max_ways), waves(bar.wavefronts - 1)),
        z3.And(as_good, footprint(bar.footprint - 1)),
        z3.And(as_good, footprint(bar.footprint), fewer_terms),
    )


# Lemmas proved in this process, by what they state (the query is the same for any
# problem and family with this phase, alignment and width): `--family all` asks
# each once, not once per family.
_PROVED_LEMMAS: dict = {}


def forget_proved_lemmas():
    """Start afresh (a benchmark timing each run with its own lemma queries)."""
    _PROVED_LEMMAS.clear()


def _prove_lemmas(enc: Encoding, budget: Budget, steps: list[Step]):
    """Ask z3 for each phase's candidate bound (`prove_phase_bound`); a proved one
    becomes the phase's lower bound, and the search's encoding gains it as the
    fact "L's low bits vanishing on the phase's span implies the phase costs at
    least that" (true of every member: the query proved it). A bound z3 does not
    prove is not used; one it refutes is a wrong count in `phase_lower_bound`, an
    internal error. Only the UNSAT steps join the certificate: an unproved lemma
    proves nothing and is not used. The same lemma in several views is asked once."""
    asked: dict = {}
    for (pid, view), lemma in enc.lemmas.items():
        key = (lemma.phase, lemma.forced, lemma.bound)
        if key not in asked:
            step = _PROVED_LEMMAS.get((enc.n, key)) or prove_phase_bound(
                enc.problem, enc.n, lemma, lemma.bound, budget
            )
            if step.answer == "unsat":
                _PROVED_LEMMAS[enc.n, key] = step
            if step.answer == "sat":
                raise InternalError(f"the pigeonhole count is wrong: {step.query} is SAT")
            asked[key] = step.answer == "unsat"
            if asked[key]:
                steps.append(step)
                premise = enc.low_zero(_basis(lemma.phase.offsets), lemma.forced)
                enc.hard.append(z3.Implies(premise, enc.phase_steps[pid][lemma.bound - 2]))
        if asked[key]:
            enc.phase_low[pid, view] = lemma.bound


def _below_lemma(enc: Encoding) -> list[str] | None:
    """A required max-ways below a proved lemma's bound for its access in every
    view: infeasible, with the requirement and the alignments the lemmas rest on
    as the core (the lemmas' UNSAT queries are the proof)."""
    for r in enc.problem.requirements:
        if r.metric != "ways":
            continue
        worst = [
            max((enc.phase_low[p, v], p) for p, w in enc.phases_of([r.access]) if w == v)
            for v in range(len(enc.views))
        ]
        if all(r.bound < low for low, _ in worst):
            causes = {enc.lemmas[p, v].cause for v, (_, p) in enumerate(worst)}
            return [r.describe(), *sorted(causes)]
    return None


def lower_bounds(enc: Encoding) -> tuple[int, int]:
    """Max-ways and weighted wavefronts no member can beat, from the proved phase
    bounds: the worst phase, and per access its worst instance's sum (weighted),
    in the view where they are least."""
    views = range(len(enc.views))
    ways = min(max(enc.phase_low[p, v] for p, w in enc.phase_low if w == v) for v in views)
    waves = min(
        sum(
            a.weight
            * max(
                sum(enc.phase_low[p, v] for p in inst) for inst in enc.access_instances[a.name, v]
            )
            for a in enc.problem.accesses
        )
        for v in views
    )
    return ways, waves


def _proved_lows(enc: Encoding, family, phases: int, budget: Budget, steps: list[Step]):
    """The lower bounds the bisection starts from. Above the trivial ones (1-way,
    one wavefront per phase) each is a query of the search's encoding, which now
    holds the proved lemmas: "max_ways <= bound - 1" and "weighted wavefronts <=
    bound - 1" must be UNSAT (the step joins the certificate), or the trivial bound
    is used instead."""
    ways_low, waves_low = lower_bounds(enc)
    out = []
    for name, low, trivial, constraint in (
        ("max_ways", ways_low, 1, enc.ways_at_most),
        ("weighted wavefronts", waves_low, phases, lambda k: enc.extra_at_most(k - phases)),
    ):
        if low > trivial:
            asked: list[Step] = []
            label = f"{name} <= {low - 1}"
            status, _ = _ask(enc, family, label, constraint(low - 1), budget, asked)
            steps += asked if status == "unsat" else []
            low = low if status == "unsat" else trivial
        out.append(low)
    return out[0], out[1]


def _start(enc: Encoding, table: np.ndarray | None) -> Found | None:
    """The starting layout as a member of this family, scored as a model would be."""
    if table is None:
        return None
    bits = bits_of(table)
    if bits is None:
        return None
    figures = score(enc.problem, table, differing(bits))
    return Found(bits, table, figures.found, figures.per_access) if figures.feasible else None


def _descend(enc, family, name, low, figure, constraint, fixed, best, budget, steps):
    """Bisect `figure` between `low` and the best found: SAT lowers the top to the
    replayed figure, UNSAT raises the bottom. Proved when the bottom meets it.
    The first probe is the lower bound itself (the optimum often meets a lemma's
    bound: 1-way, and one SAT ends the stage where bisection took four), the
    second just below the best found (often already optimal: one UNSAT ends it),
    then bisection."""
    asked = 0
    while low < figure(best):
        top = figure(best)
        probe = (low, top - 1)[asked] if asked < 2 else (low + top - 1) // 2
        asked += 1
        status, found = _ask(
            enc, family, f"{name} <= {probe}", fixed + constraint(probe), budget, steps
        )
        if status == "unknown":
            return best, False
        if status == "unsat":
            low = probe + 1
            continue
        best = _replayed(found, f"{name} <= {probe}", figure(found), probe)
    return best, True


def _core(enc: Encoding, budget: Budget) -> list[str]:
    """The tracked constraints (per-access hard ones, required bounds) that cannot
    hold together: an unsat core, shrunk until each is needed. This diagnosis,
    unlike the search, asks one solver under assumptions: it runs only after
    the UNSAT that proved no layout exists."""
    names = list(enc.tracked)
    solver = z3.SolverFor("QF_FD", ctx=enc.ctx)
    solver.set("timeout", max(1, budget.remaining_ms()))
    solver.add(enc.hard)
    flags = {z3.Bool(f"track_{i}", enc.ctx): name for i, name in enumerate(names)}
    for flag, name in flags.items():
        solver.add(z3.Implies(flag, enc.tracked[name]))
    if solver.check(*flags) != z3.unsat:
        return names
    core = [flags[f] for f in solver.unsat_core()]
    for name in list(core):  # drop any that the rest do not need
        rest = [f for f, n in flags.items() if n in core and n != name]
        if solver.check(*rest) == z3.unsat:
            core.remove(name)
    return core
