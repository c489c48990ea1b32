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
from dataclasses import dataclass, field
from enum import Enum

import z3

from verify.errors import InternalError
from verify.smt import bv

SEED = 0


class Status(str, Enum):
    """A check's verdict, ordered from best to worst: proved < unknown < refuted.

    A refutation is a replayed violation, while UNKNOWN only says that none was
    found in time, so a run with both is refuted (the command line's exit status
    and a sweep's verdict are the worst status of their checks). The members are
    listed in report order (proved, refuted, unknown), which is not this order.
    """

    PROVED = "proved"
    REFUTED = "refuted"
    UNKNOWN = "unknown"

    @property
    def rank(self) -> int:
        return _RANK[self]

    # str's own comparisons would order the values alphabetically.
    def __lt__(self, other):
        return self.rank < other.rank if isinstance(other, Status) else NotImplemented

    def __le__(self, other):
        return self.rank <= other.rank if isinstance(other, Status) else NotImplemented

    def __gt__(self, other):
        return self.rank > other.rank if isinstance(other, Status) else NotImplemented

    def __ge__(self, other):
        return self.rank >= other.rank if isinstance(other, Status) else NotImplemented

    @classmethod
    def worst(cls, statuses) -> Status:
        """The worst of `statuses`; PROVED when there are none."""
        return max(statuses, default=cls.PROVED)


_RANK = {Status.PROVED: 0, Status.UNKNOWN: 1, Status.REFUTED: 2}


class SearchStatus(str, Enum):
    """What the solver answered about one formula (before it means a verdict)."""

    SAT = "sat"
    UNSAT = "unsat"
    UNKNOWN = "unknown"


def _configure():
    z3.set_param("smt.random_seed", SEED)
    z3.set_param("sat.random_seed", SEED)


_configure()


class Budget:
    """Wall-clock allowance for one check, shared by all its queries."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.start = time.monotonic()
        self.solver_seconds = 0.0

    def remaining_ms(self) -> int:
        return int(1000 * (self.seconds - (time.monotonic() - self.start)))


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
    remaining = budget.remaining_ms()
    if remaining <= 0:
        return Search(SearchStatus.UNKNOWN, reason=f"timeout after {budget.seconds:g} s")
    solver.set("timeout", remaining)
    started = time.monotonic()
    try:
        answer = solver.check()
    except z3.Z3Exception as e:  # resource limits surface as exceptions
        return Search(SearchStatus.UNKNOWN, reason=f"solver error: {e}")
    finally:
        budget.solver_seconds += time.monotonic() - started
    if answer == z3.sat:
        return Search(SearchStatus.SAT, solver.model())
    if answer == z3.unsat:
        return Search(SearchStatus.UNSAT)
    reason = solver.reason_unknown()
    if reason in ("timeout", "canceled"):
        reason = f"timeout after {budget.seconds:g} s"
    return Search(SearchStatus.UNKNOWN, reason=f"solver gave up: {reason}")


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


@dataclass
class Maximum:
    """Largest value of a metric over all instances, with an instance attaining it."""

    value: int
    witness: dict
    exact: bool  # the solver proved that nothing exceeds `value`
    reason: str = ""
    queries: int = field(default=0)


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


def bound_status(best: Maximum, bound: int, equal: bool) -> Status:
    """Verdict for "metric <= bound" (or "== bound") given the ascent's result."""
    if best.value > bound:
        return Status.REFUTED  # a replayed instance exceeds the bound
    if not best.exact:
        return Status.UNKNOWN
    if equal and best.value != bound:
        return Status.REFUTED
    return Status.PROVED
