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
from verify.ttgir.module import EXTRA, require_triton   # noqa: E402

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


def test_gluon_plain_store_is_stmatrix_on_sm90_and_not_modelled():
    """The PTX has 2 stmatrix.x4 for sm_90 and 8 st.shared.b32 for sm_80
    (benchmarks/results/triton_kernels.md)."""
    sm90 = verdicts("gluon_transpose_plain.sm90")
    assert sm90["not modelled: local_store %tile_8"] == "unknown"
    assert verdicts("gluon_transpose_plain.sm80")["conflict_free local_store %tile_8"] == "proved"


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
    assert "cp.async" in reasons
    assert ("ldmatrix" in reasons) if target == "sm80" else ("wgmma" in reasons)


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
