"""The value arithmetic's kept results (`verify.ptx.values.Context._kept`: rebuilt
addresses and interval bounds, per node and the ranges of its variables) change
no result: every PTX sample is checked with them and with each computed afresh,
and every result (line, property, status, figures, reason, counterexample) is
the same."""

from __future__ import annotations

import glob
import os

import conftest
import pytest

from verify.errors import SpecError
from verify.ptx import values
from verify.ptx.check import Options, check_ptx

SAMPLES = sorted(
    glob.glob(os.path.join(conftest.DATA, "ptx", "*.ptx"))
    + glob.glob(os.path.join(conftest.DATA, "ttgir_ptx", "*.ptx"))
)
SLOW = {"cute_sgemm_sm80.ptx", "cute_wgmma_sm90a.ptx", "triton_matmul_sm90.ptx"}
BLOCKS = {"transpose_sm80.ptx": (32, 8), "transpose_sm90a.ptx": (32, 8)}


def records(path: str) -> list:
    options = Options(run=conftest.WORK, block=BLOCKS.get(os.path.basename(path)))
    try:
        results = check_ptx(path, options)
    except SpecError as e:
        return [str(e)]
    return [
        (
            r.facts.get("ptx_line"),
            r.property,
            r.status.name,
            r.wavefronts,
            r.ideal_wavefronts,
            r.max_ways,
            r.reason,
            str(r.counterexample) if r.counterexample is not None else None,
        )
        for r in results
    ]


@pytest.mark.parametrize(
    "path", [p for p in SAMPLES if os.path.basename(p) not in SLOW], ids=os.path.basename
)
def test_kept_values_change_no_result(path, monkeypatch):
    kept = records(path)
    monkeypatch.setattr(values.Context, "_kept", lambda self, memo, e, compute: compute(e))
    assert records(path) == kept
