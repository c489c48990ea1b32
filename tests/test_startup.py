"""Start-up: the command line does not load what only some commands need.

sympy is for printed formulas (`verify map`, synthesis certificates), Triton for
kernels, matplotlib for pictures; each is imported where it is used, so a quick
question does not pay for them. (z3 is still loaded at start-up, through the
verdict vocabulary in verify.smt.solve: issue 23, not yet moved.)
"""

import subprocess
import sys

LAZY = ("sympy", "triton", "matplotlib")


def loaded_after(statement: str) -> list[str]:
    probe = f"import sys\n{statement}\nprint(' '.join(m for m in {LAZY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_importing_the_cli_loads_no_formula_kernel_or_drawing_library():
    assert loaded_after("import verify.cli") == []


def test_the_probe_sees_a_module_that_is_loaded():
    assert loaded_after("import sympy") == ["sympy"]
