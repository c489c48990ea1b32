"""The CUDA spot check. Compiling the probe needs only nvcc (CI has it); running it
needs an NVIDIA GPU (tests marked gpu, skipped elsewhere)."""

import glob
import os
import shutil
import subprocess

import pytest
from click.testing import CliRunner
from conftest import SPECS

from verify.cli import main
from verify.gpu import fragments
from verify.gpu.probe import Probe, op_name
from verify.instructions import parse_instruction

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")


@needs_nvcc
def test_probe_source_compiles_for_sm90(tmp_path):
    src = tmp_path / "probe.cu"
    src.write_text(Probe.source())
    r = subprocess.run(
        [
            "nvcc",
            "-O2",
            "-std=c++17",
            "-arch=sm_90",
            "-c",
            str(src),
            "-o",
            str(tmp_path / "probe.o"),
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr


def test_ldmatrix_receivers_follow_the_ptx_fragment_layout():
    rows = [128 * r for r in range(8)]
    plain = fragments.receivers(parse_instruction("ldmatrix.x1"), rows)
    trans = fragments.receivers(parse_instruction("ldmatrix.x1.trans"), rows)
    # Lane 21 = 4*5 + 1: row 5, halves 2 and 3 (bytes 4..7 of the row).
    assert [plain[(21, 0, b)] for b in range(4)] == [644, 645, 646, 647]
    # .trans: lane 21 gets column 5 of rows 2 and 3.
    assert [trans[(21, 0, b)] for b in range(4)] == [266, 267, 394, 395]


def test_stores_list_every_possible_writer():
    writers = fragments.writers(parse_instruction("st.shared.b32"), [0] * 32)
    assert sorted(lane for lane, _, _ in writers[0]) == list(range(32))


def test_probe_op_names():
    assert op_name(parse_instruction("SM75_U16x8_LDSM_T")) == "ldsm4t"
    assert op_name(parse_instruction("st.shared.v2.b32")) == "st64"


def test_fragments_command_shows_providers_versus_receivers():
    out = (
        CliRunner()
        .invoke(main, ["fragments", os.path.join(SPECS, "seed", "ldmatrix_x1_8x64_plain.spec")])
        .output
    )
    assert "lane 20 d0 <- A(5, 0), A(5, 1)" in out  # row 5 goes to T20-T23, not T5
    assert "lane  5 d0 <- A(1, 2), A(1, 3)" in out


@pytest.mark.gpu
@pytest.mark.parametrize(
    "spec",
    sorted(glob.glob(os.path.join(SPECS, "**", "*.spec"), recursive=True)),
    ids=os.path.basename,
)
def test_spot_check_agrees_with_the_gpu(spec):
    result = CliRunner().invoke(main, ["gpu", spec])
    assert result.exit_code == 0, result.output
    assert "0 disagreements" in result.output


@pytest.mark.gpu
def test_clock64_fallback_estimates_agree_on_exact_classes():
    spec = os.path.join(SPECS, "seed", "word_stride_table.spec")
    result = CliRunner().invoke(main, ["gpu", "--timing", spec])
    assert result.exit_code == 0, result.output
    assert "estimated from clock64" in result.output


def test_missing_nvcc_or_gpu_is_a_clear_error_not_a_crash(monkeypatch):
    import verify.gpu.probe as probe_module

    monkeypatch.setattr(probe_module.shutil, "which", lambda name: None)
    spec = os.path.join(SPECS, "seed", "word_stride_table.spec")
    result = CliRunner().invoke(main, ["gpu", spec])
    assert result.exit_code == 2
    assert "error: nvcc not found on PATH" in result.output
    assert "Traceback" not in result.output
