"""The cp.async rules of the enumeration engine, vectorised over instances: rule C
for .ca copies, rule S (and bound G) for .cg (`verify.model.bank`'s `copy_cost` and
`cg_cost`, which replay every maximum these give: `verify.engines.enumeration.
copy_wavefronts`). Apart from `verify.engines.enumeration` so that numpy is imported only
where a copy is costed (a small spec without copies never loads it)."""

from __future__ import annotations

from functools import cache

import numpy as np

from verify.model.bank import BANKS, CHUNK_BYTES, LINE_BYTES, WORD_BYTES
from verify.model.instructions import Instruction


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
    """(n, k) integers -> (the distinct rows, each row's index among them). Rows
    are compared as bytes, in the narrowest integer type holding every value: the
    same rows are equal, and sorting compares fewer bytes (line-relative addresses
    fit in 16 bits, not 64)."""
    narrow = np.ascontiguousarray(rows, _narrowest(rows))
    keys = narrow.view(np.dtype((np.void, rows.shape[1] * narrow.itemsize))).ravel()
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    return rows[first], inverse.ravel()


def _narrowest(values: np.ndarray) -> np.dtype:
    """The narrowest unsigned integer type holding every value exactly, else the
    values' own type (a negative value, or one of 2^32 or more)."""
    if values.size and values.min() >= 0:
        top = int(values.max())
        for kind in (np.uint8, np.uint16, np.uint32):
            if top <= np.iinfo(kind).max:
                return np.dtype(kind)
    return values.dtype


# Instances whose rule S is evaluated at once: a block's (block, 32) arrays stay small.
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


def _packed(*keys: np.ndarray) -> np.ndarray:
    """(n, lanes) keys -> one non-negative (n, lanes) key, equal for two lanes of a
    row exactly where every key is. The keys are packed into one (each less its
    row's least value, times the sizes of those after it); where the packed value
    could pass 2^62 both sides are first replaced by their ranks (fewer than
    n * lanes values each), which keep equality as it was."""
    packed, size = np.zeros_like(keys[0]), 1
    for key in keys:
        values = key - key.min(axis=1, keepdims=True)
        top = int(values.max(initial=0)) + 1
        if size * top >= 1 << 62:
            packed, size = _ranks(packed)
            values, top = _ranks(values)
        packed, size = packed * top + values, size * top
    return packed


def _ranks(values: np.ndarray) -> tuple[np.ndarray, int]:
    """Each value's rank among the distinct values, and how many there are."""
    distinct, inverse = np.unique(values, return_inverse=True)
    return inverse.reshape(values.shape), len(distinct)


def _runs(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's lanes sorted by `key`, stably (equal keys in lane order), and
    where in that order each run of equal keys starts."""
    order = np.argsort(key, axis=1, kind="stable")
    ordered = np.take_along_axis(key, order, axis=1)
    starts = np.ones(key.shape, dtype=bool)
    starts[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    return order, starts


def _in_lane_order(values: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Values given in `order` (a row's lanes sorted by `_runs`), back in lane order."""
    out = np.empty_like(values)
    np.put_along_axis(out, order, values, axis=1)
    return out


def _only(mask: np.ndarray, key: np.ndarray) -> np.ndarray:
    """`key` where `mask` holds; elsewhere a negative key of the lane's own, so that
    lanes outside the mask agree with no lane."""
    return np.where(mask, key, -1 - np.arange(key.shape[1]))


def _counted(dst: np.ndarray) -> np.ndarray:
    """The lowest lane writing each 16-byte destination: the first of its run."""
    order, starts = _runs(dst // CHUNK_BYTES)
    return _in_lane_order(starts, order)


def _later_in_run(key: np.ndarray) -> np.ndarray:
    """Per lane, how many later lanes of its row have its key."""
    order, starts = _runs(key)
    position = np.arange(key.shape[1])
    ends = np.ones(key.shape, dtype=bool)
    ends[:, :-1] = starts[:, 1:]
    last = np.minimum.accumulate(np.where(ends, position, key.shape[1])[:, ::-1], axis=1)
    return _in_lane_order(last[:, ::-1] - position, order)


def _other_half(key: np.ndarray, half: np.ndarray) -> np.ndarray:
    """Per lane, whether a lane of its row with its key has the other `half` (0, 1)."""
    order, starts = _runs(key)
    first = np.flatnonzero(starts)
    ordered = np.take_along_axis(half, order, axis=1).ravel()
    ones = np.add.reduceat(ordered, first)
    zeros = np.diff(first, append=key.size) - ones
    run = np.cumsum(starts.ravel()) - 1  # the run of each place in the order
    other = np.where(ordered == 1, zeros[run], ones[run]) > 0
    return _in_lane_order(other.reshape(key.shape), order)


def _covers(key: np.ndarray, unit: np.ndarray, edge: np.ndarray) -> np.ndarray:
    """Per row, the sum over each set of units of one key of the fewest vertices
    covering the graph of their edges (`_cover_table`)."""
    order, starts = _runs(key)
    first = np.flatnonzero(starts)  # runs are contiguous, and each row starts one
    graphs = np.bitwise_or.reduceat(np.take_along_axis(edge, order, axis=1).ravel(), first)
    units = np.take_along_axis(unit, order, axis=1).ravel()[first]  # one for the set
    per_set = np.zeros(key.size, dtype=np.int64)
    per_set[first] = np.where(units, _cover_table()[graphs], 0)
    return per_set.reshape(key.shape).sum(axis=1)


def _cg_block(dst: np.ndarray, src: np.ndarray) -> np.ndarray:
    """Rule S on one block. Counted lanes: the lowest writing each 16-byte
    destination. A counted copy's round: how many later counted lanes copy its
    source chunk into the same half of a sector of its shared line (`bank.copy_rounds`).
    Each unit (a whole sector, or a half) is carried by exactly two (symmetry, half
    swap) pairs: the rotation by u - t and the reflection u + t (mod 4) with its
    swap, so a class's fewest symmetries is the minimum vertex cover of a graph
    whose edges are its units (`_cover_table`); units are summed per set of (global
    line, shared line, round, class, swap). Sets and rounds come from sorting each
    row's lanes by key (`_runs`), not from comparing every pair of lanes."""
    counted = _counted(dst)
    source_chunk, shared_line = src // CHUNK_BYTES, dst // LINE_BYTES
    p, q = source_chunk % 8, dst // CHUNK_BYTES % 8
    rounds = _later_in_run(_only(counted, _packed(source_chunk, shared_line, q % 2)))
    # A source sector moved whole: its other half copied, in the same round, into
    # the other half of the same shared sector.
    halves = _packed(source_chunk // 2, dst // (2 * CHUNK_BYTES), rounds)
    whole = _other_half(_only(counted, halves), source_chunk % 2)
    kind = np.where(whole, 2, p % 2)
    unit = counted & ~(whole & (p % 2 == 1))  # a whole sector counts at its first half
    t, u, swap = p // 2, q // 2, (p ^ q) & 1
    edge = np.left_shift(1, (u - t) % 4 * 4 + (u + t) % 4)
    sets = _only(unit, _packed(src // LINE_BYTES, shared_line, rounds, kind, swap))
    return _covers(sets, unit, edge)


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
