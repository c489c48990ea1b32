"""verify: symbolic verification of GPU shared-memory layouts, swizzles and bank conflicts.

Python entry points::

    verify.check("specs/seed_8x64_swizzled.spec")   # -> list[CheckResult]
    verify.wavefronts("ld.shared.b32", [4 * l for l in range(32)])   # -> 1
    verify.offsets("Sw<3,3,3> o (_8,_64):(_64,_1)")  # -> [0, 72, 144, ...]
"""
from verify.api import check, offsets, parse_layout, wavefronts
from verify.errors import SpecError
from verify.solve import Status

__all__ = ["check", "offsets", "parse_layout", "wavefronts", "SpecError", "Status"]
