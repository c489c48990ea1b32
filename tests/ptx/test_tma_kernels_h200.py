"""Triton's sm_90 TMA kernels as the H200 ran them, against what verify says of them
today (issue 25 items 1 and 5): the committed measurement of
benchmarks/hardware/tma_kernels/tma_kernels.py (benchmarks/results/tma_kernels_h200.*)
replayed against verify's checks of the same PTX, with no GPU.

A right product must never meet a refutation of its writer = reader, placement or
alignment, and a wrong one must be refuted where it goes wrong; wherever verify gives a
wavefront figure for a SASS instruction's PTX line, it is the H200's.
"""

import json
from functools import cache

import pytest

from benchmarks.hardware.tma_kernels import table
from benchmarks.hardware.tma_kernels import tma_kernels as tk

RUNS = list(tk.RUNS)


@cache
def checks(run: str) -> tuple[dict, ...]:
    return tuple(table.verify_checks(run))


@cache
def launches() -> dict[str, list[dict]]:
    with open(table.RESULTS_JSON, encoding="utf-8") as f:
        runs = json.load(f)["runs"]
    out: dict[str, list[dict]] = {}
    for r in runs:
        out.setdefault(r["run"], []).append(r)
    return out


def statuses(run: str, what: str) -> list[str]:
    """verify's statuses of `what` checks (writer_reader, placement, aligned 128) on
    `run`'s TMA copies and wgmma operands."""
    return [
        c["status"]
        for c in checks(run)
        if c["property"].startswith(what)
        and ("cp.async.bulk.tensor" in c["property"] or "wgmma" in c["property"])
    ]


def test_every_run_was_launched_twice_and_came_back():
    got = launches()
    assert set(got) == set(RUNS)
    for run in RUNS:
        assert len(got[run]) == 2 and all("failed" not in r for r in got[run]), run
        assert all(r["unwritten"] == 0 for r in got[run]), run


@pytest.mark.parametrize("run", RUNS)
def test_a_right_product_is_never_refuted_and_a_wrong_one_is(run):
    right = {r["right"] for r in launches()[run]}
    assert len(right) == 1, "the two launches disagree"
    refuted = [
        c
        for c in checks(run)
        if c["status"] == "refuted"
        and c["property"].startswith(("writer_reader", "placement", "aligned"))
    ]
    if right.pop():
        assert not refuted, [c["property"] for c in refuted]
    else:
        assert refuted


def test_the_host_maps_kernel_is_proved_and_right():
    """Tutorial 09 with Triton's own maps: all decided, all PROVED, right product."""
    assert statuses("t09_tma", "writer_reader") == ["proved"] * 16
    assert statuses("t09_tma", "aligned 128") == ["proved"] * 7
    assert statuses("t09_tma", "placement") == ["proved"]
    assert all(r["right"] for r in launches()["t09_tma"])


def test_unswizzled_host_maps_are_refuted_and_wrong_as_predicted():
    """The maps without swizzle under 128B descriptors: every operand REFUTED, and the
    H200's product is the one the counterexample's misplacement gives."""
    assert statuses("t09_tma_swnone", "writer_reader") == ["refuted"] * 16
    first = next(c for c in checks("t09_tma_swnone") if c["status"] == "refuted")
    assert "element (row 1, k 0)" in first["counterexample"]["summary"]
    assert "read from byte 144" in first["counterexample"]["summary"]
    for r in launches()["t09_tma_swnone"]:
        assert not r["right"] and r["error_against_prediction"] < 1e-3


def test_a_moved_base_refutes_only_the_store_and_its_product_is_the_prediction():
    """128 static bytes (dynamic base 1152): loads and wgmma PROVED, the epilogue's TMA
    store's placement REFUTED; the H200 stored exactly the predicted chunk permutation."""
    assert statuses("t09_tma_pad128", "writer_reader") == ["proved"] * 16
    assert statuses("t09_tma_pad128", "placement") == ["refuted"]
    store = next(c for c in checks("t09_tma_pad128") if c["status"] == "refuted")
    assert store["property"].startswith("placement cp.async.bulk.tensor.2d.global.shared")
    assert "element (inner 0, row 0) is at byte 144" in store["counterexample"]["summary"]
    for r in launches()["t09_tma_pad128"]:
        assert not r["right"] and r["error_against_prediction"] < 1e-3


def test_the_device_built_maps_kernel_is_never_refuted_and_right():
    """Maps built by tensormap.replace: the checks against the TMA boxes PROVED, the
    template's zero-fill overwritten by the copies (fenced and barriered before them)."""
    wr = statuses("device_matmul", "writer_reader")
    assert wr == ["proved"] * 16
    assert statuses("device_matmul", "aligned 128") == ["proved"] * 6
    assert all(r["right"] for r in launches()["device_matmul"])


def test_a_device_built_map_without_swizzle_is_read_and_refuted():
    """A's tensormap.replace swizzle_mode 0: A's operands REFUTED from the map verify
    reads in the PTX, B's PROVED; the H200's product is the predicted one."""
    wr = [
        (" operand A " in c["property"], c["status"])
        for c in checks("device_matmul_a_swnone")
        if c["property"].startswith("writer_reader") and c["status"] != "unknown"
    ]
    assert sorted(wr) == [(False, "proved")] * 8 + [(True, "refuted")] * 8
    for r in launches()["device_matmul_a_swnone"]:
        assert not r["right"] and r["error_against_prediction"] < 1e-3


@pytest.mark.parametrize("run", RUNS)
def test_every_figure_verify_gives_is_the_h200s(run):
    measured = table.measured_rows()
    rows = table.rows(run, list(checks(run)), measured)
    assert rows, run
    figures = [r for r in rows if r[8] not in ("", "UNKNOWN")]
    hgmma = [r for r in figures if r[2].startswith("HGMMA")]
    assert len(hgmma) == 8 and {r[8] for r in hgmma} == {"12"}  # 48 per warpgroup / 4
    wrong = [(r[1], r[2], r[6], r[8]) for r in figures if not r[13].startswith("yes")]
    assert not wrong
    # the per-execution figure differs only where some warps run with every lane off
    guarded = [r for r in figures if r[13] != "yes"]
    assert all(int(r[12]) < 32 * int(r[5]) for r in guarded)


def test_the_gmma_counter_is_verify_per_wgmma_count():
    """l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma over the warpgroup wgmma
    executed (the counter counts per warp): verify's A + B per m64n128k16."""
    for run in RUNS:
        per_wgmma = table.summary(run, list(checks(run)))["per_wgmma"]
        got = table.gmma(run)
        assert per_wgmma == [48], run
        assert got[table.GMMA_INSTRUCTIONS] == 4 * 8 * 8 * 16  # 4 warps, 8 wgmma, 8 k, 16 CTAs
        assert got[table.GMMA_WAVEFRONTS] == 48 * got[table.GMMA_INSTRUCTIONS] / 4, run
        assert got[table.GMMA_CONFLICTS] == 0
