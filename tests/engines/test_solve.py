import pytest

from verify.engines import solver as props
from verify.engines import solver_addresses as addresses
from verify.engines.runner import run_spec
from verify.errors import InternalError, SpecError
from verify.model.expr import BinOp, Range, Var
from verify.model.program import Program
from verify.smt import bv
from verify.smt.solve import (
    Budget,
    Maximum,
    Search,
    SearchStatus,
    Status,
    bound_status,
    maximize,
    new_solver,
    search,
    violation_status,
)
from verify.spec.parser import parse_text


def solver_with_x(limit: int):
    ctx = bv.Context(16, {"x": Range(0, limit)})

    def query():
        solver = new_solver(ctx)
        solver.add(ctx.in_range("x"))
        return solver

    return ctx, query


def test_maximize_finds_the_true_maximum_and_proves_it():
    ctx, query = solver_with_x(100)
    x = ctx.lower(Var("x"))
    best = maximize(
        query,
        lambda k: bv.uge(x, ctx.num(k)),
        lambda m: {"x": ctx.value(m, "x")},
        lambda v: v["x"],
        {"x": 0},
        1000,
        Budget(10),
    )
    assert (best.value, best.witness, best.exact) == (99, {"x": 99}, True)


def test_a_model_that_does_not_replay_is_an_internal_error_not_a_verdict():
    ctx, query = solver_with_x(100)
    x = ctx.lower(Var("x"))
    with pytest.raises(InternalError, match="scores 0 on replay"):
        # Planted bug: the concrete metric disagrees with the encoding.
        maximize(
            query,
            lambda k: bv.uge(x, ctx.num(k)),
            lambda m: {"x": ctx.value(m, "x")},
            lambda v: 0,
            {"x": 0},
            1000,
            Budget(10),
        )


def test_exhausted_budget_is_unknown_never_proved():
    ctx, query = solver_with_x(100)
    result = search(query(), Budget(0))
    assert result.status == SearchStatus.UNKNOWN and "timeout" in result.reason
    assert violation_status(result) == Status.UNKNOWN


def factoring(ctx: bv.Context):
    """A factoring question: enough solver work to count (about 50,000 units)."""
    solver = new_solver(ctx)
    solver.add(ctx.in_range("x"), ctx.in_range("y"))
    solver.add(ctx.lower(BinOp("*", Var("x"), Var("y"))) == ctx.num(4093 * 4091))
    return solver


def hard_query():
    return factoring(bv.Context(32, {"x": Range(2, 1 << 12), "y": Range(2, 1 << 12)}))


def test_a_query_spends_the_same_resource_units_every_time():
    """Units count work, not time: the budget's count repeats exactly (what lets the
    tests give resource limits and get one answer under any load)."""
    spent = []
    for _ in range(2):
        budget = Budget(rlimit=10**9)
        assert search(hard_query(), budget).status == SearchStatus.SAT
        spent.append(budget.units)
    assert spent[0] == spent[1] > 10_000


def test_a_spent_resource_limit_is_unknown_and_says_so():
    budget = Budget(rlimit=2000)
    result = search(hard_query(), budget)
    assert result.status == SearchStatus.UNKNOWN
    assert result.reason == "resource limit of 2000 z3 units spent"
    assert 2000 <= budget.units < 4000  # z3 stops at its first step past the limit
    # The next query of the same check gets nothing more.
    assert search(hard_query(), budget).reason == result.reason


def test_units_are_counted_per_query_though_z3_counts_per_context():
    """z3's count is cumulative in a context: a second query in one context is
    charged its own work, not the context's whole count."""
    ctx = bv.Context(32, {"x": Range(2, 1 << 12), "y": Range(2, 1 << 12)})
    first, second = Budget(rlimit=10**9), Budget(rlimit=10**9)
    assert search(factoring(ctx), first).status == SearchStatus.SAT
    solver = factoring(ctx)
    assert search(solver, second).status == SearchStatus.SAT
    counted = solver.statistics().get_key_value("rlimit count")  # both queries' work
    assert 0 < second.units <= counted - first.units


def test_bound_status_orders_verdicts():
    assert bound_status(Maximum(3, {}, exact=False), 2, False) == Status.REFUTED
    assert bound_status(Maximum(2, {}, exact=False), 2, False) == Status.UNKNOWN
    assert bound_status(Maximum(2, {}, exact=True), 2, False) == Status.PROVED
    assert bound_status(Maximum(1, {}, exact=True), 2, True) == Status.REFUTED


def test_wide_values_do_not_wrap_around():
    """Rows 2^31 bytes apart (the top of the shared window) stay apart: same bank,
    different words, 2-way; a narrow bit-vector would have aliased them."""
    spec = parse_text(
        "dtype f32\nbuffer align 4\nlayout A = (_2,_32):(0x20000000,_1)\n"
        "access rd = ld.shared.b32 A(lane / 16, lane % 16)\n"
        "check bijective A\ncheck conflict_free rd\n"
    )
    results = {r.property: r for r in run_spec(spec)}
    assert results["bijective A"].status == Status.PROVED
    assert results["conflict_free rd"].status == Status.REFUTED
    assert results["conflict_free rd"].max_ways == 2


def test_addresses_beyond_the_shared_window_are_rejected():
    """The hardware wraps at 2^32: a stride of 2^40 would alias rows there, so it is
    an error at the layout, not a proof."""
    spec = parse_text(
        "dtype f32\nlayout A = (_2,_32):(0x10000000000,_1)\ncheck bijective A\n", "wide.spec"
    )
    with pytest.raises(SpecError, match="expected them below 2\\^32"):
        run_spec(spec)


@pytest.mark.parametrize("prop", ["in_bounds", "aligned"])
def test_a_planted_wrong_violation_model_is_caught_by_the_replay(prop, monkeypatch):
    """A solver 'counterexample' that satisfies the property is an internal error,
    never printed as a refutation."""
    program = Program(
        parse_text(
            "dtype f16\nbuffer align 128\nlayout A = (8,64):(64,1)\n"
            "access rd = ldmatrix.x1 A(lane, 0)\n"
        )
    )
    access = program.access("rd", None)
    good = {n: r.lo for n, r in access.ranges.items()}
    # The solver "finds" a violation whose values satisfy the property.
    monkeypatch.setattr(addresses, "search", lambda solver, budget: Search(SearchStatus.SAT))
    monkeypatch.setattr(addresses, "decode", lambda ctx, model, names: good)
    with pytest.raises(InternalError, match="does not replay"):
        if prop == "in_bounds":
            props.in_bounds(program, access, Budget(10))
        else:
            props.aligned(program, access, 16, Budget(10))


FOUR_BANK_CHECKS = """\
dtype f16
buffer align 128
layout L = (8,64):(64,1)
access a = ldmatrix.x4 L(lane % 8, 8 * (lane / 8) + 32 * q) for q in 0..2
check conflict_free a
check max_ways <= 8 a
check max_ways == 8 a
check wavefronts <= 32 a
"""


def test_bank_figures_are_searched_once_per_access(monkeypatch):
    """Four bank checks read one search: a timed-out search is not redone per check
    (it would get the same allowance again, and a spec would take checks x timeout)."""
    calls = []

    def timed_out(query, budget):
        calls.append(1)
        start = query.start()
        return Maximum(query.cost(start).wavefronts, start, False, "timeout after 60 s")

    monkeypatch.setattr(props.BankQuery, "wavefronts", timed_out)
    results = run_spec(parse_text(FOUR_BANK_CHECKS, "four.spec"), engine="z3")
    assert len(calls) == 1
    assert [r.status for r in results[-4:]] == [
        Status.REFUTED,
        Status.PROVED,
        Status.PROVED,
        Status.UNKNOWN,
    ]
    assert results[-1].reason == "timeout after 60 s"


@pytest.mark.parametrize("engine", ["z3", "enumeration"])
def test_no_time_for_the_bank_search_gives_unknown_or_a_replayed_refutation(engine):
    results = {
        r.property: r
        for r in run_spec(parse_text(FOUR_BANK_CHECKS, "f.spec"), timeout=0, engine=engine)
    }
    bank = [
        r for p, r in results.items() if p.split()[0] in ("conflict_free", "max_ways", "wavefronts")
    ]
    assert all(r.status != Status.PROVED for r in bank)
    assert any(r.status == Status.UNKNOWN for r in bank)
