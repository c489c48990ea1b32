"""The in-memory Python API: specs as text, layouts as Python values (text or
pycute objects), typed results whose str() is the CLI's text, and the
`verify.testing` assertions whose message is the counterexample."""

import os

import pytest
from click.testing import CliRunner
from conftest import ROOT, SPECS
from test_cli import normalise

import verify
from verify.cli import main
from verify.testing import assert_bijective, assert_conflict_free

pycute = pytest.importorskip("pycute")

PLAIN = os.path.join("specs", "seed", "ldmatrix_x1_8x64_plain.spec")
ROW_READ = "ldmatrix.x1 L(lane, 8 * q) for q in 0..8"


def test_check_text_reports_as_the_cli_does(monkeypatch):
    monkeypatch.chdir(ROOT)
    with open(PLAIN) as f:
        report = verify.check_text(f.read(), name=PLAIN)
    cli = CliRunner().invoke(main, [PLAIN]).output
    assert normalise(str(report) + "\n") == normalise(cli)
    assert isinstance(report, verify.Report) and isinstance(report[0], verify.CheckResult)
    refuted = str(report[3])
    assert refuted.startswith(f"{PLAIN}:13: REFUTED  conflict_free rd (as expected)")
    assert normalise(refuted) in normalise(cli)


def test_report_lists_checks_that_did_not_end_as_expected():
    report = verify.check_text(
        "dtype f16\nlayout A = (_8,_64):(_64,_1)\n"
        f"access rd = {ROW_READ.replace('L(', 'A(')}\n"
        "check conflict_free rd\ncheck max_ways == 8 rd expect refuted\n"
    )
    assert [r.property for r in report.failures] == ["conflict_free rd", "max_ways == 8 rd"]
    assert not report.ok


def test_check_text_errors_name_the_given_file_and_show_the_line():
    with pytest.raises(verify.SpecError) as e:
        verify.check_text("dtype f16\naccess r = ldmatrix.x1 B(lane, 0)\n", name="mine.spec")
    assert str(e.value).startswith("mine.spec:2:24: error: unknown layout 'B'")
    assert " 2 | access r = ldmatrix.x1 B(lane, 0)" in str(e.value)


@pytest.mark.parametrize(
    "value,text",
    [
        (pycute.Layout((8, 64), (64, 1)), "(8,64):(64,1)"),
        (pycute.Layout(((8, 8), 64), ((64, 512), 1)), "((8,8),64):((64,512),1)"),
        (pycute.Layout(32), "32:1"),
        (pycute.Swizzle(3, 4, -3), "Sw<3,4,-3>"),
        (
            pycute.ComposedLayout(pycute.Swizzle(3, 3, 3), 0, pycute.Layout((8, 64), (64, 1))),
            "Sw<3,3,3> o 0 o (8,64):(64,1)",
        ),
        ("Sw<2,3,3> o (8,32):(32,1)", "Sw<2,3,3> o (8,32):(32,1)"),
    ],
)
def test_pycute_objects_become_verify_notation(value, text):
    assert verify.notation(value) == text


def test_a_pycute_layout_gets_the_offsets_pycute_gives():
    layout = pycute.ComposedLayout(pycute.Swizzle(3, 3, 3), 0, pycute.Layout((8, 64), (64, 1)))
    assert verify.offsets(verify.notation(layout)) == [layout(i) for i in range(512)]


def test_notation_refuses_other_values():
    with pytest.raises(TypeError, match="expected a layout as text or a pycute Layout"):
        verify.notation(3.5)


def test_check_layout_checks_a_pycute_layout_with_accesses_and_checks():
    swizzled = pycute.ComposedLayout(pycute.Swizzle(3, 3, 3), 0, pycute.Layout((8, 64), (64, 1)))
    report = verify.check_layout(
        swizzled,
        {"rd": ROW_READ},
        ["bijective L", "conflict_free rd", "max_ways <= 2 rd"],
        dtype="f16",
        align=128,
    )
    assert [(r.property, r.status.value) for r in report] == [
        ("in_bounds rd", "proved"),
        ("aligned 16 rd", "proved"),
        ("bijective L", "proved"),
        ("conflict_free rd", "proved"),
        ("max_ways <= 2 rd", "proved"),
    ]
    assert report.ok and str(report).endswith("5 checks: 5 proved, 0 refuted, 0 unknown")


def test_layout_spec_writes_one_statement_a_line():
    text = verify.layout_spec(
        "B(r in 0..8, c in 0..64) = 64*r + c",
        {"rd": ROW_READ},
        ["conflict_free rd expect refuted"],
        dtype="half",
        align=128,
        stages=2,
        stage_bytes=1024,
    )
    assert text == (
        "dtype half\nbuffer align 128 stages 2 stage_bytes 1024\n"
        "layout L(r in 0..8, c in 0..64) = 64*r + c\n"
        f"access rd = {ROW_READ}\ncheck conflict_free rd expect refuted\n"
    )


def test_check_layout_takes_a_triton_encoding_with_its_shape():
    encoding = "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>"
    report = verify.check_layout(encoding, None, ["bijective L"], shape=(64, 64), dtype="f16")
    assert [r.status.value for r in report] == ["proved"]


def test_assertions_pass_quietly_on_a_swizzled_tile():
    assert_bijective("Sw<3,3,3> o (8,64):(64,1)", dtype="f16")
    assert_conflict_free(
        pycute.ComposedLayout(pycute.Swizzle(3, 3, 3), 0, pycute.Layout((8, 64), (64, 1))),
        ROW_READ,
        dtype="f16",
        align=128,
    )


def test_assert_conflict_free_fails_with_the_counterexample():
    with pytest.raises(AssertionError) as e:
        assert_conflict_free("(8,64):(64,1)", ROW_READ, dtype="f16", align=128)
    message = str(e.value)
    assert message.startswith("REFUTED  conflict_free access")
    assert (
        "counterexample: ldmatrix.x1: lanes 0-7 hit banks 0-3 with 8 distinct words: 8-way"
        in message
    )
    assert "<layout>" not in message


def test_assert_conflict_free_fails_on_a_misaligned_access():
    with pytest.raises(AssertionError, match="REFUTED  aligned 16 access"):
        assert_conflict_free("(8,65):(65,1)", ROW_READ, dtype="f16", align=128)


def test_assert_bijective_fails_with_the_shared_offset():
    with pytest.raises(AssertionError) as e:
        assert_bijective(pycute.Layout((8, 8), (1, 4)), dtype="f32")
    assert "counterexample: layout L: coordinates (0, 1) and (4, 0) share memory" in str(e.value)


def test_a_spec_reads_the_same_from_text_as_from_its_file():
    path = os.path.join(SPECS, "seed", "ldmatrix_x1_8x64_swizzled.spec")
    with open(path) as f:
        from_text = verify.check_text(f.read(), name=path)
    assert [(r.line, r.property, r.status) for r in from_text] == [
        (r.line, r.property, r.status) for r in verify.check(path)
    ]
