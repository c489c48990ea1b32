"""Assertions for a project's own tests: a failing one's message is verify's
report of the checks that failed, counterexample included.

    from verify.testing import assert_bijective, assert_conflict_free

    assert_bijective("Sw<3,3,3> o (8,64):(64,1)")
    assert_conflict_free("Sw<3,3,3> o (8,64):(64,1)",
                         "ldmatrix.x1 L(lane, 8 * q) for q in 0..8", dtype="f16", align=128)

The layout is text in any notation verify reads, or a pycute Layout, Swizzle or
ComposedLayout; it is called `L` (or `name=`) inside the access. Other keyword
options are those of `verify.check_layout` (dtype, shape, align, stages,
stage_bytes, timeout, engine, and options: a `verify.engines.options.RunOptions`).
"""

from __future__ import annotations

from verify.api import DEFAULT_LAYOUT_NAME, check_layout
from verify.report.text import Report, result_text

ACCESS_NAME = "access"


def assert_conflict_free(layout, access: str, *, name: str = DEFAULT_LAYOUT_NAME, **options):
    """Every instance of `access` (an access as written after ``access NAME =``)
    is in bounds, naturally aligned and free of bank conflicts."""
    __tracebackhide__ = True
    report = check_layout(
        layout, {ACCESS_NAME: access}, [f"conflict_free {ACCESS_NAME}"], name=name, **options
    )
    _assert_passed(report)


def assert_bijective(layout, *, name: str = DEFAULT_LAYOUT_NAME, **options):
    """No two coordinates of `layout` share an offset."""
    __tracebackhide__ = True
    _assert_passed(check_layout(layout, None, [f"bijective {name}"], name=name, **options))


def _assert_passed(report: Report):
    __tracebackhide__ = True
    if not report.ok:
        # Lines of the generated spec mean nothing to the caller: leave them out.
        raise AssertionError(
            "\n".join(line for r in report.failures for line in result_text(r, located=False))
        )
