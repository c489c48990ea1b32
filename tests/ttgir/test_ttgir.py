"""`verify ttgir`: compiled Triton kernels (specs/triton_kernels/, TTGIR from Triton
3.9.0 via benchmarks/campaigns/triton_kernels.py) checked op by op, at their Python lines."""

import json
import subprocess
import sys
from typing import Any

import conftest
import pytest
from click.testing import CliRunner

pytest.importorskip("triton")

from verify.cli import main  # noqa: E402
from verify.errors import SpecError  # noqa: E402
from verify.notation import triton_lowering as lowering  # noqa: E402
from verify.smt.solve import Status  # noqa: E402
from verify.ttgir import PtxOptions  # noqa: E402
from verify.ttgir import check as check_with_ptx  # noqa: E402
from verify.ttgir.module import EXTRA, require_triton, run_kernel  # noqa: E402

KERNELS = "specs/triton_kernels"


def check(path: str):
    """TTGIR's own lowering rules (``--no-ptx``): the verdicts pinned here are
    theirs; tests/ttgir/test_ttgir_ptx.py checks the instructions read from the PTX.
    Budgets in z3 units (conftest.WORK), so no verdict changes with the load."""
    return check_with_ptx(path, ptx=PtxOptions(use=False), options=conftest.WORK)


def verdicts(name: str) -> dict[str, str]:
    return {r.property: r.status.value for r in check(f"{KERNELS}/{name}.ttgir")}


@pytest.mark.parametrize("target", ["sm80", "sm90"])
def test_gluon_plain_transpose_reads_a_column_32_way(target):
    results = check(f"{KERNELS}/gluon_transpose_plain.{target}.ttgir")
    load = next(r for r in results if r.property == "conflict_free local_load %column_major")
    assert (load.status, load.max_ways, load.wavefronts) == (Status.REFUTED, 32, 32)
    assert (load.file, load.line) == ("specs/triton_kernels/gluon_transpose.py", 32)
    assert verdicts(f"gluon_transpose_plain.{target}")["bijective local_alloc %smem"] == "proved"


def test_gluon_plain_store_is_stmatrix_x4_on_sm90_with_a_verdict():
    """The PTX has 2 stmatrix.x4 for sm_90 and 8 st.shared.b32 for sm_80
    (benchmarks/results/triton_kernels.md): lanes along a row, 4 words per row."""
    checker = run_kernel(f"{KERNELS}/gluon_transpose_plain.sm90.ttgir", conftest.WORK)
    store = next(r for r in checker.results if r.property == "conflict_free local_store %tile_8")
    assert (store.status, store.max_ways, store.wavefronts) == (Status.PROVED, 1, 4)
    assert (store.file, store.line) == ("specs/triton_kernels/gluon_transpose.py", 31)
    assert ("local_store %tile_8", "stmatrix.x4", 2) in decisions(checker)
    sm80 = run_kernel(f"{KERNELS}/gluon_transpose_plain.sm80.ttgir", conftest.WORK)
    assert ("local_store %tile_8", "st.shared.b32", 8) in decisions(sm80)


def decisions(checker) -> set[tuple[str, str, int]]:
    return {(d["op"], d["instruction"], d["per_warp"]) for d in checker.decisions + checker.copies}


def test_matmul_sm80_operands_are_ldmatrix_x4_and_conflict_free():
    """A (K-contiguous) by ldmatrix.x4, B (N-contiguous) by ldmatrix.x4.trans, 4 per
    warp for each of the 5 loads of each: the PTX's 20 + 20."""
    checker = run_kernel(f"{KERNELS}/matmul.sm80.ttgir", conftest.WORK)
    found = decisions(checker)
    assert {i for _, i, _ in found} == {"ldmatrix.x4", "ldmatrix.x4.trans", "cp.async.cg.16"}
    assert sum(n for op, i, n in found if i == "ldmatrix.x4" and "%a" in op) == 20
    assert sum(n for op, i, n in found if i == "ldmatrix.x4.trans" and "%b" in op) == 20
    loads = [r for r in checker.results if r.property.startswith("conflict_free local_load")]
    assert len(loads) == 10
    assert all((r.status, r.max_ways, r.wavefronts) == (Status.PROVED, 1, 4) for r in loads)


@pytest.mark.parametrize("target", ["sm80", "sm90"])
def test_gluon_swizzled_transpose_is_conflict_free(target):
    found = verdicts(f"gluon_transpose_swizzled.{target}")
    assert set(found.values()) == {"proved"}
    assert "conflict_free local_load %column_major" in found
    assert "conflict_free local_store %tile_8" in found


@pytest.mark.parametrize("target", ["sm80", "sm90"])
def test_matmul_buffers_are_bijective_and_the_rest_is_listed_not_modelled(target):
    results = check(f"{KERNELS}/matmul.{target}.ttgir")
    proved = {r.property for r in results if r.status == Status.PROVED}
    assert {"bijective local_alloc %a", "bijective local_alloc %b"} <= proved
    unknown = [r for r in results if r.status == Status.UNKNOWN]
    listed = [r for r in unknown if r.property.startswith("not modelled: ")]
    assert listed and all(r.reason for r in listed)
    assert not any(r.status == Status.REFUTED for r in results)
    reasons = " ".join(r.reason for r in listed)
    assert "arith.remsi" in reasons and "ldmatrix" not in reasons
    assert target == "sm80" or "wgmma" in reasons
    bounded = [r for r in unknown if r not in listed]
    assert bounded and all("bound G" in r.reason for r in bounded)


def test_transpose_convert_layout_is_listed_not_modelled():
    assert verdicts("transpose.sm80") == {"not modelled: convert_layout": "unknown"}


def run_cli_process(*args):
    """`verify ttgir --no-ptx ARGS`, the real command in a child process."""
    return subprocess.run(
        [sys.executable, "-m", "verify.cli", "ttgir", "--no-ptx", *args],
        capture_output=True,
        text=True,
    )


def run_cli(*args):
    """The same command in this process, where each module is parsed once
    (conftest); an exception other than the command's exit is verify's bug."""
    result = CliRunner().invoke(main, ["ttgir", "--no-ptx", *args])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"verify ttgir {' '.join(args)} raised") from result.exception
    return subprocess.CompletedProcess(args, result.exit_code, result.stdout, result.stderr)


def test_cli_report_line_format_and_exit_status():
    out = run_cli_process(f"{KERNELS}/gluon_transpose_plain.sm80.ttgir")
    assert out.returncode == 1
    assert (
        "specs/triton_kernels/gluon_transpose.py:32: REFUTED  conflict_free local_load "
        "%column_major  ["
    ) in out.stdout
    assert "    max_ways 32; wavefronts 32 (ideal 1)" in out.stdout
    assert out.stdout.rstrip().endswith("7 checks: 6 proved, 1 refuted, 0 unknown")
    assert run_cli(f"{KERNELS}/gluon_transpose_swizzled.sm80.ttgir").returncode == 0
    assert run_cli(f"{KERNELS}/gluon_transpose_plain.sm90.ttgir").returncode == 1
    assert run_cli(f"{KERNELS}/matmul.sm90.ttgir").returncode == 3


def test_cli_json_names_the_op():
    doc = json.loads(run_cli(f"{KERNELS}/gluon_transpose_plain.sm80.ttgir", "--json").stdout)
    load = next(
        c for c in doc["checks"] if c["property"] == "conflict_free local_load %column_major"
    )
    assert (load["spec"], load["line"], load["status"], load["max_ways"]) == (
        "specs/triton_kernels/gluon_transpose.py",
        32,
        "refuted",
        32,
    )


@pytest.mark.parametrize(
    "text,where",
    [
        ("module {\n  %0 = foo.bar : i32\n}\n", ":2:"),
        ("module {\n  tt.func @f( {\n", ":"),
        ("(" * 500, ":1:1:"),
        ("\0module", ":1:1:"),
    ],
)
def test_hostile_ttgir_is_a_located_error(tmp_path, text, where):
    path = tmp_path / "k.ttgir"
    path.write_text(text)
    out = run_cli(str(path))
    assert out.returncode == 2
    assert out.stderr.startswith(str(path)) and where in out.stderr
    assert "error:" in out.stderr and "Traceback" not in out.stderr


def test_binary_and_missing_files_are_errors(tmp_path):
    path = tmp_path / "k.ttgir"
    path.write_bytes(bytes(range(256)) * 4)
    assert run_cli(str(path)).returncode == 2
    assert run_cli(str(tmp_path / "absent.ttgir")).returncode == 2


def test_missing_triton_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "triton._C.libtriton", None)
    with pytest.raises(SpecError, match=r"pip install 'verify-smem\[triton\]'"):
        require_triton()
    with pytest.raises(SpecError, match="verify-smem\\[triton\\]"):
        check(f"{KERNELS}/matmul.sm80.ttgir")
    assert "verify-smem[triton]" in EXTRA


def test_largest_vectorisation_takes_registers_in_any_order():
    """Rule 2 (largestVectorisation): registers holding offsets 1, 2, 4 form an
    8-element vector even when listed out of order; a basis below the vector
    (lane at offset 4) caps it."""
    cvt = lowering.Cvt((4, 1, 64, 2), (8, 16, 32, 128, 256), (512,), ((),) * 4)
    assert lowering.largest_vectorisation(cvt, 16) == (8, [1, 3, 0])
    capped = lowering.Cvt((1, 2, 64), (4, 16, 32, 128, 256), (512,), ((),) * 3)
    assert lowering.largest_vectorisation(capped, 16)[0] == 4


def cvt(register, lane, warp=()):
    """A Cvt whose register coordinates are the offsets themselves (1-D)."""
    return lowering.Cvt(tuple(register), tuple(lane), tuple(warp), tuple((r,) for r in register))


def test_plain_matrix_plan_takes_lanes_2_3_4_then_registers_as_row_addresses():
    """lowerLdStMatrix, not transposed, 16-bit: register offset 1 and lanes 0, 1 are
    the 16-byte row; lanes 2, 3, 4 then the next two registers address rows
    (.x4); the last register indexes instructions."""
    plan = lowering.matrix_plan(cvt((1, 64, 8, 512), (2, 4, 16, 32, 128)), 16, False, 0, 1024)
    assert plan == lowering.MatrixPlan(
        False, 4, (("lane", 2), ("lane", 3), ("lane", 4), ("register", 1), ("register", 2)), (3,)
    )
    two = lowering.matrix_plan(cvt((1, 64), (2, 4, 16, 32, 128)), 16, False, 0, 1024)
    assert two is not None and two.count == 2
    # A subslice whose start moves inside the row tile (getMaskSpanOffsets) refuses it.
    assert lowering.matrix_plan(cvt((1, 64), (2, 4, 16, 32, 128)), 16, False, 4, 1024) is None
    # Lane 1 not at offset 4: no 16-byte row.
    assert lowering.matrix_plan(cvt((1, 64), (2, 8, 16, 32, 128)), 16, False, 0, 1024) is None


def test_transposed_plan_row_register_minimises_conflicts_then_keeps_word_order():
    """getLdStMatrixRowPermutation: the row register with lanes 0, 1 must span 8
    distinct 16-byte rows of one 128-byte phase; register 0 (offset 128 = row 16)
    would share a bank phase with lane 0 (row 8 ^ 16 span), register 1 (row 1)
    does not, so register 1 is chosen; without conflicts, register 0 is kept."""
    lanes = (16, 32, 1, 2, 4)  # rows 2 and 4, then the row's elements
    conflicting = lowering.matrix_plan(cvt((128, 8, 256), lanes), 16, True, 0, 4096)
    assert conflicting is not None
    assert conflicting.address_bits[0] == ("register", 1)
    assert conflicting.count == 4 and conflicting.instruction_registers == ()
    free = lowering.matrix_plan(cvt((8, 128, 256), lanes), 16, True, 0, 4096)
    assert free is not None
    assert free.address_bits == (
        ("register", 0),
        ("lane", 0),
        ("lane", 1),
        ("register", 1),
        ("register", 2),
    )
    assert lowering.row_conflicts([16, 2, 4], 512) == 1
    assert lowering.row_conflicts([1, 2, 4], 512) == 0


def test_choose_orders_stmatrix_by_target_and_falls_back_to_st_shared():
    c = cvt((1, 64, 8), (2, 4, 16, 32, 128))
    assert lowering.choose(c, 16, True, 90).instruction == "stmatrix.x4"
    fallback = lowering.choose(c, 16, True, 80).instruction
    assert fallback is not None and fallback.startswith("st.shared")
    assert lowering.choose(c, 16, False, 80).instruction == "ldmatrix.x4"


# -- verify triton / check_kernel: compiling the user's kernel on this CPU ---------------


def run_triton(*args):
    return subprocess.run(
        [sys.executable, "-m", "verify.cli", "triton", *args], capture_output=True, text=True
    )


GLUON = f"{KERNELS}/gluon_transpose.py"


def test_triton_command_compiles_a_gluon_kernel_and_reports_its_lines():
    out = run_triton(
        f"{GLUON}:transpose_plain",
        "--target",
        "sm_90",
        "--signature",
        "x_ptr:*fp32,y_ptr:*fp32",
        "--num-warps",
        "4",
    )
    assert out.returncode == 1, out.stderr
    assert (
        "specs/triton_kernels/gluon_transpose.py:32: REFUTED  conflict_free local_load "
        "%column_major"
    ) in out.stdout
    assert "gluon_transpose.py:31: PROVED   conflict_free local_store %tile_8" in out.stdout
    assert (
        run_triton(
            f"{GLUON}:transpose_swizzled",
            "--target",
            "sm_80",
            "--signature",
            "x_ptr:*fp32,y_ptr:*fp32",
        ).returncode
        == 0
    )


def test_check_kernel_takes_a_jit_function_and_check_compiled_a_compiled_kernel():
    from verify.ttgir import check_compiled, check_kernel
    from verify.ttgir.kernel import compile_kernel, load_kernel

    fn = load_kernel(f"{GLUON}:transpose_plain")
    sig = {"x_ptr": "*fp32", "y_ptr": "*fp32"}

    def conflict_free(results, op):
        """The op's conflict_free checks, decided from the kernel's own PTX."""
        return [
            r
            for r in results
            if r.facts.get("ttgir_op") == op and r.property.startswith("conflict_free")
        ]

    found = check_kernel(fn, target="sm_90", signature=sig)
    assert {r.status for r in conflict_free(found, "local_store %tile_8")} == {Status.PROVED}
    loads = conflict_free(found, "local_load %column_major")
    assert loads and {r.status for r in loads} == {Status.REFUTED}
    compiled = compile_kernel(fn, "sm_80", signature=sig)
    stores = conflict_free(check_compiled(compiled), "local_store %tile_8")
    assert stores and all(r.facts["instruction"] == "st.shared.b32" for r in stores)
    assert all((r.status, r.wavefronts) == (Status.PROVED, 1) for r in stores)


def test_signature_is_inferred_from_constexprs_annotations_and_defaults(tmp_path):
    from verify.ttgir.kernel import build_signature, load_kernel

    path = tmp_path / "k.py"
    path.write_text(
        "import triton\nimport triton.language as tl\n\n@triton.jit\n"
        "def k(p: tl.pointer_type(tl.float16), n, scale=1.5, B: tl.constexpr = 8,"
        " C: tl.constexpr = 2):\n    pass\n"
    )
    fn = load_kernel(f"{path}:k")
    sig, values, attrs = build_signature(fn, {"n": "i32"}, {"C": 4})
    assert sig == {"p": "*fp16", "n": "i32", "scale": "fp32", "B": "constexpr", "C": "constexpr"}
    assert values == {"B": 8, "C": 4} and attrs == {(0,): [["tt.divisibility", 16]]}
    with pytest.raises(SpecError, match="cannot infer the type of parameter 'n'") as e:
        build_signature(fn, {}, {})
    assert e.value.pos.line == 5  # the def line


@pytest.mark.parametrize(
    "source,line,words",
    [
        ("def broken(:\n", 1, "SyntaxError"),
        ("import triton\nx = 1\nraise RuntimeError('no GPU here')\n", 3, "no GPU here"),
        (
            "import triton\nimport triton.language as tl\n\n@triton.jit\ndef k(x_ptr):\n"
            "    a = 1\n    tl.store(x_ptr, undefined_name)\n",
            7,
            "undefined_name",
        ),
    ],
)
def test_a_kernel_that_fails_to_import_or_compile_is_a_located_error(tmp_path, source, line, words):
    path = tmp_path / "k.py"
    path.write_text(source)
    out = run_triton(f"{path}:k", "--signature", "x_ptr:*fp32")
    assert out.returncode == 2
    assert out.stderr.startswith(f"{path}:{line}:") and words in out.stderr
    assert "Traceback" not in out.stderr


def test_bad_references_and_options_are_errors(tmp_path):
    assert run_triton(f"{GLUON}:no_such_kernel").returncode == 2
    assert run_triton("absent.py:k").returncode == 2
    out = run_triton(f"{GLUON}:transpose_plain", "--target", "hopper")
    assert out.returncode == 2 and "expected sm_NN" in out.stderr
    out = run_triton(f"{GLUON}:transpose_plain")
    assert out.returncode == 2 and "--signature 'x_ptr:" in out.stderr


# -- the whole catalog, op by op (issue 12, section 4) ------------------------------------

# Per TTGIR: the refuted checks, how many checks are proved, each op listed not
# modelled as (Python line, op) with how many there are, and the checks left
# UNKNOWN by an upper bound (cp.async.cg: bound G) as (line, op). Every op of the
# catalog is in one of these.
_CG = "async_copy_global_to_local"


def _attention_cg(last_k: int, last_v: int) -> tuple[str, ...]:
    names = ("k_36", "k_45", f"k_{last_k}", "v_39", "v_49", f"v_{last_v}")
    return tuple(sorted(f"conflict_free {_CG} %{v}" for v in names))


CATALOG = {
    "matmul.sm80": (
        (),
        44,
        {(29, _CG): 3, (38, "convert_layout"): 1},
        {(28, _CG): 3},
    ),
    "matmul.sm90": (
        (),
        16,
        {(29, _CG): 3, (30, "warp_group_dot"): 1, (38, "convert_layout"): 1},
        {(28, _CG): 3},
    ),
    "transpose.sm80": ((), 0, {(12, "convert_layout"): 1}, {}),
    "transpose.sm90": ((), 0, {(12, "convert_layout"): 1}, {}),
    **{
        f"softmax.{t}": (
            (f"conflict_free {_CG} %row_20", f"conflict_free {_CG} %row_4"),
            12,
            {(20, "reduce"): 1, (22, "reduce"): 1},
            {},
        )
        for t in ("sm80", "sm90")
    },
    # attention's K and V .cg copies: rule S on exact sources (constant row stride),
    # 24 wavefronts (ideal 4) where a 128-byte row straddles two global lines.
    "attention.sm80": (_attention_cg(102, 106), 39, {(49, "convert_layout"): 1}, {}),
    "attention.sm90": (
        _attention_cg(101, 105),
        33,
        {(16, "warp_group_dot"): 1, (24, "warp_group_dot"): 1, (49, "convert_layout"): 1},
        {},
    ),
    **{
        f"gluon_transpose_plain.{t}": (("conflict_free local_load %column_major",), 6, {}, {})
        for t in ("sm80", "sm90")
    },
    **{f"gluon_transpose_swizzled.{t}": ((), 7, {}, {}) for t in ("sm80", "sm90")},
    **{
        f"gluon_transpose_disagree.{t}": (
            (
                "conflict_free local_load %column_major",
                "equivalent local_alloc %smem, "
                "local_alloc %smem as local_load %column_major sees it",
            ),
            6,
            {},
            {},
        )
        for t in ("sm80", "sm90")
    },
    **{
        f"gluon_columns_swizzled_fp16.{t}": (
            ("conflict_free local_load %back", "conflict_free local_store %tile_8"),
            5,
            {(19, "convert_layout"): 1, (22, "convert_layout"): 1},
            {},
        )
        for t in ("sm80", "sm90")
    },
    **{
        f"tile_sum_32.{t}": (
            tuple(f"conflict_free {_CG} %acc_{n}" for n in (21, 27, 54)),
            16,
            {(20, "convert_layout"): 1},
            {},
        )
        for t in ("sm80", "sm90")
    },
    **{f"tile_sum_64.{t}": ((), 19, {(20, "convert_layout"): 1}, {}) for t in ("sm80", "sm90")},
    **{
        f"gluon_async_copy.{t}": ((f"conflict_free {_CG} %7",), 8, {}, {}) for t in ("sm80", "sm90")
    },
}


@pytest.mark.parametrize("name", sorted(CATALOG))
def test_every_catalog_op_has_its_pinned_verdict(name):
    results = check(f"{KERNELS}/{name}.ttgir")
    refuted = tuple(sorted(r.property for r in results if r.status == Status.REFUTED))
    proved = sum(r.status == Status.PROVED for r in results)
    listed: dict = {}
    bounded: dict = {}
    for r in results:
        if r.status == Status.UNKNOWN and r.property.startswith("not modelled: "):
            assert r.reason, r.property
            key = (r.line, r.property.split()[2])
            listed[key] = listed.get(key, 0) + 1
        elif r.status == Status.UNKNOWN:
            assert "bound G" in r.reason and r.property.startswith("conflict_free "), r.property
            key = (r.line, r.property.split()[1])
            bounded[key] = bounded.get(key, 0) + 1
    assert (refuted, proved, listed, bounded) == CATALOG[name]


@pytest.mark.parametrize("target", ["sm80", "sm90"])
def test_reader_and_writer_disagree_through_a_reinterpret_view(target):
    """gluon_transpose.py:transpose_disagree stores through maxPhase=32 and loads
    through a reinterpret view with maxPhase=1: the writer's element (r, c) is at
    word 32r + (c ^ r), the reader looks for it at 32r + c. The load is checked
    on the view it reads through (32-way down a column), the store on the
    buffer's own layout (conflict-free)."""
    results = {r.property: r for r in check(f"{KERNELS}/gluon_transpose_disagree.{target}.ttgir")}
    eq = results[
        "equivalent local_alloc %smem, local_alloc %smem as local_load %column_major sees it"
    ]
    assert (eq.status, eq.file, eq.line) == (
        Status.REFUTED,
        "specs/triton_kernels/gluon_transpose.py",
        49,
    )
    load = results["conflict_free local_load %column_major"]
    assert (load.max_ways, load.wavefronts) == (32, 32)
    assert results["conflict_free local_store %tile_8"].status == Status.PROVED


@pytest.mark.parametrize("target", ["sm80", "sm90"])
def test_fp16_columns_with_an_8_phase_swizzle_are_8_way(target):
    """Lane r holds row r of a 32x64 fp16 tile at column c ^ (r % 8): 128-byte
    rows, two columns a word, so 4 banks with 8 rows' words each."""
    checker = run_kernel(f"{KERNELS}/gluon_columns_swizzled_fp16.{target}.ttgir", conftest.WORK)
    for prop in ("conflict_free local_store %tile_8", "conflict_free local_load %back"):
        r = next(r for r in checker.results if r.property == prop)
        assert (r.status, r.max_ways, r.wavefronts, r.ideal_wavefronts) == (Status.REFUTED, 8, 8, 1)
    assert {(d["instruction"], d["per_warp"]) for d in checker.decisions} == {
        ("st.shared.b16", 16),
        ("ld.shared.b16", 16),
    }


def test_softmax_reductions_across_warps_are_listed_at_the_users_lines():
    """tl.max and tl.sum over a row spread across 4 warps exchange partials through
    scratch shared memory: listed at softmax.py's lines, not triton/language's."""
    results = check(f"{KERNELS}/softmax.sm90.ttgir")
    reduces = [r for r in results if r.property == "not modelled: reduce"]
    assert [(r.file, r.line) for r in reduces] == [
        ("specs/triton_kernels/softmax.py", 20),
        ("specs/triton_kernels/softmax.py", 22),
    ]
    assert "ReduceOpHelper" in reduces[0].reason
    load = next(r for r in results if r.property == "conflict_free local_load %row_9")
    assert (load.status, load.max_ways, load.wavefronts, load.ideal_wavefronts) == (
        Status.PROVED,
        1,
        4,
        4,
    )


def test_attention_sm80_operands_are_ldmatrix_and_q_is_stored_in_128_bit_vectors():
    checker = run_kernel(f"{KERNELS}/attention.sm80.ttgir", conftest.WORK)
    thread_ops = {d for d in decisions(checker) if not d[1].startswith("cp.async")}
    assert thread_ops == {
        ("local_alloc %q_21", "st.shared.v4.b32", 4),
        ("local_load %q_73", "ldmatrix.x4", 4),
        ("local_load %qk_71", "ldmatrix.x4", 8),
        ("local_load %v_87", "ldmatrix.x4.trans", 8),
    }
    checks = [
        r
        for r in checker.results
        if r.property.startswith("conflict_free") and "async_copy" not in r.property
    ]
    assert all((r.status, r.max_ways, r.wavefronts) == (Status.PROVED, 1, 4) for r in checks)


def test_each_op_knows_the_loops_around_it():
    """The matmul's operand loads run inside the K loop (matmul.py:27), its
    prologue's first subslice load before it; the Gluon transposes have no loop."""
    checker = run_kernel(f"{KERNELS}/matmul.sm80.ttgir", conftest.WORK)
    lines = sorted(tuple(loc["line"] for loc in d["loops"]) for d in checker.decisions)
    assert lines == [()] * 2 + [(27,)] * 8
    copies = sorted(tuple(loc["line"] for loc in d["loops"]) for d in checker.copies)
    assert copies == [()] * 2 + [(27,)]  # A's: two in the prologue, one in the loop
    plain = run_kernel(f"{KERNELS}/gluon_transpose_plain.sm90.ttgir", conftest.WORK)
    assert all(d["loops"] == [] for d in plain.decisions)


# -- benchmarks/hardware/triton_h200.py: launch marshalling and the prediction ------------------


def h200():
    from benchmarks.hardware import triton_h200

    return triton_h200


def committed_launches() -> dict:
    with open("benchmarks/hardware/triton_h200/kernels.json") as f:
        return {k["stem"]: k for k in json.load(f)}


def test_launch_metadata_lists_the_ptx_entry_parameters_with_triton_scratch():
    """Triton 3.9 appends two .u64 scratch pointers (global, profile) after the
    signature's runtime parameters; constexprs are not parameters."""
    kernels = committed_launches()
    mm = kernels["matmul"]
    assert [p["name"] for p in mm["params"]] == [
        "a_ptr",
        "b_ptr",
        "c_ptr",
        "M",
        "N",
        "K",
        "stride_am",
        "stride_bk",
        "stride_cm",
        "global_scratch",
        "profile_scratch",
    ]
    assert [p["ptx"] for p in mm["params"]] == ["u64"] * 3 + ["u32"] * 6 + ["u64"] * 2
    assert mm["shared"] == 98304 and mm["num_warps"] == 4
    assert set(kernels) == set(h200().LAUNCHES)
    for stem, meta in kernels.items():
        with open(f"benchmarks/hardware/triton_h200/{meta['cubin']}", "rb") as f:
            assert f.read(4) == b"\x7fELF", stem


def test_marshal_passes_pointers_scalars_and_null_scratch_in_entry_order():
    import numpy as np

    module = h200()
    params = committed_launches()["attention"]["params"]
    args = module.marshal(
        params, {"sm_scale": 0.125, "N_CTX": -3}, {"Q": 0x7F0000001000, "K": 16, "V": 32, "Out": 48}
    )
    assert [a.dtype for a in args] == [np.uint64] * 4 + [np.float32, np.uint32] + [np.uint64] * 2
    assert [int(a) for a in args[:4]] == [0x7F0000001000, 16, 32, 48]
    assert float(args[4]) == 0.125 and int(args[5]) == (1 << 32) - 3  # i32 -3 as 32 bits
    assert [int(a) for a in args[6:]] == [0, 0]  # no scratch: null
    assert b"".join(a.tobytes() for a in args)[32:36] == np.float32(0.125).tobytes()
    with pytest.raises(ValueError, match="pointer passed as .u32"):
        module.marshal([{"name": "p", "ptx": "u32", "signature": "*fp16"}], {}, {})
    with pytest.raises(KeyError):
        module.marshal(params, {}, {})  # a missing scalar


def test_prediction_sums_every_warp_instruction_over_loops_and_ctas():
    """Gluon plain transpose on sm_90: 4 warps x 8 ld.shared.b32 at 32 wavefronts,
    4 x 2 stmatrix.x4 at 4; softmax: 256 CTAs x 4 rows each x 4 warps x 2
    ld.shared.v4.b32 at 4 wavefronts (the loop's trips from the launch)."""
    module = h200()
    waves, insts, unmodelled = module.predict("gluon_transpose_plain")
    assert (waves["ld"], insts["ld"], waves["stsm"], insts["stsm"]) == (1024, 32, 32, 8)
    assert unmodelled == []
    waves, insts, unmodelled = module.predict("softmax")
    assert (waves["ld"], insts["ld"]) == (256 * 4 * 4 * 2 * 4, 256 * 4 * 4 * 2)
    assert "reduce (line 20)" in unmodelled


def test_measured_rows_keep_the_catalog_launches_of_ncu_csv():
    module = h200()
    metric = module.WAVEFRONTS.format("ld")
    text = (
        '==PROF== noise\n"ID","Kernel Name","' + metric + '"\n'
        '"0","transpose_plain","1,024"\n"1","cupy_fill","7"\n'
    )
    assert module.measured_rows(text, [metric]) == [("gluon_transpose_plain", metric, 1024.0)]


def test_launch_all_drives_each_cubin_as_its_metadata_says(monkeypatch, tmp_path):
    """The device path against a stand-in for cupy (no GPU here): every kernel of
    kernels.json is loaded from its cubin and launched with its grid, 32 x warps
    threads, its shared bytes (opted in past 48 KiB) and one argument per PTX
    parameter; outputs are poisoned, then compared with numpy."""
    import types

    import numpy as np

    launched = []

    class Kernel:
        def __init__(self, name):
            self.name, self.max_dynamic_shared_size_bytes = name, 0

        def __call__(self, grid, block, args, shared_mem):
            launched.append(
                (self.name, grid, block, len(args), shared_mem, self.max_dynamic_shared_size_bytes)
            )

    class Array:
        def __init__(self, data):
            self.value = np.array(data)
            self.data = types.SimpleNamespace(ptr=id(self))

        def fill(self, v):
            self.value.fill(v)

    fake: Any = types.ModuleType("cupy")  # cupy's few names, set below
    fake.RawModule = lambda path: types.SimpleNamespace(get_function=Kernel)
    fake.asarray, fake.asnumpy = Array, lambda a: a.value
    fake.zeros = lambda n, dtype: Array(np.zeros(n, dtype))
    fake.uint8 = np.uint8
    fake.cuda = types.SimpleNamespace(runtime=types.SimpleNamespace(deviceSynchronize=lambda: None))
    monkeypatch.setitem(sys.modules, "cupy", fake)
    module = h200()
    module.launch_all(str(tmp_path / "check.txt"))
    kernels = committed_launches()
    assert len(launched) == len(kernels)
    for name, grid, block, nargs, shared, opted in launched:
        meta = next(k for k in kernels.values() if k["name"] == name)
        assert grid == module.LAUNCHES[meta["stem"]].grid
        assert (block, nargs, shared) == (
            (32 * meta["num_warps"], 1, 1),
            len(meta["params"]),
            meta["shared"],
        )
        assert opted == (meta["shared"] if meta["shared"] > 48 * 1024 else 0)
    # Nothing ran, so every poisoned output is NaN: a launch that writes nothing fails.
    assert (tmp_path / "check.txt").read_text().count("relative error nan") == len(kernels)


# -- verify ttgir --target: a module without ttg.target, as Triton's lit tests are -------

PLAIN_SM80 = f"{KERNELS}/gluon_transpose_plain.sm80.ttgir"


def without_target(tmp_path) -> str:
    """The plain transpose's sm_80 TTGIR with its ttg.target removed (its blocked
    encodings name no architecture, so nothing infers one)."""
    with open(PLAIN_SM80) as f:
        text = f.read()
    assert 'ttg.target = "cuda:80", ' in text
    path = tmp_path / "plain.ttgir"
    path.write_text(text.replace('ttg.target = "cuda:80", ', ""))
    return str(path)


def test_target_option_stands_for_a_missing_ttg_target(tmp_path):
    path = without_target(tmp_path)
    out = run_cli(path)
    assert out.returncode == 2 and 'expected a module with a "ttg.target"' in out.stderr
    given = run_cli(path, "--target", "sm_80", "--json")
    own = run_cli(PLAIN_SM80, "--json")  # run_cli reads by TTGIR's rules (--no-ptx)
    assert given.returncode == own.returncode == 1, given.stderr

    def verdicts(doc):
        return sorted((c["line"], c["property"], c["status"]) for c in json.loads(doc)["checks"])

    assert verdicts(given.stdout) == verdicts(own.stdout)


def test_a_target_option_that_differs_from_the_modules_own_is_an_error_naming_both():
    out = run_cli(PLAIN_SM80, "--target", "sm_90")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.startswith(f"{PLAIN_SM80}:8:73: error: ")
    assert '"cuda:90" as --target gives it, found "cuda:80"' in out.stderr
    assert run_cli(PLAIN_SM80, "--target", "sm_80").returncode == 1


def test_target_option_overrides_the_target_encodings_imply():
    from verify.ttgir.module import module_target

    mma_v2 = "#mma = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0}>\nmodule {}"
    assert module_target(None, None, mma_v2, "m") == "cuda:80"
    assert module_target(None, "cuda:90", mma_v2, "m") == "cuda:90"
    assert module_target("cuda:80", "cuda:80", mma_v2, "m") == "cuda:80"


# A lit module without ttg.target lowered for --target's (issue 26): reduced from
# test/Conversion/tritongpu_to_llvm.mlir #28, whose convert_layout scratch Triton lays out.
CONVERT_SCRATCH = "tests/data/triton_corpus/convert_scratch.mlir"


def lowered_cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "verify.cli", "ttgir", "--json", *args],
        capture_output=True,
        text=True,
    )


def test_target_option_lowers_a_module_without_ttg_target_from_its_ptx():
    """--target sm_90 is written into the module lowered, so the convert_layout's
    checks are its instructions in Triton's PTX: its scratch reads
    (ld.shared.b32) are 4-way; sm_80's lowering of the same op is conflict-free."""
    sm90 = lowered_cli("--target", "sm_90", CONVERT_SCRATCH)
    assert sm90.returncode == 1, sm90.stderr
    checks = json.loads(sm90.stdout)["checks"]
    converts = [c for c in checks if "convert_layout" in c["property"]]
    assert converts and all(c["facts"]["instructions"] == "ptx" for c in converts)
    assert {c["spec"] for c in checks} == {CONVERT_SCRATCH}
    refuted = [c for c in checks if c["status"] == "refuted"]
    assert refuted and all(
        c["property"].startswith("conflict_free convert_layout: ld.shared.b32 [")
        and c["max_ways"] == 4
        for c in refuted
    )
    sm80 = lowered_cli("--target", "sm_80", CONVERT_SCRATCH)
    found = json.loads(sm80.stdout)
    assert found["summary"]["refuted"] == 0 and found["summary"]["proved"] > 0
    assert any("ld.shared.b32" in c["property"] for c in found["checks"])
    assert all(
        c["facts"]["instructions"] == "ptx"
        for c in found["checks"]
        if "convert_layout" in c["property"]
    )


def test_with_target_writes_the_attribute_as_triton_prints_it():
    from verify.ttgir.lower import with_target

    assert with_target('module attributes {"ttg.num-warps" = 4 : i32} {\n}', "cuda:90") == (
        'module attributes {ttg.target = "cuda:90", "ttg.num-warps" = 4 : i32} {\n}'
    )
    assert with_target("#a = 1\nmodule {\n}", "cuda:80") == (
        '#a = 1\nmodule attributes {ttg.target = "cuda:80"} {\n}'
    )
    assert with_target("module @m {\n}", "cuda:80") == (
        'module @m attributes {ttg.target = "cuda:80"} {\n}'
    )
    assert with_target("tt.func @f() {\n}", "cuda:80") == "tt.func @f() {\n}"
    from verify.ttgir.lower import NotLowered, lower

    with pytest.raises(NotLowered, match='no module op to write ttg.target = "cuda:80" into'):
        lower("tt.func @f() {\n}", "f.mlir", "cuda:80")


def test_a_reused_mlir_context_reads_each_kernel_as_a_fresh_one(tmp_path):
    """The long-lived reader parses every kernel into one MLIR context
    (`extract.main(reuse_context=True)`): after a kernel MLIR refuses, the next
    kernels give the documents a fresh context gives (buffers are named by the
    pointers MLIR hands out, so they are compared by order of first use)."""
    import contextlib
    import io
    import re

    from verify.ttgir import extract

    def read(path, reuse):
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            extract.main(str(path), reuse_context=reuse)
        ids: dict[str, int] = {}
        number = lambda m: f'"{m[1]}": {ids.setdefault(m[2], len(ids))}'  # noqa: E731
        return json.loads(re.sub(r'"(buffer|id)": (\d+)', number, printed.getvalue()))

    broken = tmp_path / "broken.ttgir"
    broken.write_text("module {\n  tt.func @f( {\n}\n")
    import glob
    import os

    kernels = sorted(
        glob.glob(os.path.join(conftest.ROOT, "tests", "data", "ttgir_ptx", "*.ttgir"))
    )
    assert kernels
    assert read(broken, True)["error"] == "parse"
    for path in kernels:
        reused = read(path, True)
        assert reused == read(path, False) and reused["ops"], path
