"""Costs of a 128-bit / 64-bit shared load from its 32 lane byte offsets (H200).

phase_cost: the phase model (quarter-warps for 128 bits, half-warps for 64; in each
phase the most distinct 4-byte words in one bank). rule_l: docs/hardware.md's rule L,
whose merge condition (lanes 2k and 2k+1 on one address for every k, or the warp
alternating two addresses) is judged over the whole warp. per_half: the rule the
designed loads of gen_broadcast.py point to (benchmarks/results/ptx_h200.md): the same
merge, judged for each pair of phases that merges (the half-warp for 128 bits, the
warp for 64) on its own lanes only.

Written apart from verify.model.bank, so the measurement is scored by its own code.
"""

from collections import defaultdict


def words(offsets: list[int], width_bytes: int) -> list[set[int]]:
    return [{(o // 4) + i for i in range(width_bytes // 4)} for o in offsets]


def phase_cost(lanes: list[int], offsets: list[int], width_bytes: int) -> int:
    """Most distinct words in one bank among `lanes`."""
    per_bank: dict[int, set[int]] = defaultdict(set)
    for lane in lanes:
        for w in words([offsets[lane]], width_bytes)[0]:
            per_bank[w % 32].add(w)
    return max(len(ws) for ws in per_bank.values())


def _phases(width_bytes: int) -> list[list[int]]:
    size = 32 * 4 // width_bytes  # 8 lanes for 128 bits, 16 for 64
    return [list(range(p, p + size)) for p in range(0, 32, size)]


def _mergeable(lanes: list[int], offsets: list[int]) -> bool:
    paired = all(offsets[lanes[i]] == offsets[lanes[i + 1]] for i in range(0, len(lanes), 2))
    alternating = all(offsets[lane] == offsets[lanes[i % 2]] for i, lane in enumerate(lanes))
    return paired or alternating


def _cost(offsets: list[int], width_bytes: int, judge_each_pair: bool) -> int:
    phases = _phases(width_bytes)
    warp_ok = _mergeable(list(range(32)), offsets)
    total = 0
    for a, b in zip(phases[0::2], phases[1::2], strict=True):
        ok = _mergeable(a + b, offsets) if judge_each_pair else warp_ok
        if ok and phase_cost(a + b, offsets, width_bytes) == 1:
            total += 1
        else:
            total += phase_cost(a, offsets, width_bytes) + phase_cost(b, offsets, width_bytes)
    return total


def phase_model(offsets: list[int], width_bytes: int) -> int:
    return sum(phase_cost(p, offsets, width_bytes) for p in _phases(width_bytes))


def rule_l(offsets: list[int], width_bytes: int) -> int:
    return _cost(offsets, width_bytes, judge_each_pair=False)


def per_half(offsets: list[int], width_bytes: int) -> int:
    return _cost(offsets, width_bytes, judge_each_pair=True)
