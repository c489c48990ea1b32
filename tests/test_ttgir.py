"""`verify ttgir`: compiled Triton kernels (specs/triton_kernels/, TTGIR from Triton
3.9.0 via benchmarks/triton_kernels.py) checked op by op, at their Python lines."""
import json
import subprocess
import sys

import pytest

pytest.importorskip("triton")

from verify.errors import SpecError                     # noqa: E402
from verify.solve import Status                         # noqa: E402
from verify.ttgir import check                          # noqa: E402
from verify.ttgir import lowering                       # noqa: E402
from verify.ttgir.module import EXTRA, require_triton, run_kernel   # noqa: E402

KERNELS = "specs/triton_kernels"


def verdicts(name: str) -> dict[str, str]:
    return {r.property: r.status.value for r in check(f"{KERNELS}/{name}.ttgir", 30)}


@pytest.mark.parametrize("target", ["sm80", "sm90"])
def test_gluon_plain_transpose_reads_a_column_32_way(target):
    results = check(f"{KERNELS}/gluon_transpose_plain.{target}.ttgir", 30)
    load = next(r for r in results if r.property == "conflict_free local_load %column_major")
    assert (load.status, load.max_ways, load.wavefronts) == (Status.REFUTED, 32, 32)
    assert (load.file, load.line) == ("specs/triton_kernels/gluon_transpose.py", 32)
    assert verdicts(f"gluon_transpose_plain.{target}")["bijective local_alloc %smem"] == "proved"


def test_gluon_plain_store_is_stmatrix_x4_on_sm90_with_a_verdict():
    """The PTX has 2 stmatrix.x4 for sm_90 and 8 st.shared.b32 for sm_80
    (benchmarks/results/triton_kernels.md): lanes along a row, 4 words per row."""
    checker = run_kernel(f"{KERNELS}/gluon_transpose_plain.sm90.ttgir", 30)
    store = next(r for r in checker.results
                 if r.property == "conflict_free local_store %tile_8")
    assert (store.status, store.max_ways, store.wavefronts) == (Status.PROVED, 1, 4)
    assert (store.file, store.line) == ("specs/triton_kernels/gluon_transpose.py", 31)
    assert ("local_store %tile_8", "stmatrix.x4", 2) in decisions(checker)
    sm80 = run_kernel(f"{KERNELS}/gluon_transpose_plain.sm80.ttgir", 30)
    assert ("local_store %tile_8", "st.shared.b32", 8) in decisions(sm80)


def decisions(checker) -> set[tuple[str, str, int]]:
    return {(d["op"], d["instruction"], d["per_warp"]) for d in checker.decisions}


def test_matmul_sm80_operands_are_ldmatrix_x4_and_conflict_free():
    """A (K-contiguous) by ldmatrix.x4, B (N-contiguous) by ldmatrix.x4.trans, 4 per
    warp for each of the 5 loads of each: the PTX's 20 + 20."""
    checker = run_kernel(f"{KERNELS}/matmul.sm80.ttgir", 30)
    found = decisions(checker)
    assert {i for _, i, _ in found} == {"ldmatrix.x4", "ldmatrix.x4.trans"}
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
    results = check(f"{KERNELS}/matmul.{target}.ttgir", 30)
    proved = {r.property for r in results if r.status == Status.PROVED}
    assert {"bijective local_alloc %a", "bijective local_alloc %b"} <= proved
    unknown = [r for r in results if r.status == Status.UNKNOWN]
    assert unknown and all(r.property.startswith("not modelled: ") and r.reason
                           for r in unknown)
    assert not any(r.status == Status.REFUTED for r in results)
    reasons = " ".join(r.reason for r in unknown)
    assert "cp.async" in reasons and "ldmatrix" not in reasons
    assert target == "sm80" or "wgmma" in reasons


def test_transpose_convert_layout_is_listed_not_modelled():
    assert verdicts("transpose.sm80") == {"not modelled: convert_layout": "unknown"}


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "verify.cli", "ttgir", *args],
                          capture_output=True, text=True)


def test_cli_report_line_format_and_exit_status():
    out = run_cli(f"{KERNELS}/gluon_transpose_plain.sm80.ttgir")
    assert out.returncode == 1
    assert ("specs/triton_kernels/gluon_transpose.py:32: REFUTED  conflict_free local_load "
            "%column_major  [") in out.stdout
    assert "    max_ways 32; wavefronts 32 (ideal 1)" in out.stdout
    assert out.stdout.rstrip().endswith("7 checks: 6 proved, 1 refuted, 0 unknown")
    assert run_cli(f"{KERNELS}/gluon_transpose_swizzled.sm80.ttgir").returncode == 0
    assert run_cli(f"{KERNELS}/gluon_transpose_plain.sm90.ttgir").returncode == 1
    assert run_cli(f"{KERNELS}/matmul.sm90.ttgir").returncode == 3


def test_cli_json_names_the_op():
    doc = json.loads(run_cli(f"{KERNELS}/gluon_transpose_plain.sm80.ttgir", "--json").stdout)
    load = next(c for c in doc["checks"]
                if c["property"] == "conflict_free local_load %column_major")
    assert (load["spec"], load["line"], load["status"], load["max_ways"]) == (
        "specs/triton_kernels/gluon_transpose.py", 32, "refuted", 32)


@pytest.mark.parametrize("text,where", [
    ("module {\n  %0 = foo.bar : i32\n}\n", ":2:"),
    ("module {\n  tt.func @f( {\n", ":"),
    ("(" * 500, ":1:1:"),
    ("\0module", ":1:1:"),
])
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
    with pytest.raises(SpecError, match=r"pip install 'verify\[triton\]'"):
        require_triton()
    with pytest.raises(SpecError, match="verify\\[triton\\]"):
        check(f"{KERNELS}/matmul.sm80.ttgir")
    assert "verify[triton]" in EXTRA


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
    return lowering.Cvt(tuple(register), tuple(lane), tuple(warp),
                        tuple((r,) for r in register))


def test_plain_matrix_plan_takes_lanes_2_3_4_then_registers_as_row_addresses():
    """lowerLdStMatrix, not transposed, 16-bit: register offset 1 and lanes 0, 1 are
    the 16-byte row; lanes 2, 3, 4 then the next two registers address rows
    (.x4); the last register indexes instructions."""
    plan = lowering.matrix_plan(cvt((1, 64, 8, 512), (2, 4, 16, 32, 128)), 16, False, 0, 1024)
    assert plan == lowering.MatrixPlan(
        False, 4, (("lane", 2), ("lane", 3), ("lane", 4), ("register", 1),
                   ("register", 2)), (3,))
    assert lowering.matrix_plan(cvt((1, 64), (2, 4, 16, 32, 128)), 16, False, 0, 1024).count == 2
    # A subslice whose start moves inside the row tile (getMaskSpanOffsets) refuses it.
    assert lowering.matrix_plan(cvt((1, 64), (2, 4, 16, 32, 128)), 16, False, 4, 1024) is None
    # Lane 1 not at offset 4: no 16-byte row.
    assert lowering.matrix_plan(cvt((1, 64), (2, 8, 16, 32, 128)), 16, False, 0, 1024) is None


def test_transposed_plan_row_register_minimises_conflicts_then_keeps_word_order():
    """getLdStMatrixRowPermutation: the row register with lanes 0, 1 must span 8
    distinct 16-byte rows of one 128-byte phase; register 0 (offset 128 = row 16)
    would share a bank phase with lane 0 (row 8 ^ 16 span), register 1 (row 1)
    does not, so register 1 is chosen; without conflicts, register 0 is kept."""
    lanes = (16, 32, 1, 2, 4)                    # rows 2 and 4, then the row's elements
    conflicting = lowering.matrix_plan(cvt((128, 8, 256), lanes), 16, True, 0, 4096)
    assert conflicting.address_bits[0] == ("register", 1)
    assert conflicting.count == 4 and conflicting.instruction_registers == ()
    free = lowering.matrix_plan(cvt((8, 128, 256), lanes), 16, True, 0, 4096)
    assert free.address_bits == (("register", 0), ("lane", 0), ("lane", 1),
                                 ("register", 1), ("register", 2))
    assert lowering.row_conflicts([16, 2, 4], 512) == 1
    assert lowering.row_conflicts([1, 2, 4], 512) == 0


def test_choose_orders_stmatrix_by_target_and_falls_back_to_st_shared():
    c = cvt((1, 64, 8), (2, 4, 16, 32, 128))
    assert lowering.choose(c, 16, True, 90).instruction == "stmatrix.x4"
    assert lowering.choose(c, 16, True, 80).instruction.startswith("st.shared")
    assert lowering.choose(c, 16, False, 80).instruction == "ldmatrix.x4"


# -- verify triton / check_kernel: compiling the user's kernel on this CPU ---------------

def run_triton(*args):
    return subprocess.run([sys.executable, "-m", "verify.cli", "triton", *args],
                          capture_output=True, text=True)


GLUON = f"{KERNELS}/gluon_transpose.py"


def test_triton_command_compiles_a_gluon_kernel_and_reports_its_lines():
    out = run_triton(f"{GLUON}:transpose_plain", "--target", "sm_90",
                     "--signature", "x_ptr:*fp32,y_ptr:*fp32", "--num-warps", "4")
    assert out.returncode == 1, out.stderr
    assert ("specs/triton_kernels/gluon_transpose.py:32: REFUTED  conflict_free local_load "
            "%column_major") in out.stdout
    assert "gluon_transpose.py:31: PROVED   conflict_free local_store %tile_8" in out.stdout
    assert run_triton(f"{GLUON}:transpose_swizzled", "--target", "sm_80", "--signature",
                      "x_ptr:*fp32,y_ptr:*fp32").returncode == 0


def test_check_kernel_takes_a_jit_function_and_check_compiled_a_compiled_kernel():
    from verify.ttgir import check_compiled, check_kernel
    from verify.ttgir.kernel import compile_kernel, load_kernel
    fn = load_kernel(f"{GLUON}:transpose_plain")
    sig = {"x_ptr": "*fp32", "y_ptr": "*fp32"}
    found = {r.property: r.status for r in check_kernel(fn, target="sm_90", signature=sig)}
    assert found["conflict_free local_store %tile_8"] == Status.PROVED
    assert found["conflict_free local_load %column_major"] == Status.REFUTED
    compiled = compile_kernel(fn, "sm_80", signature=sig)
    store = next(r for r in check_compiled(compiled)
                 if r.property == "conflict_free local_store %tile_8")
    assert (store.status, store.wavefronts) == (Status.PROVED, 1)   # st.shared.b32 on sm_80


def test_signature_is_inferred_from_constexprs_annotations_and_defaults(tmp_path):
    from verify.ttgir.kernel import build_signature, load_kernel
    path = tmp_path / "k.py"
    path.write_text("import triton\nimport triton.language as tl\n\n@triton.jit\n"
                    "def k(p: tl.pointer_type(tl.float16), n, scale=1.5, B: tl.constexpr = 8,"
                    " C: tl.constexpr = 2):\n    pass\n")
    fn = load_kernel(f"{path}:k")
    sig, values, attrs = build_signature(fn, {"n": "i32"}, {"C": 4})
    assert sig == {"p": "*fp16", "n": "i32", "scale": "fp32", "B": "constexpr",
                   "C": "constexpr"}
    assert values == {"B": 8, "C": 4} and attrs == {(0,): [["tt.divisibility", 16]]}
    with pytest.raises(SpecError, match="cannot infer the type of parameter 'n'") as e:
        build_signature(fn, {}, {})
    assert e.value.pos.line == 5          # the def line


@pytest.mark.parametrize("source,line,words", [
    ("def broken(:\n", 1, "SyntaxError"),
    ("import triton\nx = 1\nraise RuntimeError('no GPU here')\n", 3, "no GPU here"),
    ("import triton\nimport triton.language as tl\n\n@triton.jit\ndef k(x_ptr):\n"
     "    a = 1\n    tl.store(x_ptr, undefined_name)\n", 7, "undefined_name"),
])
def test_a_kernel_that_fails_to_import_or_compile_is_a_located_error(tmp_path, source, line,
                                                                    words):
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
