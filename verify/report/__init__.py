"""Every output format of `verify check`: text and JSON (`verify.report.text`),
JUnit XML for CI dashboards, SARIF 2.1.0 for code scanning, and GitHub workflow
annotations. Each renders the same results and spec errors, and shows as
failing what the run's `verify.report.gate.Gate` fails: the rule the exit
status follows."""

from __future__ import annotations

from typing import TYPE_CHECKING

from verify.report.text import ErrorRecord, json_report, text_report

if TYPE_CHECKING:
    from verify.report.gate import Gate
    from verify.results import CheckResult

FORMATS = ("text", "json", "junit", "sarif", "github")


def render(
    fmt: str,
    results: list[CheckResult],
    errors: list[ErrorRecord],
    quiet: bool = False,
    gate: Gate | None = None,
) -> str:
    """The document for `fmt`. Text leaves the errors out (the CLI prints them to
    stderr as each file is checked) but counts them; `quiet` keeps only the
    checks the `gate` fails in the text (the other formats are whole documents,
    annotating what it fails and, as notices, what a baseline accepts)."""
    if fmt == "text":
        return text_report(results, len(errors), quiet, gate)
    if fmt == "json":
        return json_report(results, errors, gate)
    if fmt == "junit":
        from verify.report.junit import junit_report

        return junit_report(results, errors, gate)
    if fmt == "sarif":
        from verify.report.sarif import sarif_report

        return sarif_report(results, errors, gate)
    if fmt == "github":
        from verify.report.github import github_report

        return github_report(results, errors, gate)
    raise ValueError(f"unknown format {fmt!r}: expected one of {', '.join(FORMATS)}")
