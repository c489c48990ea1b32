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
    """Parameters, worst verdict, failing checks, and max-ways/wavefronts per access
    (`columns`: keyed so that a column means one access in every row)."""
    accesses = list(dict.fromkeys(a for row in sweep.rows for a in columns(sweep.outcome(row))))
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


def columns(outcome: Outcome) -> dict[str, tuple[int | None, int | None]]:
    """Max-ways and wavefronts of each access a check measured, under its column's
    name. A template's access is its name. A kernel's op (``conflict_free
    local_load %a_52``) is its source line and op, ``28:local_load``: SSA names
    change between configurations, the Python line does not; a line with two ops
    of one kind (a pipelined copy's prologue and loop) numbers them in order,
    ``28:async_copy_global_to_local#2``. A cp.async has wavefronts and no
    max-ways (shown ``-``)."""
    out: dict[str, tuple[int | None, int | None]] = {}
    named: dict[tuple[int, str], str] = {}  # (line, SSA name) -> its column
    for c in outcome.checks:
        if c.max_ways is None and c.wavefronts is None:
            continue
        words = c.text.split()
        if len(words) >= 3 and words[-1].startswith("%"):
            key = named.get((c.line, words[-1]))
            if key is None:
                key = _numbered(f"{c.line}:{words[-2]}", set(named.values()))
                named[c.line, words[-1]] = key
        else:
            key = words[-1]
        out.setdefault(key, (c.max_ways, c.wavefronts))
    return out


def _numbered(base: str, taken: set[str]) -> str:
    """`base`, or `base#2`, `base#3`, ... : the first not taken."""
    key, n = base, 1
    while key in taken:
        n += 1
        key = f"{base}#{n}"
    return key


def _cells(row: Row, outcome: Outcome, accesses: list[str], check_expect: bool) -> list[str]:
    figures = columns(outcome)
    failing = len(outcome.failing(check_expect)) + len(outcome.errors) + bool(outcome.internal)
    return [*row.values.values(), outcome.verdict.upper(), str(failing)] + [
        "/".join(NO_FIGURE if f is None else str(f) for f in figures[a])
        if a in figures
        else NO_FIGURE
        for a in accesses
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
