"""Loops whose trip count varies with the block or the warp (tests/data/ptx/varying_trip.ptx),
against oracle/ptx_interpreter.py, a concrete PTX interpreter written apart.

A counter read after such a loop holds the trip its own block or warp took: the
reader writes the loop's last iteration as an exact expression in ``ctaid_x`` or
``warp`` (`verify.ptx.loops.trip_expression`), never the largest trip. Before, the
after-loop store of ``after_loop`` under ``--grid 2`` was PROVED conflict-free,
where block 1 stores 8 bytes apart: 2 wavefronts."""

from __future__ import annotations

import itertools
import os

import conftest
import pytest

from oracle.ptx_interpreter import run_block
from verify import api
from verify.model.expr import Expr, Range, evaluate, free_vars
from verify.ptx import loops, memory
from verify.ptx.check import Kernel, Options, check_ptx
from verify.ptx.parse import read_ptx
from verify.ptx.values import Context
from verify.smt.solve import Status

PTX = os.path.join(conftest.DATA, "ptx", "varying_trip.ptx")

# (kernel, block, grid): grid 2 makes the trip affine in ctaid_x (2 - ctaid_x), 3 and
# more make it max(1, 2 - ctaid_x) (a step), per_warp's is warp + 1
LAUNCHES = [
    ("after_loop", (32, 1, 1), (2, 1, 1)),
    ("after_loop", (32, 1, 1), (3, 1, 1)),
    ("after_loop", (32, 1, 1), (40, 1, 1)),
    ("after_loop", (32, 1, 1), (100, 1, 1)),
    ("per_warp", (64, 1, 1), (1, 1, 1)),
    ("in_loop", (32, 1, 1), (2, 1, 1)),
]
IDS = [f"{k}-grid{g[0]}" for k, _, g in LAUNCHES]


def _reader(kernel, block, grid):
    module = read_ptx(PTX)
    fn = next(f for f in module.entries() if f.name == kernel)
    k = Kernel(module, fn, Options(kernel=kernel, block=block, grid=grid))
    by_line: dict[int, memory.Access] = {}
    for event in k.trace().events:
        by_line.setdefault(event.instr.line, memory.access_of(event, k.ctx, k.symbol))
    return k, by_line


def _vectors(k, access, fixed, lanes, base):
    """Every address vector of `lanes` the reader's address allows at `fixed`."""
    offset = access.offset
    assert isinstance(offset, Expr)
    names = sorted(free_vars(offset) - {"lane", *fixed})
    out = set()
    for values in itertools.product(
        *(range(k.ctx.ranges[n].lo, k.ctx.ranges[n].hi) for n in names)
    ):
        env = {**fixed, **dict(zip(names, values))}
        out.add(tuple(base + evaluate(offset, {**env, "lane": lane}) for lane in lanes))
    return out, names


@pytest.mark.parametrize("kernel, block, grid", LAUNCHES, ids=IDS)
def test_every_block_and_warp_is_the_readers_address(kernel, block, grid):
    with open(PTX, encoding="utf-8") as f:
        ptx = f.read()
    k, by_line = _reader(kernel, block, grid)
    after = max(by_line) if kernel != "in_loop" else 0  # the store after the loop
    compared = 0
    for c in range(grid[0]):
        run = run_block(ptx, kernel, block=block, ctaid=(c, 0, 0), grid=grid)
        for acc in run.accesses:
            access = by_line[acc.line]
            assert not access.reason, access.reason
            base = run.shared_layout[k.shared_label(access.allocation or "")]
            for warp, threads in acc.warps().items():
                lanes = [t.thread % 32 for t in threads]
                vectors, names = _vectors(k, access, {"ctaid_x": c, "warp": warp}, lanes, base)
                shown = tuple(t.address for t in threads)
                assert shown in vectors, (acc.line, c, warp)
                if acc.line == after:  # no loop variable left: exactly the one vector
                    assert not names and vectors == {shown}, (c, warp, names)
                compared += 1
    assert compared


@pytest.mark.parametrize("kernel, block, grid", LAUNCHES, ids=IDS)
def test_each_figure_is_the_worst_executed_warp(kernel, block, grid):
    """The decided conflict_free figure of each instruction equals the costliest
    warp the interpreter executes over every block of the grid."""
    with open(PTX, encoding="utf-8") as f:
        ptx = f.read()
    worst: dict[int, int] = {}
    for c in range(grid[0]):
        run = run_block(ptx, kernel, block=block, ctaid=(c, 0, 0), grid=grid)
        for acc in run.accesses:
            for threads in acc.warps().values():
                cost = api.wavefronts(acc.opcode, [t.address for t in threads])
                worst[acc.line] = max(worst.get(acc.line, 0), cost)
    results = check_ptx(PTX, Options(kernel=kernel, block=block, grid=grid))
    decided = {
        r.facts["ptx_line"]: (r.status, r.wavefronts)
        for r in results
        if r.property.startswith("conflict_free")
    }
    assert set(decided) == set(worst)
    for line, (status, figure) in decided.items():
        assert figure == worst[line], (line, figure, worst[line])
        assert status == (Status.PROVED if worst[line] == 1 else Status.REFUTED), line


def test_a_counterexample_names_the_block_whose_trip_it_takes():
    results = check_ptx(PTX, Options(kernel="after_loop", grid=(2, 1, 1)))
    (refuted,) = [r for r in results if r.status == Status.REFUTED]
    assert refuted.counterexample is not None
    assert refuted.counterexample.instance.get("ctaid_x") == 1


def test_a_trip_count_affine_in_its_variables_is_written_affine():
    ctx = Context({"ctaid_x": Range(0, 4), "warp": Range(0, 2)})
    trips: dict[tuple[int, ...], int] = {(c, w): 5 - c + 2 * w for c in range(4) for w in range(2)}
    e = loops.trip_expression(["ctaid_x", "warp"], trips, ctx)
    assert e is not None
    for (c, w), n in trips.items():
        assert evaluate(e, {"ctaid_x": c, "warp": w}) == n


@pytest.mark.parametrize("seq", [[3, 3, 2, 2, 1], [1, 4, 4, 0, 2], [0, 5, 0, 5], [2, 1, 1, 1]])
def test_a_trip_count_of_one_variable_is_a_step_function(seq):
    ctx = Context({"ctaid_x": Range(0, len(seq))})
    e = loops.trip_expression(["ctaid_x"], {(i,): v for i, v in enumerate(seq)}, ctx)
    assert e is not None and free_vars(e) <= {"ctaid_x"}
    assert [evaluate(e, {"ctaid_x": i}) for i in range(len(seq))] == seq


def test_a_trip_count_not_written_leaves_the_value_after_the_loop_unknown():
    ctx = Context({"a": Range(0, 3), "b": Range(0, 3)})
    trips: dict[tuple[int, ...], int] = {(a, b): (a * b) % 2 for a in range(3) for b in range(3)}
    assert loops.trip_expression(["a", "b"], trips, ctx) is None


def test_a_counterexample_inside_the_loop_names_an_iteration_its_block_runs():
    """in_loop's address reads both the iteration and the block: under --grid 2 the
    2-way store is block 0's second iteration (block 1 runs one), stated as the
    guard ``[it0 < its block's count]`` holding there; under --grid 3 the engine's
    worst case (block 2 at it0 = 1, 16 bytes apart) never runs: UNKNOWN."""
    results = check_ptx(PTX, Options(kernel="in_loop", grid=(2, 1, 1)))
    (refuted,) = [r for r in results if r.status == Status.REFUTED]
    assert refuted.counterexample is not None
    assert refuted.counterexample.instance == {"ctaid_x": 0, "it0": 1, "base": 0}
    results = check_ptx(PTX, Options(kernel="in_loop", grid=(3, 1, 1)))
    (bank,) = [r for r in results if r.property.startswith("conflict_free")]
    assert bank.status == Status.UNKNOWN
