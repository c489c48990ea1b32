"""Start-up: the command line does not load what only some commands need.

sympy is for printed formulas (`verify map`, synthesis certificates), Triton for
kernels, matplotlib for pictures, z3 for the solver, numpy for enumerating large
domains (a small one is walked in plain Python) and lark for reading specs;
each is imported where it is used, so `verify --help` and a quick question do
not pay for them (issue 23; the CPU seconds are measured by
benchmarks/speed/startup.py, not here).
"""

import os
import subprocess
import sys

import pytest

HEAVY = ("sympy", "triton", "matplotlib", "z3", "numpy", "lark")
SEED = "specs/seed/ldmatrix_x1_8x64_swizzled.spec"
WAVEFRONTS = ["wavefronts", "ld.shared.b32", *(str(4 * lane) for lane in range(32))]


def loaded_after(statement: str) -> list[str]:
    probe = f"import sys\n{statement}\nprint(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_importing_the_cli_loads_no_heavy_library():
    assert loaded_after("import verify.cli") == []


def test_importing_verify_loads_its_public_names_only_when_used():
    assert loaded_after("import verify") == []
    assert "lark" in loaded_after("import verify\nverify.check")  # the spec reader


def test_help_lists_every_command_without_loading_one():
    statement = (
        "from click.testing import CliRunner\nfrom verify.cli import main\n"
        "assert CliRunner().invoke(main, ['--help']).exit_code == 0"
    )
    assert loaded_after(statement) == []


@pytest.mark.parametrize("command", [[SEED], WAVEFRONTS])
def test_a_quick_question_loads_no_formula_kernel_drawing_or_array_library(command):
    statement = (
        "from click.testing import CliRunner\nfrom verify.cli import main\n"
        f"assert CliRunner().invoke(main, {command!r}).exit_code == 0"
    )
    assert not {"sympy", "triton", "matplotlib", "z3", "numpy"} & set(loaded_after(statement))


def test_the_solver_loads_only_for_a_check_it_decides():
    """The seed spec is decided by enumeration (above: no z3); asked of z3, it is."""
    statement = (
        "from click.testing import CliRunner\nfrom verify.cli import main\n"
        f"assert CliRunner().invoke(main, {[SEED, '--engine', 'z3']!r}).exit_code == 0"
    )
    assert "z3" in loaded_after(statement)


def test_a_small_spec_is_decided_without_numpy():
    """Its domains are walked point by point (`verify.engines.plain`); numpy loads
    for the first domain too large for that, or a copy's cost."""
    decide = (
        "from verify.engines.options import RunOptions\n"
        "from verify.engines.runner import run_spec\n"
        "from verify.spec.parser import parse_file, parse_text\n"
        f"results = run_spec(parse_file({SEED!r}), RunOptions('enumeration', None))\n"
        "assert [r.status.name for r in results] == ['PROVED'] * 6, results\n"
    )
    assert "numpy" not in loaded_after(decide)
    large = "access wide = ld.shared.b16 A(lane / 8, 8 * (lane % 8)) for q in 0..64"
    statement = decide + (
        f"spec = parse_text(open({SEED!r}).read() + {large + chr(10)!r})\n"
        "run_spec(spec, RunOptions('enumeration', None))"
    )
    assert "numpy" in loaded_after(statement)


def test_a_command_module_loads_only_for_its_command():
    statement = (
        "from click.testing import CliRunner\nfrom verify.cli import main\n"
        f"assert CliRunner().invoke(main, {[SEED]!r}).exit_code == 0\n"
        "import sys\nprint(*sorted(m for m in sys.modules if m.startswith('verify.cli.')))"
    )
    probe = subprocess.run([sys.executable, "-c", statement], capture_output=True, text=True)
    assert probe.stdout.split() == ["verify.cli.check", "verify.cli.common"]


def test_the_probe_sees_a_module_that_is_loaded():
    assert loaded_after("import sympy") == ["sympy"]


def run_seed(cache_home) -> subprocess.CompletedProcess:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache_home)}
    return subprocess.run(
        [sys.executable, "-m", "verify.cli", SEED], capture_output=True, text=True, env=env
    )


def test_the_grammar_cache_is_written_once_and_a_torn_one_is_rebuilt(tmp_path):
    """The grammar's analysis is kept on disk; a file cut short (two processes
    writing, a full disk) is analysed afresh, with the same verdicts."""
    first = run_seed(tmp_path)
    (cached,) = (tmp_path / "verify" / "grammar").iterdir()
    cached.write_bytes(cached.read_bytes()[:100])
    torn = run_seed(tmp_path)
    assert first.returncode == torn.returncode == 0
    assert first.stdout.splitlines()[-1] == torn.stdout.splitlines()[-1]
    assert torn.stderr == "" and cached.stat().st_size > 100


def test_an_unwritable_cache_directory_only_costs_the_analysis(tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    done = run_seed(blocked)
    assert done.returncode == 0 and done.stderr == ""
