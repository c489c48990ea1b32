"""The default wall-clock budget becomes z3 units where VERIFY_RLIMIT is set (as
tests/conftest.py sets it for every command the suite runs), so a command run as
a subprocess decides alike on a loaded machine; an explicit timeout still counts
seconds, and units asked for are kept."""

import os
import subprocess
import sys

from conftest import ROOT

from verify.engines.options import DEFAULT_SECONDS, WORK_ENV, RunOptions


def test_the_default_seconds_become_units(monkeypatch):
    monkeypatch.setenv(WORK_ENV, "1234")
    assert RunOptions().limits() == (None, 1234)
    assert RunOptions.of(None).budget().rlimit == 1234
    assert RunOptions.of(None).key() == ("auto", None, 1234)


def test_an_explicit_timeout_or_units_are_kept(monkeypatch):
    monkeypatch.setenv(WORK_ENV, "1234")
    assert RunOptions.of(0.001).limits() == (0.001, None)
    assert RunOptions.units(99).limits() == (None, 99)


def test_without_the_variable_seconds_count(monkeypatch):
    monkeypatch.delenv(WORK_ENV, raising=False)
    assert RunOptions().limits() == (DEFAULT_SECONDS, None)
    monkeypatch.setenv(WORK_ENV, "not a number")
    assert RunOptions().limits() == (DEFAULT_SECONDS, None)


def test_a_subprocess_command_spends_units():
    """A solver-decided spec under 1 unit runs out of units, not of seconds: the
    command saw the variable (the suite's own value reaches it by inheritance)."""
    spec = f"{ROOT}/specs/seed/ldmatrix_x1_8x64_swizzled.spec"
    run = subprocess.run(
        [sys.executable, "-m", "verify.cli", spec, "--engine", "z3"],
        capture_output=True,
        text=True,
        env={**os.environ, WORK_ENV: "1"},
        timeout=300,
    )
    assert run.returncode == 3, run.stdout + run.stderr  # UNKNOWN
    assert "resource" in run.stdout or "rlimit" in run.stdout, run.stdout
