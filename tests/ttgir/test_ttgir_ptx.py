"""`verify ttgir` / `verify triton` with every shared-memory instruction taken from
the PTX Triton lowers the module to (issue 24 item 2, `verify.ttgir.from_ptx`):
TTGIR keeps the buffers and the Python lines, the PTX decides each op."""

import os
import pathlib

import pytest

pytest.importorskip("triton")

from verify.smt.solve import Status  # noqa: E402
from verify.ttgir import PtxOptions, check  # noqa: E402
from verify.ttgir.from_ptx import parameters  # noqa: E402

DATA = "tests/data/ttgir_ptx"
PERMUTED = os.path.join(DATA, "permuted_store.sm80.ttgir")


def by_op(results, op: str):
    return [r for r in results if r.facts.get("ttgir_op") == op]


def test_the_permuted_register_store_is_proved_conflict_free_from_its_ptx():
    """Issue 24's case: TTGIR's rule models st.shared.v2.b32 and refutes (2-way);
    Triton 3.9 emits st.shared.v4.b32 {%r11, %r12, %r9, %r10}, which the H200
    measures at 4 wavefronts per instruction, the ideal."""
    results = check(PERMUTED)
    stores = [r for r in by_op(results, "local_store %tile_7") if "conflict_free" in r.property]
    assert len(stores) == 4, [r.property for r in results]
    for r in stores:
        assert r.status is Status.PROVED, r.property
        assert r.facts["instruction"] == "st.shared.v4.b32"
        assert (r.wavefronts, r.ideal_wavefronts, r.max_ways) == (4, 4, 1)
        assert (r.file, r.line) == ("tests/data/ttgir_ptx/permuted_store.py", 21)
        assert r.facts["instructions"] == "ptx"
    assert all(r.status is Status.PROVED for r in results)


def test_ttgirs_own_rule_now_vectorises_the_same_way():
    """``PtxOptions(use=False)``: TTGIR's rule (largestVectorisation) takes the
    register groups whose offsets move within the vector's block, as Triton does,
    so it models st.shared.v4.b32 (was v2.b32, REFUTED 2-way) and each group at
    its block's first element (aligned 16)."""
    results = check(PERMUTED, ptx=PtxOptions(use=False))
    store = {r.property: r for r in results if "local_store %tile_7" in r.property}
    assert store["conflict_free local_store %tile_7"].status is Status.PROVED
    assert store["conflict_free local_store %tile_7"].wavefronts == 4
    assert store["aligned 16 local_store %tile_7"].status is Status.PROVED
    assert all(r.facts["instructions"] == "ttgir" for r in store.values())


SHARED = "#ttg.swizzled_shared<{vec = 2, perPhase = 2, maxPhase = 8, order = [1, 0]}>"
BLOCKED = (
    "#ttg.blocked<{sizePerThread = [4, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], "
    "order = [1, 0]}>"
)
SPEC = (
    "dtype f32\nbuffer align 128\n"
    f"layout S = {SHARED} shape (64, 32)\n"
    f"access st = st.shared.v4.b32 S by {BLOCKED} shape (64, 32)\n"
    "check conflict_free st\n"
)


def test_the_spec_form_of_the_permuted_store_is_accepted_and_proved():
    """The spec form was refused ("expected st.shared.v2.b32"); now it is the
    instruction Triton emits, with the figures the H200 measures (4 per v4)."""
    from verify.engines.runner import run_spec
    from verify.spec.parser import parse_text

    results = run_spec(parse_text(SPEC, "permuted.spec"))
    check_ = next(r for r in results if r.property == "conflict_free st")
    assert check_.status is Status.PROVED and (check_.wavefronts, check_.max_ways) == (4, 1)
    assert all(r.status is Status.PROVED for r in results)


def test_the_buffers_checks_stay_ttgirs():
    results = check(PERMUTED)
    bijective = [r for r in results if r.property.startswith("bijective")]
    assert [r.property for r in bijective] == ["bijective local_alloc %smem"]
    assert bijective[0].status is Status.PROVED


def test_a_given_ptx_file_is_read_instead_of_lowering():
    ptx = os.path.join(DATA, "permuted_store.sm80.ptx")
    results = check(PERMUTED, ptx=PtxOptions(ptx=ptx))
    stores = [r for r in by_op(results, "local_store %tile_7") if "conflict_free" in r.property]
    assert len(stores) == 4 and all(r.status is Status.PROVED for r in stores)
    assert "permuted_store.sm80.ptx:108" in stores[0].property
    # the given file declares no size for global_smem: in_bounds is not proved
    bounds = [r for r in by_op(results, "local_store %tile_7") if "in_bounds" in r.property]
    assert bounds and all(r.status is Status.UNKNOWN for r in bounds)


def test_a_module_triton_cannot_lower_falls_back_to_ttgirs_rules_and_says_why(tmp_path):
    """A private kernel: TTGIR reads it, Triton's lowering dies on it (in its own
    process), so each op's checks are TTGIR's, each saying why the PTX is missing."""
    text = pathlib.Path(PERMUTED).read_text(encoding="utf-8")
    path = tmp_path / "k.ttgir"
    path.write_text(text.replace("tt.func public @", "tt.func private @"))
    results = check(str(path))
    per_op = [r for r in results if "local_store" in r.property]
    assert per_op and all(r.facts["instructions"] == "ttgir" for r in per_op)
    assert all("could not lower" in r.facts["instructions_why"] for r in per_op)


def test_tritons_parameter_names_and_divisibility_come_from_the_signature():
    text = pathlib.Path("specs/triton_kernels/matmul.sm80.ttgir").read_text(encoding="utf-8")
    params = parameters(text)
    assert [name for name, _ in params][:4] == ["a_ptr", "b_ptr", "c_ptr", "M"]
    assert dict(params)["M"] == 16 and dict(params)["a_ptr"] is None


MATMUL = os.path.join(DATA, "matmul_64x64x32.sm80.ttgir")
LAUNCH = ("M=512", "N=512", "K=512", "stride_am=512", "stride_bk=512", "stride_cm=512")


def test_the_tutorial_matmuls_wrapping_a_tile_copies_are_decided_exactly():
    """Issue 24: the A tile's sources wrap through ``% M`` (rem.s32 by a runtime
    value), which TTGIR's rules knew only modulo 128 bytes (UNKNOWN, bound G).
    From the PTX, under the launch's values (Triton's names), every copy outside
    the loop is decided: A's 64-byte rows put two global lines in each shared line,
    8 wavefronts for an ideal 4; B's 128-byte rows are ideal, 4. The H200 measures
    exactly these (benchmarks/results/triton_matmul_h200.md). The mask's src-size
    (selp 16, 0) is a predicate to ptxas, not the ZFILL form that costs twice."""
    options = PtxOptions(assume=LAUNCH, grid=(64,), global_align=256)
    copies = [
        r for r in check(MATMUL, ptx=options) if r.property.startswith("conflict_free async_copy")
    ]
    a_tile = [r for r in copies if r.line == 28 and r.facts["ptx_line"] < 400]
    b_tile = [r for r in copies if r.line == 29 and r.facts["ptx_line"] < 400]
    assert len(a_tile) == 4 and len(b_tile) == 4
    for r in a_tile:
        assert r.status is Status.REFUTED, r.reason
        assert (r.wavefronts, r.ideal_wavefronts) == (8, 4) and not r.facts.get("zfill")
        # the block's term is a multiple of 128 bytes: one counterexample serves every block
        assert r.counterexample is not None and r.counterexample.instance.get("warp") == 0
    assert all(r.status is Status.PROVED and r.wavefronts == 4 for r in b_tile)
    assert not any("modulo 128" in (r.reason or "") for r in copies)


def test_without_the_launchs_values_the_copies_say_what_to_assume():
    copies = [r for r in check(MATMUL) if "cp.async" in r.property]
    assert copies and all(r.status is not Status.PROVED for r in copies)
    unknown = [r for r in copies if r.status is Status.UNKNOWN]
    assert unknown and all("--assume" in r.reason or "may not happen" in r.reason for r in unknown)


def test_an_op_inlined_from_a_helper_is_reported_at_the_helpers_line():
    """gluon_transpose's store and load sit in the @jit helper ``_transpose``: the
    PTX's .loc chain names the helper's lines and the kernel's call, TTGIR the
    helper's. The column read is the 32-way ld.shared.b32 TTGIR's rule gives too;
    the store is stmatrix.x4 on sm_90."""
    results = check("specs/triton_kernels/gluon_transpose_plain.sm90.ttgir")
    loads = [r for r in by_op(results, "local_load %column_major") if "conflict" in r.property]
    stores = [r for r in by_op(results, "local_store %tile_8") if "conflict" in r.property]
    assert loads and all(
        (r.file, r.line) == ("specs/triton_kernels/gluon_transpose.py", 32) for r in loads
    )
    assert all(r.status is Status.REFUTED and r.max_ways == 32 for r in loads)
    assert all(r.facts["instruction"] == "ld.shared.b32" for r in loads)
    assert len(stores) == 2 and all(r.status is Status.PROVED for r in stores)
    assert all(r.facts["instruction"].startswith("stmatrix") for r in stores)
