"""Issue 18, wired in: cp.async (rule C, bound G) and 64/128-bit loads (rule L) in
`verify wavefronts` / `verify.wavefronts`; the measured rules themselves are tested
against every H200 measurement in tests/test_hw_rules.py."""
import json

import pytest
from click.testing import CliRunner

import verify
from verify.cli import main
from verify.errors import SpecError
from verify.instructions import parse_instruction

CONTIGUOUS_WORDS = [4 * lane for lane in range(32)]


def run(*args):
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.output


@pytest.mark.parametrize("name,canonical,phase", [
    ("cp.async.ca.shared.global.4", "cp.async.ca.4", 32),
    ("cp.async.ca.shared::cta.global.L2::128B.8", "cp.async.ca.8", 16),
    ("cp.async.ca.16", "cp.async.ca.16", 8),
    ("cp.async.cg.shared.global.16", "cp.async.cg.16", 8),
])
def test_cp_async_spellings(name, canonical, phase):
    instr = parse_instruction(name)
    assert (instr.name, instr.family, instr.phase_lanes, instr.address_lanes) == \
        (canonical, "cp.async", phase, 32)


@pytest.mark.parametrize("sources,expected", [
    (CONTIGUOUS_WORDS, 1),                             # contiguous source
    ([16 * lane for lane in range(32)], 4),            # 16-byte-strided source
    ([0] * 32, 32),                                    # every lane reads one global word
])
def test_the_source_decides_a_4_byte_copy(sources, expected):
    """docs/hardware.md: 1, 4 and 32 wavefronts into the same 32 contiguous words."""
    assert verify.wavefronts("cp.async.ca.shared.global.4", CONTIGUOUS_WORDS, sources) == expected


def test_cp_async_needs_its_sources():
    with pytest.raises(SpecError, match="expected sources"):
        verify.wavefronts("cp.async.ca.4", CONTIGUOUS_WORDS)
    with pytest.raises(SpecError, match="sources are given only for cp.async"):
        verify.wavefronts("ld.shared.b32", CONTIGUOUS_WORDS, CONTIGUOUS_WORDS)
    with pytest.raises(SpecError, match="lane 3 source address 6"):
        verify.wavefronts("cp.async.ca.4", CONTIGUOUS_WORDS, [0, 4, 8, 6] + [0] * 28)


def test_a_128_bit_load_is_answered_by_rule_l():
    """Neighbouring lanes in pairs over 16 distinct chunks: the phase model's 4
    phases merge two by two (rule L), exact."""
    pairs = [16 * (lane // 2) for lane in range(32)]
    assert verify.wavefronts("ld.shared.v4.b32", pairs) == 2
    code, out = run("wavefronts", "--json", "ld.shared.v4.b32", *map(str, pairs))
    doc = json.loads(out)
    assert (code, doc["wavefronts"], doc["phase_model_wavefronts"], doc["exact"]) == \
        (0, 2, 4, True)
    assert "rule L" in doc["model_fidelity"]


def test_wavefronts_command_with_sources():
    strided = ",".join(str(16 * lane) for lane in range(32))
    code, out = run("wavefronts", "cp.async.ca.4", *map(str, CONTIGUOUS_WORDS),
                    "--sources", strided)
    lines = out.strip().splitlines()
    assert code == 0 and lines[-1] == "4"
    assert lines[0] == "lanes  0-31: 4 (source bank 0 -> shared bank 0)"
    assert "exact (rule C" in lines[1]


def test_cp_async_cg_is_labelled_a_bound():
    chunks = [16 * lane for lane in range(32)]
    code, out = run("wavefronts", "--json", "cp.async.cg.shared.global.16", *map(str, chunks),
                    "--sources", ",".join(map(str, chunks)))
    doc = json.loads(out)
    assert (code, doc["wavefronts"], doc["exact"]) == (0, 32, False)
    assert doc["model_fidelity"].startswith("upper bound (bound G")


def test_wavefronts_command_refuses_a_cp_async_without_sources():
    code, out = run("wavefronts", "cp.async.ca.4", *map(str, CONTIGUOUS_WORDS))
    assert code == 2 and "expected sources (one per lane)" in out
