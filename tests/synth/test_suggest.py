"""Suggestions (verify.synth.repair): for each layout family, the nearest member that
fixes a refuted bank check without breaking the spec's other checks. Every
suggestion printed here is substituted into the spec by the test itself and the
spec run again through the API or the CLI: it must pass."""

import os
import re

import pytest
from click.testing import CliRunner
from conftest import SPECS
from test_explain import ROWS_OF_256

import verify
from verify.cli import main
from verify.report.text import result_json
from verify.synth import repair as suggest

ROWS = """dtype f16
buffer align 1024
layout A = {layout}
access rd = ldmatrix.x1 A(lane, 8 * q) for q in 0..8
check conflict_free rd
"""

# ldmatrix.x4 row reads of 256-element rows: explain's spec, whose sentences these repair.
WIDE_ROWS = ROWS_OF_256

# 16-byte chunks of one row, eight lanes a phase: 8-way under K_INTER, 4-way
# under SW32, 2-way under SW64, conflict-free under SW128.
ALONG_ROWS = """dtype f16
buffer align 1024
layout A = {layout}
access rd = ld.shared.v4.b32 A(k, 8 * (lane % 8)) for k in 0..64
check max_ways <= {ways} rd
"""


def refuted(text: str):
    report = verify.check_text(text, name="t.spec")
    return next(r for r in report if r.status.value == "refuted" and not r.passed)


def suggested(text: str) -> tuple[str, str]:
    """(the suggested layout statement, what it says about it)."""
    suggestion = refuted(text).counterexample.suggestion
    assert suggestion, f"no suggestion for:\n{text}"
    statement, detail = suggestion.split("\n")
    return statement, detail


def substituted(text: str, statement: str) -> str:
    """The spec with its layout statement replaced, as a user would paste it."""
    return re.sub(r"(?m)^layout .*$", lambda _: statement, text, count=1)


def assert_fixes(text: str, statement: str) -> None:
    report = verify.check_text(substituted(text, statement), name="fixed.spec")
    assert report.ok, str(report)
    assert all(r.status.value == "proved" for r in report)


def sentences(result, label: str) -> str:
    return " ".join(t for kind, t in result.counterexample.explanation if kind == label)


@pytest.mark.parametrize(
    "layout,expected,changed",
    [
        ("(8,64):(64,1)", "layout A = Sw<3,3,3> o (8,64):(64,1)", "it changes the swizzle"),
        ("(8,64):(80,1)", "layout A = (8,64):(72,1)", "it changes the pitch"),
        ("Sw<1,3,3> o (8,64):(72,1)", "layout A = (8,64):(72,1)", "it changes the swizzle"),
    ],
)
def test_a_cute_tile_gets_the_nearest_pitch_or_swizzle(layout, expected, changed):
    text = ROWS.format(layout=layout)
    statement, detail = suggested(text)
    assert statement == expected
    assert changed in detail
    assert "'conflict_free rd' is proved and every other check still passes" in detail
    assert_fixes(text, statement)


def test_the_alternative_without_the_footprint_is_offered_and_fixes_it_too():
    text = ROWS.format(layout="(8,64):(64,1)")
    _, detail = suggested(text)
    assert "footprint 512 elements" in detail
    alternative = re.search(r"Also re-checked: (layout A = [^ ]+) \(it changes the pitch", detail)
    assert alternative is not None, detail
    assert alternative[1] == "layout A = (8,64):(72,1)"
    assert_fixes(text, alternative[1])


def test_a_padded_tile_is_also_offered_the_swizzle_that_saves_the_padding():
    text = ROWS.format(layout="(8,64):(80,1)")
    statement, detail = suggested(text)
    assert statement == "layout A = (8,64):(72,1)" and "footprint 568 elements" in detail
    unpadded = "layout A = Sw<3,3,3> o (8,64):(64,1)"
    assert (
        f"Also re-checked: {unpadded} (changing the pitch and the swizzle, footprint 512 "
        "elements)" in detail
    )
    assert_fixes(text, unpadded)


def test_a_stretched_swizzle_gets_the_shift_that_reads_the_row_bits():
    text = WIDE_ROWS.format(layout="Sw<3,3,3> o (8,256):(256,1)", expect="")
    statement, detail = suggested(text)
    assert statement == "layout A = Sw<3,3,5> o (8,256):(256,1)"
    assert detail.startswith("would make this access 1-way, 4 wavefronts")
    assert_fixes(text, statement)


def test_a_tiled_atom_gets_its_swizzle_changed_and_keeps_the_tiling():
    text = ROWS.format(layout="tile_to_shape(Sw<2,3,3> o (8,64):(64,1), (16, 64))")
    statement, detail = suggested(text)
    assert statement == "layout A = tile_to_shape(Sw<3,3,3> o (8,64):(64,1), (16, 64))"
    assert "tile_to_shape layouts" in detail
    assert_fixes(text, statement)


@pytest.mark.parametrize("ways,mode", [(2, "SW64"), (1, "SW128")])
def test_a_gmma_atom_gets_the_nearest_swizzle_mode_that_fixes_it(ways, mode):
    text = ALONG_ROWS.format(
        layout="tile_to_shape(GMMA::Layout_K_SW32_Atom<half_t>, (64, 64))", ways=ways
    )
    statement, detail = suggested(text)
    assert statement == f"layout A = tile_to_shape(GMMA::Layout_K_{mode}_Atom<half_t>, (64, 64))"
    assert "it changes the swizzle mode" in detail
    assert_fixes(text, statement)


def test_an_nvmma_encoding_gets_the_nearest_swizzling_byte_width():
    encoding = (
        "#ttg.nvmma_shared<{{swizzlingByteWidth = {}, transposed = false, elementBitWidth = 16}}>"
    )
    text = ALONG_ROWS.format(layout=encoding.format(32) + " shape (64, 64)", ways=2)
    statement, _ = suggested(text)
    assert statement == f"layout A = {encoding.format(64)} shape (64, 64)"
    assert_fixes(text, statement)


def test_a_swizzled_shared_encoding_gets_the_nearest_encoding():
    text = ROWS.format(
        layout="#ttg.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 8, order = [1, 0]}> "
        "shape (8, 64)"
    )
    statement, _ = suggested(text)
    assert statement == (
        "layout A = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, "
        "order = [1, 0]}> shape (8, 64)"
    )
    assert_fixes(text, statement)


def test_a_padded_shared_encoding_gets_the_nearest_interval():
    text = ROWS.format(
        layout="#ttg.padded_shared<[128:+8] {order = [1, 0], shape = [8, 64]}> shape (8, 64)"
    )
    statement, detail = suggested(text)
    assert statement == (
        "layout A = #ttg.padded_shared<[64:+8] {order = [1, 0], shape = [8, 64]}> shape (8, 64)"
    )
    assert "it changes the log2 interval 1" in detail
    assert_fixes(text, statement)


def test_a_formula_gets_an_xor_term_or_a_padding_shown_as_formulas():
    text = ROWS.format(layout="A").replace(
        "layout A = A", "layout A(r in 0..8, c in 0..64) = 64*r + c"
    )
    statement, detail = suggested(text)
    assert statement == "layout A(r in 0..8, c in 0..64) = (64*r + c) ^ (8 * (r % 8))"
    assert_fixes(text, statement)
    padding = "layout A(r in 0..8, c in 0..64) = 72*r + c"
    assert f"Also re-checked: {padding} (it changes the padding" in detail
    assert_fixes(text, padding)


TWO_ACCESSES = """dtype f16
buffer align 128
layout A = (8,64):(64,1)
access rd = ldmatrix.x1 A(lane, 0)
access other = ldmatrix.x1 A(lane, 8 * ((lane + {shift}) % 8))
check conflict_free rd
check conflict_free other
"""


def test_the_suggestion_keeps_every_other_access_conflict_free():
    """Sw<3,3,3>, the nearest fix of rd alone, makes 'other' 8-way: the suggestion
    is the nearest layout under which both are conflict-free."""
    text = TWO_ACCESSES.format(shift=3)
    assert verify.check_text(substituted(text, "layout A = Sw<3,3,3> o (8,64):(64,1)")).failures
    statement, detail = suggested(text)
    assert statement == "layout A = Sw<1,3,5> o (8,64):(72,1)"
    assert "changing the pitch and the swizzle" in detail
    assert_fixes(text, statement)


def test_accesses_no_layout_of_the_family_satisfies_together_are_named():
    r = refuted(TWO_ACCESSES.format(shift=0))
    assert not r.counterexample.suggestion
    assert (
        "no suggestion: no CuTe padded or swizzled layout meets 'conflict_free rd' (line 6) "
        "and 'conflict_free other' (line 7) together" in sentences(r, "fix")
    )


def test_a_fix_that_breaks_another_check_is_not_printed_and_the_check_is_named():
    """Every layout that makes rd conflict-free changes what 'equivalent' compares
    (the layout as written), so none is offered."""
    text = ROWS.format(layout="(8,64):(64,1)") + (
        "layout B = (8,64):(64,1)\ncheck equivalent A, B\n"
    )
    r = refuted(text)
    assert not r.counterexample.suggestion
    assert "breaks 'equivalent A, B' (line 7)" in sentences(r, "fix")


def test_no_suggestion_for_a_conflict_the_spec_expects():
    text = WIDE_ROWS.format(layout="Sw<3,3,3> o (8,256):(256,1)", expect=" expect refuted")
    r = next(r for r in verify.check_text(text) if r.status.value == "refuted")
    assert r.passed and r.counterexample.explanation and not r.counterexample.suggestion


def test_no_suggestion_outside_the_families_or_past_the_member_budget(monkeypatch):
    nested = refuted(ROWS.format(layout="(8,(8,8)):(64,(1,8))"))
    assert nested.property == "conflict_free rd" and not nested.counterexample.suggestion
    monkeypatch.setattr(suggest, "SEARCH_MEMBERS", 0)
    r = refuted(ROWS.format(layout="(8,64):(64,1)"))
    assert not r.counterexample.suggestion


def test_the_cli_prints_the_suggestion_and_the_suggested_spec_passes(tmp_path):
    text = ROWS.format(layout="(8,64):(80,1)")
    broken, fixed = tmp_path / "broken.spec", tmp_path / "fixed.spec"
    broken.write_text(text)
    first = CliRunner().invoke(main, [str(broken)], catch_exceptions=False)
    assert first.exit_code == 1
    statement = re.search(r"\n    suggestion: (.*)\n", first.output)
    assert statement is not None and statement[1] == "layout A = (8,64):(72,1)"
    assert max(len(line) for line in first.output.splitlines() if "suggestion" in line) <= 100
    fixed.write_text(substituted(text, statement[1]))
    second = CliRunner().invoke(main, [str(fixed)], catch_exceptions=False)
    assert second.exit_code == 0, second.output


def test_json_carries_the_suggestion():
    r = refuted(ROWS.format(layout="(8,64):(64,1)"))
    suggestion = result_json(r)["counterexample"]["suggestion"]
    assert suggestion["layout"] == "layout A = Sw<3,3,3> o (8,64):(64,1)"
    assert suggestion["detail"].startswith("would make this access 1-way, 1 wavefront")


def test_nearest_counts_parameter_changes_then_footprint_then_steps():
    here = (("major", "row"), ("pitch", 64), ("swizzle", None))
    padded = (("major", "row"), ("pitch", 72), ("swizzle", None))
    both = (("major", "row"), ("pitch", 72), ("swizzle", (3, 3, 3)))
    assert suggest.changes(here, padded) == 1 and suggest.changes(here, both) == 2
    assert suggest.steps(here, padded) == 8 and suggest.steps(here, both) == 11


def test_an_exact_figure_of_the_failing_access_does_not_block_the_fix_and_is_named():
    """'max_ways == 4 rd' states the conflict the suggestion removes: it is not held
    against the fix (synthesis reads '== k' the same way), and the detail says so."""
    text = WIDE_ROWS.format(layout="Sw<3,3,3> o (8,256):(256,1)", expect="")
    statement, detail = suggested(text + "check max_ways == 4 rd\n")
    assert statement == "layout A = Sw<3,3,5> o (8,256):(256,1)"
    assert "except 'max_ways == 4 rd' (line 6), the figure of the conflict it removes" in detail
    assert_fixes(text, statement)


@pytest.mark.parametrize(
    "layout",
    [
        "(8,64):(64,1)",
        "(8,64):(96,1)",
        "Sw<2,3,3> o (8,64):(64,1)",
        "Sw<3,3,4> o (8,64):(64,1)",
        "Sw<1,4,3> o (8,64):(80,1)",
        "tile_to_shape(Sw<1,3,3> o (8,32):(32,1), (8, 64))",
    ],
)
def test_every_suggestion_is_proved_by_the_solver_engine_too(layout):
    """The suggestion was re-checked by the engine 'auto' picks (enumeration on
    tiles this small); the solver must agree on the spec it leads to."""
    text = ROWS.format(layout=layout)
    statement, _ = suggested(text)
    report = verify.check_text(substituted(text, statement), engine="z3")
    assert report.ok and all(r.engine == "z3" for r in report if r.status.value == "proved")


COLUMNS = """dtype f16
buffer align 1024
layout A = {layout}
access rd = ldmatrix.x1 A(8 * q, lane) for q in 0..8
check conflict_free rd
"""


@pytest.mark.parametrize(
    "layout,expected",
    [
        ("(64,8):(1,64)", "Sw<3,3,3> o (64,8):(1,64)"),
        (
            "#ttg.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 8, order = [0, 1]}> "
            "shape (64, 8)",
            "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [0, 1]}> "
            "shape (64, 8)",
        ),
    ],
)
def test_a_tile_with_its_rows_contiguous_keeps_each_lanes_vector_down_a_column(layout, expected):
    """Synthesis keeps a lane's vector along c; a column-major tile read by rows of
    16 bytes down its columns is scored transposed, or no member would pass."""
    text = COLUMNS.format(layout=layout)
    statement, _ = suggested(text)
    assert statement == f"layout A = {expected}"
    assert_fixes(text, statement)


def test_a_transposed_nvmma_encoding_gets_the_nearest_width():
    encoding = (
        "#ttg.nvmma_shared<{{swizzlingByteWidth = {}, transposed = true, elementBitWidth = 16}}>"
    )
    text = (
        f"dtype f16\nbuffer align 1024\nlayout A = {encoding.format(32)} shape (64, 64)\n"
        "access rd = ld.shared.v4.b32 A(8 * (lane % 8), k) for k in 0..64\n"
        "check max_ways <= 2 rd\n"
    )
    statement, _ = suggested(text)
    assert statement == f"layout A = {encoding.format(64)} shape (64, 64)"
    assert_fixes(text, statement)


def test_an_access_written_by_a_thread_map_gets_a_suggestion_too():
    """specs/examples/triton_blocked_store.spec without its expectations: the column
    read's lanes come from a Triton blocked layout (register and warp variables,
    no `for` loops), and synthesis reads them from the thread map."""
    with open(os.path.join(SPECS, "examples", "triton_blocked_store.spec")) as f:
        lines = f.read().splitlines()
    text = "\n".join(
        line.replace(" expect refuted", "") for line in lines if "max_ways == 32" not in line
    )
    statement, detail = suggested(text)
    assert statement.startswith("layout P = ") and "'conflict_free col' is proved" in detail
    fixed = re.sub(r"(?m)^layout P = .*$", lambda _: statement, text, count=1)
    report = verify.check_text(fixed, name="fixed.spec")
    assert report.ok, str(report)


def test_a_suggestions_recheck_runs_under_the_callers_timeout(monkeypatch):
    timeouts = []
    recheck = suggest.run_spec

    def recording(spec, options=None, *rest):
        timeouts.append(options.seconds)
        return recheck(spec, options, *rest)

    monkeypatch.setattr(suggest, "run_spec", recording)
    text = ROWS.format(layout="(8,64):(64,1)")
    report = verify.check_text(text, name="t.spec", timeout=7)
    assert any(r.counterexample and r.counterexample.suggestion for r in report)
    assert timeouts and set(timeouts) == {7}
