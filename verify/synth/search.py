"""Searching a family for the lexicographically best layout.

Overview
--------
`synthesize` reads the problem (`verify.synth.problem`) and searches the family:
by the solver, its parameters as unknowns (`verify.synth.params`: ``sw``,
``tile``, ``triton``, and ``pad+sw`` with the row pitch among them, `_padded`)
or M's entries as unknowns (`verify.synth.gf2`: ``xor``); by listing its members
(`verify.synth.families`) for ``pad`` and ``nvmma``, which are tiny (one member
per pitch, 128 bytes' worth; six modes), for non-power-of-two tiles, and on
request (``method="list"``, the cross-check the tests run on every catalog
problem). It returns an `Answer`: the best layout's notation, its figures,
whether it is proved optimal, and the evidence (the solver's queries with their
UNSAT proofs, or the table of every member). When no member meets the hard
constraints and the spec's required bounds, the answer names a smallest set of
them that no member meets together.

Worked example
--------------
The seed's 8x64 ldmatrix tile with ``--family sw``: the solver finds B = 3,
M = 3, S = 3, row-major (conflict-free, 1 wavefront) and proves "xor terms <= 2"
UNSAT over every B, M, S and major; listing the family's 282 members gives the
same figures, with ``Sw<3,3,3> o (8,64):(64,1)`` the only one with 3 terms.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field, replace

import numpy as np

from verify.engines.options import RunOptions
from verify.errors import SpecError
from verify.smt.budget import Budget
from verify.synth import families, gf2, params
from verify.synth.cost import Objective, Score, score
from verify.synth.problem import Problem, SynthAccess

FAMILIES = ("sw", "tile", "triton", "nvmma", "pad", "pad+sw", "xor", "all")
# The families "all" searches, in the order that breaks ties: the first family
# reaching the best figures wins, so the answer is written in the most common
# notation that attains them.
ALL = ("sw", "triton", "tile", "nvmma", "pad", "pad+sw", "xor")
# How a family is searched: "solver" (its parameters, or M's entries, as unknowns)
# or "list" (every member evaluated: the cross-check, and the only way for
# non-power-of-two tiles, where the members are not linear over GF(2)).
METHODS = ("solver", "list")


@dataclass
class Row:
    """One enumerated member and its score (the exhaustive table)."""

    notation: str
    score: Score


@dataclass
class Answer:
    family: str
    notation: str | None  # spec text of the layout (CuTe, Triton or formula)
    table: np.ndarray | None
    objective: Objective | None
    per_access: dict
    optimal: bool
    rows: list[Row] = field(default_factory=list)  # listed families
    steps: list = field(default_factory=list)  # the solver's queries
    core: list[str] | None = None  # when nothing is feasible
    reason: str = ""
    method: str = "list"  # one of METHODS
    contenders: dict = field(default_factory=dict)  # "all": family -> its own Answer
    dominated: bool = False  # "all": proved that no member beats an earlier family's best


def synthesize(
    problem: Problem, family: str, timeout: float | RunOptions, method: str = "solver"
) -> Answer:
    """The best member of `family` ("all": of every family), by the solver where
    the family's members are GF(2)-linear (power-of-two tiles), else by listing.
    `timeout`: seconds for the whole search, or RunOptions (their seconds and z3
    units; its engine is not used: `method` chooses)."""
    budget = RunOptions.of(timeout).budget()
    core = unmeetable(problem)
    if core:
        return Answer(family, None, None, None, {}, True, core=core, method=method)
    if _merges_phases(problem):
        method = "list"  # the solver's encodings count the phase model, not rule L
        if family == "xor":
            raise SpecError(
                "--family xor: expected accesses whose phases the H200 never merges, "
                "found a 64/128-bit load whose lanes pair up (rule L); the xor "
                "family's solver counts the phase model: ask --family sw or all",
                next(a.access.definition.pos for a in problem.accesses if _regular_pairs(a).any()),
            )
    if family == "all":
        return _best_of_all(problem, budget, method)
    return _one(problem, family, budget, method)


def _regular_pairs(access: SynthAccess) -> np.ndarray:
    """Per instance, a 64/128-bit load's phase pairs whose lanes come in equal pairs
    or alternate two coordinates (rule L's condition; none for other instructions).
    A bijective layout gives equal addresses exactly to equal coordinates, so the
    layout decides only whether such a pair's union is conflict-free, and merges."""
    count = np.zeros(access.coords.shape[0], dtype=np.int64)
    phases = access.instruction.phases
    if not access.instruction.merges_phases:
        return count
    for p, q in zip(phases[::2], phases[1::2]):
        pair = access.coords[:, p.start : q.stop]
        in_pairs = (pair[:, 0::2] == pair[:, 1::2]).all(axis=(1, 2))
        alternating = (pair == pair[:, [i % 2 for i in range(pair.shape[1])]]).all(axis=(1, 2))
        count += in_pairs | alternating
    return count


def _merges_phases(problem: Problem) -> bool:
    """Rule L may merge some load's phases, under some layout: then listing every
    member scores it as the engines do, and the solver's phase-model proofs do not
    bound its wavefronts. Without a regular pair the phase model is exact."""
    return any(_regular_pairs(a).any() for a in problem.accesses)


def _least_wavefronts(access: SynthAccess) -> int:
    """The least worst-instance wavefronts any layout could give: one a phase, less
    one for each pair that could merge, at the instance with the fewest."""
    return access.instruction.ideal_wavefronts - int(_regular_pairs(access).min())


def unmeetable(problem: Problem) -> list[str]:
    """Constraints no layout of any family meets, each named with why: a stage slot
    smaller than the tile itself (every member stores R*C distinct offsets), a
    bound below the least figure an access can have (1-way; the ideal
    wavefronts), an access misaligned by the buffer's own alignment or by the
    stage pitch (every address is base + stage * stage_bytes + offset). They
    are settled here, before any family is searched."""
    rows, cols = problem.shape
    core = []
    limit = problem.stage_elements
    if limit is not None and rows * cols > limit:
        core.append(
            f"{problem.stages_text()} (the tile takes {rows * cols * problem.elem_bytes} bytes)"
        )
    buffer = problem.spec.buffer
    for a in problem.accesses:
        width = a.instruction.bytes_per_address
        if buffer.align % width:
            core.append(f"aligned {width} {a.name} (the buffer is aligned to {buffer.align} only)")
        elif limit is not None and buffer.stage_bytes % width:
            core.append(
                f"aligned {width} {a.name} (stage 1 starts {buffer.stage_bytes} bytes in, "
                f"line {buffer.pos.line})"
            )
    accesses = {a.name: a for a in problem.accesses}
    for r in problem.requirements:
        least = 1 if r.metric == "ways" else _least_wavefronts(accesses[r.access])
        if r.bound < least:
            figure = "max_ways" if r.metric == "ways" else "wavefronts"
            core.append(f"{r.describe()} ({figure} of {r.access} is at least {least})")
    return core


def _one(
    problem: Problem, family: str, budget: Budget, method: str, before: Answer | None = None
) -> Answer:
    """One family's best; `before`, the best of earlier families (`--family all`),
    is the bar a solver-searched family must beat (or be proved not to)."""
    incumbent = before.objective if before is not None and method == "solver" else None
    if family == "xor":
        return _xor(problem, budget, before, incumbent)
    if method == "solver" and family == "pad+sw" and _powers_of_two(problem):
        return _padded(problem, budget, incumbent)
    if method == "solver" and family in params.FAMILIES and _powers_of_two(problem):
        return _parametric(problem, family, budget, incumbent)
    # `pad` (one member per pitch: 32 to 128) and `nvmma` (six at most) are tiny:
    # listed, the table is the proof.
    return _enumerate(problem, family, budget)


def _padded(problem: Problem, budget: Budget, incumbent: Objective | None = None) -> Answer:
    """pad+sw by the solver, pitch C (no padding) first: its optimum (or the proof
    that none there beats `incumbent`), then the proof that no other pitch does
    better. Each other pitch's lower bounds come from slot-count lemmas
    (`gf2.view_lower_bounds`: no phase encoded); where they reach the bar's
    max-ways and wavefronts, only a footprint as small could tie or beat it, and
    one query over the pitches and swizzles (the footprint depends on no access)
    shows that none has one. Otherwise the pitches left are searched with all
    their phases encoded (`gf2.minimise` over their views)."""
    cols = problem.shape[1]
    every = params.PaddedSw(problem)

    def searched(pitches) -> Answer:
        family = params.PaddedSw(problem, pitches)
        result = gf2.minimise(problem, budget, family=family, incumbent=incumbent)
        return _solver_answer("pad+sw", result, _notation)

    first = gf2.minimise(
        problem, budget, family=params.PaddedSw(problem, [cols]), incumbent=incumbent
    )
    bar = first.best.objective if first.best is not None else incumbent
    if bar is None or not first.optimal:
        return searched(every.pitches)
    steps: list = list(first.steps)
    proved: dict = {}
    figures = (bar.max_ways, bar.wavefronts)
    below = [
        pitch
        for pitch in every.pitches[1:]
        if gf2.view_lower_bounds(problem, gf2.View(None, pitch), every.n, budget, steps, proved)
        < figures
    ]
    if below and not _ruled_out(problem, below, budget, steps):
        return searched([cols, *below])
    others = params.PaddedSw(problem, every.pitches[1:])
    started = time.monotonic()
    status = others.smaller_footprint_exists(problem, bar.footprint, budget)
    steps.append(
        gf2.Step(
            f"footprint <= {bar.footprint} at a pitch above {cols}",
            status,
            time.monotonic() - started,
        )
    )
    if status != "unsat":
        return searched(every.pitches)
    result = gf2.XorResult(first.best, True, steps, dominated=first.dominated)
    return _solver_answer("pad+sw", result, _notation)


def _ruled_out(problem: Problem, pitches: list[int], budget: Budget, steps: list) -> bool:
    """No member at these pitches meets the hard constraints (one UNSAT, a step)."""
    started = time.monotonic()
    status = params.PaddedSw(problem, pitches).aligned_member_exists(problem, budget)
    if status == "unsat":
        label = (
            f"a member at pitch {_ranges(pitches)} keeping every access aligned and "
            "every vector whole"
        )
        steps.append(gf2.Step(label, status, time.monotonic() - started))
    return status == "unsat"


def _ranges(values: list[int]) -> str:
    from verify.report.text import ranges_text

    return ranges_text(values)


def _notation(found) -> str:
    return found.notation


def _best_of_all(problem: Problem, budget: Budget, method: str) -> Answer:
    """Every family in turn (`ALL`; xor only on power-of-two tiles), the
    lexicographically best answer winning (ties: the earlier family); optimal
    over the union when each family's answer is proved optimal in it. A family
    the solver searches is asked first for a member better than the best so far:
    UNSAT settles it (``dominated``) without its own optimum, which the union's
    needs no more. With no feasible member anywhere, the first family's
    diagnosis is the answer's."""
    contenders: dict = {}
    best: Answer | None = None
    for family in ALL:
        if family == "xor" and (not _powers_of_two(problem) or _merges_phases(problem)):
            continue  # not GF(2)-linear, or rule L, which the xor solver does not count
        answer = contenders[family] = _one(problem, family, budget, method, best)
        if answer.objective is not None and (
            best is None or _objective_key(answer) < _objective_key(best)
        ):
            best = answer
    winner = replace(best or next(iter(contenders.values())))
    winner.optimal = all(a.optimal for a in contenders.values())
    winner.reason = "; ".join(f"{f}: {a.reason}" for f, a in contenders.items() if a.reason)
    winner.contenders = contenders
    return winner


def _objective_key(answer: Answer) -> tuple[int, int, int, int]:
    assert answer.objective is not None, "only answers with a feasible member are ranked"
    return answer.objective.key()


def _powers_of_two(problem: Problem) -> bool:
    return all(x & (x - 1) == 0 for x in problem.shape)


def _parametric(
    problem: Problem, family: str, budget: Budget, incumbent: Objective | None = None
) -> Answer:
    """The family's parameters as the solver's unknowns (`verify.synth.params`)."""
    result = gf2.minimise(
        problem, budget, family=params.FAMILIES[family](problem), incumbent=incumbent
    )
    return _solver_answer(family, result, _notation)


def _solver_answer(family: str, result, notation_of) -> Answer:
    """The Answer of a solver search (`gf2.minimise`): its best member, written by
    `notation_of`, or none, with the unsat core that explains why."""
    found = result.best
    if found is None:
        return Answer(
            family,
            None,
            None,
            None,
            {},
            result.optimal,
            steps=result.steps,
            core=result.core,
            reason=result.reason,
            method="solver",
            dominated=result.dominated,
        )
    return Answer(
        family,
        notation_of(found),
        found.table,
        found.objective,
        found.per_access,
        result.optimal,
        steps=result.steps,
        reason=result.reason,
        method="solver",
    )


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
        if row.score.feasible and (
            best is None or row.score.found.key() < best[0].score.found.key()
        ):
            best = (row, table)
    reason = budget.timeout_reason() if out_of_time else ""
    if best is None:
        core = None if out_of_time else smallest_core([r.score.broken for r in rows])
        return Answer(family, None, None, None, {}, not out_of_time, rows, core=core, reason=reason)
    row, table = best
    return Answer(
        family,
        row.notation,
        table,
        row.score.objective,
        row.score.per_access,
        not out_of_time,
        rows,
        reason=reason,
    )


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


def _xor(
    problem: Problem,
    budget: Budget,
    before: Answer | None = None,
    incumbent: Objective | None = None,
) -> Answer:
    """The solver over XOR maps, started from the best CuTe swizzle (when one is
    feasible; found by the solver too, unless `--family all` found the best of
    the families before: that one): its figures are the first upper bounds to
    prove or beat."""
    if before is None:
        before = (
            _parametric(problem, "sw", budget)
            if _powers_of_two(problem)
            else _enumerate(problem, "sw", budget)
        )
    result = gf2.minimise(problem, budget, before.table, incumbent=incumbent)
    return _solver_answer("xor", result, lambda found: xor_formula(problem, found.bits))


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
