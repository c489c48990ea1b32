"""Division by a value derived from the block's id: Triton's tutorial matmul
(tests/data/ptx/triton_matmul_hinted_sm80.ptx, BLOCK 128x128x64, specialised at
M = N = K = 4096) divides ``pid % num_pid_in_group`` by ``group_size_m = min(num_pid_m
- first_pid_m, 8)``, which is 0 from block 1024 on, the first block past the grid of
32 x 32 tiles the launch makes. Without --grid its 48 cp.async are UNKNOWN, naming
that block; under --grid 1024 the division is exact and every copy is decided. The
decided sources and destinations are checked against oracle/ptx_interpreter.py, a
concrete PTX interpreter written apart, block by block."""

from __future__ import annotations

import itertools
import os

import conftest
import pytest

from oracle.ptx_interpreter import PtxRunError, ThreadAccess, run_block
from verify import api
from verify.model.expr import Expr, evaluate, free_vars
from verify.ptx import memory
from verify.ptx.check import Kernel, Options, check_ptx
from verify.ptx.parse import read_ptx
from verify.smt.solve import Status

PTX = os.path.join(conftest.DATA, "ptx", "triton_matmul_hinted_sm80.ptx")
SIZES = {3: 4096, 4: 4096, 5: 128, 6: 4096, 7: 4096, 8: 4096}  # M, N, K (2 tiles), strides
ASSUME = tuple(f"param_{i}={v}" for i, v in SIZES.items())
POINTERS = {0: 1 << 32, 1: 2 << 32, 2: 3 << 32}  # a_ptr, b_ptr, c_ptr (256-byte aligned)
# run_block's parameters: the pointers and the sizes
PARAMS: dict[int | str, int | bytes] = {i: v for i, v in [*POINTERS.items(), *SIZES.items()]}


def _options(grid=None, **more) -> Options:
    return Options(
        assume=ASSUME,
        grid=grid,
        global_align=256,
        shared_align=128,
        dynamic_shared=98304,
        **more,
    )


def _copies(results):
    return [r for r in results if r.facts.get("instruction", "").startswith("cp.async")]


def test_without_a_grid_the_copies_name_the_block_whose_divisor_is_0():
    copies = _copies(check_ptx(PTX, _options()))
    assert len(copies) == 48  # one UNKNOWN per copy
    assert all(r.status is Status.UNKNOWN for r in copies)
    assert all("is 0 at ctaid_x=1024" in r.reason for r in copies)
    assert all("--grid 1024 or fewer decides it" in r.reason for r in copies)


def test_the_interpreter_divides_by_0_at_that_block_and_not_before():
    with open(PTX, encoding="utf-8") as f:
        ptx = f.read()
    run_block(ptx, "matmul_kernel", (128, 1, 1), PARAMS, (1023, 0, 0), (1024, 1, 1), threads=[0])
    with pytest.raises(PtxRunError):
        run_block(
            ptx, "matmul_kernel", (128, 1, 1), PARAMS, (1024, 0, 0), (1025, 1, 1), threads=[0]
        )


def test_under_the_launchs_grid_every_copy_is_decided_ideal():
    copies = _copies(check_ptx(PTX, _options(grid=(1024, 1, 1))))
    assert len(copies) == 48 * 4
    assert all(r.status is Status.PROVED for r in copies), {r.reason for r in copies}
    figures = {(r.wavefronts, r.ideal_wavefronts) for r in copies if "conflict_free" in r.property}
    assert figures == {(4, 4)}


def _reader():
    module = read_ptx(PTX)
    fn = module.entries()[0]
    k = Kernel(module, fn, _options(grid=(1024, 1, 1)))
    by_line: dict[int, memory.Access] = {}
    for event in k.trace().events:
        if event.instr.opcode.startswith("cp.async."):
            by_line.setdefault(event.instr.line, memory.access_of(event, k.ctx, k.symbol))
    return k, by_line


def _pairs(k, access, fixed, lanes, base):
    """Every (destinations, sources) pair of `lanes` the reader allows at `fixed`."""
    dst, src = access.offset, access.source
    assert isinstance(dst, Expr) and isinstance(src, Expr)
    names = sorted((free_vars(dst) | free_vars(src)) - {"lane", *fixed})
    out = set()
    for values in itertools.product(
        *(range(k.ctx.ranges[n].lo, k.ctx.ranges[n].hi) for n in names)
    ):
        env = {**fixed, **dict(zip(names, values))}
        out.add(
            tuple(
                (base + evaluate(dst, {**env, "lane": lane}), evaluate(src, {**env, "lane": lane}))
                for lane in lanes
            )
        )
    return out


def _source(t: ThreadAccess) -> int:
    """The global source address the interpreter gives every cp.async thread."""
    assert t.source is not None, f"thread {t.thread}: a cp.async without its source"
    return t.source


@pytest.mark.parametrize("block", [0, 7, 255, 256, 517, 1023])
def test_every_copy_is_the_readers_source_and_destination(block):
    """Warps 0 and 3 of the block: each executed cp.async's (shared destination,
    global source) per lane is one the reader's expressions give at that block, and
    its cost by rule S on those addresses is the 4 wavefronts decided."""
    with open(PTX, encoding="utf-8") as f:
        ptx = f.read()
    threads = list(range(32)) + list(range(96, 128))
    run = run_block(
        ptx, "matmul_kernel", (128, 1, 1), PARAMS, (block, 0, 0), (1024, 1, 1),
        shared_base=0, threads=threads,
    )  # fmt: skip
    k, by_line = _reader()
    compared = 0
    for acc in run.accesses:
        if not acc.opcode.startswith("cp.async"):
            continue
        access = by_line[acc.line]
        assert not access.reason, access.reason
        pointer = POINTERS[int(access.source_param.rsplit("_", 1)[1])]
        base = run.shared_layout[k.shared_label(access.allocation or "")]
        for warp, ts in acc.warps().items():
            live = [t for t in ts if t.active]
            lanes = [t.thread % 32 for t in live]
            shown = tuple((t.address, _source(t) - pointer) for t in live)
            assert shown in _pairs(k, access, {"ctaid_x": block, "warp": warp}, lanes, base)
            if len(live) == 32:  # rule S on the interpreter's addresses: the decided 4
                cost = api.wavefronts(
                    "cp.async.cg.16", [t.address for t in live], [_source(t) for t in live]
                )
                assert cost == 4, (acc.line, block, warp, cost)
            compared += 1
    assert compared >= 2 * 48
