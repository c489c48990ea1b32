"""The CUDA spot check. Compiling the probe needs only nvcc (CI has it); running it
needs an NVIDIA GPU (tests marked gpu, skipped elsewhere)."""

import glob
import os
import shutil
import subprocess

import conftest
import pytest
from click.testing import CliRunner
from conftest import SPECS

from verify.cli import main
from verify.gpu import fragments
from verify.gpu.probe import Probe, op_name
from verify.model.instructions import parse_instruction

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


CP_ASYNC_SPECS = os.path.join(
    conftest.ROOT,
    "benchmarks",
    "hardware",
    "gpu_cp_async_specs",
)


def test_probe_op_names_tell_the_16_byte_copies_apart():
    assert op_name(parse_instruction("cp.async.cg.16")) == "cpa16"  # the probe's .cg
    assert op_name(parse_instruction("cp.async.ca.shared.global.16")) == "cpa16ca"
    assert op_name(parse_instruction("cp.async.ca.4")) == "cpa4"


def _copy_case(spec_name: str, values: dict):
    from verify.gpu.spot import spot_case
    from verify.model.program import Program
    from verify.spec.parser import parse_file

    program = Program(parse_file(os.path.join(CP_ASYNC_SPECS, spec_name)))
    access = program.access(next(iter(program.spec.accesses)), None)
    return access, spot_case(program, access, values, 1024)


def test_a_copy_is_measured_from_the_specs_own_sources():
    access, (case, env, note) = _copy_case(
        "cutlass_sm80_a_kmajor_cg.spec", {"i": 1, "w": 2, "s": 0, "base": 0}
    )
    assert note == "" and case.op == "cpa16"
    # G(32 i + 8 w + lane / 4, 8 (lane % 4)) with lda 256 halves: rows 48..55, at
    # global base 0 moved down by whole 128-byte lines to the buffer's start.
    assert access.source is not None
    expected = access.source.lane_addresses(env)
    shift = expected[0] - case.sources[0]
    assert shift % 128 == 0 and [s - shift for s in expected] == case.sources
    assert case.sources[:5] == [0, 16, 32, 48, 512]
    assert case.dump_bytes > 0  # the copied bytes are checked, as a store's are


def test_copies_are_compared_with_rule_s_and_bound_g():
    from verify.gpu.compare import compare
    from verify.gpu.probe import Outcome

    access, (case, _, _) = _copy_case(
        "cutlass_sm80_a_kmajor_cg.spec", {"i": 0, "w": 0, "s": 0, "base": 0}
    )
    instr = access.instruction
    exact = compare(instr, case, Outcome(wavefronts=8), 1024)
    assert (exact.predicted, exact.bound, exact.wavefronts_ok) == (8, False, True)
    assert compare(instr, case, Outcome(wavefronts=9), 1024).wavefronts_ok is False
    access, (case, _, _) = _copy_case("broadcast_row_cg.spec", {"r": 0, "base": 0})
    rows = compare(access.instruction, case, Outcome(wavefronts=4), 1024)
    assert (rows.predicted, rows.bound, rows.wavefronts_ok) == (4, False, True)
    # Four chunks copied twice into each line: rule S's rounds, 2 a line (H200: 8).
    access, (case, _, _) = _copy_case("repeat_chunks_cg.spec", {"r": 0, "base": 0})
    twice = compare(access.instruction, case, Outcome(wavefronts=8), 1024)
    assert (twice.predicted, twice.bound, twice.wavefronts_ok) == (8, False, True)
    assert compare(access.instruction, case, Outcome(wavefronts=13), 1024).wavefronts_ok is False


@pytest.mark.gpu
@pytest.mark.parametrize(
    "spec",
    sorted(glob.glob(os.path.join(CP_ASYNC_SPECS, "*.spec"))),
    ids=os.path.basename,
)
def test_cp_async_spot_check_agrees_with_the_gpu(spec):
    result = CliRunner().invoke(main, ["gpu", spec])
    assert result.exit_code == 0, result.output
    assert "0 disagreements" in result.output
