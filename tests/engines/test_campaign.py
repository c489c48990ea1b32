"""The differential campaign's fast slice, its generator, and the disagreements found.

`benchmarks/campaigns/differential.py` compares every verdict and figure of verify with the
independent oracle `oracle` on random specs from
`oracle/spec_generator.py`; the long run is summarised in
benchmarks/results/differential_independent/differential.md. Here a fixed slice
of it runs on every commit, the generator is checked to produce each construct
it promises, and each disagreement ever found is kept as a regression test.
"""

import csv
import os
import random
import re
from collections import Counter
from importlib import resources
from itertools import combinations

import lark
import pytest

from benchmarks.campaigns import differential
from oracle import spec_generator
from verify.engines.options import RunOptions
from verify.errors import InternalError
from verify.model.expr import Range
from verify.smt import bv

FAST_SLICE = 40
# Each check's budget counts z3 resource units, never seconds, so an UNKNOWN here is
# the same under any load: the catalog's largest check needs 204 M units
# (benchmarks/results/rlimit_catalog.md), and a generated case is far smaller.
BUDGET = RunOptions.units(400_000_000)
GENERATED = 2000  # cases the generator tests look at (about 3 s to generate)

# Disagreements found, each fixed; the spec text is the case as found.
REGRESSIONS = {
    # Seed 0, case 7 of the campaign against enumeration: the query's bit-width came
    # from the coordinates alone, so the range bound of $base (2^22) wrapped to 0 in
    # 8 bits and in_bounds was PROVED wrongly.
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
    # Issue 11, found by the independent oracle: CuTe places an atom's repeats by
    # its complement, filling its holes first (verify strode them by the cosize).
    "tile_of_holed_atom": """\
dtype f16
buffer align 16
layout L = tile_to_shape((2,4):(1,5), (4,4))
layout M = ((2,4),(2,1)):((1,5),(2,4))
check equivalent L, M
check bijective L
access a = ld.shared.b16 L(lane % 4, lane / 8)
check conflict_free a
""",
    # Issue 11: a padded atom's second repeat starts at 576 = 8 * 72, after the padding.
    "tile_of_padded_atom": """\
dtype f16
buffer align 128
layout L = tile_to_shape((8,64):(72,1), (16,64))
layout M = ((8,2),64):((72,576),1)
check equivalent L, M
check bijective L
access a = ldmatrix.x4 L(lane % 16, 8 * (lane / 16))
check conflict_free a
""",
    # Issue 11: CuTe's composition of two layouts is a layout, and that is what is
    # tiled (verify tiled the inner one and applied the outer to the tile).
    "tile_of_composition": """\
dtype f16
buffer align 16
layout L = tile_to_shape(composition((4,8):(8,1), (8,4):(4,1)), (16,8))
check bijective L
access a = ld.shared.b32 L(lane % 16, 2 * (lane / 16))
check conflict_free a
""",
    # Issue 11: a 1-D index into a formula counts from each range's first value.
    "formula_index_from_lower_bound": """\
dtype f32
buffer align 128
layout F(r in 1..3, c in 0..16) = 32 * (r / 2) + c
access a = ld.shared.b32 F(lane)
check conflict_free a
check bijective F
""",
}


@pytest.mark.parametrize("case", range(FAST_SLICE))
def test_campaign_slice_agrees_with_the_oracle(case):
    row = differential.run_case(case, 0, options=BUDGET)
    assert row["disagreements"] == 0, (row["detail"], row["spec"])
    assert not row["one_sided"], (row["one_sided"], row["spec"])


COPY_SPECS = {
    "column_major_source": """\
dtype f32
layout S = (8,32):(32,1)
layout G = (8,32):(1,8)
access cp = cp.async.ca.4 S(r, lane) from G(r, lane) for r in 0..8
check conflict_free cp
check wavefronts <= 8 cp
check wavefronts == 64 cp
""",
    "swizzled_16_byte_rows": "dtype f16\nbuffer align 128\n"
    "layout S = Sw<3,3,3> o (8,64):(64,1)\nlayout G = (8,64):(72,1)\nglobal align 16\n"
    "access cp = cp.async.ca.16 S(lane / 8 + 4 * r, 8 * (lane % 8)) "
    "from G(lane / 8 + 4 * r, 8 * (lane % 8)) for r in 0..2\n"
    "check conflict_free cp\ncheck wavefronts == 4 cp\n",
    "cg_bound": """\
dtype f32
layout S = (32,32):(32,1)
access cp = cp.async.cg.16 S(lane, 0) from S(lane, 0)
check wavefronts <= 32 cp
check wavefronts == 40 cp
check wavefronts <= 4 cp
check conflict_free cp
""",
    "misaligned_global_tile": """\
dtype f32
layout S = (32,8):(8,1)
layout G = (32,8):(9,1)
access cp = cp.async.ca.16 S(lane, 4 * q) from G(lane, 4 * q) for q in 0..2
check wavefronts <= 8 cp
""",
}


@pytest.mark.parametrize("name", sorted(COPY_SPECS))
def test_copy_specs_agree_with_the_oracle(name):
    disagreements, counts = differential.compare(COPY_SPECS[name], BUDGET)
    assert disagreements == [] and not counts["one_sided"] and not counts["rejected"], counts
    assert counts["comparisons"] >= 4


# The first 16 copy cases in the default run, all FAST_SLICE in the `exhaustive` set.
@pytest.mark.parametrize(
    "case",
    [c if c < 16 else pytest.param(c, marks=pytest.mark.exhaustive) for c in range(FAST_SLICE)],
)
def test_copy_family_slice_agrees_with_the_oracle(case):
    text = spec_generator.copy_family(random.Random(f"copy:{case}"))
    disagreements, counts = differential.compare(text, BUDGET)
    assert disagreements == [], (disagreements, text)
    assert not counts["one_sided"] and not counts["rejected"], (counts, text)


@pytest.mark.parametrize("name", sorted(REGRESSIONS))
def test_found_disagreement_stays_fixed(name):
    disagreements, counts = differential.compare(REGRESSIONS[name], BUDGET)
    assert disagreements == []
    assert counts["rejected"] == "" and counts["one_sided"] == ""
    assert counts["comparisons"] > 0


def test_constant_that_does_not_fit_is_a_bug_not_a_wrap():
    ctx = bv.Context(8, {"x": Range(0, 4)})
    with pytest.raises(InternalError, match="does not fit"):
        ctx.num(256)


def test_width_covers_every_range_bound():
    assert bv.width_for([], {"base": Range(0, 1 << 22)}) >= 23


# -- the generator ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def generated() -> list[tuple[str, str]]:
    return [spec_generator.random_case(random.Random(f"0:{n}")) for n in range(GENERATED)]


def test_every_generated_spec_is_in_the_language(generated):
    grammar = resources.files("verify.spec").joinpath("grammar.lark").read_text()
    parser = lark.Lark(grammar, parser="lalr", lexer="contextual")
    for _, text in generated:
        parser.parse(text)


def test_each_family_gets_its_share(generated):
    counts = Counter(family.split()[0] for family, _ in generated)
    for family, (share, _) in spec_generator.FAMILIES.items():
        assert 0.7 * share < counts[family] / GENERATED < 1.3 * share, (family, counts)


def _calls(text: str, name: str) -> list[list[str]]:
    """The top-level arguments of every call `name(...)` in `text`."""
    out = []
    for m in re.finditer(re.escape(name) + r"\(", text):
        depth, args, start = 1, [], m.end()
        for i in range(m.end(), len(text)):
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            if text[i] == "," and depth == 1 or depth == 0:
                args.append(text[start:i].strip())
                start = i + 1
            if depth == 0:
                break
        out.append(args)
    return out


def _non_compact(atom: str) -> bool:
    """A plain 2-mode atom 'm:n' whose offsets leave holes or padding."""
    m = re.fullmatch(r"\((\d+),(\d+)\):\((\d+),(\d+)\)", atom)
    if not m:
        return False
    a, b, s, t = map(int, m.groups())
    return 1 + (a - 1) * s + (b - 1) * t > a * b


def test_tile_to_shape_covers_holes_padding_swizzles_and_every_order(generated):
    tiles = [args for _, text in generated for args in _calls(text, "tile_to_shape")]
    atoms = [args[0] for args in tiles]
    orders = Counter(args[2] if len(args) == 3 else "default" for args in tiles)
    assert sum(map(_non_compact, atoms)) >= 20
    assert sum(a.startswith("Sw<") and "smem_ptr" not in a for a in atoms) >= 20
    assert sum("smem_ptr" in a for a in atoms) >= 10
    assert sum(a.startswith("GMMA::") for a in atoms) >= 10
    assert sum(a.startswith("composition(") for a in atoms) >= 20
    assert orders["default"] >= 20 and orders["(1,0)"] >= 20 and orders["(0,1)"] >= 20
    assert sum(n for o, n in orders.items() if re.fullmatch(r"\(\d,\d,\d\)", o)) >= 20


def test_compositions_are_read_directly_as_views(generated):
    views = [t for _, t in generated if re.search(r"^layout L = composition\(", t, re.M)]
    assert sum("composition(A, " in t for t in views) >= 20
    assert sum("composition(A, " not in t for t in views) >= 5


def test_formulas_starting_above_zero_are_read_by_index_and_by_coordinates(generated):
    above_zero = [
        t for _, t in generated if re.search(r"^layout L\([^)]*\b[a-z]\w* in [1-9]", t, re.M)
    ]
    by_index = [t for t in above_zero if re.search(r"^access a = \S+ L\([^,]*\)( for|$)", t, re.M)]
    assert len(by_index) >= 20
    assert (
        sum(bool(re.search(r"^access a = \S+ L\([1-9]\d* \+ ", t, re.M)) for t in above_zero) >= 20
    )
    assert sum("check equivalent L(i) ==" in t for _, t in generated) >= 20
    assert sum("= L(i) +" in t for _, t in generated) >= 10


def test_triton_encodings_of_every_order_are_read_by_instructions(generated):
    orders = Counter(m for _, t in generated for m in re.findall(r"order = \[([\d, ]+)\]", t))
    assert orders["1, 0"] >= 20 and orders["0, 1"] >= 20
    for order in ("2, 1, 0", "0, 1, 2", "1, 0, 2", "2, 0, 1"):
        assert orders[order] >= 3, orders
    nvmma = [t for _, t in generated if "nvmma_shared" in t]
    assert sum("transposed = true" in t for t in nvmma) >= 10
    assert sum("transposed = false" in t for t in nvmma) >= 10


def test_equivalences_pair_every_notation_with_the_others(generated):
    labels = [
        t.splitlines()[0].removeprefix("# family: ") for f, t in generated if f == "equivalence"
    ]
    pairs = Counter(frozenset(label.split()[1].split("/")) for label in labels)
    notations = set(spec_generator.RENDERERS)
    covered = {pair for pair in pairs if len(pair) == 2}
    assert all(any(n in pair for pair in covered) for n in notations)
    assert len(covered) >= 0.8 * len(list(combinations(notations, 2))), sorted(map(sorted, covered))


def test_swizzled_tiles_written_two_ways_are_often_equal_by_construction():
    """The README's case: Triton vec 8, perPhase 1, maxPhase 8 on 64 columns is
    Sw<3,3,3> o (R,64):(64,1); the renderers write one tile both ways."""
    tile = spec_generator.Tile(16, 64, 1, (3, 3, 3), (("row",), ("col",)), 2)
    rng = random.Random(0)
    triton, cute, pointer, nvmma = (
        render(tile, rng)
        for render in (
            spec_generator.render_triton,
            spec_generator.render_cute,
            spec_generator.render_pointer,
            spec_generator.render_nvmma,
        )
    )
    assert triton and cute and pointer and nvmma  # every renderer writes this tile
    assert triton.text.startswith(
        " = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]"
    )
    assert cute.text == " = Sw<3,3,3> o (16,64):(64,1)"
    assert pointer.text == " = Sw<3,4,3> o smem_ptr[16b](unset) o (16,64):(64,1)"
    assert "nvmma_shared<{swizzlingByteWidth = 128, transposed = false" in nvmma.text


# -- the driver --------------------------------------------------------------------------


def test_runs_merge_into_one_summary_and_stopped_cases_finished_later_drop_out(tmp_path):
    first, second, merged = (str(tmp_path / d) for d in ("first", "second", "merged"))
    differential.main(["--cases", "2", "--start", "0", "--jobs", "1", "--out", first])
    differential.main(["--cases", "2", "--start", "2", "--jobs", "1", "--out", second])
    with open(os.path.join(first, differential.STOPPED_FILE), "w") as f:
        f.write("3\n9\n")  # 3 finished in the second run, 9 nowhere
    differential.main(["--merge", first, second, "--out", merged])
    with open(os.path.join(merged, "differential.md")) as f:
        summary = f.read()
    assert "| cases (random specs) | 4 (numbers 0-3) |" in summary
    assert "a worker that died (not counted; differential_stopped.txt) | 1 |" in summary
    assert "- `first`: " in summary and "- `second`: " in summary
    assert "Oracle: `oracle/`" in summary
    with open(os.path.join(merged, differential.STOPPED_FILE)) as f:
        assert f.read() == "9\n"
    with open(os.path.join(merged, differential.FOUND_FILE)) as f:
        found = f.read()
    assert found.startswith(differential.DISAGREEMENTS_HEADING)
    assert found.count(differential.ONE_SIDED_HEADING) == 1


def test_merging_runs_that_share_case_numbers_is_refused(tmp_path):
    run = str(tmp_path / "run")
    differential.main(["--cases", "1", "--jobs", "1", "--out", run])
    with pytest.raises(SystemExit, match="share 1 case numbers"):
        differential.main(["--merge", run, run, "--out", str(tmp_path / "merged")])


def test_case_numbers_are_summarised_as_blocks_with_their_gaps():
    assert differential._spans([5, 1, 2, 3, 9000]) == "1-5 (less 1), 9000-9000"


def _finished_and_stopped(out: str) -> tuple[set[int], list[int]]:
    with open(os.path.join(out, "differential.csv")) as f:
        finished = {int(row["case"]) for row in csv.DictReader(f)}
    with open(os.path.join(out, differential.STOPPED_FILE)) as f:
        return finished, [int(line) for line in f]


# The budget counts cases, so what it stops is the same under any load. With one job
# the run stops between cases in this process; with two, the case still running in
# the other worker is stopped (its worker killed) and listed.
@pytest.mark.parametrize("jobs, budget", [(1, 2), (2, 8)])
def test_a_budget_stops_the_run_and_lists_the_cases_it_stopped(tmp_path, jobs, budget):
    """Local workers (or this process) stopped when the budget is spent: what finished
    is kept, what was running is listed, and no case before the last one handed out
    is lost."""
    out = str(tmp_path / "run")
    differential.main(
        ["--cases", "5000", "--jobs", str(jobs), "--budget-cases", str(budget), "--out", out]
    )
    finished, stopped = _finished_and_stopped(out)
    assert len(finished) == budget
    assert len(stopped) <= jobs and not finished & set(stopped)
    assert finished | set(stopped) == set(range(max(finished | set(stopped)) + 1))


def _dies_on_case_3(case: tuple[int, int]) -> dict:
    """A campaign task whose worker native code kills on case 3 (as Triton's
    bindings abort on some inputs); the other cases finish at once."""
    number, _ = case
    if number == 3:
        os.abort()
    return {"case": number, "disagreements": 0}


def test_a_worker_that_dies_costs_only_the_cases_in_flight(tmp_path):
    """joblib ends the whole pool when a worker dies: the cases in flight are listed
    as stopped (case 3 among them) and every other case still runs."""

    class Files:
        def append(self, row):
            pass

        def summarise(self, *args):
            pass

    rows: list[dict] = []
    remaining, stopped = list(range(12)), []
    while remaining:  # as run_cases goes on: each round finishes or loses a case
        lost = differential._run_until_stopped(
            differential.Engine(2),
            remaining,
            0,
            differential.StopSwitch(None),
            rows,
            Files(),
            0.0,
            _dies_on_case_3,
        )
        stopped += lost
        done = {r["case"] for r in rows}
        remaining = [n for n in remaining if n not in done and n not in lost]
    assert 3 in stopped and len(stopped) <= 2
    assert sorted({r["case"] for r in rows} | set(stopped)) == list(range(12))
