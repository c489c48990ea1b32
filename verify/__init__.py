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

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

# The subpackage verify.notation would take the name `notation` from a lazily
# imported function the first time it is imported; so it is imported now (its
# __init__ is empty), and the name is bound to the function below, for good.
from verify import notation as _notation_package  # noqa: F401

# Each public name and the module that defines it. They are imported on first
# use (PEP 562), so that `import verify.cli` or `import verify.model.expr` does
# not pay for the engines, numpy and z3 (issue 23: start-up).
_EXPORTS = {
    "check": "verify.api",
    "check_layout": "verify.api",
    "check_text": "verify.api",
    "layout_spec": "verify.api",
    "offsets": "verify.api",
    "parse_layout": "verify.api",
    "wavefronts": "verify.api",
    "CheckResult": "verify.results",
    "Report": "verify.report.text",
    "SpecError": "verify.errors",
    "Status": "verify.verdicts",
}

__all__ = [*_EXPORTS, "notation"]


def notation(layout) -> str:
    """verify's text for a layout (`verify.api.notation`): text as it is, pycute
    objects converted."""
    from verify.api import notation as text

    return text(layout)


if TYPE_CHECKING:  # the names as type checkers see them ("X as X": a re-export)
    from verify.api import check as check
    from verify.api import check_layout as check_layout
    from verify.api import check_text as check_text
    from verify.api import layout_spec as layout_spec
    from verify.api import offsets as offsets
    from verify.api import parse_layout as parse_layout
    from verify.api import wavefronts as wavefronts
    from verify.errors import SpecError as SpecError
    from verify.report.text import Report as Report
    from verify.results import CheckResult as CheckResult
    from verify.verdicts import Status as Status


def __getattr__(name: str):
    """The public name, imported from its module the first time it is asked for."""
    if name not in _EXPORTS:
        raise AttributeError(f"module 'verify' has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
