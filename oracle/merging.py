"""Rule L: a 64- or 128-bit shared load merges phases two at a time, in two cases.

Overview
--------
Written from docs/hardware.md ("64- and 128-bit loads merge phases in two regular
cases", measured on an H200), not from verify's code: the phase model's phases are
taken in pairs (64-bit: the two half-warps; 128-bit: quarters 0+1 and 2+3), and a
pair whose own lanes come in equal pairs (lanes 2k and 2k+1 read the same address)
or alternate two addresses (every lane of the pair reads what its first or second
lane reads), and whose union of lanes puts at most one distinct 4-byte word in
every bank, costs one wavefront instead of two. The condition is judged per pair:
an odd lane in one half-warp of a 128-bit load leaves the other half's pair free to
merge. Any other phase costs what the phase model says; stores never merge, and
`max_ways` keeps the phase model's meaning.

Worked example
--------------
ld.shared.v4.b32 with every lane reading byte 0: each quarter-warp costs 1 in the
phase model (4 wavefronts); the lanes come in equal pairs, and each pair of
quarters reads the four words 0-3 only, one per bank, so the load costs 2.

The math
--------
Per instance, m = the number of merged pairs (0 .. phases/2). The phase model's
sum less m is rule L's cost; the worst instance is the maximum, over each value of
m, of the phase model's worst sum among the instances with that m, less m.
"""

from __future__ import annotations

import numpy as np

from oracle import hardware

BANKS = 32


def applies(instr: hardware.Instruction, load: bool) -> bool:
    """Rule L concerns loads of 8 or 16 bytes a lane (ld.shared.b64, .v2/.v4)."""
    return load and not instr.copy and instr.bytes_per_lane in (8, 16) and instr.phases > 1


def wavefronts(instr: hardware.Instruction, addresses: np.ndarray) -> int:
    """The worst instance's wavefronts by rule L; `addresses` is (instances, 32)."""
    merged = merged_pairs(instr, addresses)
    return max(
        hardware.bank_figures(instr, addresses[merged == m])[1] - m
        for m in np.unique(merged).tolist()
    )


def merged_pairs(instr: hardware.Instruction, addresses: np.ndarray) -> np.ndarray:
    """How many phase pairs merge, per instance (see module doc)."""
    lanes = addresses.shape[1]
    span = 2 * instr.phase_lanes
    count = np.zeros(addresses.shape[0], dtype=np.int64)
    for start in range(0, lanes, span):
        union = addresses[:, start : start + span]
        in_pairs = np.all(union[:, 0::2] == union[:, 1::2], axis=1)
        alternating = np.all(union == union[:, np.arange(span) % 2], axis=1)
        count += (in_pairs | alternating) & (
            _most_words_in_a_bank(union, instr.words_per_lane) <= 1
        )
    return count


def _most_words_in_a_bank(addresses: np.ndarray, words_per_lane: int) -> np.ndarray:
    """Per row, the most distinct 4-byte words any one bank holds."""
    words = (addresses // 4)[:, :, None] + np.arange(words_per_lane)
    words = np.sort(words.reshape(addresses.shape[0], -1), axis=1)
    new = np.ones_like(words, dtype=bool)
    new[:, 1:] = words[:, 1:] != words[:, :-1]
    rows = np.arange(words.shape[0])[:, None] * BANKS + words % BANKS
    per_bank = np.bincount(rows[new], minlength=words.shape[0] * BANKS)
    return per_bank.reshape(words.shape[0], BANKS).max(axis=1)
