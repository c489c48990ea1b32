"""Lower bounds no member of the XOR family can beat, each proved before the
search uses it: a phase's pigeonhole bound asked of z3 on a small encoding
(`prove_phase_bound`) or by enumerating slot counts (`prove_by_slot_counts`),
and the figures they give per view and per encoding (`verify.synth.gf2`).
"""

from __future__ import annotations

import time
from functools import reduce

import z3

from verify.errors import InternalError
from verify.smt.solve import Budget, search
from verify.synth.cost import hard_name
from verify.synth.gf2_encoding import (
    Encoding,
    Lemma,
    Phase,
    Step,
    View,
    log2,
    phase_constraints,
    phase_lower_bound,
    span_basis,
    unit_of,
)
from verify.synth.problem import Problem


def prove_phase_bound(problem: Problem, n: int, lemma: Lemma, bound: int, budget: Budget) -> Step:
    """Ask z3 whether the phase can cost at most bound - 1; UNSAT proves that it
    costs at least `bound` in every layout of every family.

    The encoding is smaller than the search's: only this phase's lanes (the same
    `phase_constraints` constraints the search uses), L one-to-one on the span V of their
    offsets (every invertible M is, so every member of every family is), and the
    low `forced` bits of L zero on V (what the alignment `cause` imposes on V).
    Each of these is implied by the search's constraints, so UNSAT here is UNSAT
    there. z3 answers it in about a second where the whole encoding timed out at
    120 s."""
    ctx = z3.Context()
    m = [[z3.Bool(f"M_{i}_{j}", ctx) for j in range(n)] for i in range(n)]
    small = Encoding(problem, n, ctx, m, [])
    basis = span_basis(lemma.phase.offsets)
    for pick in range(1, 1 << len(basis)):
        v = reduce(lambda a, b: a ^ b, (x for i, x in enumerate(basis) if pick >> i & 1))
        small.hard.append(z3.Not(small.zero(range(n), v)))
    small.hard += [z3.Not(small.parity(i, o)) for o in basis for i in range(lemma.forced)]
    phase_constraints(small, 0, lemma.phase)
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
        low = min(log2(width // eb) if width > eb else 0, n)
        shell.aligned_spans.append((0, span_basis(offsets), low, hard_name("aligned", access, eb)))
    ways, waves = 1, 0
    for access in problem.accesses:
        shift, slot_bits = unit_of(shell, access)
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


_PROVED_LEMMAS: dict = {}


def forget_proved_lemmas():
    """Start afresh (a benchmark timing each run with its own lemma queries)."""
    _PROVED_LEMMAS.clear()


def prove_lemmas(enc: Encoding, budget: Budget, steps: list[Step]):
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
                premise = enc.low_zero(span_basis(lemma.phase.offsets), lemma.forced)
                enc.hard.append(z3.Implies(premise, enc.phase_steps[pid][lemma.bound - 2]))
        if asked[key]:
            enc.phase_low[pid, view] = lemma.bound


def below_lemma(enc: Encoding) -> list[str] | None:
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
