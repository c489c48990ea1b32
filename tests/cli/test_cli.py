"""Golden-file tests of the CLI on the bundled specs, exit codes and JSON fields.

Regenerate the golden files after an intended output change with
``VERIFY_UPDATE_GOLDEN=1 pytest tests/cli/test_cli.py``.
"""

import glob
import json
import os
import re

import pytest
from click.testing import CliRunner
from conftest import ROOT, SPECS

from verify.cli import main

GOLDEN = os.path.join(ROOT, "tests", "golden")
SEED_SPECS = sorted(glob.glob(os.path.join(SPECS, "**", "*.spec"), recursive=True))


def run(*args):
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.output


def normalise(text: str) -> str:
    """Timings vary; paths and the engine that decided each check do not."""
    return re.sub(r"\[\d+ ms", "[ms", text.replace(ROOT + os.sep, ""))


@pytest.mark.parametrize("spec", SEED_SPECS, ids=os.path.basename)
def test_seed_spec_output_matches_golden_file(spec, monkeypatch):
    monkeypatch.chdir(ROOT)
    code, out = run(os.path.relpath(spec, ROOT))
    golden = os.path.join(GOLDEN, os.path.basename(spec).replace(".spec", ".txt"))
    got = normalise(out)
    if os.environ.get("VERIFY_UPDATE_GOLDEN"):
        os.makedirs(GOLDEN, exist_ok=True)
        with open(golden, "w") as f:
            f.write(got)
    with open(golden) as f:
        assert got == f.read()
    assert code in (0, 1)


def test_every_bundled_check_ends_as_its_spec_expects():
    code, out = run(SPECS, "--check-expect")
    assert code == 0, out
    assert "EXPECTED" not in out


def test_exit_codes_proved_refuted():
    assert run(os.path.join(SPECS, "seed", "ldmatrix_x1_8x64_swizzled.spec"))[0] == 0
    # the plain tile's refutation is expected: a pass, unless verdicts alone are judged
    plain = os.path.join(SPECS, "seed", "ldmatrix_x1_8x64_plain.spec")
    assert run(plain)[0] == 0 and run(plain, "--raw-verdicts")[0] == 1


def test_spec_error_is_located_and_exits_2_without_traceback(tmp_path):
    bad = tmp_path / "bad.spec"
    bad.write_text("dtype f16\naccess r = ldmatrix.x1 B(lane, 0)\n")
    code, out = run(str(bad))  # click's runner mixes stderr into the output
    assert code == 2
    assert f"{bad}:2:24: error: unknown layout 'B'" in out
    assert "Traceback" not in out


def test_timeout_is_unknown_and_exits_3(tmp_path):
    spec = tmp_path / "slow.spec"
    spec.write_text(
        "dtype f32\nlayout A = (_32,_32):(_33,_1)\n"
        "access col = ld.shared.b32 A(lane, c) for c in 0..32\n"
        "check conflict_free col\n"
    )
    code, out = run(str(spec), "--timeout", "0.001", "--engine", "z3")
    assert code == 3
    assert "UNKNOWN  conflict_free col" in out
    assert "timeout" in out


def test_json_document_has_the_documented_fields():
    code, out = run(os.path.join(SPECS, "seed", "ldmatrix_x1_8x64_plain.spec"), "--json")
    doc = json.loads(out)
    check = next(c for c in doc["checks"] if c["property"] == "conflict_free rd")
    assert code == 0 and check["level"] is None  # refuted as expected: a pass
    assert check["status"] == "refuted" and check["expect"] == "refuted"
    assert (check["max_ways"], check["wavefronts"], check["ideal_wavefronts"]) == (8, 8, 1)
    assert isinstance(check["solver_seconds"], float) and check["line"] == 13
    lanes = check["counterexample"]["lanes"]
    assert [lane["lane"] for lane in lanes] == list(range(8))
    assert all(lane["banks"] == [0, 1, 2, 3] for lane in lanes)
    assert doc["summary"]["refuted"] == 1


def test_wavefronts_command_prints_count_last():
    code, out = run("wavefronts", "ldmatrix.x1", *[str(128 * r) for r in range(8)])
    assert code == 0
    assert out.strip().splitlines()[-1] == "8"
    code, out = run("wavefronts", "--json", "ld.shared.v4", *[str(16 * lane) for lane in range(32)])
    doc = json.loads(out)
    assert (doc["wavefronts"], doc["ideal"], doc["max_ways"], doc["exact"]) == (4, 4, 1, True)
    assert len(doc["phases"]) == 4


def test_wavefronts_command_rejects_bad_addresses():
    code, out = run("wavefronts", "ld.shared.b32", "0", "x")
    assert code == 2 and "expected an integer byte offset" in out


def test_map_command_lists_offsets_in_cute_order():
    code, out = run("map", "Sw<3,3,3> o (_8,_64):(_64,_1)", "--json")
    doc = json.loads(out)
    assert doc["shape"] == [8, 64]
    assert doc["offsets"][:9] == [0, 72, 144, 216, 288, 360, 432, 504, 1]
    code, out = run("map", "(4,2):(2,1)", "--dtype", "f32", "--json")
    doc = json.loads(out)
    assert doc["byte_offsets"] == [0, 8, 16, 24, 4, 12, 20, 28]
    assert doc["formula"] == "L(m0, m1) = 2*m0 + m1"


def test_map_prints_the_simplified_address_formula():
    code, out = run("map", "((_8,_8),_64):((_64,_512),_1)")
    assert "L(m0, m1) = m1 + 64*(Mod(m0, 8)) + 512*floor(m0/8)" in out


def test_map_command_reports_bad_layout_at_its_column():
    code, out = run("map", "(8,64):(64,1) o")
    assert code == 2
    assert "<layout>:1:16: error: expected" in out


def test_parallel_jobs_give_the_same_report_as_one_process():
    serial = normalise(run(SPECS)[1])
    parallel = normalise(run(SPECS, "-j", "2")[1])
    assert parallel == serial


@pytest.mark.parametrize(
    "args,message",
    [
        (
            ["ld.shared.b32", "4294967296", *[str(4 * lane) for lane in range(1, 32)]],
            "<args>: error: ld.shared.b32: lane 0 address 4294967296 is past the 32-bit shared "
            "window",
        ),
        (
            ["ldmatrix.x1", *[str(128 * r) for r in range(8)], "3"],
            "<args>: error: ldmatrix.x1 takes 8 lane addresses (lanes 0-7): expected 8, found 9",
        ),
        (
            ["ldmatrix.x1", *[str(128 * r) for r in range(7)], "8"],
            "<args>: error: ldmatrix.x1: lane 7 address 8 is not 16-byte aligned",
        ),
    ],
)
def test_wavefronts_command_refuses_addresses_the_instruction_cannot_issue(args, message):
    code, out = run("wavefronts", *args)
    assert code == 2 and out.startswith(message), out
    assert "Traceback" not in out
