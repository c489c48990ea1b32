"""``verify ttgir KERNEL.ttgir``: check every shared-memory op of a compiled Triton
kernel, read from the compiler's own TTGIR with Triton's MLIR bindings (the
``triton`` extra: ``pip install 'verify-smem[triton]'``).

``check(path_or_text, timeout=60.0, engine="auto", ptx=PtxOptions()) ->
list[CheckResult]``: each result carries the op's Python file and line and names
the op (``conflict_free local_load %y``). Each op's checks are decided from the
PTX instructions Triton lowers it to (`verify.ttgir.from_ptx`: the module is
lowered here, or ``PtxOptions(ptx=FILE)`` gives the PTX; ``use=False`` keeps
TTGIR's own lowering rules); ops verify does not model are UNKNOWN results,
``not modelled: <op>``, with the reason. A file that is not TTGIR Triton can
parse raises `SpecError` located at MLIR's diagnostic. ``engine`` decides each check as for a spec:
"auto", "z3" or "enumeration".

``check_kernel(jit_fn, target="sm_90", constexprs=..., signature=..., num_warps=4,
num_stages=3, timeout=60.0, engine="auto")`` compiles a @triton.jit / @gluon.jit
function for a target on the CPU and checks it; ``check_compiled(compiled)`` checks
an already compiled kernel (`verify.ttgir.kernel`).
"""

from __future__ import annotations

from verify.engines.decide import AUTO
from verify.engines.options import RunOptions
from verify.results import CheckResult
from verify.ttgir import from_ptx
from verify.ttgir.from_ptx import PtxOptions
from verify.ttgir.kernel import check_compiled, check_kernel

__all__ = ["PtxOptions", "check", "check_compiled", "check_kernel"]


def check(
    path_or_text: str,
    timeout: float = 60.0,
    engine: str = AUTO,
    ptx: PtxOptions | None = None,
    options: RunOptions | None = None,
) -> list[CheckResult]:
    """Every check of a compiled kernel's shared-memory ops (see the module doc);
    `options`, when given, stands for (`engine`, `timeout`)."""
    return from_ptx.check(path_or_text, options or RunOptions(engine, timeout), ptx)
