"""The PTX reader against oracle/ptx_interpreter.py, a concrete PTX interpreter
written apart (it shares no code with verify/ptx), on the hand-written kernels of
benchmarks/hardware/ptx/ at the launches benchmarks/hardware/ptx/runner.cu makes.

For every shared-memory instruction the interpreter executes, each warp's
addresses (its active lanes) at every instance must be one of the address vectors
the reader's symbolic address gives over its loop variables: the reader's model
contains every execution. Where the reader has no loop variable left, the
interpreter's executions are exactly its one vector. And each decided
conflict_free figure is at least the cost of every executed warp (verify's bank
model on the interpreter's addresses)."""

from __future__ import annotations

import itertools
import os

import conftest
import pytest

from oracle.ptx_interpreter import run_block
from verify import api
from verify.model.expr import Expr, evaluate, free_vars
from verify.ptx import memory
from verify.ptx.check import Kernel, Options, check_ptx
from verify.ptx.parse import read_ptx
from verify.smt.solve import Status

ROOT = conftest.ROOT
PTX = os.path.join(ROOT, "benchmarks", "hardware", "ptx", "ptx", "kernels_sm90.ptx")
MAX_POINTS = 1 << 14

# (kernel, block, parameters by index, dynamic shared bytes): runner.cu's launches
LAUNCHES = [
    ("transpose_unpadded", (32, 8, 1), {}, 0),
    ("transpose_padded", (32, 8, 1), {}, 0),
    ("transpose_xor", (32, 8, 1), {}, 0),
    ("ldmatrix_plain", (32, 1, 1), {}, 0),
    ("ldmatrix_sw333", (32, 1, 1), {}, 0),
    ("vector_ldst", (32, 1, 1), {}, 0),
    ("pipeline_double", (128, 1, 1), {2: 4}, 0),
    ("pipeline_triple_mod", (128, 1, 1), {2: 5}, 0),
    ("pipeline_shift", (128, 1, 1), {2: 4}, 16384),
    ("tail_dynamic", (256, 1, 1), {2: 200}, 2048),
]

pytestmark = pytest.mark.skipif(not os.path.isfile(PTX), reason="no PTX ground truth here")


def _options(kernel, block, params, dynamic) -> Options:
    return Options(
        kernel=kernel,
        block=block,
        grid=(1, 1, 1),
        assume=tuple(f"param_{i}={v}" for i, v in params.items()),
        dynamic_shared=dynamic or None,
    )


def _reader(kernel: str, options: Options):
    module = read_ptx(PTX)
    fn = next(f for f in module.entries() if f"{len(kernel)}{kernel}" in f.name)
    k = Kernel(module, fn, options)
    by_line: dict[int, memory.Access] = {}
    for event in k.trace().events:
        by_line.setdefault(event.instr.line, memory.access_of(event, k.ctx, k.symbol))
    return k, by_line


def _vectors(k: Kernel, access: memory.Access, warp: int, lanes: list[int], base: int):
    """Every address vector of `lanes` the reader's address allows for `warp`."""
    offset = access.offset
    assert isinstance(offset, Expr)
    names = sorted(free_vars(offset) - {"lane", "warp"})
    domains = [range(k.ctx.ranges[n].lo, k.ctx.ranges[n].hi) for n in names]
    out = set()
    for n, values in enumerate(itertools.product(*domains)):
        assert n < MAX_POINTS, f"{names}: too many points to enumerate here"
        env = dict(zip(names, values), warp=warp)
        out.add(tuple(base + evaluate(offset, {**env, "lane": lane}) for lane in lanes))
    return out, names


@pytest.mark.parametrize("kernel, block, params, dynamic", LAUNCHES, ids=[x[0] for x in LAUNCHES])
def test_reader_contains_every_execution(kernel, block, params, dynamic):
    with open(PTX, encoding="utf-8") as f:
        ptx = f.read()
    run = run_block(ptx, kernel, block=block, params=params, dynamic_shared_bytes=dynamic)
    k, by_line = _reader(kernel, _options(kernel, block, params, dynamic))
    checked = 0
    for acc in run.accesses:
        access = by_line.get(acc.line)
        assert access is not None, f"line {acc.line} {acc.opcode}: the reader saw no access"
        if access.allocation is None or not isinstance(access.offset, Expr):
            assert access.reason  # UNKNOWN, with its reason: nothing to compare
            continue
        label = k.shared_label(access.allocation or "")
        base = run.shared_layout[label]
        for warp, threads in acc.warps().items():
            live = [t for t in threads if t.active and t.used]
            if not live:
                continue
            lanes = [t.thread % 32 for t in live]
            vectors, names = _vectors(k, access, warp, lanes, base)
            shown = tuple(t.address for t in live)
            assert shown in vectors, (acc.line, acc.instance, warp)
            if not names:
                assert vectors == {shown}
            checked += 1
    assert checked


@pytest.mark.parametrize("kernel, block, params, dynamic", LAUNCHES, ids=[x[0] for x in LAUNCHES])
def test_decided_figures_bound_every_executed_warp(kernel, block, params, dynamic):
    with open(PTX, encoding="utf-8") as f:
        ptx = f.read()
    run = run_block(ptx, kernel, block=block, params=params, dynamic_shared_bytes=dynamic)
    results = check_ptx(PTX, _options(kernel, block, params, dynamic))
    figures = {
        r.facts["ptx_line"]: (r.facts["instruction"], r.wavefronts)
        for r in results
        if r.property.startswith("conflict_free")
        and r.status != Status.UNKNOWN
        and f"{len(kernel)}{kernel}" in r.facts["kernel"]
    }
    compared = 0
    for acc in run.accesses:
        if acc.line not in figures or acc.opcode.startswith("cp.async"):
            continue
        opcode, decided = figures[acc.line]
        for threads in acc.warps().values():
            live = [t for t in threads if t.active and t.used]
            if len(live) == 32:  # a whole warp: the figure of a full instruction
                cost = api.wavefronts(opcode, [t.address for t in live])
                assert decided is not None and cost <= decided, (acc.line, cost, decided)
                compared += 1
    assert compared or not figures
