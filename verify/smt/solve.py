"""The one place where solver answers become verdicts.

Every property is phrased as a search for a violation: UNSAT is the proof,
a model is a candidate counterexample (which the caller replays concretely),
and anything else -- timeout, resource limit, solver error -- is UNKNOWN.
UNKNOWN is never a pass.

Solver seeds are fixed, so one spec always gets the same answer and the same
counterexample.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

import z3

from verify.errors import InternalError
from verify.smt import bv
from verify.smt.budget import Budget
from verify.verdicts import Maximum, Status
from verify.verdicts import bound_status as bound_status  # re-exported: tests, callers

SEED = 0


class SearchStatus(str, Enum):
    """What the solver answered about one formula (before it means a verdict)."""

    SAT = "sat"
    UNSAT = "unsat"
    UNKNOWN = "unknown"


def _configure():
    z3.set_param("smt.random_seed", SEED)
    z3.set_param("sat.random_seed", SEED)


_configure()


@dataclass
class Search:
    status: SearchStatus
    model: z3.ModelRef | None = None
    reason: str = ""


def search(solver: z3.Solver, budget: Budget) -> Search:
    """Is `solver`'s formula satisfiable? Within the budget.

    Every query is one check of a fresh solver, never assumptions or a second
    check on the same one: z3 then leaves its one-shot QF_BV path (simplify,
    bit-blast, preprocess the CNF) for an incremental one that skips the
    preprocessing, and proving a phase maximum took 13.5 s instead of 0.5 s
    (benchmarks/results/slow_cases_z3.md, case 305216)."""
    spent = budget.spent()
    if spent:
        return Search(SearchStatus.UNKNOWN, reason=spent)
    solver.set("timeout", budget.remaining_ms())
    solver.set("rlimit", budget.remaining_units())
    before = _units(solver)
    started = time.monotonic()
    try:
        answer = solver.check()
    except z3.Z3Exception as e:  # resource limits surface as exceptions
        return Search(SearchStatus.UNKNOWN, reason=f"solver error: {e}")
    finally:
        budget.solver_seconds += time.monotonic() - started
        budget.units += _units(solver) - before
    if answer == z3.sat:
        return Search(SearchStatus.SAT, solver.model())
    if answer == z3.unsat:
        return Search(SearchStatus.UNSAT)
    return Search(SearchStatus.UNKNOWN, reason=_gave_up(solver.reason_unknown(), budget))


def _units(solver: z3.Solver) -> int:
    """The resource units counted so far in the solver's context (z3 reports the
    context's cumulative count among each solver's statistics, once it is nonzero)."""
    try:
        return int(solver.statistics().get_key_value("rlimit count"))
    except z3.Z3Exception:  # no key: nothing counted yet
        return 0


def _gave_up(reason: str, budget: Budget) -> str:
    """Why z3 answered unknown. z3 says "max. resource limit exceeded", or "canceled"
    when the limit is met inside a tactic, as a timeout is."""
    if budget.remaining_units() <= 0:
        return budget.rlimit_reason()
    if reason in ("timeout", "canceled") and budget.seconds is not None:
        return budget.timeout_reason()
    return f"solver gave up: {reason}"


def violation_status(result: Search) -> Status:
    """Verdict of a query that searches for a violation."""
    return _VIOLATION_VERDICT[result.status]


_VIOLATION_VERDICT = {
    SearchStatus.UNSAT: Status.PROVED,
    SearchStatus.SAT: Status.REFUTED,
    SearchStatus.UNKNOWN: Status.UNKNOWN,
}


def new_solver(ctx: bv.Context) -> z3.Solver:
    """A fresh QF_BV solver in the query's own Z3 context, with the fixed seed."""
    solver = bv.solver_for(ctx)
    solver.set("random_seed", SEED)
    return solver


def maximize(
    query: Callable[[], z3.Solver],
    at_least: Callable[[int], z3.BoolRef],
    decode: Callable[[z3.ModelRef], dict],
    score: Callable[[dict], int],
    start: dict,
    ceiling: int,
    budget: Budget,
) -> Maximum:
    """Largest value of a metric: probe just above the start, then bisect.

    Requires: `query()` is a fresh solver holding the domain's constraints (each
    probe gets its own: see `search`), `score` is the concrete metric (plain
    Python), `at_least(k)` its encoding "metric >= k", `decode` turns a model into
    a concrete instance, and no instance scores above `ceiling`. Every model is replayed through
    `score`; one that scores below the threshold it satisfied means the encoding
    is wrong, and raises InternalError rather than report anything.
    Postcondition: exact=True means "metric >= value + 1" was proved UNSAT.
    """
    best = Maximum(score(start), start, exact=False)
    high = ceiling  # nothing above `high` can exist
    while best.value < high:
        # The first probe is best+1: most starts are already the maximum.
        threshold = best.value + 1 if best.queries == 0 else (best.value + high + 1) // 2
        solver = query()
        solver.add(at_least(threshold))
        result = search(solver, budget)
        best.queries += 1
        if result.status == SearchStatus.UNKNOWN:
            best.reason = result.reason
            return best
        if result.status == SearchStatus.UNSAT:
            high = threshold - 1
            continue
        witness = decode(result.model)
        value = score(witness)
        if value < threshold:
            raise InternalError(
                f"solver model scores {value} on replay but satisfied >= {threshold}: {witness}"
            )
        best.value, best.witness = value, witness
    best.exact = True
    return best
