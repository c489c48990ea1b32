"""GitHub workflow commands, each at its spec line, then the summary line: one
``::error`` annotation per check that fails (`verify.report.gate`: by default,
one that did not end as its `expect` says) and per spec error, a ``::warning``
per unknown check (nothing was proved, nothing refuted), and a ``::notice`` per
failure a baseline accepts."""

from __future__ import annotations

from typing import TYPE_CHECKING

from verify.report.text import ErrorRecord, default_gate, result_text, summary_line

if TYPE_CHECKING:
    from verify.report.gate import Gate
    from verify.results import CheckResult


def github_report(
    results: list[CheckResult], errors: list[ErrorRecord], gate: Gate | None = None
) -> str:
    gate = default_gate(gate)
    gate.judge(results)
    lines = [_check_annotation(r, level) for r in results if (level := gate.level(r))]
    lines += [
        _annotation("error", e.file, e.line, "verify: spec error", e.message, e.col) for e in errors
    ]
    lines.append(summary_line(results, len(errors)))
    return "\n".join(lines)


def _check_annotation(r: CheckResult, level: str) -> str:
    return _annotation(
        level, r.file, r.line, f"verify: {r.property}", "\n".join(result_text(r, located=False))
    )


def _annotation(level: str, file: str, line: int, title: str, message: str, col: int = 0) -> str:
    where = f"file={_property(file)},line={line}" + (f",col={col}" if col else "")
    return f"::{level} {where},title={_property(title)}::{_data(message)}"


def _data(text: str) -> str:
    """A command's message: GitHub's escaping keeps '%' and line breaks literal."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    """A command property's value: ':' and ',' also separate properties."""
    return _data(text).replace(":", "%3A").replace(",", "%2C")
