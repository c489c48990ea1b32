"""verify.model.bank's H200 rules against every committed measurement (issue 18).

The measurements are benchmarks/results/gpu_campaign.csv.gz, hw_cp_async_varied.txt,
hw_campaign.csv.gz, hw_campaign_heldout.csv.gz (a second run, measured after
the rules were fixed) and the .cg campaign hw_cg.csv.gz (hw_cg_heldout.csv.gz: its run
after rule S was fixed; hw_cg_repeats.csv.gz: chunks copied twice into a line, run
after rule S's rounds were fixed), read by benchmarks/hardware/hw_rules.py; the rules must
reproduce each one exactly, and bound G must never fall below one.
"""

import random

import conftest
import numpy as np
import pytest

from benchmarks.hardware import hw_rules
from oracle import hardware as oracle_hardware
from verify.model.bank import bank_cost, copy_cost, cp_async_cost, hardware_wavefronts
from verify.model.instructions import parse_instruction

ROOT = conftest.ROOT


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


CG_ROWS = [r for r in DATA if r[1] == "cpa16"]


def test_cp_async_cg_follows_rule_s_on_every_measurement():
    sets = {r[0] for r in CG_ROWS}
    assert {"earlier", "fit", "fresh", "held-out", "cg fit", "cg fresh", "cg repeats"} <= sets
    assert len([r for r in CG_ROWS if not r[0].startswith("cg")]) == 1354
    assert len(CG_ROWS) == 14354
    twice = 0
    for _, _, shared, sources, measured in CG_ROWS:
        cost = cp_async_cost(16, [1024 + a for a in shared], sources, "cg")
        assert cost.exact and cost.wavefronts == measured, (shared, sources)
        assert measured <= len(set(shared))  # bound G, the engines' figure
        twice += not hw_rules.cg_reads_once(shared, sources)
    assert twice == 7363  # where rule S as first fixed gave only bound G


def test_the_oracles_rule_s_agrees_with_every_measurement():
    destinations = 1024 + np.array([r[2] for r in CG_ROWS])
    sources = np.array([r[3] for r in CG_ROWS])
    measured = np.array([r[4] for r in CG_ROWS])
    costs, exact = oracle_hardware.cg_copy_costs(destinations, sources)
    assert exact.all() and (costs == measured).all()


def _few_lines_copy(rng: random.Random) -> tuple[list[int], list[int]]:
    """Destinations and sources drawn from a few 128-byte lines, 16-byte aligned."""
    dst_lines, src_lines = rng.sample(range(64), 2), rng.sample(range(256), 3)
    dst = [128 * rng.choice(dst_lines) + 16 * rng.randrange(8) for _ in range(32)]
    src = [128 * rng.choice(src_lines) + 16 * rng.randrange(8) for _ in range(32)]
    if rng.random() < 0.5:  # every lane its own source chunk: a single round
        chunks = rng.sample([(line, c) for line in src_lines for c in range(8)], 24)
        src = [128 * line + 16 * c for line, c in chunks] + src[24:]
    return dst, src


def test_verify_and_the_oracle_apply_the_same_rule_s():
    rng = random.Random(18)
    for _ in range(400):
        dst, src = _few_lines_copy(rng)
        ours = cp_async_cost(16, dst, src, "cg")
        costs, exact = oracle_hardware.cg_copy_costs(np.array([dst]), np.array([src]))
        assert (ours.wavefronts, ours.exact) == (costs[0], exact[0]), (dst, src)


CONTIGUOUS = [16 * lane for lane in range(32)]


@pytest.mark.parametrize(
    "destinations,sources,wavefronts",
    [
        (CONTIGUOUS, CONTIGUOUS, 4),  # four line pairs, each moved whole
        ([16 * (lane ^ 7) for lane in range(32)], CONTIGUOUS, 4),  # mirrored lines: 4
        ([16 * (lane + 2) for lane in range(32)], CONTIGUOUS, 8),  # one sector on: 2 pairs a line
        ([16 * (lane + 1) for lane in range(32)], CONTIGUOUS, 12),  # 16 bytes on: halves split
        ([32 * lane for lane in range(32)], CONTIGUOUS, 32),  # 32-byte-strided destinations
        ([0, 48] + [0] * 30, [0, 48] + [0] * 30, 2),  # chunks 0 and 3: different halves
        ([0, 32] + [0] * 30, [0, 32] + [0] * 30, 1),  # chunks 0 and 2: one wavefront
        # Chunk 0 into chunks 2 and 4 (both first halves): two rounds, the higher lane
        # first with chunk 6 -> 0, which no symmetry pairs with 0 -> 4: 3, not 2.
        ([0, 32, 64] + [0] * 29, [96, 0, 0] + [96] * 29, 3),
        # Chunks 2, 3 into 0, 1 and again into 4, 3: the second round moves sector 1
        # whole; the first pairs nothing (6 -> 2 and 2 -> 4 differ): 4, not 5 or 3.
        ([0, 16, 32, 48, 64] + [0] * 27, [32, 48, 96, 48, 32] + [32] * 27, 4),
    ],
)
def test_rule_s_on_written_out_patterns(destinations, sources, wavefronts):
    cost = cp_async_cost(16, destinations, sources, "cg")
    assert cost.exact and cost.wavefronts == wavefronts


def test_a_chunk_copied_twice_into_a_line_is_exact_by_rounds_and_the_engines_keep_g():
    reused = [0] * 32  # every lane reads global chunk 0 into its own destination
    cost = cp_async_cost(16, CONTIGUOUS, reused, "cg")
    # Per line: four rounds (four copies into each half), each two halves with
    # different swaps: 8 a line, 32 in all.
    assert cost.exact and cost.wavefronts == 32
    # One source line copied into four shared lines, one per quarter-warp: exact, 4.
    rows = [16 * (lane % 8) for lane in range(32)]
    assert cp_async_cost(16, CONTIGUOUS, rows, "cg").wavefronts == 4
    instr = parse_instruction("cp.async.cg.16")
    engines = copy_cost(instr, CONTIGUOUS, CONTIGUOUS)
    assert not engines.exact and engines.wavefronts == 32  # bound G, not rule S's 4


def test_stores_and_narrow_loads_keep_the_phase_model():
    instr = parse_instruction("st.shared.v2.b32")
    addresses = [0] * 32
    assert hardware_wavefronts(instr, addresses) == bank_cost(instr, addresses).wavefronts == 2


def test_cp_async_refuses_what_was_not_measured():
    with pytest.raises(ValueError, match="expected the copy size"):
        cp_async_cost(8, [0] * 32, [0] * 32, "cg")
    with pytest.raises(ValueError, match="aligned"):
        cp_async_cost(4, [2] + [0] * 31, [0] * 32)
