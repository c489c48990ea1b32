"""Shortcuts of the enumeration engine's bank and cp.async rules against the
definitions they stand for, on plain integers (`verify.model.bank`)."""

import numpy as np
import pytest

from verify.engines import copy_rules, enumeration
from verify.model.bank import bank_cost, hardware_copy_cost, hardware_wavefronts
from verify.model.instructions import parse_instruction
from verify.model.program import Program
from verify.spec.parser import parse_text

CG = parse_instruction("cp.async.cg.shared.global.16")

EDGES = [(r, r2) for r in range(4) for r2 in range(4)]  # edge 4r + r2: rotation r, reflection r2


def test_cover_table_is_the_fewest_vertices_of_every_graph():
    """`copy_rules._cover_table` (filled by number of edges) against trying each of
    the 256 vertex sets on each of the 2^16 graphs."""
    graphs = np.arange(1 << 16)
    best = np.full(graphs.size, 8)
    for chosen in range(1 << 8):
        touched = sum(
            1 << (4 * r + r2) for r, r2 in EDGES if chosen >> r & 1 or chosen >> (4 + r2) & 1
        )
        covered = graphs & ~touched == 0
        best[covered] = np.minimum(best[covered], chosen.bit_count())
    assert (copy_rules._cover_table() == best).all()


def random_copies(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(n, 32) .cg destinations and sources that repeat: destinations written twice
    (rule S counts the lowest lane), source chunks copied into one line twice
    (rounds), both halves of a source sector copied into one shared sector (whole
    sectors), over one or a few lines or far apart."""
    dst = rng.integers(0, rng.choice([4, 8, 16, 64, 1 << 20]), size=(n, 32)) * 16
    src = rng.integers(0, rng.choice([2, 8, 16, 64, 1 << 40]), size=(n, 32)) * 16
    pairs = rng.random(n) < 0.5
    src[pairs, 1::2] = src[pairs, ::2] ^ 16  # the sector's other half ...
    dst[pairs, 1::2] = dst[pairs, ::2] ^ 16  # ... into the shared sector's other half
    return dst, src


def test_rule_s_by_sorted_lanes_is_the_bank_models_rule_s():
    """`copy_rules.cg_costs` (rounds, whole sectors and sets from each row's lanes
    sorted by key) against `verify.model.bank.cg_cost` on plain integers."""
    rng = np.random.default_rng(29)
    for _ in range(20):
        dst, src = random_copies(rng, 100)
        costs, exact = copy_rules.cg_costs(dst, src)
        for d, s, cost in zip(dst, src, costs):
            assert cost == hardware_copy_cost(CG, d.tolist(), s.tolist()).wavefronts
        assert exact.all()


@pytest.mark.parametrize(
    "name",
    ["ld.shared.b32", "ld.shared.b64", "ld.shared.v2.b32", "ld.shared.v4.b32", "ldmatrix.x4"],
)
@pytest.mark.parametrize("block", [enumeration.WAYS_BLOCK, 7])
def test_grouped_phase_costs_and_rule_l_are_the_bank_models(name, block, monkeypatch):
    """`enumeration.phase_costs` and `merged_pairs` (every phase, and every pair of
    phases, of every instance in one call, counted in blocks of rows) against
    `verify.model.bank` per instance, on addresses that merge (lanes in equal
    pairs) and that do not."""
    monkeypatch.setattr(enumeration, "WAYS_BLOCK", block)
    instr = parse_instruction(name)
    program = Program(parse_text(f"dtype b8\nlayout L = (4096):(1)\naccess a = {name} L(lane)\n"))
    access = program.access("a", None)
    rng = np.random.default_rng(31)
    step = instr.bytes_per_address
    addresses = rng.integers(0, 64, size=(300, instr.address_lanes)) * step
    addresses[:100] %= 4 * step  # a few words: broadcasts
    addresses[100:200:2] = np.repeat(addresses[100:200:2, ::2], 2, axis=1)  # equal pairs
    addresses[200:] = np.arange(instr.address_lanes) // 2 * step  # pairs, no conflict
    addresses[200:240, 0::2] = 0
    addresses[200:240, 1::2] = rng.integers(1, 64, size=(40, 1)) * step  # alternating two
    odd = rng.integers(0, instr.address_lanes, size=40)
    addresses[240 + np.arange(40), odd] = rng.integers(0, 64, size=40) * step  # one odd lane
    costs = enumeration.phase_costs(access, addresses)
    waves = costs.sum(axis=1) - enumeration.merged_pairs(instr, addresses)
    for row, cost, wavefronts in zip(addresses.tolist(), costs, waves):
        assert list(cost) == [p.ways for p in bank_cost(instr, row).phases]
        assert wavefronts == hardware_wavefronts(instr, row)


@pytest.mark.parametrize("top", [200, 255, 1 << 16, (1 << 32) - 1, 1 << 32, 1 << 62])
@pytest.mark.parametrize("negative", [False, True])
def test_distinct_rows_in_a_narrower_type_are_the_distinct_rows(top, negative):
    """`copy_rules._distinct_rows` compares rows in the narrowest type holding them
    (`_narrowest`): rows that agree modulo 2^8, 2^16 or 2^32 but not as integers
    stay apart, on each side of those widths, with and without a negative value."""
    rng = np.random.default_rng(top % 1000)
    base = rng.integers(0, 100, size=(5, 6))
    moved = [base + (1 << k) for k in (8, 16, 32) if (1 << k) + 100 <= top]
    patterns = np.unique(np.concatenate([base, *moved, np.full((1, 6), top)]), axis=0)
    if negative:
        patterns[0, 0] = -1
    rows = patterns[rng.permutation(np.arange(300) % len(patterns))]
    distinct, inverse = copy_rules._distinct_rows(rows)
    assert distinct.dtype == rows.dtype
    assert len(distinct) == len(patterns)
    assert (distinct[inverse] == rows).all()
