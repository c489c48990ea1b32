"""Output formats of `verify check`: JSON's version, per-check `ok` and summary
counts, the text summary, --quiet, JUnit XML, SARIF 2.1.0 (validated against the
official schema) and GitHub workflow annotations."""

import json
import os

import jsonschema
import pytest
from click.testing import CliRunner
from conftest import ROOT
from junitparser import Error, Failure, JUnitXml

from verify.cli import main

SCHEMA = os.path.join(ROOT, "tests", "data", "sarif-schema-2.1.0.json")
# Line 5 passes (refuted as expected), 6 fails (refuted, no expect), 7 misses its
# expect (proved, expected refuted), 8 passes.
TILE = """dtype f16
buffer align 128
layout A = (_8,_64):(_64,_1)
access rd = ldmatrix.x1 A(lane, 8 * q) for q in 0..8
check conflict_free rd expect refuted
check max_ways <= 2 rd
check bijective A expect refuted
check max_ways == 8 rd
"""
BAD = "dtype f16\naccess r = ldmatrix.x1 B(lane, 0)\n"


@pytest.fixture
def specs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "tile.spec").write_text(TILE)
    (tmp_path / "specs" / "bad.spec").write_text(BAD)
    return tmp_path


def run(*args):
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.output


def stdout_of(*args):
    """Exit status and standard output alone (click >= 8.2 keeps stderr apart)."""
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout


def test_json_has_a_version_per_check_ok_and_the_new_counts(specs):
    code, out = stdout_of("specs", "--format", "json")
    doc = json.loads(out)
    assert code == 2 and doc["schema_version"] == 1
    ok = {c["line"]: c["ok"] for c in doc["checks"] if not c["implicit"]}
    assert ok == {5: True, 6: None, 7: False, 8: None}
    assert doc["summary"] == {
        "proved": 4,
        "refuted": 2,
        "unknown": 0,
        "expectation_mismatches": 1,
        "spec_errors": 1,
    }
    assert doc["errors"] == [
        "specs/bad.spec:2:24: error: unknown layout 'B': expected a layout the spec "
        "defines, and it defines none"
    ]


def test_json_flag_is_format_json(specs):
    def shape(out):  # timings vary between runs
        return [(c["line"], c["property"], c["status"]) for c in json.loads(out)["checks"]]

    assert shape(stdout_of("specs/tile.spec", "--json")[1]) == shape(
        stdout_of("specs/tile.spec", "--format", "json")[1]
    )
    code, out = run("specs/tile.spec", "--json", "--format", "sarif")
    assert code == 2 and "--json asks for --format json, found --format sarif" in out


def test_text_summary_counts_mismatches_and_spec_errors(specs):
    code, out = run("specs")
    assert out.rstrip().endswith(
        "6 checks: 4 proved, 2 refuted, 0 unknown; 1 not as expected; 1 spec error"
    )


def test_quiet_lists_only_the_checks_that_did_not_pass(specs):
    code, out = stdout_of("specs/tile.spec", "--quiet")
    heads = [line for line in out.splitlines() if line.startswith("specs/")]
    assert [h.split("  [")[0] for h in heads] == [
        "specs/tile.spec:6: REFUTED  max_ways <= 2 rd",
        "specs/tile.spec:7: PROVED   bijective A (EXPECTED REFUTED)",
    ]
    assert "counterexample: ldmatrix.x1" in out
    assert out.rstrip().endswith("6 checks: 4 proved, 2 refuted, 0 unknown; 1 not as expected")


def test_junit_has_a_testcase_per_check_and_spec_errors_as_errors(specs):
    code, out = stdout_of("specs", "--format", "junit")
    assert code == 2
    xml = JUnitXml.fromstring(out.encode())
    suites = {suite.name: suite for suite in xml}
    tile, bad = suites["specs/tile.spec"], suites["specs/bad.spec"]
    assert (tile.tests, tile.failures, tile.errors) == (6, 2, 0)
    assert (bad.tests, bad.failures, bad.errors) == (1, 0, 1)
    cases = {case.name: case for case in tile}
    assert set(cases) == {
        "in_bounds rd [line 4]",
        "aligned 16 rd [line 4]",
        "conflict_free rd [line 5]",
        "max_ways <= 2 rd [line 6]",
        "bijective A [line 7]",
        "max_ways == 8 rd [line 8]",
    }
    failure = cases["max_ways <= 2 rd [line 6]"].result[0]
    assert isinstance(failure, Failure) and failure.type == "refuted"
    assert "counterexample: ldmatrix.x1: lanes 0-7 hit banks 0-3" in failure.text
    assert cases["conflict_free rd [line 5]"].is_passed
    assert cases["in_bounds rd [line 4]"].classname == "specs.tile"
    error = next(iter(bad)).result[0]
    assert isinstance(error, Error) and "unknown layout 'B'" in error.message
    assert " 2 | access r = ldmatrix.x1 B(lane, 0)" in error.text


def sarif_of(*args):
    code, out = stdout_of(*args, "--format", "sarif")
    return code, json.loads(out)


def test_sarif_is_valid_against_the_official_2_1_0_schema(specs):
    with open(SCHEMA) as f:
        schema = json.load(f)
    code, log = sarif_of("specs")
    jsonschema.validators.validator_for(schema)(schema).validate(log)
    assert code == 2 and log["version"] == "2.1.0"


def test_sarif_results_are_the_failures_at_their_spec_lines(specs):
    code, log = sarif_of("specs")
    run_ = log["runs"][0]
    rules = [rule["id"] for rule in run_["tool"]["driver"]["rules"]]
    found = [
        (
            r["ruleId"],
            r["level"],
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            r["locations"][0]["physicalLocation"]["region"]["startLine"],
        )
        for r in run_["results"]
    ]
    assert found == [
        ("verify/max_ways", "error", "specs/tile.spec", 6),
        ("verify/bijective", "error", "specs/tile.spec", 7),
        ("verify/spec_error", "error", "specs/bad.spec", 2),
    ]
    assert all(rules[r["ruleIndex"]] == r["ruleId"] for r in run_["results"])
    assert "counterexample: ldmatrix.x1" in run_["results"][0]["message"]["text"]
    assert run_["results"][2]["locations"][0]["physicalLocation"]["region"]["startColumn"] == 24
    assert run_["invocations"][0]["executionSuccessful"] is False


def test_sarif_rule_ids_and_fingerprints_stay_when_a_check_moves(specs):
    _, before = sarif_of("specs/tile.spec")
    (specs / "specs" / "tile.spec").write_text("# a new first line\n" + TILE)
    _, after = sarif_of("specs/tile.spec")

    def keys(log):
        return [(r["ruleId"], r["partialFingerprints"]) for r in log["runs"][0]["results"]]

    assert keys(before) == keys(after)
    assert [r["id"] for r in before["runs"][0]["tool"]["driver"]["rules"]] == [
        r["id"] for r in after["runs"][0]["tool"]["driver"]["rules"]
    ]
    assert len({json.dumps(fp) for _, fp in keys(before)}) == 2


def test_sarif_of_a_passing_run_has_no_results(specs):
    code, log = sarif_of(os.path.join(ROOT, "specs", "seed", "ldmatrix_x1_8x64_swizzled.spec"))
    assert code == 0 and log["runs"][0]["results"] == []


def test_github_annotations_are_escaped_workflow_commands(specs):
    code, out = stdout_of("specs", "--format", "github")
    lines = out.splitlines()
    assert code == 2 and len(lines) == 4
    assert lines[0].startswith(
        "::error file=specs/tile.spec,line=6,title=verify%3A max_ways <= 2 "
        "rd::REFUTED  max_ways <= 2 rd"
    )
    assert "%0A    counterexample: ldmatrix.x1" in lines[0] and "\n" not in lines[0]
    assert lines[1].startswith("::error file=specs/tile.spec,line=7,title=verify%3A bijective A::")
    assert lines[2].startswith(
        "::error file=specs/bad.spec,line=2,col=24,title=verify%3A spec error::unknown layout 'B'"
    )
    assert lines[3] == "6 checks: 4 proved, 2 refuted, 0 unknown; 1 not as expected; 1 spec error"


def test_an_unknown_check_is_a_warning_annotation(tmp_path):
    spec = tmp_path / "slow.spec"
    spec.write_text(
        "dtype f32\nlayout A = (_32,_32):(_33,_1)\n"
        "access col = ld.shared.b32 A(lane, c) for c in 0..32\n"
        "check conflict_free col\n"
    )
    code, out = stdout_of(str(spec), "--timeout", "0.001", "--engine", "z3", "--format", "github")
    assert code == 3
    assert any(
        line.startswith("::warning file=") and "title=verify%3A conflict_free col" in line
        for line in out.splitlines()
    )
