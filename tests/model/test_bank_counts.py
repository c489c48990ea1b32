"""`verify.model.bank.phase_cost` counts each bank's distinct words and builds the
bank -> words map only when it is read; `rule_l` finishes `hardware_wavefronts` from a
phase model cost already in hand. Both are checked here over random address lists of
every instruction shape: the counts against the map built first and its busiest bank
read from it, as before; the figures against the oracle's."""

import random
from collections import defaultdict

import numpy as np
import pytest

from oracle import hardware as oracle_hardware
from oracle import merging as oracle_merging
from verify.model.bank import BANKS, bank_cost, hardware_wavefronts, lane_words, rule_l
from verify.model.instructions import parse_instruction

INSTRUCTIONS = [
    "ld.shared.b8",
    "ld.shared.b16",
    "st.shared.b32",
    "ld.shared.b64",
    "ld.shared.v2.b32",
    "ld.shared.v4.b32",
    "st.shared.v4.b32",
    "ldmatrix.x1",
    "ldmatrix.x4",
    "stmatrix.x2",
]


def reference_phase(instr, lanes, addresses):
    """(ways, worst bank, bank -> words): the map first, then its lowest busiest bank."""
    by_bank = defaultdict(set)
    for lane in lanes:
        for w in lane_words(instr, addresses[lane]):
            by_bank[w % BANKS].add(w)
    worst = max(sorted(by_bank), key=lambda b: len(by_bank[b]))
    return len(by_bank[worst]), worst, {b: frozenset(ws) for b, ws in sorted(by_bank.items())}


def random_addresses(rng, instr):
    """Aligned addresses over a few words (broadcasts, ties between banks) or many."""
    step = instr.bytes_per_address
    spread = rng.choice([1, 2, 4, 32, 64, 4096])
    return [rng.randrange(spread) * step for _ in range(instr.address_lanes)]


@pytest.mark.parametrize("name", INSTRUCTIONS)
def test_counted_phases_are_the_bank_map_read_directly(name):
    instr = parse_instruction(name)
    rng = random.Random(name)
    for _ in range(400):
        addresses = random_addresses(rng, instr)
        cost = bank_cost(instr, addresses)
        for phase, lanes in zip(cost.phases, instr.phases):
            ways, worst, by_bank = reference_phase(instr, lanes, addresses)
            assert (phase.lanes, phase.ways, phase.worst_bank) == (lanes, ways, worst)
            assert phase.words_by_bank == by_bank
            assert list(phase.words_by_bank) == sorted(by_bank)  # banks in order


@pytest.mark.parametrize("name", INSTRUCTIONS)
def test_rule_l_from_a_cost_in_hand_is_the_oracles(name):
    """The phase model's figures and rule L's wavefronts from one cost, against
    oracle.hardware and oracle.merging (which share no code with verify.model.bank)."""
    instr = parse_instruction(name)
    theirs = oracle_hardware.instruction(name)
    rng = random.Random(f"rule_l:{name}")
    for _ in range(400):
        addresses = random_addresses(rng, instr)
        if rng.random() < 0.3:  # lanes in equal pairs: the pattern rule L merges
            addresses = [addresses[lane & ~1] for lane in range(len(addresses))]
        cost = bank_cost(instr, addresses)
        row = np.array([addresses], dtype=np.int64)
        assert (cost.max_ways, cost.wavefronts) == oracle_hardware.bank_figures(theirs, row)
        merges = oracle_merging.applies(theirs, load=instr.family == "ld")
        expected = oracle_merging.wavefronts(theirs, row) if merges else cost.wavefronts
        assert rule_l(cost, addresses) == hardware_wavefronts(instr, addresses) == expected
