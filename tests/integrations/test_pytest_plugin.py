"""The pytest plugin, run as a user runs it (a pytest subprocess in a scratch
directory): off unless --verify, one item per check, expect honoured, failures
shown as their counterexample, -k, -x, pytest-xdist, and spec errors."""

import os
import subprocess
import sys
from importlib.metadata import entry_points

import pytest
from conftest import SPECS

from verify.engines.runner import run_spec
from verify.integrations.pytest_plugin import planned_checks
from verify.spec.parser import parse_file

SWIZZLED = """dtype f16
buffer align 128
layout A = Sw<3,3,3> o _0 o (_8,_64):(_64,_1)
access rd = ldmatrix.x1 A(lane, 8 * q) for q in 0..8
check bijective A
check conflict_free rd
"""
PLAIN = """dtype f16
buffer align 128
layout A = (_8,_64):(_64,_1)
access rd = ldmatrix.x1 A(lane, 8 * q) for q in 0..8
check conflict_free rd expect refuted
check max_ways <= 2 rd
"""
# A user's own test beside the specs: it runs (and can fail) with or without --verify.
TEST_MODULE = """import verify


def test_python():
    assert verify.offsets("(2,2):(2,1)") == [0, 2, 1, 3]
"""


def pytest_run(directory, *args):
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-o", "addopts=", *args],
        cwd=directory,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return result.returncode, result.stdout + result.stderr


@pytest.fixture
def project(tmp_path):
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "swizzled.spec").write_text(SWIZZLED)
    (tmp_path / "specs" / "plain.spec").write_text(PLAIN)
    (tmp_path / "test_module.py").write_text(TEST_MODULE)
    return tmp_path


def test_the_plugin_is_registered_for_pytest():
    assert "verify.integrations.pytest_plugin" in {e.value for e in entry_points(group="pytest11")}


def test_without_verify_no_spec_is_collected(project):
    code, out = pytest_run(project, "--collect-only", "-q")
    assert code == 0, out
    assert "test_module.py::test_python" in out and ".spec" not in out
    code, out = pytest_run(project, "-q")
    assert code == 0 and "1 passed" in out, out


def test_a_users_failing_test_still_fails_beside_the_plugin(project):
    (project / "test_module.py").write_text(TEST_MODULE.replace("[0, 2, 1, 3]", "[0, 1, 2, 3]"))
    code, out = pytest_run(project, "-q")
    assert code == 1 and "1 failed" in out, out


def test_each_check_is_an_item_and_a_failure_shows_its_counterexample(project):
    code, out = pytest_run(project, "--verify", "specs", "-v")
    assert code == 1, out
    for item in (
        "swizzled.spec::in_bounds rd [line 4] PASSED",
        "swizzled.spec::aligned 16 rd [line 4] PASSED",
        "swizzled.spec::bijective A [line 5] PASSED",
        "swizzled.spec::conflict_free rd [line 6] PASSED",
        "plain.spec::conflict_free rd [line 5] PASSED",  # expect refuted
        "plain.spec::max_ways <= 2 rd [line 6] FAILED",
    ):
        assert item in out, out
    assert "REFUTED  max_ways <= 2 rd" in out
    assert (
        "counterexample: ldmatrix.x1: lanes 0-7 hit banks 0-3 with 8 distinct words: 8-way" in out
    )
    assert "1 failed, 7 passed" in out
    assert "Traceback" not in out


def test_k_selects_checks_by_name(project):
    code, out = pytest_run(project, "--verify", "specs", "-q", "-k", "conflict_free")
    assert code == 0, out
    assert "2 passed, 6 deselected" in out


def test_x_stops_at_the_first_failure(project):
    (project / "specs" / "plain2.spec").write_text(PLAIN)
    code, out = pytest_run(project, "--verify", "specs", "-q", "-x")
    assert code == 1
    assert "1 failed" in out and "stopping after 1 failures" in out


def test_xdist_workers_collect_and_run_the_same_items(project):
    code, out = pytest_run(project, "--verify", "specs", "-q", "-n", "2")
    assert code == 1, out
    assert "1 failed, 7 passed" in out
    assert "counterexample: ldmatrix.x1" in out


def test_a_spec_that_does_not_parse_is_a_located_collection_error(project):
    (project / "specs" / "bad.spec").write_text("dtype f16\naccess r = ldmatrix.x1 B(lane, 0)\n")
    code, out = pytest_run(project, "--verify", "specs", "-q")
    assert code == 2
    assert "bad.spec:2:24: error: unknown layout 'B'" in out
    assert "Traceback" not in out


def test_a_spec_error_found_while_running_fails_its_items(project):
    (project / "specs" / "sizes.spec").write_text(
        "dtype f16\nlayout A = (8,8):(8,1)\nlayout B = (8,4):(4,1)\ncheck equivalent A, B\n"
    )
    code, out = pytest_run(project, "--verify", "specs/sizes.spec", "-q")
    assert code == 1
    assert "expected layouts of one size" in out


@pytest.mark.parametrize(
    "name",
    [
        "seed/ldmatrix_x1_8x64_swizzled.spec",
        "traps/swizzle_base_misaligned.spec",
        "cutlass_sm90/tma_boxes.spec",
        "triton/mma_v2_i8_operands.spec",  # cp.async: its source's two implicit checks
        "cutlass_sm80/f16_kmajor_128x32x3.spec",
    ],
)
def test_planned_items_are_the_checks_verify_runs(name):
    spec = parse_file(os.path.join(SPECS, name))
    assert planned_checks(spec) == [(r.line, r.property) for r in run_spec(spec)]
