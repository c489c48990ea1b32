"""One bank search for accesses that differ by a constant placement
(`verify.engines.enumeration.bank_question`): each placed variant's figures and
witnesses, searched afresh, equal those answered from the shared search; a
placement that could move words or banks apart is never shared."""

from __future__ import annotations

import random

import pytest
from conftest import WORK

from verify.engines import enumeration
from verify.model.program import Program
from verify.spec.parser import parse_text

INSTRUCTIONS = ("ld.shared.b32", "ld.shared.u16", "ld.shared.v2.b32", "ld.shared.v4.b32")
WIDTH = {"ld.shared.b32": 4, "ld.shared.u16": 2, "ld.shared.v2.b32": 8, "ld.shared.v4.b32": 16}


def core(rng: random.Random, width: int) -> str:
    """A lane-dependent offset, aligned to `width`, with XORs and masks as Triton's."""
    mask = rng.choice([28, 60, 124, 252, 508]) * 4
    shift = rng.randrange(4)
    mix = f"((((w * 32) + lane) << {shift}) & {mask})"
    term = f"({mix} ^ (((w * 8) + (lane / {rng.choice([2, 4, 8])})) & {rng.choice([32, 64, 96])}))"
    return f"({term} * {width})"


def spec(instr: str, offsets: list[str]) -> str:
    lines = ["dtype u8", "buffer align 128", "layout M(a in 0..1048576) = a"]
    lines += [f"access a{i} = {instr} M({o}) for w in 0..4" for i, o in enumerate(offsets)]
    return "\n".join(lines) + "\n"


def figures(access) -> tuple:
    got = enumeration.bank_figures(access, WORK.budget())
    return tuple((m.value, m.witness, m.exact) for m in (got.ways, got.wavefronts))


@pytest.mark.parametrize("seed", range(12))
def test_placed_variants_share_one_search_and_its_figures(seed):
    rng = random.Random(seed)
    instr = rng.choice(INSTRUCTIONS)
    unit = max(4, WIDTH[instr])
    x = core(rng, WIDTH[instr])
    offsets = [x] + [
        f"(({x} ^ {unit * rng.randrange(1, 64)}) + {unit * rng.randrange(64)})"
        if rng.random() < 0.5
        else f"({x} + {unit * rng.randrange(1, 4096)})"
        for _ in range(5)
    ]
    program = Program(parse_text(spec(instr, offsets)))
    accesses = [program.access(f"a{i}") for i in range(len(offsets))]
    questions = {enumeration.bank_question(a) for a in accesses}
    assert len(questions) == 1, offsets
    fresh = []
    for a in accesses:
        enumeration.forget_bank_searches()
        fresh.append(figures(a))
    enumeration.forget_bank_searches()
    shared = [figures(a) for a in accesses]  # the first searches, the rest replay
    assert shared == fresh


@pytest.mark.parametrize(
    "instr, first, placed",
    [
        ("ld.shared.b32", "X", "(X ^ 2)"),  # moves bytes between words
        ("ld.shared.v4.b32", "X", "((X ^ 8) + 16)"),  # splits a 16-byte access's words
        ("ld.shared.b32", "X", "(X + 2)"),
        # an XOR beside a lane-independent part that is not word-aligned
        ("ld.shared.b32", "(X + (w * 2))", "((X ^ 4) + (w * 2))"),
        # an XOR beside a second lane-dependent term
        ("ld.shared.b32", "(X + (lane * 4))", "((X ^ 4) + (lane * 4))"),
    ],
)
def test_a_placement_that_may_move_words_or_banks_is_its_own_question(instr, first, placed):
    x = "((lane * 16) & 496)" if "v4" in instr else "((lane * 4) & 124)"
    program = Program(parse_text(spec(instr, [first.replace("X", x), placed.replace("X", x)])))
    a0, a1 = (program.access(n) for n in ("a0", "a1"))
    assert enumeration.bank_question(a0) != enumeration.bank_question(a1)


def test_an_xor_under_an_aligned_lane_independent_part_is_shared():
    x = "((lane * 4) & 124)"
    program = Program(
        parse_text(spec("ld.shared.b32", [f"({x} + (w * 512))", f"(({x} ^ 64) + (w * 512))"]))
    )
    first, second = (program.access(n) for n in ("a0", "a1"))
    assert enumeration.bank_question(first) == enumeration.bank_question(second)
