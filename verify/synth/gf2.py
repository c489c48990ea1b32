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
from dataclasses import dataclass

import numpy as np
import z3

from verify.errors import InternalError
from verify.smt.solve import Budget, search
from verify.synth.cost import Objective, score
from verify.synth.gf2_bounds import (
    below_lemma,
    forget_proved_lemmas,
    lower_bounds,
    prove_by_slot_counts,
    prove_lemmas,
    prove_phase_bound,
    view_lower_bounds,
)
from verify.synth.gf2_encoding import (
    AnyLinear,
    Encoding,
    Step,
    View,
    bits_of,
    differing,
    encode,
    table_of,
)
from verify.synth.problem import Problem

# What callers use of the family, wherever it is defined (the encoding and the
# bounds live in gf2_encoding.py and gf2_bounds.py).
__all__ = [
    "Step",
    "View",
    "XorResult",
    "bits_of",
    "encode",
    "forget_proved_lemmas",
    "lower_bounds",
    "minimise",
    "prove_by_slot_counts",
    "prove_lemmas",
    "prove_phase_bound",
    "table_of",
    "view_lower_bounds",
]


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
    prove_lemmas(enc, budget, steps)
    core = below_lemma(enc)
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
            return XorResult(None, False, steps, reason=budget.limit_reason())
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
    return XorResult(best, optimal, steps, reason="" if optimal else budget.limit_reason())


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
    solver.set("rlimit", max(1, budget.remaining_units()))
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
