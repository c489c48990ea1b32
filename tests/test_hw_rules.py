"""verify.bank's H200 rules against every committed measurement (issue 18).

The measurements are benchmarks/results/gpu_campaign.csv.gz, hw_cp_async_varied.txt and
hw_campaign.csv.gz and hw_campaign_heldout.csv.gz (a second run, measured after
the rules were fixed), read by benchmarks/hw_rules.py; the rules must reproduce each one
exactly, the .cg bound must never fall below one.
"""

import os

import pytest

from benchmarks import hw_rules
from verify.bank import bank_cost, cp_async_cost, hardware_wavefronts
from verify.instructions import parse_instruction

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


DATA = hw_rules.load()
LOADS = {"ld64": "ld.shared.v2.b32", "ld128": "ld.shared.v4.b32"}


def test_loads_follow_rule_l_exactly():
    rows = [r for r in DATA if r[1] in LOADS]
    assert len(rows) == 1680  # 1080 fitted, fresh and earlier; 600 held out
    for _, op, shared, _, measured in rows:
        instr = parse_instruction(LOADS[op])
        addresses = [1024 + a for a in shared]
        assert hardware_wavefronts(instr, addresses) == measured, (op, shared)
        assert measured <= bank_cost(instr, addresses).wavefronts


@pytest.mark.parametrize("op,size", [("cpa4", 4), ("cpa8", 8), ("cpa16ca", 16)])
def test_cp_async_ca_follows_rule_c_exactly(op, size):
    rows = [r for r in DATA if r[1] == op]
    assert rows
    for _, _, shared, sources, measured in rows:
        cost = cp_async_cost(size, shared, sources, "ca")
        assert cost.exact and cost.wavefronts == measured, (shared, sources)


def test_cp_async_cg_bound_holds_on_every_measurement():
    rows = [r for r in DATA if r[1] == "cpa16"]
    assert len(rows) == 1354  # 904 fitted, fresh and earlier; 450 held out
    for _, _, shared, sources, measured in rows:
        cost = cp_async_cost(16, shared, sources, "cg")
        assert not cost.exact and measured <= cost.wavefronts


def test_stores_and_narrow_loads_keep_the_phase_model():
    instr = parse_instruction("st.shared.v2.b32")
    addresses = [0] * 32
    assert hardware_wavefronts(instr, addresses) == bank_cost(instr, addresses).wavefronts == 2


def test_cp_async_refuses_what_was_not_measured():
    with pytest.raises(ValueError, match="expected the copy size"):
        cp_async_cost(8, [0] * 32, [0] * 32, "cg")
    with pytest.raises(ValueError, match="aligned"):
        cp_async_cost(4, [2] + [0] * 31, [0] * 32)
