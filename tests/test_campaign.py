"""The differential campaign's fast slice, and the disagreements it has found.

`benchmarks/differential.py` compares every verdict and figure with brute-force
enumeration on random specs; the long run (100,000+ cases) is summarised in
benchmarks/results/differential.md. Here a fixed slice of it runs on every
commit, and each disagreement ever found is kept as a regression test.
"""
import os
import sys

import pytest

from verify import bv
from verify.errors import InternalError
from verify.expr import Range

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
import differential  # noqa: E402  -- the campaign script, not an installed module

FAST_SLICE = 80

# Disagreements the campaign found, each fixed; the spec text is the case as generated.
REGRESSIONS = {
    # Seed 0, case 7: the query's bit-width came from the coordinates alone, so the
    # range bound of $base (2^22) wrapped to 0 in 8 bits, the range constraint became
    # false and the bounds query was vacuously UNSAT: in_bounds was PROVED wrongly.
    "range_bound_wrapped": """\
dtype f64
buffer align 1024
layout L(r in 0..16, c in 0..16) = 16 * r + (c ^ (r % 2))
access a = stmatrix.x1 L((lane / 2 + 1 * lane), (lane / 2 + 2 * lane))
check bijective L
check conflict_free a
check max_ways <= 4 a
check wavefronts <= 7 a
check aligned 8 a
""",
}


@pytest.mark.parametrize("case", range(FAST_SLICE))
def test_campaign_slice_agrees_with_enumeration(case):
    row = differential.run_case(case, 0)
    assert row["disagreements"] == 0, (row["detail"], row["spec"])


@pytest.mark.parametrize("name", sorted(REGRESSIONS))
def test_found_disagreement_stays_fixed(name):
    disagreements, counts = differential.compare(REGRESSIONS[name])
    assert disagreements == []
    assert counts["refuted"] > 0


def test_constant_that_does_not_fit_is_a_bug_not_a_wrap():
    ctx = bv.Context(8, {"x": Range(0, 4)})
    with pytest.raises(InternalError, match="does not fit"):
        ctx.num(256)


def test_width_covers_every_range_bound():
    assert bv.width_for([], {"base": Range(0, 1 << 22)}) >= 23


def test_runs_merge_into_one_summary_and_stopped_cases_finished_later_drop_out(tmp_path):
    first, second, merged = (str(tmp_path / d) for d in ("first", "second", "merged"))
    assert differential.main(["--cases", "2", "--start", "0", "--jobs", "1", "--out", first]) == 0
    assert differential.main(["--cases", "2", "--start", "2", "--jobs", "1", "--out", second]) == 0
    with open(os.path.join(first, differential.STOPPED_FILE), "w") as f:
        f.write("3\n9\n")                     # 3 finished in the second run, 9 nowhere
    assert differential.main(["--merge", first, second, "--out", merged]) == 0
    with open(os.path.join(merged, "differential.md")) as f:
        summary = f.read()
    assert "| cases (random specs) | 4 (numbers 0-3) |" in summary
    assert "a signal (not counted; differential_stopped.txt) | 1 |" in summary
    assert "- `first`: " in summary and "- `second`: " in summary
    with open(os.path.join(merged, differential.STOPPED_FILE)) as f:
        assert f.read() == "9\n"


def test_merging_runs_that_share_case_numbers_is_refused(tmp_path):
    run = str(tmp_path / "run")
    differential.main(["--cases", "1", "--jobs", "1", "--out", run])
    with pytest.raises(SystemExit, match="share 1 case numbers"):
        differential.main(["--merge", run, run, "--out", str(tmp_path / "merged")])


def test_case_numbers_are_summarised_as_blocks_with_their_gaps():
    assert differential._spans([5, 1, 2, 3, 9000]) == "1-5 (less 1), 9000-9000"
