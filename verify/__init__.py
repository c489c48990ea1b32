"""verify: symbolic verification of GPU shared-memory layouts, swizzles and bank conflicts.

Python entry points::

    verify.check("specs/seed/ldmatrix_x1_8x64_swizzled.spec")   # -> Report (a list of CheckResult)
    verify.check_text("dtype f16\nlayout A = ...")   # the same, from text
    verify.check_layout("Sw<3,3,3> o (8,64):(64,1)",
                        {"rd": "ldmatrix.x1 L(lane, 8 * q) for q in 0..8"},
                        ["conflict_free rd"], dtype="f16")   # also pycute objects
    verify.wavefronts("ld.shared.b32", [4 * l for l in range(32)])   # -> 1
    verify.offsets("Sw<3,3,3> o (_8,_64):(_64,_1)")  # -> [0, 72, 144, ...]
"""

from verify.api import (
    check,
    check_layout,
    check_text,
    layout_spec,
    notation,
    offsets,
    parse_layout,
    wavefronts,
)
from verify.errors import SpecError
from verify.report.text import Report
from verify.results import CheckResult
from verify.smt.solve import Status

__all__ = [
    "check",
    "check_layout",
    "check_text",
    "layout_spec",
    "notation",
    "offsets",
    "parse_layout",
    "wavefronts",
    "CheckResult",
    "Report",
    "SpecError",
    "Status",
]
