"""The decision portfolio: the enumeration engine against the plain evaluator and
bank model, both engines against each other on the catalog, and the routing.

(Random specs through both engines: tests/engines/test_differential.py.)
"""

import csv
import glob
import json
import os

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import ROOT, SPECS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verify.cli import main
from verify.engines import decide, enumeration, plain
from verify.engines.options import RunOptions
from verify.engines.runner import run_spec
from verify.errors import InternalError, SpecError
from verify.model.bank import bank_cost, copy_cost
from verify.model.expr import BinOp, Const, Range, Var, evaluate
from verify.model.instructions import parse_instruction
from verify.model.program import Program
from verify.smt.solve import Budget, Status
from verify.spec.parser import parse_file, parse_text

CATALOG = sorted(glob.glob(os.path.join(SPECS, "**", "*.spec"), recursive=True))
RANGES = {"x": Range(0, 7), "y": Range(3, 12)}


# -- vectorised evaluation is `evaluate` -------------------------------------------


@st.composite
def expression(draw, depth=3):
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        if draw(st.booleans()):
            return Var(draw(st.sampled_from(sorted(RANGES))))
        return Const(draw(st.sampled_from([0, 1, 2, 3, 7, 64, 1 << 40, (1 << 61) + 5])))
    op = draw(st.sampled_from(["+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>"]))
    a = draw(expression(depth - 1))
    if op in ("/", "%"):
        b = Const(draw(st.sampled_from([1, 3, 8, 33])))
    elif op in ("<<", ">>"):
        b = draw(st.sampled_from([Const(3), Var("x")]))
    else:
        b = draw(expression(depth - 1))
    return BinOp(op, a, b)


@settings(
    max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(expression())
def test_vectorised_evaluation_equals_evaluate_at_every_point(e):
    """int64 where values stay below 2^62, Python integers above: both exact."""
    try:
        vectorised = enumeration.Vectorised([e], RANGES)
    except SpecError:
        return  # rejected (a subtraction that may go negative) by both paths
    domain = enumeration.Domain.of(RANGES)
    ((start, env),) = list(domain.chunks())
    values = vectorised(e, env, domain.shape_of(env)).ravel()
    for i, got in enumerate(values):
        assert int(got) == evaluate(e, domain.values_at(start + i)), e


@settings(
    max_examples=100, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(st.lists(expression(), min_size=1, max_size=4), st.lists(st.integers(0, 15), max_size=6))
def test_values_kept_over_a_domain_are_each_expressions_own(parts, picks):
    _kept_values_are_each_expressions_own(parts, picks)


@pytest.mark.parametrize("chunk", [6, 20])
def test_values_are_not_kept_over_a_domain_walked_in_chunks(monkeypatch, chunk):
    """A domain of more than one chunk keeps no values: each chunk's are its own."""
    monkeypatch.setattr(enumeration, "CHUNK", chunk)
    x, y = Var("x"), Var("y")
    shared = BinOp("*", BinOp("+", x, y), Const(3))
    _kept_values_are_each_expressions_own([shared, BinOp("^", shared, x)], [0, 1, 2])


def _kept_values_are_each_expressions_own(parts, picks):
    """Over one small domain each subexpression's values are kept by its shape, for
    every later evaluation (int64 and Python integers apart): trees built of shared
    and repeated parts, evaluated in turn, each equal `evaluate` at every point."""
    trees = list(parts)
    for k in picks:  # sums of earlier trees: their parts again, and copies of them
        trees.append(BinOp("+", trees[k % len(trees)], trees[(k // 3) % len(trees)]))
    domain = enumeration.Domain.of(RANGES)
    enumeration.forget_bank_searches()  # nothing kept from other tests
    for e in trees:
        try:
            vectorised = enumeration.Vectorised([e], RANGES, domain)
        except SpecError:
            continue
        for start, env in domain.chunks():
            values = vectorised(e, env, domain.shape_of(env)).ravel()
            for i, got in enumerate(values):
                assert int(got) == evaluate(e, domain.values_at(start + i)), e


@pytest.mark.parametrize("chunk", [6, 1 << 20])
def test_a_chunks_shape_is_numpys_broadcast_and_its_dict_the_callers_own(monkeypatch, chunk):
    monkeypatch.setattr(enumeration, "CHUNK", chunk)
    domain = enumeration.Domain.of({"a": Range(0, 3), "b": Range(2, 7), "c": Range(0, 2)})
    for _ in range(2):  # a domain of one chunk: its arrays are kept, its dict is new
        for _, env in domain.chunks():
            assert domain.shape_of(env) == np.broadcast_shapes(*(np.shape(a) for a in env.values()))
            env["$base"] = np.int64(4)  # bijective adds a name to the dict it is given
            assert domain.shape_of(env) == np.broadcast_shapes(*(np.shape(a) for a in env.values()))
    assert all("$base" not in env for _, env in domain.chunks())


def test_domain_chunks_walk_every_point_once_in_order(monkeypatch):
    monkeypatch.setattr(enumeration, "CHUNK", 6)
    domain = enumeration.Domain.of({"a": Range(0, 3), "b": Range(2, 7), "c": Range(0, 2)})
    seen: list[tuple[int, ...]] = []
    for start, env in domain.chunks():
        shape = domain.shape_of(env)
        block = [
            tuple(int(v) for v in np.broadcast_to(env[n], shape).ravel()) for n in domain.names
        ]
        assert start == len(seen)
        seen += list(zip(*block))
    assert seen == [(a, b, c) for a in range(3) for b in range(2, 7) for c in range(2)]
    assert [domain.values_at(i) for i in (0, 29)] == [
        {"a": 0, "b": 2, "c": 0},
        {"a": 2, "b": 6, "c": 1},
    ]


# -- the vectorised bank model is verify.model.bank -------------------------------------


@pytest.mark.parametrize(
    "instr",
    [
        "ld.shared.b8",
        "ld.shared.b16",
        "st.shared.b32",
        "ld.shared.b64",
        "st.shared.v4.b32",
        "ldmatrix.x4",
        "stmatrix.x2",
    ],
)
def test_numpy_phase_costs_equal_the_bank_model(instr):
    program = Program(parse_text(f"dtype b8\nlayout L = (4096):(1)\naccess a = {instr} L(lane)\n"))
    access = program.access("a", None)
    instruction = parse_instruction(instr)
    rng = np.random.default_rng(0)
    step = instruction.bytes_per_address
    addresses = rng.integers(0, 64, size=(200, instruction.address_lanes)) * step
    addresses[:50] = addresses[:50] % (4 * step)  # many shared words: broadcasts
    costs = enumeration.phase_costs(access, addresses)
    for row, cost in zip(addresses, costs):
        assert list(cost) == [p.ways for p in bank_cost(instruction, list(row)).phases]


@pytest.mark.parametrize("instr", ["cp.async.ca.4", "cp.async.ca.8", "cp.async.ca.16"])
def test_rule_c_evaluated_once_per_distinct_bank_row_is_rule_c_everywhere(instr):
    """`enumeration.rule_c_costs` evaluates each distinct row of a phase's banks once:
    instances drawn from a few patterns, shuffled, whose global sources differ above
    the banks (the same row, other addresses) and whose phases mix patterns, each
    cost as `verify.model.bank.copy_cost` gives it."""
    instruction = parse_instruction(instr)
    size = instruction.bytes_per_address
    rng = np.random.default_rng(5)
    patterns = rng.integers(0, 64, size=(2, 5, 32)) * size
    pick = rng.integers(0, 5, size=(600, 32 // instruction.phase_lanes))
    lanes = np.repeat(pick, instruction.phase_lanes, axis=1)
    dst = np.take_along_axis(patterns[0], lanes, axis=0)
    src = np.take_along_axis(patterns[1], lanes, axis=0)
    src = src + rng.integers(0, 1 << 20, size=(600, 1)) * 128
    costs, exact = enumeration.copy_costs(instruction, dst, src)
    assert exact.all() and len(set(costs.tolist())) > 1
    for d, s, cost in zip(dst, src, costs):
        assert cost == copy_cost(instruction, list(d), list(s)).wavefronts


COPIES_TWICE = """\
dtype f32
global align 16
layout S = (32,32):(32,1)
layout G = (32,32):(1024,1)
access one = cp.async.cg.16 S(lane / 8 + r * 4, lane % 8 * 4) from G(r, lane % 8 * 4) for r in 0..8
access two = cp.async.cg.16 S(lane / 8 + r * 4, lane % 8 * 4) from G(r, lane % 8 * 4) for r in 0..8
access other = cp.async.cg.16 S(r, lane % 8 * 4) from G(r, lane % 8 * 4) for r in 0..8
"""


def test_one_copy_asked_twice_under_two_names_is_searched_once(monkeypatch):
    """`enumeration.copy_wavefronts` keeps each Program's copy searches by the exact
    question: the second name gets the first's maxima, replayed on itself; another
    question is searched anew."""
    from verify.engines import copy_rules

    searched: list[int | str] = []
    real = copy_rules.copy_costs

    def counted(*a):
        searched.append(1)
        return real(*a)

    monkeypatch.setattr(copy_rules, "copy_costs", counted)
    program = Program(parse_text(COPIES_TWICE, "twice.spec"))
    figures = {}
    for name in ("one", "two", "other"):
        before = len(searched)
        figures[name] = enumeration.copy_wavefronts(program, program.access(name, None), Budget())
        searched[before:] = [name] if len(searched) > before else []
    assert searched == ["one", "other"]
    assert figures["one"] == figures["two"] != figures["other"]
    one, other = figures["one"].exact, figures["other"].exact
    assert one is not None and other is not None
    assert (one.value, other.value) == (18, 6)


@pytest.mark.parametrize("rows", [1, 64, enumeration.BASE_ROWS])
def test_copies_costed_at_several_bases_at_once_are_each_bases_own(monkeypatch, rows):
    """`copy_wavefronts` costs a chunk at a group of global bases in one call: with
    one base per call (rows 1), a few, or all, every figure and its first (instance,
    base) is the same."""
    spec = COPIES_TWICE + (
        "access ca = cp.async.ca.8 S(lane / 16 + r * 2, lane % 16 * 2) "
        "from G(r, lane % 16 * 2 + 4) for r in 0..16\n"
    )
    monkeypatch.setattr(enumeration, "BASE_ROWS", rows)
    program = Program(parse_text(spec, "bases.spec"))
    got = [
        enumeration.copy_wavefronts(program, program.access(name, None), Budget())
        for name in ("one", "other", "ca")
    ]
    monkeypatch.setattr(enumeration, "BASE_ROWS", 1)
    alone = Program(parse_text(spec, "bases.spec"))
    expected = [
        enumeration.copy_wavefronts(alone, alone.access(name, None), Budget())
        for name in ("one", "other", "ca")
    ]
    assert got == expected and len(program.global_bases(program.access("one", None))) == 8


def test_an_enumerated_maximum_that_does_not_replay_is_an_internal_error(monkeypatch):
    program = Program(
        parse_text(
            "dtype f16\nlayout A = (8,64):(64,1)\n"
            "access rd = ldmatrix.x1 A(lane, 8 * q) for q in 0..8\n"
        )
    )
    access = program.access("rd", None)
    real = enumeration.phase_costs
    monkeypatch.setattr(plain, "PLAIN_BANK_POINTS", 0)  # the numpy path, whose maxima replay
    monkeypatch.setattr(enumeration, "phase_costs", lambda a, addr: real(a, addr) + 1)
    with pytest.raises(InternalError, match="replays as 8"):
        enumeration.bank_figures(access, Budget())


# -- both engines, one answer ------------------------------------------------------


def answers(results):
    return [(r.property, r.status, r.max_ways, r.wavefronts, r.facts) for r in results]


# Every budget here counts work, never seconds, so no verdict turns on the machine's
# load. The largest z3 budget a catalog check spends is 203,785,665 resource units
# (specs/flash_attention2/fwd_hdim128.spec: benchmarks/results/rlimit_catalog.md);
# Z3_UNITS allows each check about twice that.
Z3_UNITS = 400_000_000
Z3 = RunOptions.units(Z3_UNITS, "z3")
ENUMERATE = RunOptions("enumeration", seconds=None)  # its work is fixed by the domain
# The z3 side of the whole catalog takes minutes on a 2-core machine, nearly all of it
# on six specs of 55-307 M units in all (rlimit_catalog.csv; every other spec is under
# 5 M): those above SMALL_UNITS are the marked `exhaustive` set, which .ci/run runs
# apart. (A large spec drawn by a fixed seed used to run every time as well: the one
# drawn, mma_v2_fp16_kwidth4, cost 48 s of CPU there, nearly all in z3's rule S search
# on one copy; rule S's encoding is compared with enumeration on every run by
# tests/model/test_hw_symbolic.py.)
SMALL_UNITS = 10_000_000


def _catalog_units() -> dict[str, int]:
    """Each spec's z3 units in all, as recorded (a spec not recorded counts as small)."""
    with open(os.path.join(ROOT, "benchmarks", "results", "rlimit_catalog.csv")) as f:
        return {os.path.join(ROOT, r["spec"]): int(r["total_units"]) for r in csv.DictReader(f)}


def _z3_parity_cases() -> list:
    units = _catalog_units()
    return [
        pytest.param(
            spec,
            id=os.path.basename(spec),
            marks=[pytest.mark.exhaustive] if units.get(spec, 0) > SMALL_UNITS else [],
        )
        for spec in CATALOG
    ]


@pytest.mark.parametrize("spec", _z3_parity_cases())
def test_both_engines_decide_the_catalog_alike(spec):
    """Every verdict and figure alike, cp.async.cg copies included (the solver encodes
    rule S, `verify.engines.solver.RuleSQuery`)."""
    parsed = parse_file(spec)
    solver = run_spec(parsed, Z3)
    enumerated = run_spec(parsed, ENUMERATE)
    assert [r.property for r in solver] == [r.property for r in enumerated]
    assert answers(solver) == answers(enumerated)
    assert {r.engine for r in solver} == {"z3"}
    assert {r.engine for r in enumerated} == {"enumeration"}


@pytest.mark.parametrize("spec", CATALOG, ids=os.path.basename)
def test_enumeration_decides_every_catalog_check_as_it_expects(spec):
    """The enumeration side over the whole catalog on every run: each check decided
    (never UNKNOWN) and ending as its `expect` says (proved when it has none)."""
    results = run_spec(parse_file(spec), ENUMERATE)
    assert [r.property for r in results if not r.passed] == []


def _decided(results):
    """Everything a result says but its times: figures, facts, witnesses."""
    return [
        (r.property, r.status, r.max_ways, r.wavefronts, r.facts, r.reason, r.counterexample)
        for r in results
    ]


@pytest.mark.parametrize("spec", CATALOG, ids=os.path.basename)
def test_small_domains_walked_in_plain_python_decide_as_numpy_does(spec, monkeypatch):
    """`verify.engines.plain` (domains up to PLAIN_POINTS, bank figures up to
    PLAIN_BANK_POINTS, raised here so that more of each spec takes it) against the
    numpy path alone: every verdict, figure, fact and counterexample alike."""
    parsed = parse_file(spec)
    walked = []
    monkeypatch.setattr(plain, "PLAIN_POINTS", 1 << 14)
    monkeypatch.setattr(plain, "PLAIN_BANK_POINTS", 1 << 11)
    monkeypatch.setattr(plain, "LOADED_POINTS", 1 << 14)  # numpy is imported here
    monkeypatch.setattr(plain, "LOADED_BANK_POINTS", 1 << 11)

    def counted(*a, walk=plain.walk):
        walked.append(1)
        return walk(*a)

    monkeypatch.setattr(plain, "walk", counted)
    by_plain = run_spec(parsed, ENUMERATE)
    monkeypatch.setattr(plain, "PLAIN_POINTS", 0)
    by_numpy = run_spec(parsed, ENUMERATE)
    assert _decided(by_plain) == _decided(by_numpy)
    assert walked, "no check of this spec took the plain path"


SW345 = """\
dtype b8
buffer align 16
layout L = Sw<3,4,5> o smem_ptr[8b](unset) o (8,16):(1,16)
access a = st.shared.v2.b64 L(0, lane % 16)
check max_ways <= 2 a
check wavefronts <= 6 a
"""


@pytest.mark.parametrize("engine", ["z3", "enumeration"])
def test_the_64_bit_store_that_timed_out_is_decided(engine):
    """Issue 13: the wavefront sum as an adder ended UNKNOWN after 60 s here."""
    results = run_spec(parse_text(SW345, "sw345.spec"), RunOptions.units(Z3_UNITS, engine))
    assert [r.status for r in results] == [Status.PROVED] * 4
    assert (results[-1].max_ways, results[-1].wavefronts) == (2, 6)


def test_an_enumerated_refutation_shows_a_real_instance_in_the_lane_table():
    spec = parse_text(
        "dtype f32\nlayout A = (32,32):(32,1)\n"
        "access col = ld.shared.b32 A(lane, c) for c in 0..32\n"
        "check conflict_free col\n",
        "col.spec",
    )
    result = run_spec(spec, ENUMERATE)[-1]
    cex = result.counterexample
    assert result.status == Status.REFUTED and result.engine == "enumeration"
    assert cex is not None
    assert cex.instance == {"c": 0, "base": 0}
    assert [r.address for r in cex.rows] == [128 * lane for lane in range(32)]
    assert all(r.banks == (0,) for r in cex.rows)


# -- routing ----------------------------------------------------------------------


def test_auto_enumerates_up_to_the_limit_and_asks_the_solver_above():
    limit = decide.ENUMERATION_LIMIT
    assert decide.engine_for("auto", limit) == "enumeration"
    assert decide.engine_for("auto", limit + 1) == "z3"
    assert decide.engine_for("z3", 1) == "z3"
    assert decide.engine_for("enumeration", 10 * limit) == "enumeration"
    with pytest.raises(ValueError, match="expected one of auto, z3, enumeration"):
        decide.engine_for("bitwuzla", 1)


def test_a_large_domain_goes_to_the_solver_and_a_small_one_is_enumerated():
    big = parse_text(
        "dtype f16\nbuffer align 128 stages 8 stage_bytes 33554432\n"
        "layout T = Sw<3,3,3> o (4096,4096):(4096,1)\n"
        "access row = ld.shared.b32 T(lane, 2 * lane)\n"
        "check bijective T\n",
        "big.spec",
    )
    results = {r.property: r for r in run_spec(big, RunOptions.units(Z3_UNITS))}
    assert results["bijective T"].engine == "z3"  # 134 M (coordinate, stage) pairs
    assert results["in_bounds row"].engine == "enumeration"  # 32 lanes
    assert results["bijective T"].status == Status.PROVED


def test_a_sort_too_large_for_memory_is_unknown_not_a_pass(monkeypatch):
    monkeypatch.setattr(enumeration, "MAX_SORTED", 100)
    spec = parse_text("dtype f16\nlayout T = (16,16):(16,1)\ncheck bijective T\n", "t.spec")
    result = run_spec(spec, ENUMERATE)[0]
    assert result.status == Status.UNKNOWN and "solver engine" in result.reason


# -- the report ----------------------------------------------------------------


def run_cli(*args):
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.output


def test_json_names_the_engine_and_both_times():
    code, out = run_cli(
        os.path.join(SPECS, "seed", "ldmatrix_x4_16x16.spec"), "--json", "--engine", "z3"
    )
    checks = json.loads(out)["checks"]
    assert code == 0 and {c["engine"] for c in checks} == {"z3"}  # refuted as expected
    for c in checks:
        assert isinstance(c["wall_seconds"], float) and isinstance(c["solver_seconds"], float)
        assert 0 <= c["solver_seconds"] <= c["wall_seconds"]
    swizzled = [c for c in checks if c["property"] in ("conflict_free swz", "wavefronts == 4 swz")]
    assert swizzled[0]["solver_seconds"] > 0  # the one search, charged once
    assert swizzled[1]["solver_seconds"] == 0


def test_text_says_which_engine_decided_each_check():
    path = os.path.join(SPECS, "seed", "ldmatrix_x1_8x64_swizzled.spec")
    for engine in ("z3", "enumeration"):
        code, out = run_cli(path, "--engine", engine)
        lines = [line for line in out.splitlines() if line.startswith(path)]
        assert code == 0 and lines
        assert all(line.endswith(f" ms, by {engine}]") for line in lines)


def test_an_unknown_engine_is_a_usage_error():
    code, out = run_cli(
        os.path.join(SPECS, "seed", "ldmatrix_x1_8x64_plain.spec"), "--engine", "bitwuzla"
    )
    assert code == 2 and "'bitwuzla' is not one of" in out
