"""Shortcuts of the cp.async rules against the definitions they stand for."""

import numpy as np

from verify.engines import copy_rules
from verify.model.bank import hardware_copy_cost
from verify.model.instructions import parse_instruction

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
