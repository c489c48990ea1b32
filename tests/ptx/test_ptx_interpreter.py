"""The concrete PTX interpreter (oracle/ptx_interpreter.py) against hand-computed
addresses, against the addresses the kernels recorded on an H200
(tests/data/ptx_oracle/), and against the H200's instruction counts
(benchmarks/results/ptx_h200.csv)."""

import csv
from collections import Counter
from pathlib import Path

import conftest
import pytest

from oracle.ptx_interpreter import PtxRunError, run_block
from oracle.ptx_kernels import IN, LAUNCHES, SHARED_BASE, load_records, paired, run_kernel
from oracle.ptx_syntax import PtxSyntaxError

DATA = Path(conftest.DATA) / "ptx_oracle"
ROOT = Path(__file__).parents[2]


def lines_of(run, opcode_prefix):
    """The distinct PTX lines of `opcode_prefix` instructions, in program order."""
    return sorted({a.line for a in run.accesses if a.opcode.startswith(opcode_prefix)})


def test_padded_transpose_addresses_are_the_formula():
    run = run_kernel("transpose_padded")
    stores, loads = lines_of(run, "st.shared"), lines_of(run, "ld.shared")
    assert len(stores) == len(loads) == 4  # the j loop, unrolled
    for j, (st, ld) in enumerate(zip(stores, loads, strict=True)):
        (st_acc,) = [a for a in run.accesses if a.line == st]
        (ld_acc,) = [a for a in run.accesses if a.line == ld]
        for t_st, t_ld in zip(st_acc.threads, ld_acc.threads, strict=True):
            x, y = t_st.thread % 32, t_st.thread // 32
            assert t_st.address == SHARED_BASE + 4 * ((y + 8 * j) * 33 + x)  # tile[y+j][x]
            assert t_ld.address == SHARED_BASE + 4 * (x * 33 + y + 8 * j)  # tile[x][y+j]


def sw333(x):
    return x ^ ((x >> 3) & 0x38)


def test_ldmatrix_swizzled_rows_are_cute_swizzle_333():
    run = run_kernel("ldmatrix_sw333")
    x4 = [a for a in run.accesses if a.opcode == "ldmatrix.sync.aligned.m8n8.x4.shared.b16"]
    assert len(x4) == 1
    for t in x4[0].threads:
        lane = t.thread
        row, col = lane % 8 + 8 * ((lane // 8) % 2), 8 * (lane // 16)
        assert t.address == SHARED_BASE + 2 * sw333(row * 64 + col)
        assert t.used
    (x1,) = [a for a in run.accesses if a.opcode.endswith("x1.shared.b16")]
    assert [t.used for t in x1.threads] == [lane < 8 for lane in range(32)]


def test_mod3_stage_counter_and_sources_of_the_triple_buffer():
    run = run_kernel("pipeline_triple_mod")
    copies = [a for a in run.accesses if a.opcode.startswith("cp.async.ca")]
    lines = lines_of(run, "cp.async.ca")
    assert len(lines) == 4 and {a.instance for a in copies} == set(range(5))
    for a in copies:
        c, k = lines.index(a.line), a.instance
        for t in a.threads:
            pair = t.thread + 128 * c
            assert t.address == SHARED_BASE + 4096 * (k % 3) + 8 * pair
            assert t.source == IN + 4 * (1024 * k + 2 * pair)
            assert t.src_size == 8


def test_predicated_tail_in_dynamic_shared_memory():
    run = run_kernel("tail_dynamic")
    assert run.shared_layout == {"buf": SHARED_BASE, "dyn": SHARED_BASE}
    (store,) = [a for a in run.accesses if a.opcode == "st.shared.f32"]
    active = {t.thread: t.address for t in store.threads if t.active}
    assert active == {t: SHARED_BASE + 4 * t for t in range(200)}
    (copy,) = [a for a in run.accesses if a.opcode.startswith("cp.async")]
    sizes = {t.thread: t.src_size for t in copy.threads}
    assert sizes == {t: max(0, min(16, 800 - 16 * t)) for t in range(64)}


@pytest.mark.parametrize("kernel", sorted(LAUNCHES))
def test_addresses_equal_the_ones_recorded_on_the_h200(kernel):
    records = load_records(DATA / f"rec_{kernel}.txt")
    pairs = paired(kernel, records)
    assert pairs, "no recorded line paired with an instruction"
    for (line, kind), (gpu, ours) in pairs.items():
        assert gpu, f"kernels.cu:{line} {kind}: nothing recorded"
        assert ours == gpu, f"kernels.cu:{line} {kind}"


def measured_executions(kernel):
    out: Counter[str] = Counter()
    with (ROOT / "benchmarks" / "results" / "ptx_h200.csv").open() as f:
        for row in csv.DictReader(f):
            if row["kernel"] == kernel:
                out[row["source"]] += int(row["executions"])
    return out


def test_cute_sgemm_warp_instructions_equal_the_h200_executions():
    from benchmarks.hardware.ptx.tabulate import SGEMM_BLOCKS, sgemm_run

    run = sgemm_run()
    predicted: Counter[str] = Counter()
    for a in run.accesses:
        assert a.loc is not None
        predicted[f"{Path(a.loc[0]).name}:{a.loc[1]}"] += SGEMM_BLOCKS * len(a.warps())
    assert predicted == measured_executions("sgemm_sm80")
    assert not run.unresolved
    assert {Path(a.kernel_loc[0]).name for a in run.accesses if a.kernel_loc} == {"sgemm_sm80.cu"}


def kernel(body, regs="", params=".param .u32 p0"):
    return f"""
.version 8.0
.target sm_90
.address_size 64
.visible .entry k({params})
{{
  .reg .b32 %r<40>;
  .reg .b64 %rd<8>;
  .reg .pred %p<4>;
  {regs}
{body}
  ret;
}}
"""


def value_of(body, params=None):
    """Run `body` (which leaves its result in %r9) and read it back as the address of
    a shared store: one thread, thread index 5."""
    ptx = kernel(body + "\n  st.shared.u32 [%r9], 0;")
    run = run_block(ptx, "k", block=(8, 1, 1), params=params or {}, threads=[5])
    return run.accesses[-1].threads[0].address


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("mov.u32 %r1, %tid.x; mad.lo.s32 %r9, %r1, 7, 3;", 38),
        ("mov.u32 %r1, -8; shr.s32 %r2, %r1, 1; neg.s32 %r9, %r2;", 4),
        ("mov.u32 %r1, -7; div.s32 %r2, %r1, 2; rem.s32 %r3, %r1, 2; sub.s32 %r9, %r3, %r2;", 2),
        ("bfe.u32 %r9, 0xABCD, 4, 8;", 0xBC),
        ("bfe.s32 %r1, 0x80, 4, 4; add.s32 %r9, %r1, 9;", 1),  # 0x8 sign-extends to -8
        ("bfi.b32 %r9, 0x5, 0xFF00, 4, 4;", 0xFF50),
        ("lop3.b32 %r9, 0xF0, 0xCC, 0xAA, 0x96;", 0xF0 ^ 0xCC ^ 0xAA),  # 0x96: a^b^c
        ("prmt.b32 %r9, 0x33221100, 0x77665544, 0x5140;", 0x55114400),
        ("shf.l.wrap.b32 %r9, 0x80000000, 0x1, 4;", 0x18),
        ("mov.u32 %r1, %tid.x; setp.gt.u32 %p1, %r1, 4; selp.b32 %r9, 100, 200, %p1;", 100),
        (
            "mov.u32 %r1, 3; mul.wide.u32 %rd1, %r1, 0x80000000; shr.u64 %rd2, %rd1, 28;"
            " cvt.u32.u64 %r9, %rd2;",
            24,
        ),
        ("mov.u32 %r1, 0xFFFF; cvt.s32.s16 %r2, %r1; add.s32 %r9, %r2, 2;", 1),
        ("mov.b64 %rd1, {%r20, %r21}; mov.b64 {%r2, %r3}, %rd1; mov.u32 %r9, 6;", 6),
        (
            "mov.u32 %r1, 0x3c00; mov.b16 %rs1, 0x3c00; cvt.f32.f16 %f1, %rs1;"
            " setp.neu.f32 %p1, %f1, 0f00000000; selp.b32 %r9, 1, 2, %p1;",
            1,
        ),
        ("mov.u32 %r1, %laneid; min.s32 %r2, %r1, 3; max.u32 %r9, %r2, 1;", 3),
        ("xor.b32 %r1, 12, 10; and.b32 %r2, %r1, 4; or.b32 %r9, %r2, 16;", 20),
    ],
)
def test_integer_semantics(body, expected):
    body = ".reg .b16 %rs<4>;\n  .reg .f32 %f<4>;\n  " + body
    assert value_of(body) == expected


def test_a_parameter_read_and_a_generic_shared_address():
    body = """
  ld.param.u32 %r1, [p0];
  mov.u32 %r2, buf;
  add.s32 %r3, %r2, %r1;
  cvt.u64.u32 %rd1, %r3;
  cvta.shared.u64 %rd2, %rd1;
  st.u32 [%rd2+4], %r1;"""
    ptx = kernel(body, regs=".shared .align 16 .b8 buf[64];")
    run = run_block(ptx, "k", block=(1, 1, 1), params={0: 12}, shared_base=1024)
    assert [t.address for t in run.accesses[0].threads] == [1024 + 12 + 4]


def test_a_branch_on_an_unknown_value_stops_the_run():
    body = "  ld.global.u32 %r1, [%rd1];\n  setp.eq.s32 %p1, %r1, 0;\n  @%p1 bra $L1;\n$L1:"
    with pytest.raises(PtxRunError, match="unknown guard"):
        run_block(kernel(body), "k", block=(1, 1, 1))


def test_an_instruction_it_does_not_interpret_is_named_with_its_line():
    with pytest.raises(PtxSyntaxError, match=r"PTX line 11: .*sad"):
        run_block(kernel("  sad.u32 %r1, %r2, %r3, %r4;"), "k", block=(1, 1, 1))


def test_a_bounded_step_count():
    body = "$L0:\n  bra $L0;"
    with pytest.raises(PtxRunError, match="more than 50 steps"):
        run_block(kernel(body), "k", block=(1, 1, 1), max_steps=50)


def triton_params(ptx):
    """Every pointer parameter a distinct global address, every integer 64."""
    from oracle.ptx_syntax import parse

    module = parse(ptx)
    (func,) = [f for f in module.functions.values() if f.entry]
    values: dict[int | str, int | bytes] = {}
    for i, p in enumerate(func.params):
        values[i] = (i + 1) << 32 if p.size == 8 else 64
    return module, func, values


def test_triton_matmul_ptx_runs_a_whole_block():
    # triton_*.ptx: Triton 3.9 on the CPU, the catalog's kernels
    # (benchmarks/campaigns/triton_kernels.py)
    ptx = (DATA / "triton_matmul_sm80.ptx").read_text()
    module, func, params = triton_params(ptx)
    assert func.ntid == (128,)  # `.reqntid 128`
    run = run_block(module, func.name, block=(128, 1, 1), params=params)
    assert not run.unresolved
    kinds = Counter(a.opcode for a in run.accesses)
    assert kinds["ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"] > 0
    assert run.shared_layout == {"global_smem": 0}
    assert all(0 <= t.address < 1 << 16 for a in run.accesses for t in a.threads)


def test_triton_sm90_wgmma_is_listed_not_modelled():
    ptx = (DATA / "triton_attention_sm90.ptx").read_text()
    module, func, params = triton_params(ptx)
    run = run_block(module, func.name, block=(128, 1, 1), params=params, threads=list(range(32)))
    assert {u.opcode.split(".")[0] for u in run.unresolved} == {"wgmma"}
    copies = [a for a in run.accesses if a.opcode.startswith("cp.async.cg")]
    assert copies and all(t.source is not None for a in copies for t in a.threads)


def test_barrier_objects_and_bulk_copies_are_listed_not_guessed():
    body = """
  mov.u32 %r1, 0;
  mbarrier.init.shared.b64 [%r1], 1;
  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1], 256, [%r1];
  st.shared.u32 [%r1+8], %r1;"""
    run = run_block(kernel(body), "k", block=(2, 1, 1))
    assert [u.opcode.split(".")[0] for u in run.unresolved] == ["mbarrier", "cp"] * 2
    assert [t.address for t in run.accesses[0].threads] == [8, 8]
