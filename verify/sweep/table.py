"""A sweep as text: one row per combination, then the failing configurations.

Nothing here depends on where or when an answer was computed (no times, no
engine, no cache), so one sweep gives the same text on any machine or cluster.
"""

from __future__ import annotations

import json

from verify.sweep import Row, Sweep
from verify.sweep.question import SEVERITY, Outcome

NO_FIGURE = "-"
# The sweep document's own version: bumped when a field changes meaning or goes away.
JSON_SCHEMA_VERSION = 1


def table(sweep: Sweep, check_expect: bool = False) -> str:
    """Parameters, worst verdict, failing checks, and max-ways/wavefronts per access."""
    accesses = list(dict.fromkeys(a for row in sweep.rows for a in sweep.outcome(row).figures()))
    header = (
        [p.name for p in sweep.params] + ["verdict", "failing"] + [f"{a} ways/wf" for a in accesses]
    )
    lines = [header] + [
        _cells(row, sweep.outcome(row), accesses, check_expect) for row in sweep.rows
    ]
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    out = ["  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip() for line in lines]
    out.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(out)


def _cells(row: Row, outcome: Outcome, accesses: list[str], check_expect: bool) -> list[str]:
    figures = outcome.figures()
    failing = len(outcome.failing(check_expect)) + len(outcome.errors) + bool(outcome.internal)
    return [*row.values.values(), outcome.verdict.upper(), str(failing)] + [
        "/".join(map(str, figures[a])) if a in figures else NO_FIGURE for a in accesses
    ]


def failures(sweep: Sweep, check_expect: bool = False) -> str:
    """Each failing configuration with what failed and why; '' when none fails."""
    lines = []
    for row in sweep.rows:
        if sweep.outcome(row).fails(check_expect):
            lines.append(", ".join(f"{k}={v}" for k, v in row.values.items()) + ":")
            lines += _why(sweep.template, sweep.outcome(row), check_expect)
    return "\n".join(["failing configurations:", *lines] if lines else [])


def _why(path: str, outcome: Outcome, check_expect: bool) -> list[str]:
    if outcome.internal:
        return [f"  internal error (a bug in verify, please report it): {outcome.internal}"]
    lines = ["  " + line for error in outcome.errors for line in error.splitlines()]
    for check in outcome.failing(check_expect):
        expected = f" (EXPECTED {check.expect.upper()})" if check_expect and check.expect else ""
        lines.append(f"  {path}:{check.line}: {check.status.upper()} {check.text}{expected}")
        if check.why:
            lines.append(f"    {check.why}")
    return lines


def summary(sweep: Sweep, check_expect: bool = False) -> str:
    failing = sum(outcome.fails(check_expect) for outcome in sweep.outcomes())
    return (
        f"{_count(len(sweep.rows), 'configuration')}, "
        f"{_count(sweep.distinct, 'distinct question')} "
        f"({sweep.cached} from the cache, {len(sweep.to_ask)} checked): "
        f"{len(sweep.rows) - failing} pass, {failing} fail"
    )


def _count(n: int, thing: str) -> str:
    return f"{n} {thing}{'s' if n != 1 else ''}"


def json_doc(sweep: Sweep, check_expect: bool = False) -> str:
    """One JSON document: a configuration per combination, in the table's order,
    and the summary's counts. `cached` says whether the answer came from the cache."""
    outcomes = sweep.outcomes()
    failing = sum(outcome.fails(check_expect) for outcome in outcomes)
    doc = {
        "schema_version": JSON_SCHEMA_VERSION,
        "template": sweep.template,
        "parameters": [p.name for p in sweep.params],
        "configurations": [_configuration(sweep, row, check_expect) for row in sweep.rows],
        "summary": {
            "configurations": len(sweep.rows),
            "distinct_questions": sweep.distinct,
            "from_cache": sweep.cached,
            "checked": len(sweep.to_ask),
            "pass": len(sweep.rows) - failing,
            "fail": failing,
            "verdicts": {v: sum(o.verdict == v for o in outcomes) for v in SEVERITY},
        },
    }
    return json.dumps(doc, indent=2)


def _configuration(sweep: Sweep, row: Row, check_expect: bool) -> dict:
    outcome = sweep.outcome(row)
    return {
        "parameters": dict(row.values),
        "verdict": outcome.verdict,
        "fails": outcome.fails(check_expect),
        "cached": row.question in sweep.from_cache,
        "checks": [
            {
                "line": c.line,
                "check": c.text,
                "status": c.status,
                "expect": c.expect,
                "ok": not c.fails(check_expect),
                "max_ways": c.max_ways,
                "wavefronts": c.wavefronts,
                "why": c.why,
            }
            for c in outcome.checks
        ],
        "errors": list(outcome.errors),
        "internal_error": outcome.internal or None,
    }
