"""Quiet exits after Triton was used.

Triton 3.9's nanobind bindings leak a few objects (``ir.attribute`` instances
from ``to_linear_layout`` and the layout builders: they stay alive even when no
Python reference is left, a reference-counting bug in the bindings), and
nanobind prints a report of them, dozens of lines, when the interpreter shuts
down. nanobind's switch for it, ``set_leak_warnings``, is not exposed by
Triton's module (it is a local symbol of libtriton.so), so the report is
hidden the only way left: at exit, after everything verify or pytest prints,
stderr is pointed at /dev/null -- and only when Triton was loaded.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sys

_registered = False


def hide_leak_report_at_exit():
    """Register (once) the exit hook that hides nanobind's leak report."""
    global _registered
    if not _registered:
        atexit.register(_hide_if_triton_loaded)
        _registered = True


def _hide_if_triton_loaded():
    if "triton._C.libtriton" not in sys.modules:
        return
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # closed by the time of exit
            stream.flush()
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    os.close(devnull)
