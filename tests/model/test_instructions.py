import pytest

from verify.errors import SpecError
from verify.model.instructions import parse_instruction


@pytest.mark.parametrize(
    "name,canonical,bytes_,lanes,phase",
    [
        ("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16", "ldmatrix.x4.trans", 16, 32, 8),
        ("ldmatrix.x1", "ldmatrix.x1", 16, 8, 8),
        ("SM75_U32x2_LDSM_N", "ldmatrix.x2", 16, 16, 8),
        ("SM75_U16x8_LDSM_T", "ldmatrix.x4.trans", 16, 32, 8),
        ("SM90_U32x4_STSM_N", "stmatrix.x4", 16, 32, 8),
        ("SM90_U16x2_STSM_T", "stmatrix.x1.trans", 16, 8, 8),
        ("ld.shared.v4", "ld.shared.v4.b32", 16, 32, 8),
        ("ld.shared.v2.b32", "ld.shared.v2.b32", 8, 32, 16),
        ("st.shared.b64", "st.shared.b64", 8, 32, 16),
        ("ld.shared.u8", "ld.shared.b8", 1, 32, 32),
        ("ld.shared.b16", "ld.shared.b16", 2, 32, 32),
    ],
)
def test_names_and_aliases_resolve_to_access_groups(name, canonical, bytes_, lanes, phase):
    instr = parse_instruction(name)
    assert (instr.name, instr.bytes_per_address, instr.address_lanes, instr.phase_lanes) == (
        canonical,
        bytes_,
        lanes,
        phase,
    )


def test_the_phase_model_alone_is_exact_where_the_h200_follows_it():
    assert not parse_instruction("ld.shared.v4.b32").exact
    assert not parse_instruction("ld.shared.v2.b32").exact
    assert parse_instruction("st.shared.v4.b32").exact
    assert parse_instruction("ld.shared.b32").exact
    assert parse_instruction("ldmatrix.x4").exact


def test_the_measured_rules_are_exact_except_cp_async_cg():
    assert parse_instruction("ld.shared.v4.b32").hardware_exact
    assert parse_instruction("cp.async.ca.shared.global.4").hardware_exact
    assert not parse_instruction("cp.async.cg.shared.global.16").hardware_exact
    assert "rule L" in parse_instruction("ld.shared.v2.b32").fidelity


def test_spec_figures_are_labelled_by_the_measured_rules():
    """Both engines apply rule L to 64/128-bit loads: their figures are exact."""
    assert parse_instruction("ld.shared.v2.b32").fidelity.startswith("exact (rule L")
    assert parse_instruction("ld.shared.v4.b32").fidelity.startswith("exact (rule L")
    assert parse_instruction("st.shared.v4.b32").fidelity == "exact (matches H200 measurements)"
    assert parse_instruction("cp.async.cg.16").fidelity.startswith("upper bound (bound G")


@pytest.mark.parametrize(
    "name,message",
    [
        ("ldmatrix.trans", r"expected \.x1, \.x2 or \.x4"),
        ("ld.global.b32", "expected a shared-memory access"),
        ("ld.shared.v4.b64", "expected 8, 16, 32, 64 or 128 bits"),
        ("cp.async.cg.shared.global", r"expected the copy size as a qualifier, \.16"),
        ("cp.async.shared.global.16", r"expected the cache operator \.ca or \.cg"),
        ("mov.b32", "unknown instruction"),
    ],
)
def test_bad_names_say_what_was_expected(name, message):
    with pytest.raises(SpecError, match=message):
        parse_instruction(name)
