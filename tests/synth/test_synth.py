"""verify synth: the unknown-layout syntax, the families, the solver's XOR search,
the certificate, and the optimum of every problem in specs/synth/ pinned."""

import functools
import json
import os

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import ROOT, WORK

from verify.cli import main
from verify.engines.runner import run_spec
from verify.errors import InternalError, SpecError
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


# -- families: every notation is spec text whose offsets are the table's ------


def _members(family, rows, cols, eb, every):
    from verify.synth import families

    return list(families.members(family, rows, cols, eb))[::every]


@pytest.mark.parametrize(
    "family,rows,cols,eb,every",
    [
        ("sw", 8, 64, 2, 7),
        ("sw", 32, 32, 4, 11),
        ("triton", 16, 64, 2, 3),
        ("tile", 8, 64, 2, 13),
        ("tile", 16, 16, 4, 7),
        ("nvmma", 64, 64, 2, 1),
        ("nvmma", 32, 64, 4, 1),
        ("nvmma", 16, 128, 1, 1),
        ("pad", 8, 64, 2, 5),
        ("pad+sw", 8, 32, 4, 97),
    ],
)
def test_member_tables_equal_verify_offsets(family, rows, cols, eb, every):
    from verify.api import offsets, parse_layout

    for member in _members(family, rows, cols, eb, every):
        table = member.build()
        if member.notation.startswith("#"):
            body = member.notation.rsplit(" shape ", 1)[0]
            ldef = parse_layout(body, (rows, cols))
        else:
            ldef = parse_layout(member.notation)
        listed = np.array(offsets(ldef)).reshape(cols, rows).T  # colexicographic
        assert np.array_equal(listed, table), member.notation


def test_xor_formula_and_linear_tables():
    from verify.synth import gf2
    from verify.synth.families import grid, swizzle

    r, c = grid(8, 64)
    table = swizzle(r * 64 + c, 3, 3, 3)
    bits = gf2.bits_of(table)
    assert bits is not None and int((bits != np.eye(9, dtype=np.int64)).sum()) == 3
    assert np.array_equal(gf2.table_of(bits, (8, 64)), table)
    assert gf2.bits_of(r * 72 + c) is None  # padding is not linear


# -- the catalog's optima, pinned ----------------------------------------------

OPTIMA = {  # spec: (max_ways, weighted wavefronts, xor terms) in the sw family
    "ldmatrix_x1_8x64": (1, 1, 3),
    "cutlass_sm80_f16_kmajor_64x64": (1, 8, 3),
    "b_operand_trans_32x64": (1, 8, 3),
    "f32_transpose_32x32": (1, 2, 5),
    "two_consumers_64x64": (4, 24, 3),
    "cutlass_sm80_tf32_kmajor_64x32": (1, 8, 3),
    "cutlass_sm80_i8_kmajor_64x64": (1, 8, 2),
    "stmatrix_epilogue_64x64": (1, 8, 3),
}


@pytest.mark.parametrize(
    "name,layout",
    [
        ("cutlass_sm80_tf32_kmajor_64x32", "Sw<3,2,3> o (64,32):(32,1)"),
        ("cutlass_sm80_i8_kmajor_64x64", "Sw<2,4,3> o (64,64):(64,1)"),
        ("stmatrix_epilogue_64x64", "Sw<3,3,3> o (64,64):(64,1)"),
    ],
)
def test_catalog_optimum_is_cutlass_choice(name, layout):
    """The tf32, i8 and epilogue problems: the one best Sw is CUTLASS's atom's."""
    code, doc = _synth(name, "--family", "sw", "--method", "list")
    assert code == 0 and doc["layout"] == layout
    best = min(r["objective"] for r in doc["proof"]["table"] if r["objective"])
    assert sum(r["objective"] == best for r in doc["proof"]["table"]) == 1


def _synth(name, *args):
    code, out = _synth_output(name, *args)
    return code, json.loads(out)  # a fresh document for each test


@functools.cache
def _synth_output(name, *args):
    """`verify synth --json`'s exit status and output, once per worker for each
    problem and options (two_consumers_64x64's sw and xor searches, 3-8 s each,
    are read by two tests apiece)."""
    return run("synth", os.path.join(SYNTH, f"{name}.synth"), "--json", *args)


@pytest.mark.parametrize("name", sorted(OPTIMA))
def test_catalog_optimum_in_the_sw_family(name):
    code, doc = _synth(name, "--family", "sw")
    assert code == 0
    assert (doc["max_ways"], doc["wavefronts"], doc["xor_terms"], doc["optimal"]) == (
        *OPTIMA[name],
        True,
    )
    assert all(c["status"] == "proved" for c in doc["checks"])
    assert doc["proof"]["kind"] == "solver"
    assert any(q["answer"] == "unsat" for q in doc["proof"]["queries"])


def _problem(name):
    from verify.synth.problem import problem_of

    path = os.path.join(SYNTH, f"{name}.synth")
    with open(path) as f:
        source = f.read()
    return problem_of(parse_text(source, path), source)


# The pairs whose listing side scores thousands of members (10-70 s each on the
# 2-core CI machine): the marked `exhaustive` set, which .ci/run also runs. The
# default run keeps one tile problem and every pair of the other two families
# below 10 s, so each family's solver encoding is still checked against listing.
SLOW_PAIRS = {
    ("two_consumers_64x64", "tile"),
    ("stmatrix_epilogue_64x64", "tile"),
    ("cutlass_sm80_f16_kmajor_64x64", "tile"),
    ("f32_transpose_32x32", "tile"),
    ("cutlass_sm80_i8_kmajor_64x64", "tile"),
    ("b_operand_trans_32x64", "tile"),
    ("cutlass_sm80_tf32_kmajor_64x32", "tile"),
    ("two_consumers_64x64", "sw"),
    ("f32_transpose_32x32", "sw"),
    ("two_consumers_64x64", "triton"),
    ("f32_transpose_32x32", "triton"),
}


def _sampled(pairs):
    return [
        pytest.param(*pair, marks=[pytest.mark.exhaustive] if pair in SLOW_PAIRS else [])
        for pair in pairs
    ]


@pytest.mark.parametrize(
    "name,family",
    _sampled((n, f) for n in sorted(OPTIMA) for f in ("sw", "triton", "tile")),
)
def test_solver_and_listing_find_the_same_optimum(name, family):
    """The cross-check: the parameters searched by the solver, and every member
    of the family listed and scored, give one objective."""
    from verify.synth.search import synthesize

    problem = _problem(name)
    solved = synthesize(problem, family, WORK, "solver")
    listed = synthesize(problem, family, WORK, "list")
    assert solved.method == "solver" and listed.method == "list"
    assert solved.optimal and listed.optimal
    assert solved.objective is not None and listed.objective is not None
    assert solved.objective.key() == listed.objective.key()


def test_tile_family_finds_an_unswizzled_blocked_layout():
    """8x64 read by ldmatrix.x1 down rows: 2x8 atoms tiled down the rows put the
    eight rows' 16-byte pieces side by side, conflict-free with no XOR at all."""
    code, doc = _synth("ldmatrix_x1_8x64", "--family", "tile")
    assert code == 0 and (doc["max_ways"], doc["wavefronts"], doc["xor_terms"]) == (1, 1, 0)
    assert doc["layout"].startswith("tile_to_shape(") and doc["optimal"]


def test_family_all_names_the_winner_and_every_contender():
    code, doc = _synth("ldmatrix_x1_8x64", "--family", "all")
    assert code == 0 and doc["optimal"] and doc["family"] == "tile"
    contenders = doc["contenders"]
    assert list(contenders) == ["sw", "triton", "tile", "nvmma", "pad", "pad+sw", "xor"]
    assert (
        min(c["objective"] for c in contenders.values() if c["objective"])
        == contenders["tile"]["objective"]
        == [1, 1, 512, 0]
    )
    assert contenders["pad"]["objective"][2] > 512  # padding costs footprint
    # triton ties sw's Sw<3,3,3>; after tile's 0 XOR terms nothing is better: each of
    # these solver families is settled by one UNSAT of "better than the best so far"
    assert [f for f, c in contenders.items() if c["dominated"]] == ["triton", "pad+sw", "xor"]
    assert all(c["optimal"] for c in contenders.values())


@pytest.mark.parametrize(
    "name",
    ["ldmatrix_x1_8x64", pytest.param("two_consumers_64x64", marks=pytest.mark.exhaustive)],
)
def test_family_all_agrees_with_every_family_searched_alone(name):
    """Pruning by the best so far changes no answer: each family's own optimum,
    searched alone, is never better than the winner of --family all."""
    from verify.synth.search import ALL, synthesize

    problem = _problem(name)
    union = synthesize(problem, "all", WORK)
    assert union.optimal and union.objective is not None
    for family in ALL:
        alone = synthesize(problem, family, WORK)
        assert alone.optimal and alone.objective is not None
        assert union.objective.key() <= alone.objective.key(), family


def test_nvmma_family_ranks_the_three_swizzle_widths():
    code, doc = _synth("cutlass_sm80_f16_kmajor_64x64", "--family", "nvmma")
    assert code == 0 and doc["optimal"] and doc["max_ways"] == 1
    assert "swizzlingByteWidth = 128, transposed = false" in doc["notations"]["triton"]
    ways = {
        r["layout"].split(",")[0][-3:].strip("= "): r["objective"][0]
        for r in doc["proof"]["table"]
        if "transposed = false" in r["layout"]
    }
    assert ways == {"128": 1, "64": 2, "32": 4}
    transposed = [r for r in doc["proof"]["table"] if "transposed = true" in r["layout"]]
    assert transposed and all(r["broken"] for r in transposed)  # 16-byte rows split


@pytest.mark.parametrize(
    "name", ["ldmatrix_x1_8x64", "b_operand_trans_32x64", "two_consumers_64x64"]
)
def test_xor_family_proves_the_same_optimum(name):
    ways, waves, _ = OPTIMA[name]
    code, doc = _synth(name, "--family", "xor")
    assert code == 0 and doc["optimal"] and (doc["max_ways"], doc["wavefronts"]) == (ways, waves)
    queries = doc["proof"]["queries"]
    assert any(q["answer"] == "unsat" for q in queries)
    if name == "two_consumers_64x64":  # the bound: 4-way in every layout
        assert queries[0]["query"].startswith("lemma: a phase of copy (32 lanes) costs <= 3")
        assert queries[1]["query"] == "max_ways <= 3"


@pytest.mark.parametrize("family", ["sw", "xor"])
def test_certificate_steps_are_all_solver_answers(family):
    """An optimal certificate holds z3 answers only (a SAT replayed as a layout, or
    an UNSAT), the lemma included: nothing rests on an argument in code."""
    code, doc = _synth("two_consumers_64x64", "--family", family)
    assert code == 0 and doc["optimal"]
    queries = doc["proof"]["queries"]
    assert {q["answer"] for q in queries} <= {"sat", "unsat"}
    lemmas = [q for q in queries if q["query"].startswith("lemma")]
    assert len(lemmas) == 1 and lemmas[0]["answer"] == "unsat"


def _copy_lemma():
    from verify.synth import gf2

    enc = gf2.encode(_problem("two_consumers_64x64"))
    [(pid, lemma)] = enc.lemmas.items()
    assert (lemma.access, lemma.bound, lemma.cause) == ("copy", 4, "aligned 16 gemm")
    return enc, pid, lemma


def test_a_wrong_lemma_instance_is_refuted_by_its_query():
    """The query states the lemma: 4-way is proved (UNSAT below it), while a claimed
    5-way bound is refuted (a layout with a 4-way phase exists)."""
    from verify.synth import gf2

    enc, _, lemma = _copy_lemma()
    assert gf2.prove_phase_bound(enc.problem, enc.n, lemma, 4, WORK.budget()).answer == "unsat"
    assert gf2.prove_phase_bound(enc.problem, enc.n, lemma, 5, WORK.budget()).answer == "sat"


def test_an_unproved_lemma_is_neither_used_nor_printed(monkeypatch):
    from verify.synth import gf2, gf2_bounds

    enc, pid, lemma = _copy_lemma()
    hard = len(enc.hard)
    monkeypatch.setattr(gf2_bounds, "_PROVED_LEMMAS", {})  # none proved earlier in this process
    monkeypatch.setattr(
        gf2_bounds, "prove_phase_bound", lambda *args: gf2.Step("lemma", "unknown", 0.0)
    )
    steps: list = []
    gf2.prove_lemmas(enc, WORK.budget(), steps)
    assert steps == [] and enc.phase_low[pid] == 1 and len(enc.hard) == hard
    assert gf2.lower_bounds(enc) == (1, 4 + 4 * 4 + 1)  # one wavefront a phase
    monkeypatch.setattr(
        gf2_bounds, "prove_phase_bound", lambda *args: gf2.Step("lemma", "sat", 0.0)
    )
    with pytest.raises(InternalError, match="pigeonhole count is wrong"):
        gf2.prove_lemmas(enc, WORK.budget(), steps)


def test_json_layout_is_accepted_by_verify_map():
    _, doc = _synth("ldmatrix_x1_8x64", "--method", "list")
    code, out = run("map", doc["layout"], "--json")
    assert code == 0 and json.loads(out)["offsets"][:2] == [0, 72]
    assert doc["notations"]["triton"].startswith("#ttg.swizzled_shared<{vec = 8, perPhase = 1")


def test_padding_family_finds_the_seed_pitch():
    code, doc = _synth("f32_transpose_32x32", "--family", "pad")
    assert code == 0 and doc["layout"] == "(32,32):(33,1)" and doc["footprint"] == 1055


def test_infeasible_requirement_names_the_clashing_accesses(tmp_path):
    with open(os.path.join(SYNTH, "two_consumers_64x64.synth")) as f:
        text = f.read()
    path = tmp_path / "clash.synth"
    path.write_text(text + "check conflict_free copy\n")
    lemma = ["'conflict_free copy' (line 13)", "aligned 16 gemm"]
    for family, method, core in (
        ("sw", "list", ["'conflict_free copy' (line 13)", "vectors of 8 elements whole in fill"]),
        ("sw", "solver", lemma),
        ("xor", "solver", lemma),
    ):
        code, out = run("synth", str(path), "--family", family, "--method", method, "--json")
        assert code == 1 and json.loads(out)["infeasible"] == core


def test_timeout_is_exit_3_not_optimal():
    code, doc = _synth("cutlass_sm80_f16_kmajor_64x64", "--timeout", "0.001")
    assert code == 3 and doc["optimal"] is False


def test_llir_addresses_of_a_conversion_are_evaluated_per_lane():
    """benchmarks/campaigns/synth_triton.py reads each lane's shared address from the LLVM IR."""
    from benchmarks.campaigns.synth_triton import lane_addresses

    llir = """define ptx_kernel void @k() {
  %5 = tail call i32 @llvm.nvvm.read.ptx.sreg.tid.x(), !dbg !1
  %6 = and i32 %5, 8, !dbg !1
  %7 = icmp eq i32 %6, 0, !dbg !1
  %8 = select i1 %7, i32 0, i32 272, !dbg !1
  %9 = shl nuw nsw i32 %5, 4, !dbg !1
  %10 = xor i32 %8, %9, !dbg !1
  %11 = getelementptr inbounds nuw i8, ptr addrspace(3) @global_smem, i32 %10, !dbg !1
  store <4 x i32> %1, ptr addrspace(3) %11, align 16, !dbg !1
  %12 = getelementptr inbounds nuw i8, ptr addrspace(3) %11, i32 128, !dbg !1
  %13 = tail call { i32, i32, i32, i32 } @llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.trans.b16.p3(ptr addrspace(3) %12)
}"""
    (store, a), (load, b) = lane_addresses(llir, 1)
    assert store == "st.shared.v4.b32" and load.startswith("ldmatrix.sync.aligned.m8n8.x4.trans")
    assert a[:9] == [16 * t ^ (272 if t & 8 else 0) for t in range(9)]
    assert b == [x + 128 for x in a]


def test_dot_operand_encoding_is_read_from_the_ttgir():
    """benchmarks/campaigns/synth_triton.py reads the shared encoding of a tl.dot operand."""
    from benchmarks.campaigns.synth_triton import dot_encoding

    ttgir = """#shared = #ttg.swizzled_shared<{vec = 4, perPhase = 1, maxPhase = 8, order = [1, 0]}>
#shared1 = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 4, order = [1, 0]}>
    %a_15 = ttg.local_alloc %a_14 : (tensor<64x32xf32, #blocked>) -> !ttg.memdesc<64x32xf32, #shared, #smem> loc(#loc20)
    %b_26 = ttg.local_alloc %b_25 : (tensor<32x64xf32, #blocked1>) -> !ttg.memdesc<32x64xf32, #shared1, #smem> loc(#loc24)
"""
    assert dot_encoding(ttgir, "a") == (
        "#ttg.swizzled_shared<{vec = 4, perPhase = 1, maxPhase = 8, order = [1, 0]}> shape (64, 32)"
    )
    assert dot_encoding(ttgir, "b").startswith("#ttg.swizzled_shared<{vec = 8, perPhase = 1, ")


def test_triton_chooses_these_tf32_and_i8_operand_encodings():
    """Compiled here for sm_80 (Triton 3.9): the tf32 and int8 A operands' encodings
    that the benchmark's Triton column uses."""
    pytest.importorskip("triton")
    from benchmarks.campaigns.synth_triton import DOT_CASES, compile_dot_ttgir, dot_encoding

    tf32 = DOT_CASES["cutlass_sm80_tf32_kmajor_64x32"]
    i8 = DOT_CASES["cutlass_sm80_i8_kmajor_64x64"]
    assert dot_encoding(compile_dot_ttgir(tf32), "a") == (
        "#ttg.swizzled_shared<{vec = 4, perPhase = 1, maxPhase = 8, order = [1, 0]}> shape (64, 32)"
    )
    assert dot_encoding(compile_dot_ttgir(i8), "a") == (
        "#ttg.swizzled_shared<{vec = 16, perPhase = 2, maxPhase = 4, order = [1, 0]}> "
        "shape (64, 64)"
    )


@pytest.mark.parametrize(
    "name",
    ["ldmatrix_x1_8x64", pytest.param("f32_transpose_32x32", marks=pytest.mark.exhaustive)],
)
def test_padded_swizzles_by_the_solver_match_the_listing(name):
    """pad+sw: the pitch and B, M, S as the solver's unknowns reach the optimum of
    listing every (pitch, swizzle) member."""
    from verify.synth.search import synthesize

    problem = _problem(name)
    solved = synthesize(problem, "pad+sw", WORK, "solver")
    listed = synthesize(problem, "pad+sw", WORK, "list")
    assert solved.method == "solver" and solved.optimal and listed.optimal
    assert solved.objective is not None and listed.objective is not None
    assert solved.objective.key() == listed.objective.key()
    assert solved.steps[-1].query.startswith("footprint <= ") and solved.steps[-1].answer == "unsat"


def test_padded_certificate_bounds_every_other_pitch():
    """two_consumers in pad+sw: the 4-way lemma holds at every pitch (slot counts,
    enumerated), the pitches it does not reach are ruled out by their alignment,
    and no other pitch has the footprint: every step an UNSAT or a replayed SAT."""
    code, doc = _synth("two_consumers_64x64", "--family", "pad+sw")
    assert code == 0 and doc["optimal"] and doc["layout"] == "Sw<3,3,3> o (64,64):(64,1)"
    queries = doc["proof"]["queries"]
    assert {q["answer"] for q in queries} <= {"sat", "unsat"}
    texts = [q["query"] for q in queries if q["answer"] == "unsat"]
    assert any(t.startswith("lemma (slot counts, enumerated): 32 lanes of copy") for t in texts)
    assert any(t.startswith("a member at pitch 65") or "pitch 67" in t for t in texts)
    assert texts[-1] == "footprint <= 4096 at a pitch above 64"


def test_slot_count_enumeration_refutes_a_wrong_bound():
    from verify.synth import gf2

    _, _, lemma = _copy_lemma()
    assert gf2.prove_by_slot_counts(lemma, 4).answer == "unsat"  # 32 lanes, 8 slots
    assert gf2.prove_by_slot_counts(lemma, 5).answer == "sat"  # 4 a slot fits them


@pytest.mark.exhaustive  # 80 s on the 2-core machine: every pitch encoded and searched
def test_padded_search_encodes_the_pitches_its_bounds_do_not_reach(monkeypatch):
    """Where a pitch's lower bounds fall short of the unpadded optimum, its phases
    are encoded and searched (the pitch an unknown among them): same optimum."""
    from verify.synth import gf2
    from verify.synth.search import synthesize

    monkeypatch.setattr(gf2, "view_lower_bounds", lambda *args: (0, 0))
    answer = synthesize(_problem("ldmatrix_x1_8x64"), "pad+sw", WORK, "solver")
    assert answer.optimal and answer.notation == "Sw<3,3,3> o (8,64):(64,1)"
    assert not any(s.query.startswith("footprint <= 512 at a pitch") for s in answer.steps)
