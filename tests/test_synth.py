"""verify synth: the unknown-layout syntax, the families, the solver's XOR search,
the certificate, and the optimum of every problem in specs/synth/ pinned."""
import json
import os

import numpy as np
import pytest
from click.testing import CliRunner

from conftest import ROOT
from verify.cli import main
from verify.errors import SpecError
from verify.runner import run_spec
from verify.spec.parser import parse_text

SYNTH = os.path.join(ROOT, "specs", "synth")

SEED = """dtype f16
buffer align 128
layout A = ?(8, 64)
access rd = ldmatrix.x1 A(lane, 8 * q) for q in 0..8 weight 2
check conflict_free rd
"""


def run(*args):
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.output


# -- step 1: syntax ------------------------------------------------------------

def test_unknown_layout_parses_with_its_extents_and_weights():
    spec = parse_text(SEED)
    unknown = spec.unknown_layouts["A"]
    assert (unknown.rows, unknown.cols, unknown.pos.line) == (8, 64, 3)
    assert spec.accesses["rd"].weight == 2


def test_weight_defaults_to_one_and_must_be_positive():
    assert parse_text(SEED.replace(" weight 2", "")).accesses["rd"].weight == 1
    with pytest.raises(SpecError, match="weight: expected a positive integer"):
        parse_text(SEED.replace("weight 2", "weight 0"))


def test_only_one_unknown_layout():
    with pytest.raises(SpecError, match="one layout unknown"):
        parse_text(SEED.replace("layout A = ?(8, 64)", "layout A = ?(8, 64)\nlayout B = ?(8, 8)"))


def test_plain_verify_of_an_unknown_layout_points_to_synth(tmp_path):
    path = tmp_path / "t.synth"
    path.write_text(SEED)
    with pytest.raises(SpecError, match=r"layout 'A' is unknown \(\?\(8, 64\)\).*verify synth"):
        run_spec(parse_text(SEED, str(path)))
    code, out = run(str(path))
    assert code == 2 and "run 'verify synth" in out
