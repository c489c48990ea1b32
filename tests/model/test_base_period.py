"""The lemma that lets one period of bases stand for the whole 32-bit window.

Solver and oracle both quantify `$base` over the aligned bases below
`base_period(layout)` (see verify/model/program.py). Here the lemma itself is checked
by plain evaluation: moving the base by K periods, anywhere in the window, moves
every lane's address by exactly K periods and leaves the bank cost unchanged.
"""

import random

import pytest

from oracle import spec_generator
from verify.errors import SpecError
from verify.model.bank import bank_cost
from verify.model.program import BASE, Program, base_period
from verify.spec.parser import parse_text


def valid_access(rng: random.Random):
    """The first random spec the language accepts (some exceed the 32-bit window)."""
    while True:
        try:
            program = Program(parse_text(spec_generator.random_spec(rng)))
            return program, program.access("a", None)
        except SpecError:
            continue


@pytest.mark.parametrize("case", range(40))
def test_shifting_the_base_by_periods_shifts_every_address(case):
    rng = random.Random(f"period:{case}")
    program, access = valid_access(rng)
    spec = program.spec
    align, period = spec.buffer.align, base_period(access.layout)
    step = max(period, align)
    for _ in range(5):
        values = {n: rng.randrange(r.lo, r.hi) for n, r in access.ranges.items()}
        here = access.lane_addresses(values)
        room = ((1 << 32) - 1 - max(here)) // step  # moved addresses stay in the window
        if room < 1:
            continue
        k = rng.randrange(1, room + 1)
        moved = access.lane_addresses({**values, BASE: values[BASE] + k * step // align})
        assert moved == [a + k * step for a in here]
        if all(a % access.instruction.bytes_per_address == 0 for a in here):
            before, after = (bank_cost(access.instruction, a) for a in (here, moved))
            assert [p.ways for p in before.phases] == [p.ways for p in after.phases]
            assert before.wavefronts == after.wavefronts
