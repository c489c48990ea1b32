"""Shortcuts of the cp.async rules against the definitions they stand for."""

import numpy as np

from verify.engines import copy_rules

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
