"""Every access check of a spec names the PTX instruction it is about (issue 24,
"The instruction named"): `facts["instruction"]` in the API and JSON, and one
`instruction:` line in the text of a check that fails."""

import json

import pytest
from click.testing import CliRunner

import verify
from verify.cli import main
from verify.model.instructions import parse_instruction, ptx_opcode

# Spellings from the PTX ISA (8.x), "Data Movement and Conversion Instructions".
PTX_SPELLINGS = {
    "ldmatrix.x1": "ldmatrix.sync.aligned.m8n8.x1.shared.b16",
    "ldmatrix.x4.trans": "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16",
    "SM75_U16x8_LDSM_T": "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16",
    "SM90_U32x2_STSM_N": "stmatrix.sync.aligned.m8n8.x2.shared.b16",
    "ld.shared.v4": "ld.shared.v4.b32",
    "st.shared.v2.b16": "st.shared.v2.b16",
    "ld.shared.u8": "ld.shared.b8",
    "cp.async.cg.16": "cp.async.cg.shared.global [16 bytes]",
    "cp.async.ca.shared.global.8": "cp.async.ca.shared.global [8 bytes]",
}


@pytest.mark.parametrize("name", sorted(PTX_SPELLINGS))
def test_the_opcode_is_the_ptx_spelling(name):
    assert ptx_opcode(parse_instruction(name)) == PTX_SPELLINGS[name]


@pytest.mark.parametrize("name", [n for n in PTX_SPELLINGS if not n.startswith("cp.async")])
def test_the_opcode_reads_back_as_the_same_instruction(name):
    instr = parse_instruction(name)
    assert parse_instruction(ptx_opcode(instr)) == instr


SPEC = """dtype f16
buffer align 128
layout A = (_8,_64):(_64,_1)
access rd = ldmatrix.x1 A(lane, 8 * q) for q in 0..8
access wr = st.shared.b16 A(r, lane) for r in 0..8
check bijective A
check conflict_free rd
check wavefronts == 1 wr
check aligned 4 wr
"""


def test_every_access_check_names_its_instruction():
    report = verify.check_text(SPEC, name="named.spec")
    named = {r.property: r.facts.get("instruction") for r in report}
    assert named == {
        "in_bounds rd": "ldmatrix.sync.aligned.m8n8.x1.shared.b16",
        "aligned 16 rd": "ldmatrix.sync.aligned.m8n8.x1.shared.b16",
        "in_bounds wr": "st.shared.b16",
        "bijective A": None,
        "conflict_free rd": "ldmatrix.sync.aligned.m8n8.x1.shared.b16",
        "wavefronts == 1 wr": "st.shared.b16",
        "aligned 4 wr": "st.shared.b16",
    }


def test_a_failed_check_shows_its_instruction_last_a_passing_one_does_not():
    report = verify.check_text(SPEC, name="named.spec")
    for r in report:
        lines = str(r).splitlines()
        shown = [line for line in lines if line.startswith("    instruction: ")]
        if r.status == verify.Status.PROVED or "instruction" not in r.facts:
            assert shown == []
        else:
            assert shown == [lines[-1]] == [f"    instruction: {r.facts['instruction']}"]
    refuted = {r.property for r in report if r.status == verify.Status.REFUTED}
    assert refuted == {"conflict_free rd", "aligned 4 wr"}  # 8-way; lane 1 at byte 2


def test_json_facts_name_the_instruction(tmp_path):
    spec = tmp_path / "named.spec"
    spec.write_text(SPEC)
    out = CliRunner().invoke(main, [str(spec), "--json"]).output
    facts = {c["property"]: c["facts"] for c in json.loads(out)["checks"]}
    assert facts["conflict_free rd"]["instruction"] == "ldmatrix.sync.aligned.m8n8.x1.shared.b16"
    assert "instruction" not in facts["bijective A"]
