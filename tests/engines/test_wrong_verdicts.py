"""Regressions: the wrong verdicts an independent oracle found (issue 11).

Each spec here got a wrong answer before the fix -- two of them a wrong PROVED.
The expected answers are literal facts worked out by hand (and by pycute for the
CuTe terms), never verify's own evaluation, so these tests cannot agree with a
bug by construction.
"""

import pytest
from conftest import WORK

from verify import offsets
from verify.engines.runner import run_spec
from verify.errors import SpecError
from verify.smt.solve import Status
from verify.spec.parser import parse_text


@pytest.fixture(params=["z3", "enumeration"])
def engine(request):
    """Every regression is decided by both engines: the bugs were in the notations'
    meaning, which both read, and the solver path must not regress unseen."""
    return request.param


def verdicts(text: str, engine: str) -> dict:
    return {r.property: r for r in run_spec(parse_text(text, "case.spec"), WORK, engine=engine)}


# -- 1. tile_to_shape with an atom that is not compact ------------------------------


def test_tile_to_shape_fills_the_atoms_holes():
    """CuTe: tile_to_shape((2,4):(1,5), (4,4)) is ((2,4),(2,1)):((1,5),(2,4)) --
    the second copy of the atom sits in its holes at offset 2, cosize 19."""
    assert offsets("tile_to_shape((2,4):(1,5), (4,4))") == [
        0,
        1,
        2,
        3,
        5,
        6,
        7,
        8,
        10,
        11,
        12,
        13,
        15,
        16,
        17,
        18,
    ]


def test_conflict_free_read_of_a_tile_with_holes_is_proved(engine):
    """Was REFUTED 2-way: the copies were placed at the atom's cosize, 17."""
    found = verdicts(
        "dtype f32\nlayout A = tile_to_shape((2,4):(1,5), (4,4))\n"
        "access rd = ld.shared.b32 A((lane / 4) % 4, lane % 4)\n"
        "check conflict_free rd\ncheck bijective A\n",
        engine,
    )
    assert found["conflict_free rd"].status == Status.PROVED
    assert found["bijective A"].facts["cosize"] == 19


def test_padded_atom_repeats_at_its_padded_pitch():
    """(8,64):(72,1) tiled twice down the rows: row 8 starts at 8 * 72 = 576
    (was 568, the atom's cosize)."""
    tiled = offsets("tile_to_shape((8,64):(72,1), (16,64))")
    assert tiled[8] == 576 and tiled[15] == 15 * 72


# -- 2. tile_to_shape of a composition ------------------------------------------------


def test_a_composition_is_tiled_as_one_layout(engine):
    """composition((4,4):(4,1), (4,4):(1,4)) is the layout (4,4):(4,1), a bijection
    onto 0..15; tiled to (8,4) it fills 0..31.
    Was REFUTED: verify tiled B and applied A afterwards, past A's domain."""
    found = verdicts(
        "dtype f32\n"
        "layout A = tile_to_shape(composition((4,4):(4,1), (4,4):(1,4)), (8,4))\n"
        "check bijective A\n",
        engine,
    )
    assert found["bijective A"].status == Status.PROVED
    assert sorted(offsets("tile_to_shape(composition((4,4):(4,1), (4,4):(1,4)), (8,4))")) == list(
        range(32)
    )


# -- 3. a 1-D index into a formula whose range starts above 0 ------------------------

FORMULA = "layout F(r in 1..3, c in 0..16) = 32 * (r / 2) + c\n"


def test_one_d_index_starts_at_the_first_coordinate():
    """Index i is (r, c) = (1 + i % 2, i / 2): offsets 0 32 1 33 ..."""
    assert offsets(FORMULA.removeprefix("layout "))[:4] == [0, 32, 1, 33]


def test_formula_read_by_one_d_index_is_two_way(engine):
    """Was a wrong PROVED: verify split the index as if r started at 0."""
    found = verdicts(
        f"dtype f32\n{FORMULA}access rd = ld.shared.b32 F(lane)\ncheck conflict_free rd\n", engine
    )
    assert found["conflict_free rd"].status == Status.REFUTED
    assert found["conflict_free rd"].max_ways == 2


def test_equivalence_of_a_formula_with_a_raised_lower_bound(engine):
    """Was a wrong PROVED for different layouts and a REFUTED (with a counterexample
    that did not replay) for equal ones; r - 1 with r >= 1 was rejected."""
    found = verdicts(
        "dtype f32\n"
        "layout F(r in 1..3, c in 0..16) = 32 * (r - 1) + c\n"
        "layout G = (2,16):(32,1)\nlayout H = (2,16):(16,1)\n"
        "layout R(x in 3..7) = x - 3\nlayout S = 4:1\n"
        "check equivalent F, G\ncheck equivalent F, H\n"
        "check equivalent R, S\n",
        engine,
    )
    assert found["equivalent F, G"].status == Status.PROVED
    assert found["equivalent F, H"].status == Status.REFUTED
    assert "index 1" in found["equivalent F, H"].counterexample.summary
    assert found["equivalent R, S"].status == Status.PROVED


def test_a_subtraction_that_may_go_negative_is_still_rejected():
    with pytest.raises(SpecError, match="subtraction may be negative"):
        parse_and_run(
            "dtype f32\nlayout F(r in 0..3, c in 0..16) = 32 * (r - 1) + c\n"
            "access rd = ld.shared.b32 F(lane)\ncheck conflict_free rd\n"
        )


def parse_and_run(text: str):
    return run_spec(parse_text(text, "case.spec"), WORK)
