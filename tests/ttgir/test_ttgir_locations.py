"""Where a TTGIR op is reported: its user's line, never Triton's own, whichever
directory the module was compiled in or is checked from."""

import os

import pytest
from conftest import ROOT

pytest.importorskip("triton")

from verify.ttgir import PtxOptions, check  # noqa: E402
from verify.ttgir.extract import _in_triton, _triton_dir  # noqa: E402


def test_triton_frames_are_known_by_their_path_inside_the_package():
    """The committed modules name Triton's files relative to the compiling machine's
    directory; they are Triton's wherever this process runs."""
    assert _in_triton(".venv/lib/python3.11/site-packages/triton/language/standard.py")
    assert _in_triton(os.path.join(_triton_dir(), "language", "core.py"))
    assert not _in_triton("specs/triton_kernels/softmax.py")
    assert not _in_triton("/home/me/triton/kernels/softmax.py")  # a user's folder named triton
    assert not _in_triton("standard.py")


def test_reductions_are_at_the_users_lines_from_another_directory(tmp_path, monkeypatch):
    """Checked from a directory without the compiling machine's .venv (a worktree, CI's
    checkout elsewhere): tl.max and tl.sum still at softmax.py's lines 20 and 22."""
    monkeypatch.chdir(tmp_path)
    softmax = os.path.join(ROOT, "specs/triton_kernels/softmax.sm90.ttgir")
    results = check(softmax, ptx=PtxOptions(use=False))
    reduces = [r for r in results if r.property == "not modelled: reduce"]
    assert [(r.file, r.line) for r in reduces] == [
        ("specs/triton_kernels/softmax.py", 20),
        ("specs/triton_kernels/softmax.py", 22),
    ]
