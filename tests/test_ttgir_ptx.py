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
        assert (r.file, r.line) == ("tests/data/ttgir_ptx/permuted_store.py", 20)
        assert r.facts["instructions"] == "ptx"
    assert all(r.status is Status.PROVED for r in results)


def test_ttgirs_own_rule_still_refutes_it_when_asked_for():
    """``PtxOptions(use=False)``: today's rules, the refutation this module replaces."""
    results = check(PERMUTED, ptx=PtxOptions(use=False))
    store = next(r for r in results if r.property == "conflict_free local_store %tile_7")
    assert store.status is Status.REFUTED and store.max_ways == 2
    assert store.facts["instructions"] == "ttgir"


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
