"""TMA copies whose shared address reads a loop iteration of unknown trip count
(issue 25): Gluon tutorial 04 issues its loads in a loop of ceil(n / 64) - 1
iterations, n a parameter, so the iteration ranges over 2^20 values; its address
reads it only through the stage ``(it0 + 1) & 1``. verify.ptx.periods proves such
periods from the expression's shape and hopper_common.points enumerates one value
per residue class.

The oracles share no code with the reader: a brute-force evaluator of expression
trees written here (for the periods), and the concrete PTX interpreter of
oracle/ptx_interpreter.py (for the addresses), run on the sample with the
instructions it does not model replaced line for line by ones it does: the TMA copy
by an ``st.shared`` at its shared address, ``elect.sync`` by "lane 0", the warp-uniform
``shfl`` of the warp index by a ``mov``, the mbarrier wait by nothing.
"""

from __future__ import annotations

import json
import math
import operator
import random
import re
from pathlib import Path

import pytest

from oracle.ptx_interpreter import BlockRun, run_block
from verify.model.expr import BinOp, Const, Expr, Var, compiled
from verify.ptx import tensormaps
from verify.ptx.check import Kernel, Options, check_module, check_ptx_text
from verify.ptx.hopper_common import points
from verify.ptx.hopper_tma import tma_copy
from verify.ptx.parse import parse_ptx
from verify.ptx.periods import joint_period, period
from verify.ptx.values import Unknown
from verify.results import CheckResult
from verify.smt.solve import Status

ROOT = Path(__file__).parents[2]
SAMPLE = ROOT / "tests/data/hopper/tensormaps/gluon04_elementwise_add.sm90"
KERNEL = "elementwise_add_tma_kernel"
LOOP_LOADS = (179, 188)  # the loop's TMA loads of x and y, stage (it0 + 1) & 1
ALL_COPIES = [98, 107, 179, 188, 292, 436]  # two loads before the loop, two in it, two stores
# The loop's stage offset, stage << 13, made stage * 8192 + 64 * stage * (warp & 1):
# warp 1's box of stage 1 (the even iterations) lands 64 bytes past a 128-byte line.
STAGE_OFFSET = "\tshl.b32 \t%r61, %r57, 13;"
MISALIGNED = (
    "\tmul.lo.s32 \t%r61, %r57, %r31; shl.b32 \t%r61, %r61, 6; mad.lo.s32 \t%r61, %r57, 8192, %r61;"
)


def _text(misaligned: bool = False) -> str:
    text = SAMPLE.with_suffix(".sm90.ptx").read_text()
    if misaligned:
        assert text.count(STAGE_OFFSET) == 1
        text = text.replace(STAGE_OFFSET, MISALIGNED)
    return text


def _module(text: str):
    return parse_ptx(text, str(SAMPLE.with_suffix(".sm90.ptx")))


def _options(module) -> Options:
    meta = json.loads(SAMPLE.with_suffix(".sm90.json").read_text())["tensordesc_meta"]
    return Options(tma_maps=tensormaps.tma_maps(module, tensormaps.read(module, meta)))


def _copy_results(text: str) -> dict[int, list[CheckResult]]:
    module = _module(text)
    found: dict[int, list[CheckResult]] = {}
    for r in check_module(module, _options(module)):
        if r.facts.get("instruction", "").startswith("cp.async.bulk.tensor"):
            found.setdefault(r.facts["ptx_line"], []).append(r)
    return found


# -- the oracle: the PTX interpreter on the sample, unmodelled lines stood in for ------


_TMA_LOAD = re.compile(
    r"(\s*@%p\d+ |\s*)cp\.async\.bulk\.tensor\.2d\.shared::\w+\.global\S*\s+(\[%r\d+\])"
)


def _stand_in(line: str) -> str:
    """The line with an instruction the interpreter runs in its place (same line)."""
    if m := re.match(r"(\s*)elect\.sync\s+%r\d+\|(%p\d+), -1;", line):
        return f"{m[1]}setp.eq.u32 {m[2]}, %laneid, 0;"
    if m := re.match(r"(\s*)shfl\.sync\.idx\.b32\s+(%r\d+), (%r\d+), 0, 31, -1;", line):
        return f"{m[1]}mov.b32 {m[2]}, {m[3]};"  # the warp index is the same in every lane
    if re.match(r"\s*mbarrier\.try_wait", line) or "@!complete bra" in line:
        return ""
    if m := _TMA_LOAD.match(line):
        return f"{m[1]}st.shared.b32 {m[2]}, 0;"
    return line


def _interpreted(text: str, params: dict, shared: dict[str, int], kernel: str = KERNEL) -> BlockRun:
    """One block of 128 threads, the shared variables at the bytes `shared` gives."""
    ptx = "\n".join(_stand_in(line) for line in text.split("\n"))
    return run_block(ptx, kernel, block=(128, 1, 1), params=params, shared_layout=shared)


def _gluon04(text: str, n: int, base: int) -> BlockRun:
    """Gluon 04 for n elements a row, global_smem at byte `base`."""
    return _interpreted(text, {f"{KERNEL}_param_16": n}, {"global_smem": base})


def _issued(run: BlockRun, line: int) -> dict[tuple[int, int], int]:
    """(iteration, warp) -> the shared address the copy at `line` is issued with."""
    found = {}
    for access in run.accesses:
        if access.line == line:
            for t in access.threads:
                if t.active:
                    found[access.instance, t.thread // 32] = t.address
    return found


# -- the sample: decided --------------------------------------------------------------


def test_gluon04_every_tma_copy_is_proved():
    found = _copy_results(_text())
    assert sorted(found) == ALL_COPIES
    for line, results in found.items():
        assert [r.status for r in results] == [Status.PROVED] * len(results), line
    for line in LOOP_LOADS:
        (aligned,) = found[line]
        assert aligned.property.startswith("aligned 128")
        # not the warp: elect.sync's condition (tid < 64) reads it
        assert aligned.facts["modulo"] == "it0 modulo 2"


@pytest.mark.parametrize("n, base", [(64 * 9, 0), (64 * 5 + 3, 1024)])
def test_loop_addresses_are_the_interpreters_and_their_classes(n, base):
    """At each iteration and issuing warp the interpreter runs, the traced address is
    the interpreter's, and so is its value at the residue class's representative."""
    text = _text()
    module = _module(text)
    kernel = Kernel(module, module.functions[0], _options(module))
    trace = kernel.trace()
    run = _gluon04(text, n, base)
    for line in LOOP_LOADS:
        (event,) = [e for e in trace.events if e.instr.line == line]
        copy = tma_copy(event, kernel.fn, kernel.symbol)
        assert not isinstance(copy, Unknown) and not isinstance(copy.shared, Unknown)
        where = points(copy.shared, trace.ranges, event.condition)
        assert not isinstance(where, Unknown)
        assert where.periods == {"it0": 2, "warp": 2} and len(where.others) == 2 * 2
        at = compiled(copy.shared)
        issued = _issued(run, line)
        assert {k for k, _ in issued} == set(range(math.ceil(n / 64) - 1))
        assert {w for _, w in issued} == {0, 1}  # threads 0 and 32 elected, of the lower 64
        for (k, w), address in issued.items():
            assert at({"it0": k, "warp": w, where.allocation: base}) == address
            (rep,) = [p for p in where.others if p == {"it0": k % 2, "warp": w % 2}]
            assert at({**rep, where.allocation: base}) == address


# -- a misaligned iteration: refuted, replayed on the interpreter ---------------------


def test_misaligned_iteration_is_refuted_at_its_iteration_and_warp():
    """elect.sync's leader runs the copy in each warp the block condition lets through
    (tid < 64: warps 0 and 1), so a misaligned point there is a counterexample."""
    text = _text(misaligned=True)
    found = _copy_results(text)
    assert [r.status for r in found[98] + found[107]] == [Status.PROVED] * 2
    run = _gluon04(text, 64 * 4, 0)
    for line in LOOP_LOADS:
        (aligned,) = found[line]
        assert aligned.status is Status.REFUTED
        cex = aligned.counterexample
        assert cex is not None
        assert cex.instance == {"base": 0, "it0": 0, "warp": 1}
        # the condition reads the warp (tid < 64), so it is enumerated in full
        assert "every it0 = 0 mod 2: it reads" in cex.summary
        address = _issued(run, line)[cex.instance["it0"], cex.instance["warp"]]
        assert address % 128 == 64 and f"byte {address}," in cex.summary
        # every even iteration is as misaligned, the odd ones and warp 0 are not
        assert {a % 128 for (k, w), a in _issued(run, line).items() if (k % 2, w) != (0, 1)} == {0}
        assert {a % 128 for (k, w), a in _issued(run, line).items() if (k % 2, w) == (0, 1)} == {64}


# -- a guarded copy: refuted only where its guard is known to hold --------------------

# One TMA load per warp at smem + 64 * (warp & 1), under the guard GUARD sets %p1 by:
# warps 1 and 3 issue it 64 bytes past a 128-byte line.
GUARDED = """
.version 8.0
.target sm_90a
.address_size 64
.extern .shared .align 1024 .b8 smem[];
.shared .align 8 .b64 bar;

.visible .entry guarded(
    .param .u64 .ptr .align 64 guarded_param_0,
    .param .u64 .ptr .align 64 guarded_param_1
)
.reqntid 128
{
    .reg .pred %p<4>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<4>;
    mov.u32 %r1, smem;
    mov.u64 %rd1, guarded_param_0;
    mov.u32 %r2, bar;
    mov.u32 %r3, %tid.x;
    shr.u32 %r4, %r3, 5;
    and.b32 %r5, %r4, 1;
    mad.lo.s32 %r6, %r5, 64, %r1;
GUARD
    @%p1 TMA_LOAD [%r6], [%rd1, {%r3, %r3}], [%r2];
    ret;
}
""".replace(
    "TMA_LOAD", "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
)


def _checked(text: str) -> list[CheckResult]:
    return check_ptx_text(text, "guarded.ptx", Options(tma_maps=(LOOSE_MAP,)))


def _guarded(guard: str) -> tuple[CheckResult, dict[tuple[int, int], int]]:
    """The copy's aligned 128 under `guard`, and (0, warp) -> the address the
    interpreter issues it with, by warp (elect.sync stood in by lane 0)."""
    text = GUARDED.replace("GUARD", guard)
    (aligned,) = [r for r in _checked(text) if r.property.startswith("aligned 128")]
    run = _interpreted(text, {}, {"smem": 0, "bar": 4096}, "guarded")
    copy = next(n for n, line in enumerate(text.split("\n"), 1) if "cp.async" in line)
    return aligned, _issued(run, copy)


def test_a_copy_under_an_unresolved_guard_is_unknown_saying_which():
    """A guard read from global memory: the misaligned warps may not issue the copy."""
    load = "    mov.u64 %rd2, guarded_param_1;\n    ld.global.u32 %r7, [%rd2];\n"
    text = GUARDED.replace("GUARD", f"{load}    setp.ne.u32 %p1, %r7, 0;")
    (aligned,) = [r for r in _checked(text) if r.property.startswith("aligned 128")]
    assert aligned.status is Status.UNKNOWN and aligned.counterexample is None
    assert "cannot resolve (a value loaded from memory (ld.global.u32))" in aligned.reason


def test_elect_sync_runs_the_copy_once_a_warp():
    aligned, issued = _guarded("    elect.sync %r7|%p1, -1;")
    assert aligned.status is Status.REFUTED
    cex = aligned.counterexample
    assert cex is not None and cex.instance == {"base": 0, "warp": 1}
    assert issued == {(0, w): 64 * (w & 1) for w in range(4)}
    assert f"shared address is byte {issued[0, 1]}," in cex.summary


def test_elect_sync_under_a_lane_mask_is_unknown():
    """The leader may be a lane the mask (even threads) turns off: UNKNOWN."""
    mask = "    and.b32 %r8, %r3, 1;\n    setp.eq.u32 %p2, %r8, 0;\n"
    guard = f"{mask}    elect.sync %r7|%p3, -1;\n    and.pred %p1, %p2, %p3;"
    aligned, issued = _guarded(guard)
    assert aligned.status is Status.UNKNOWN and aligned.counterexample is None
    assert "cannot resolve (the result of elect.sync)" in aligned.reason
    assert issued == {(0, w): 64 * (w & 1) for w in range(4)}  # lane 0 is even: it ran


def test_a_copy_under_a_guard_known_to_hold_is_refuted_where_it_runs():
    """Thread 32 (warp 1) alone issues the copy: refuted at warp 1, the interpreter's
    misaligned address."""
    aligned, issued = _guarded("    setp.eq.u32 %p1, %r3, 32;")
    assert aligned.status is Status.REFUTED
    cex = aligned.counterexample
    assert cex is not None and cex.instance == {"base": 0, "warp": 1}
    assert issued == {(0, 1): 64} and "shared address is byte 64," in cex.summary


def test_a_misaligned_point_whose_guard_is_off_refutes_nothing():
    """Warp 0 alone issues the copy; warps 1 and 3, misaligned, never do: PROVED."""
    aligned, issued = _guarded("    setp.lt.u32 %p1, %r3, 32;")
    assert aligned.status is Status.PROVED
    assert issued == {(0, 0): 0}


# -- a stage counter whose relation to the iteration is lost ----------------------------

# A loop of n iterations, n a parameter, with a stage counter cycling 0, 1, 2 beside
# the iteration i; the copy's address is smem + 8192 * stage + STEP * (i & 1). The
# trace keeps the stage as a variable of its own (its relation to i is lost).
LOOSE = """
.version 8.0
.target sm_90a
.address_size 64
.extern .shared .align 1024 .b8 smem[];
.shared .align 8 .b64 bar;

.visible .entry loose_stages(
    .param .u64 .ptr .align 64 loose_stages_param_0,
    .param .u32 loose_stages_param_1
)
.reqntid 128
{
    .reg .pred %p<4>;
    .reg .b32 %r<32>;
    .reg .b64 %rd<4>;
    mov.u32 %r1, smem;
    mov.u64 %rd1, loose_stages_param_0;
    mov.u32 %r2, bar;
    ld.param.u32 %r3, [loose_stages_param_1];
    mov.u32 %r4, 0;
    mov.u32 %r5, 0;
$L_loop:
    mad.lo.s32 %r6, %r5, 8192, %r1;
    and.b32 %r7, %r4, 1;
    mad.lo.s32 %r8, %r7, STEP, %r6;
    TMA_LOAD [%r8], [%rd1, {%r4, %r4}], [%r2];
    add.s32 %r5, %r5, 1;
    setp.eq.s32 %p1, %r5, 3;
    selp.b32 %r5, 0, %r5, %p1;
    add.s32 %r4, %r4, 1;
    setp.lt.u32 %p2, %r4, %r3;
    @%p2 bra $L_loop;
    ret;
}
""".replace(
    "TMA_LOAD", "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
)
LOOSE_COPY = next(n for n, line in enumerate(LOOSE.split("\n"), 1) if "cp.async" in line)
LOOSE_MAP = "dataType=FLOAT16,boxDim={64,64},swizzle=128B"


def _loose_aligned(text: str) -> CheckResult:
    (aligned,) = [
        r
        for r in check_ptx_text(text, "loose.ptx", Options(tma_maps=(LOOSE_MAP,)))
        if r.property.startswith("aligned 128")
    ]
    return aligned


def test_a_lost_stage_beside_the_iteration_is_never_a_counterexample():
    """Misaligned at odd i; the first misaligned point enumerated, i = 1 with stage 0,
    never runs (the interpreter: stage 1 at i = 1), so UNKNOWN, not that point."""
    text = LOOSE.replace("STEP", "64")
    aligned = _loose_aligned(text)
    assert aligned.status is Status.UNKNOWN
    assert "relation this reader does not keep" in aligned.reason
    run = _interpreted(text, {"loose_stages_param_1": 4}, {"smem": 0}, "loose_stages")
    assert _issued(run, LOOSE_COPY) == {
        (i, w): 8192 * (i % 3) + 64 * (i % 2) for i in range(4) for w in range(4)
    }


def test_a_lost_stage_beside_the_iteration_aligned_everywhere_is_proved():
    aligned = _loose_aligned(LOOSE.replace("STEP", "128"))
    assert aligned.status is Status.PROVED
    assert aligned.facts["modulo"] == "it0 modulo 2"
    run = _interpreted(
        LOOSE.replace("STEP", "128"), {"loose_stages_param_1": 7}, {"smem": 0}, "loose_stages"
    )
    assert {a % 128 for a in _issued(run, LOOSE_COPY).values()} == {0}


def test_variables_without_a_period_leave_the_copy_unknown_saying_so():
    """The block index has no period (1024 bytes a block), nor an iteration read as
    128 * i: too many points either way, and the message says what residues took."""
    step = "    mad.lo.s32 %r8, %r7, STEP, %r6;"
    by_block = f"{step} mov.u32 %r9, %ctaid.x; mad.lo.s32 %r8, %r9, 1024, %r8;"
    aligned = _loose_aligned(LOOSE.replace(step, by_block).replace("STEP", "128"))
    assert aligned.status is Status.UNKNOWN
    assert "depends on ctaid_x, it0, s0_it0" in aligned.reason
    assert f"; {2**31 * 2 * 3} with it0 modulo 2; at most 4096" in aligned.reason
    linear = LOOSE.replace(step, "    mad.lo.s32 %r8, %r4, 128, %r6;")
    aligned = _loose_aligned(linear)
    assert aligned.status is Status.UNKNOWN
    assert f"({2**20 * 3} values; at most 4096 are enumerated)" in aligned.reason


# -- the periods against brute force ----------------------------------------------------

_OPS = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.floordiv,
    "%": operator.mod,
    "&": operator.and_,
    "|": operator.or_,
    "^": operator.xor,
    "<<": operator.lshift,
    ">>": operator.rshift,
}


def _value(e: Expr, env: dict[str, int]) -> int | str:
    """The tree's value on Python integers, or the name of the error it raises."""
    if isinstance(e, Const):
        return e.value
    if isinstance(e, Var):
        return env[e.name]
    assert isinstance(e, BinOp)
    a, b = _value(e.a, env), _value(e.b, env)
    if isinstance(a, str) or isinstance(b, str):
        return a if isinstance(a, str) else b
    if e.op in ("<<", ">>") and not 0 <= b <= 64:
        return "shift"
    try:
        return _OPS[e.op](a, b)
    except ZeroDivisionError:
        return "division"


def _has_period(e: Expr, p: int) -> bool:
    """e(v) == e(v + p) for v over 0..64 and w over 0..6 (v's and w's values)."""
    return all(
        _value(e, {"v": x, "w": w}) == _value(e, {"v": x + p, "w": w})
        for x in range(64)
        for w in range(6)
    )


V, W = Var("v"), Var("w")


def _op(op: str, a: Expr, b: Expr | int) -> Expr:
    return BinOp(op, a, Const(b) if isinstance(b, int) else b)


@pytest.mark.parametrize(
    "e, p",
    [
        (_op("<<", _op("&", _op("+", V, 1), 1), 13), 2),  # Gluon 04's stage offset
        (_op("%", _op("+", _op("*", V, 3), W), 5), 5),
        (_op("&", _op("^", _op("*", V, W), _op("<<", V, 2)), 12), 16),
        (_op("&", Const(6), _op("-", V, 9)), 8),  # a negative operand: its two's complement
        (_op("+", _op("%", V, 3), _op("&", V, 3)), 12),
        (_op(">>", _op("%", _op("+", V, 1), 6), 1), 6),
        (_op("%", _op("|", V, 1), 8), 8),
        (_op("&", _op("<<", V, W), 7), 8),
    ],
)
def test_periods_found_hold(e, p):
    assert period(e, "v") == p
    assert _has_period(e, p)


@pytest.mark.parametrize(
    "e",
    [
        _op("+", V, 1),
        _op("&", _op(">>", V, 1), 1),  # periodic (4), but a right shift is not followed
        _op("&", _op("<<", Const(1), V), 255),  # v in a shift amount
        _op("%", _op("|", V, 1), 6),  # | keeps low bits, not residues modulo 6
        _op("%", V, W),  # a modulus that is not a constant
        _op("&", _op("+", V, _op("&", V, 1)), 3),  # a periodic term in a sum with v
    ],
)
def test_no_period_where_none_is_proved(e):
    assert period(e, "v") is None


def test_a_variable_not_read_has_period_one_and_periods_combine():
    stage = _op("&", V, 1)
    assert period(_op("*", W, 7), "v") == 1
    assert joint_period([stage, _op("%", V, 3)], "v") == 6
    assert joint_period([stage, V], "v") is None


def _random_expr(rng: random.Random, depth: int) -> Expr:
    if depth == 0 or rng.random() < 0.25:
        leaves: list[Expr] = [V, W, Const(rng.randrange(0, 9))]
        return rng.choice(leaves)
    op = rng.choice(list(_OPS))
    b = Const(rng.randrange(0, 17)) if rng.random() < 0.5 else _random_expr(rng, depth - 1)
    return BinOp(op, _random_expr(rng, depth - 1), b)


def test_every_period_of_random_expressions_holds():
    """Soundness of every rule on 3,000 random trees: where a period is claimed, the
    brute-force evaluator finds it (the trees found periodic are counted, not timed)."""
    rng = random.Random(25)
    claimed = 0
    for _ in range(3000):
        e = _random_expr(rng, 4)
        p = period(e, "v")
        if p is not None and p < 64:
            claimed += 1
            assert _has_period(e, p), e
    assert claimed > 500
