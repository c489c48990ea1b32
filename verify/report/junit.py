"""JUnit XML, as CI dashboards read it (Jenkins, GitLab, GitHub test reporters):
one testsuite per spec file, one testcase per check, a failure for a check the
gate fails (`verify.report.gate`: by default, one that did not end as its
`expect` says; an unknown one included: it proved nothing), and an error
testcase per spec error. A failure a baseline accepts passes, its report in the
testcase's system-out. Written with junitparser."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from junitparser import Attr, Error, Failure, IntAttr, JUnitXml, TestCase, TestSuite

from verify.report.text import ErrorRecord, by_file, default_gate, result_text

if TYPE_CHECKING:
    from verify.report.gate import Gate
    from verify.results import CheckResult


class SpecCase(TestCase):
    """A testcase with the `file` and `line` attributes pytest writes, which
    reporters use to annotate the source."""

    file = Attr()
    line = IntAttr()


def junit_report(
    results: list[CheckResult], errors: list[ErrorRecord], gate: Gate | None = None
) -> str:
    gate = default_gate(gate)
    gate.judge(results)
    xml = JUnitXml("verify")
    for file, found, failed in by_file(results, errors):
        suite = TestSuite(file)
        for r in found:
            suite.add_testcase(_check_case(r, gate.level(r)))
        for e in failed:
            suite.add_testcase(_error_case(e))
        suite.update_statistics()
        xml.add_testsuite(suite)
    xml.update_statistics()
    return '<?xml version="1.0" encoding="utf-8"?>\n' + xml.tostring().decode("utf-8")


def _case(name: str, file: str, line: int, seconds: float = 0.0) -> SpecCase:
    case = SpecCase(name, classname=class_name(file), time=round(seconds, 6))
    case.file, case.line = file, line
    return case


def _check_case(r: CheckResult, level: str | None) -> SpecCase:
    case = _case(f"{r.property} [line {r.line}]", r.file, r.line, r.seconds)
    if level == "notice":
        case.system_out = "accepted by the baseline:\n" + "\n".join(result_text(r))
    elif level:
        lines = result_text(r)
        failure = Failure(message=lines[0], type_=r.status.value)
        failure.text = "\n".join(lines)
        case.result = [failure]
    return case


def _error_case(e: ErrorRecord) -> SpecCase:
    case = _case(f"spec error [line {e.line}]", e.file, e.line)
    error = Error(message=e.header, type_="SpecError")
    error.text = e.text
    case.result = [error]
    return case


def class_name(path: str) -> str:
    """`specs/seed/f32_32x32_column.spec` -> `specs.seed.f32_32x32_column`: dashboards
    split class names at dots into packages, so the path's own dots would misplace it."""
    stem = os.path.splitext(os.path.normpath(path))[0]
    return ".".join(part.replace(".", "_") for part in stem.split(os.sep) if part not in ("", "."))
