"""Searching a family for the lexicographically best layout.

Overview
--------
`synthesize` reads the problem (`verify.synth.problem`), searches the family --
by listing its members for the tiny ones (`verify.synth.families`), by the
solver for XOR maps (`verify.synth.gf2`) -- and returns an `Answer`: the best
layout's notation, its figures, whether it is proved optimal, and the evidence
(the table of every member, or the solver's queries with their UNSAT proofs).
When no member meets the hard constraints and the spec's required bounds, the
answer names a smallest set of them that no member meets together.

Worked example
--------------
The seed's 8x64 ldmatrix tile with ``--family sw``: 282 members (row- and
column-major); the only one that is conflict-free with its 16-byte rows whole
is ``Sw<3,3,3> o (8,64):(64,1)``, max-ways 1, 1 wavefront, 3 XOR terms.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np

from verify.solve import Budget
from verify.synth import families, gf2
from verify.synth.cost import Objective, Score, score
from verify.synth.problem import Problem

FAMILIES = (*families.ENUMERATED, "xor")


@dataclass
class Row:
    """One enumerated member and its score (the exhaustive table)."""

    notation: str
    score: Score


@dataclass
class Answer:
    family: str
    notation: str | None              # spec text of the layout (CuTe, Triton or formula)
    table: np.ndarray | None
    objective: Objective | None
    per_access: dict
    optimal: bool
    rows: list[Row] = field(default_factory=list)      # enumerated families
    steps: list = field(default_factory=list)          # the solver's queries (xor)
    core: list[str] | None = None                      # when nothing is feasible
    reason: str = ""


def synthesize(problem: Problem, family: str, timeout: float) -> Answer:
    budget = Budget(timeout)
    if family == "xor":
        return _xor(problem, budget)
    return _enumerate(problem, family, budget)


def _enumerate(problem: Problem, family: str, budget: Budget) -> Answer:
    rows, best = [], None
    out_of_time = False
    for member in families.members(family, *problem.shape, problem.elem_bytes):
        if budget.remaining_ms() <= 0:
            out_of_time = True
            break
        table = member.build()
        row = Row(member.notation, score(problem, table, member.xor_terms))
        rows.append(row)
        if row.score.feasible and (best is None or
                                   row.score.objective.key() < best[0].score.objective.key()):
            best = (row, table)
    reason = f"timeout after {budget.seconds:g} s" if out_of_time else ""
    if best is None:
        core = None if out_of_time else smallest_core([r.score.broken for r in rows])
        return Answer(family, None, None, None, {}, not out_of_time, rows, core=core,
                      reason=reason)
    row, table = best
    return Answer(family, row.notation, table, row.score.objective, row.score.per_access,
                  not out_of_time, rows, reason=reason)


def smallest_core(broken: list[list[str]]) -> list[str]:
    """A smallest set of named constraints that every member breaks one of: no
    member meets them together (a minimum hitting set, searched by size)."""
    names = sorted({n for b in broken for n in b})
    sets = [set(b) for b in broken]
    for size in range(1, len(names) + 1):
        for subset in itertools.combinations(names, size):
            if all(s & set(subset) for s in sets):
                return list(subset)
    return names


def _xor(problem: Problem, budget: Budget) -> Answer:
    """The solver over XOR maps, started from the best CuTe swizzle (when one is
    feasible): its figures are the first upper bounds to prove or beat."""
    swizzles = _enumerate(problem, "sw", budget)
    result = gf2.minimise(problem, budget, swizzles.table)
    if result.best is None:
        return Answer("xor", None, None, None, {}, result.optimal, steps=result.steps,
                      core=result.core, reason=result.reason)
    found = result.best
    return Answer("xor", xor_formula(problem, found.bits), found.table, found.objective,
                  found.per_access, result.optimal, steps=result.steps, reason=result.reason)


def xor_formula(problem: Problem, bits: np.ndarray) -> str:
    """``A(r in 0..R, c in 0..C) = (C*r + c) ^ ...``: the identity plus one term per
    input bit whose column differs from the identity's (the formula layout of a
    spec; `verify map` takes it too)."""
    rows, cols = problem.shape
    col_bits = cols.bit_length() - 1
    n = bits.shape[0]
    terms = [f"({cols} * r + c)"]
    for j in range(n):
        column = sum((int(bits[i][j]) ^ int(i == j)) << i for i in range(n))
        if column:
            var, shift = ("c", j) if j < col_bits else ("r", j - col_bits)
            bit = f"({var} & 1)" if shift == 0 else f"(({var} >> {shift}) & 1)"
            terms.append(f"({bit} * {column})")
    return f"{problem.unknown.name}(r in 0..{rows}, c in 0..{cols}) = {' ^ '.join(terms)}"
