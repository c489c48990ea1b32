"""verify --baseline FILE / --update-baseline: fail when a figure is worse than
recorded (max-ways, wavefronts higher or gone, a proof turned unknown or
refuted), pass otherwise, whatever the verdicts themselves."""

import json

import pytest
from click.testing import CliRunner

from verify.cli import main


def tile(pitch: int, extra: str = "") -> str:
    """A 8x64 f16 tile of row pitch `pitch` read by rows: pitch 72 is conflict-free,
    64 is 8-way, 65 misaligns the rows."""
    return (
        f"dtype f16\nbuffer align 128\nlayout A = (_8,_64):(_{pitch},_1)\n{extra}"
        "access rd = ldmatrix.x1 A(lane, 8 * q) for q in 0..8\n"
        "check max_ways <= 8 rd\ncheck bijective A\n"
    )


@pytest.fixture
def repo(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "tile.spec").write_text(tile(72))
    return tmp_path


def run(*args):
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.output


def record(checks: int = 4):
    code, out = run("specs", "--baseline", "base.json", "--update-baseline")
    assert code == 0 and f"wrote baseline base.json: {checks} checks" in out


def test_update_writes_each_checks_status_and_figures(repo):
    record()
    doc = json.loads((repo / "base.json").read_text())
    assert doc["schema_version"] == 1
    assert {
        (c["property"], c["status"], c["max_ways"], c["wavefronts"]) for c in doc["checks"]
    } == {
        ("in_bounds rd", "proved", None, None),
        ("aligned 16 rd", "proved", None, None),
        ("max_ways <= 8 rd", "proved", 1, 1),
        ("bijective A", "proved", None, None),
    }


def test_an_unchanged_run_passes_even_with_refuted_checks(repo):
    (repo / "specs" / "tile.spec").write_text(tile(64).replace("<= 8", "<= 2"))
    record()
    code, out = run("specs", "--baseline", "base.json")
    assert code == 0, out
    assert "baseline base.json: 4 checks compared, none worse" in out


def test_higher_max_ways_and_wavefronts_fail_with_a_list(repo):
    record()
    (repo / "specs" / "tile.spec").write_text(tile(64))
    code, out = run("specs", "--baseline", "base.json")
    assert code == 1
    assert "baseline base.json: 2 worse than recorded:" in out
    assert "  specs/tile.spec:5: max_ways <= 8 rd: max_ways 1 -> 8" in out
    assert "  specs/tile.spec:5: max_ways <= 8 rd: wavefronts 1 -> 8" in out


def test_a_proof_turned_refuted_and_a_figure_gone_fail(repo):
    record()
    (repo / "specs" / "tile.spec").write_text(tile(65))
    code, out = run("specs", "--baseline", "base.json")
    assert code == 1
    assert "specs/tile.spec:4: aligned 16 rd: proved -> refuted" in out
    assert "specs/tile.spec:5: max_ways <= 8 rd: max_ways 1 -> none (refuted:" in out


def test_a_proof_turned_unknown_fails(repo):
    record()
    code, out = run("specs", "--baseline", "base.json", "--engine", "z3", "--timeout", "0.001")
    assert code == 1
    assert "max_ways <= 8 rd: proved -> unknown" in out


def test_better_figures_pass_and_are_counted(repo):
    (repo / "specs" / "tile.spec").write_text(tile(64))
    record()
    (repo / "specs" / "tile.spec").write_text(tile(72))
    code, out = run("specs", "--baseline", "base.json")
    assert code == 0
    assert "none worse; 2 better (--update-baseline records them)" in out


def test_a_moved_check_keeps_its_record(repo):
    record()
    (repo / "specs" / "tile.spec").write_text("# moved down\n\n" + tile(72))
    code, out = run("specs", "--baseline", "base.json")
    assert code == 0 and "4 checks compared, none worse" in out


def test_checks_not_recorded_are_judged_on_their_own(repo):
    record()
    (repo / "specs" / "tile.spec").write_text(tile(72) + "check max_ways == 2 rd\n")
    code, out = run("specs", "--baseline", "base.json")
    assert code == 1
    assert "none worse" in out and "1 check not recorded, judged on their own" in out


def test_update_keeps_the_records_of_specs_not_run(repo):
    (repo / "specs" / "other.spec").write_text(tile(64))
    record(8)
    (repo / "specs" / "tile.spec").write_text(tile(72) + "check max_ways == 1 rd\n")
    assert run("specs/tile.spec", "--baseline", "base.json", "--update-baseline")[0] == 0
    doc = json.loads((repo / "base.json").read_text())
    assert sorted({c["spec"] for c in doc["checks"]}) == ["specs/other.spec", "specs/tile.spec"]
    assert len(doc["checks"]) == 9


def test_a_json_report_reads_as_a_baseline(repo):
    (repo / "report.json").write_text(run("specs", "--format", "json")[1])
    (repo / "specs" / "tile.spec").write_text(tile(64))
    code, out = run("specs", "--baseline", "report.json")
    assert code == 1 and "max_ways 1 -> 8" in out


def test_baseline_usage_errors_exit_2(repo):
    code, out = run("specs", "--baseline", "missing.json")
    assert code == 2 and "no baseline at missing.json: record one with --update-baseline" in out
    code, out = run("specs", "--update-baseline")
    assert code == 2 and "--update-baseline needs --baseline FILE.json" in out
    (repo / "junk.json").write_text("[1, 2]")
    code, out = run("specs", "--baseline", "junk.json")
    assert code == 2 and "expected a JSON object with a 'checks' list" in out


def test_no_baseline_is_written_from_specs_with_errors(repo):
    (repo / "specs" / "bad.spec").write_text("dtype f16\naccess r = ldmatrix.x1 B(lane, 0)\n")
    code, out = run("specs", "--baseline", "base.json", "--update-baseline")
    assert code == 2 and "baseline base.json not written: 1 spec error" in out
    assert not (repo / "base.json").exists()
