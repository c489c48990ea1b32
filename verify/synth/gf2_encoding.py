"""The XOR family's encoding (`verify.synth.gf2` states the math): the n x n bit
matrix M as z3 Booleans, a layout's offsets as views of the tile, and the hard
constraints and bank figures of every access as Boolean and cardinality
constraints over M; with each phase's pigeonhole count, the candidate lower bound
that `verify.synth.gf2_bounds` asks z3 to prove.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import reduce

import numpy as np
import z3

from verify.errors import SpecError
from verify.smt.solve import SEED
from verify.synth.cost import hard_name
from verify.synth.problem import Problem, SynthAccess


def log2(value: int) -> int:
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
    n = log2(flat.size)
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


def span_basis(values) -> list[int]:
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
    low = min(log2(width // eb) if width > eb else 0, enc.n)
    name = hard_name("aligned", access, eb)
    aligned = []
    for index, view in enumerate(enc.views):
        basis = span_basis(sorted(set(int(o) for o in view.offsets(access).ravel())))
        enc.aligned_spans.append((index, basis, low, name))
        aligned.append(view.when(enc.low_zero(basis, low)))
    enc.tracked[name] = z3.And(aligned)
    vector = log2(access.vector(eb))
    if vector:
        fixed = [
            enc.m[i][j] == z3.BoolVal(i == j, enc.ctx)
            for j in range(min(vector, enc.n))
            for i in range(enc.n)
        ]
        enc.tracked[hard_name("vectors", access, eb)] = z3.And(fixed)


def unit_of(enc: Encoding, access: SynthAccess) -> tuple[int, int]:
    eb, unit_bytes = enc.problem.elem_bytes, max(4, access.instruction.bytes_per_address)
    if unit_bytes < eb:
        raise SpecError(
            f"access '{access.name}' reads less than one element: the xor family "
            "needs accesses at least an element wide",
            access.access.definition.pos,
        )
    return log2(unit_bytes // eb), log2(128 // unit_bytes)


def _access_banks(enc: Encoding, access: SynthAccess, phase_ids: dict):
    """Phase ladders (shared between equal phases, of any view) and the access's
    wavefront ladder, bound by the instances of the view in force."""
    shift, slot_bits = unit_of(enc, access)
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
        phase_constraints(enc, phase_ids[key], phase)
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
    basis = span_basis(phase.offsets)
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


def phase_constraints(enc: Encoding, pid: int, phase: Phase):
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
