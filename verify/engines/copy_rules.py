"""The cp.async rules of the enumeration engine, vectorised over instances: rule C
for .ca copies, rule S (and bound G) for .cg (`verify.model.bank`'s `copy_cost` and
`cg_cost`, which replay every maximum these give: `verify.engines.enumeration.
copy_wavefronts`). Apart from `verify.engines.enumeration` so that numpy is imported only
where a copy is costed (a small spec without copies never loads it)."""

from __future__ import annotations

from functools import cache

import numpy as np

from verify.model.bank import BANKS, CHUNK_BYTES, LINE_BYTES, WORD_BYTES
from verify.model.instructions import WARP, Instruction


def copy_costs(instr: Instruction, dst: np.ndarray, src: np.ndarray, rule_s: bool = True):
    """(instances, lanes) destinations and full global sources -> each instance's
    cost and whether it is exact: rule C (.ca, always exact), rule S (.cg), or bound
    G for every .cg instance without `rule_s` (`Program.copy_rule_s`)."""
    if instr.cache == "cg" and rule_s:
        return cg_costs(dst, src)
    if instr.cache == "cg":
        ordered = np.sort(dst // CHUNK_BYTES, axis=1)
        distinct = 1 + (ordered[:, 1:] != ordered[:, :-1]).sum(axis=1)
        return distinct, np.zeros(dst.shape[0], dtype=bool)
    return rule_c_costs(instr, dst, src), np.ones(dst.shape[0], dtype=bool)


def rule_c_costs(instr: Instruction, dst: np.ndarray, src: np.ndarray) -> np.ndarray:
    """Rule C (`verify.model.bank.copy_cost`) per instance. A phase's cost depends
    only on the bank of each of its lanes' first source and destination word (the
    lane's other words follow it), so each distinct (source banks, destination banks)
    row of a phase is evaluated once and its cost given to every instance that has
    it: the instances of a loop's iterations mostly repeat a few rows."""
    words = np.arange(instr.words_per_address)
    src_first = (src // WORD_BYTES % BANKS).astype(np.uint8)
    dst_first = (dst // WORD_BYTES % BANKS).astype(np.uint8)
    total = np.zeros(dst.shape[0], dtype=np.int64)
    if not len(dst):
        return total
    for lanes in instr.phases:
        rows = np.concatenate(
            [src_first[:, lanes.start : lanes.stop], dst_first[:, lanes.start : lanes.stop]],
            axis=1,
        )
        distinct, inverse = _distinct_rows(rows)
        banks = (distinct[:, :, None].astype(np.int64) + words) % BANKS
        half = lanes.stop - lanes.start
        a = banks[:, :half].reshape(len(distinct), -1)
        b = banks[:, half:].reshape(len(distinct), -1)
        # Per edge e: out(a_e) + in(b_e) - both(a_e, b_e), counted over the phase's edges.
        same_a = a[:, :, None] == a[:, None, :]
        same_b = b[:, :, None] == b[:, None, :]
        per_edge = same_a.sum(axis=2) + same_b.sum(axis=2) - (same_a & same_b).sum(axis=2)
        total += per_edge.max(axis=1)[inverse]
    return total


def _distinct_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(n, k) integers -> (the distinct rows, each row's index among them)."""
    rows = np.ascontiguousarray(rows)
    keys = rows.view(np.dtype((np.void, rows.shape[1] * rows.itemsize))).ravel()
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    return rows[first], inverse.ravel()


# Instances whose rule S is evaluated at once: a few (block, 32, 32) masks stay small.
CG_BLOCK = 4096


def cg_costs(dst: np.ndarray, src: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rule S (`verify.model.bank.cg_cost`) per instance, vectorised: (instances, 32)
    16-byte-aligned destinations and sources -> costs, and whether each is exact
    (rule S is, on every measured pattern: all true). Each distinct instance, up to
    the moves `_line_relative` makes, is costed once and its cost given to every
    instance that has it: a loop's iterations and warps mostly repeat a few."""
    if not len(dst):
        return np.zeros(0, dtype=np.int64), np.ones(0, dtype=bool)
    rows = np.concatenate([_line_relative(dst), _line_relative(src)], axis=1)
    distinct, inverse = _distinct_rows(rows)
    d, s = distinct[:, : dst.shape[1]], distinct[:, dst.shape[1] :]
    parts = [
        _cg_block(d[i : i + CG_BLOCK], s[i : i + CG_BLOCK]) for i in range(0, len(d), CG_BLOCK)
    ]
    costs = np.concatenate(parts)[inverse]
    return costs, np.ones(len(costs), dtype=bool)


def _line_relative(addresses: np.ndarray) -> np.ndarray:
    """Each instance's addresses less the start of its lowest 128-byte line. Rule S
    reads addresses only through equalities of address // 16, // 32 and // 128
    between lanes, and address // 16 % 8 (`_cg_block`, `bank.cg_cost`): moving all
    of one instance's addresses by a multiple of 128 changes none of them."""
    lowest = addresses.min(axis=1, keepdims=True)
    return addresses - lowest // LINE_BYTES * LINE_BYTES


def _pairs(values: np.ndarray) -> np.ndarray:
    """(n, lanes) -> (n, lanes, lanes): lanes i and j have equal values."""
    return values[:, :, None] == values[:, None, :]


def _agree(*keys: np.ndarray) -> np.ndarray:
    """(n, lanes) keys -> (n, lanes, lanes): lanes i and j agree on every key. The
    keys are packed into one (each less its row's least value, times the sizes of
    those after it), so one comparison of lanes stands for several; where the
    packed value could pass 2^62 both sides are first replaced by their ranks
    (fewer than n * lanes values each), which keep equality as it was."""
    packed, size = np.zeros_like(keys[0]), 1
    for key in keys:
        values = key - key.min(axis=1, keepdims=True)
        top = int(values.max(initial=0)) + 1
        if size * top >= 1 << 62:
            packed, size = _ranks(packed)
            values, top = _ranks(values)
        packed, size = packed * top + values, size * top
    return _pairs(packed)


def _ranks(values: np.ndarray) -> tuple[np.ndarray, int]:
    """Each value's rank among the distinct values, and how many there are."""
    distinct, inverse = np.unique(values, return_inverse=True)
    return inverse.reshape(values.shape), len(distinct)


EARLIER = np.tri(WARP, k=-1, dtype=bool)  # [i, j]: lane j comes before lane i


def _cg_block(dst: np.ndarray, src: np.ndarray) -> np.ndarray:
    """Rule S on one block. Counted lanes: the lowest writing each 16-byte
    destination. A counted copy's round: how many later counted lanes copy its
    source chunk into the same half of a sector of its shared line (`bank.copy_rounds`).
    Each unit (a whole sector, or a half) is carried by exactly two (symmetry, half
    swap) pairs: the rotation by u - t and the reflection u + t (mod 4) with its
    swap, so a class's fewest symmetries is the minimum vertex cover of a graph
    whose edges are its units (`_COVER`); units are summed per set of (global line,
    shared line, round, class, swap)."""
    counted = ~(_pairs(dst // CHUNK_BYTES) & EARLIER).any(axis=2)
    both = counted[:, :, None] & counted[:, None, :] & ~np.eye(WARP, dtype=bool)
    source_chunk, shared_line = src // CHUNK_BYTES, dst // LINE_BYTES
    p, q = source_chunk % 8, dst // CHUNK_BYTES % 8
    repeat = both & _agree(source_chunk, shared_line, q % 2)
    rounds = (repeat & EARLIER.T).sum(axis=2)
    # A source sector moved whole: its other half copied, in the same round, into
    # the other half of the same shared sector.
    partner = (source_chunk ^ 1)[:, :, None] == source_chunk[:, None, :]
    whole = (both & partner & _agree(dst // (2 * CHUNK_BYTES), rounds)).any(axis=2)
    kind = np.where(whole, 2, p % 2)
    unit = counted & ~(whole & (p % 2 == 1))  # a whole sector counts at its first half
    t, u, swap = p // 2, q // 2, (p ^ q) & 1
    edge = np.left_shift(1, (u - t) % 4 * 4 + (u + t) % 4)
    same_set = (
        unit[:, :, None]
        & unit[:, None, :]
        & _agree(src // LINE_BYTES, shared_line, rounds, kind, swap)
    )
    graph = np.bitwise_or.reduce(np.where(same_set, edge[:, None, :], 0), axis=2)
    first = unit & ~(same_set & EARLIER).any(axis=2)
    return np.where(first, _cover_table()[graph], 0).sum(axis=1)


@cache
def _cover_table() -> np.ndarray:
    """For every graph between 4 rotations and 4 reflections (16 edge bits, edge r*4
    + r' joining rotation r and reflection r'), the fewest vertices touching every
    edge. A cover holds an end of the graph's lowest edge (r, r'): it is one more
    than the fewest for the graph less every edge of rotation r, or less every edge
    of reflection r'. Those graphs have fewer edges, so the table is filled by
    number of edges, each layer at once."""
    graphs = np.arange(1 << 16)
    edges = np.zeros(graphs.size, dtype=np.int64)
    lowest = np.zeros(graphs.size, dtype=np.int64)
    for bit in reversed(range(16)):
        has = graphs >> bit & 1 == 1
        edges += has
        lowest[has] = bit
    without_rotation = graphs & ~(0xF << lowest // 4 * 4)
    without_reflection = graphs & ~(0x1111 << lowest % 4)
    best = np.zeros(graphs.size, dtype=np.int64)
    for count in range(1, 17):
        layer = edges == count
        fewer = np.minimum(best[without_rotation[layer]], best[without_reflection[layer]])
        best[layer] = 1 + fewer
    return best
