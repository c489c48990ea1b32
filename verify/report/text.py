"""Check results as text for people and as one JSON document for machines
(JUnit, SARIF and GitHub annotations are in `verify.report`)."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from verify.errors import SpecError
from verify.verdicts import Status

if TYPE_CHECKING:
    from verify.report.gate import Gate
    from verify.results import CheckResult, Counterexample, LaneRow

# The JSON document's version: raised when a field changes meaning or goes away.
JSON_SCHEMA_VERSION = 1

# A bijective check's onto fact in words (None: not decided).
_ONTO: dict[bool | None, str] = {True: "yes", False: "no"}


@dataclass(frozen=True)
class ErrorRecord:
    """One spec error as plain data, so it crosses process boundaries: where it
    is, what it says, and `text`, the compiler-style report with its source line."""

    file: str
    line: int
    col: int
    message: str
    text: str

    @classmethod
    def of(cls, error: SpecError) -> ErrorRecord:
        return cls(
            error.file or "<input>", error.pos.line, error.pos.col, error.message, str(error)
        )

    @property
    def header(self) -> str:
        """The first line, ``file:line:col: error: message``."""
        return self.text.splitlines()[0]


def ranges_text(values: Sequence[int]) -> str:
    """The one text of a set of integers: runs joined, [0,1,2,3,7] -> '0-3, 7'; '-'
    when empty (a lane with no words)."""
    out, vs = [], sorted(set(values))
    i = 0
    while i < len(vs):
        j = i
        while j + 1 < len(vs) and vs[j + 1] == vs[j] + 1:
            j += 1
        out.append(str(vs[i]) if i == j else f"{vs[i]}-{vs[j]}")
        i = j + 1
    return ", ".join(out) or "-"


def _instance_text(instance: dict[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in instance.items()) or "-"


def _rows_text(rows: tuple[LaneRow, ...]) -> list[str]:
    if not rows:
        return []
    table = [("lane", "coord", "address", "word", "bank")]
    for r in rows:
        lane = str(r.lane) if r.lane is not None else (r.label or "-")
        coord = "(" + ", ".join(map(str, r.coord)) + ")"
        table.append((lane, coord, str(r.address), ranges_text(r.words), ranges_text(r.banks)))
    widths = [max(len(row[i]) for row in table) for i in range(5)]
    return ["      " + "  ".join(c.rjust(w) for c, w in zip(row, widths)) for row in table]


def counterexample_text(cex: Counterexample) -> list[str]:
    lines = [f"    counterexample: {cex.summary}", f"    at: {_instance_text(cex.instance)}"]
    lines += _rows_text(cex.rows)
    lines += [f"    note: {n}" for n in cex.notes]
    lines += _explanation_text(cex.explanation)
    if cex.suggestion:
        layout, detail = cex.suggestion.split("\n", 1)
        lines.append(f"    suggestion: {layout}")
        lines += textwrap.wrap(
            detail, EXPLANATION_WIDTH, initial_indent=" " * 16, subsequent_indent=" " * 16
        )
    return lines


# Explanations are sentences; wrapped so a report stays readable in a terminal.
EXPLANATION_WIDTH = 100


def _explanation_text(explanation: tuple[tuple[str, str], ...]) -> list[str]:
    """Each sentence wrapped under its label ('why: ', 'fix: '), the label shown once."""
    lines, last = [], None
    for label, sentence in explanation:
        head = f"    {label}: " if label != last else " " * (len(label) + 6)
        lines += textwrap.wrap(
            sentence,
            EXPLANATION_WIDTH,
            initial_indent=head,
            subsequent_indent=" " * (len(label) + 6),
        )
        last = label
    return lines


def _figures(r: CheckResult) -> str:
    parts = []
    if r.max_ways is not None:
        bound = "" if r.facts.get("max_ways_exact", True) else ">="
        parts.append(f"max_ways {bound}{r.max_ways}")
    if r.wavefronts is not None:
        bound = "" if r.facts.get("wavefronts_exact", True) else ">="
        parts.append(f"wavefronts {bound}{r.wavefronts} (ideal {r.ideal_wavefronts})")
    if r.fidelity:
        parts.append(f"model: {r.fidelity}")
    if "cosize" in r.facts:
        f = r.facts
        cosize = "unknown" if f["cosize"] is None else f"{f['cosize']} elements"
        parts.append(
            f"size {f['size']}, cosize {cosize}, onto [0,size): "
            f"{_ONTO.get(f.get('onto'), 'unknown')}"
        )
    return "; ".join(parts)


def _instruction_text(r: CheckResult) -> list[str]:
    """The PTX instruction a failed access check is about, where its property names
    only the spec's access (a kernel's property names the opcode already); a passing
    check's line stays as it was."""
    instruction = r.facts.get("instruction")
    if not instruction or r.status == Status.PROVED or instruction in r.property:
        return []
    return [f"    instruction: {instruction}"]


def result_text(r: CheckResult, located: bool = True) -> list[str]:
    """The check's lines as the CLI prints them; `located=False` leaves out the
    `file:line: ` prefix (for a spec generated from Python values)."""
    head = f"{r.file}:{r.line}: " if located else ""
    head += f"{r.status.value.upper():8} {r.property}"
    if r.expect:
        head += " (as expected)" if r.matches_expectation else f" (EXPECTED {r.expect.upper()})"
    head += f"  [{r.seconds * 1000:.0f} ms{f', by {r.engine}' if r.engine else ''}]"
    lines = [head]
    figures = _figures(r)
    if figures:
        lines.append(f"    {figures}")
    if r.reason and r.status != Status.PROVED:
        lines.append(f"    reason: {r.reason}")
    lines += _explanation_text(tuple(("warning", w) for w in r.facts.get("warnings", ())))
    if r.counterexample:
        lines += counterexample_text(r.counterexample)
    return lines + _instruction_text(r)


def summary_counts(results: list[CheckResult], spec_errors: int = 0) -> dict[str, int]:
    """Checks by status, checks whose `expect` was not met, and spec errors."""
    counts = {s.value: sum(r.status == s for r in results) for s in Status}
    counts["expectation_mismatches"] = sum(r.matches_expectation is False for r in results)
    counts["spec_errors"] = spec_errors
    return counts


def counted(n: int, noun: str) -> str:
    """'1 check', '2 checks': a count and its noun, singular for one."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def summary_line(results: list[CheckResult], spec_errors: int = 0) -> str:
    c = summary_counts(results, spec_errors)
    line = (
        f"{counted(len(results), 'check')}: {c['proved']} proved, {c['refuted']} refuted, "
        f"{c['unknown']} unknown"
    )
    if c["expectation_mismatches"]:
        line += f"; {c['expectation_mismatches']} not as expected"
    if spec_errors:
        line += f"; {counted(spec_errors, 'spec error')}"
    return line


def default_gate(gate: Gate | None) -> Gate:
    """`gate`, or the default one: `expect` honoured, no baseline."""
    from verify.report.gate import Gate

    return gate if gate is not None else Gate()


def results_text(results: list[CheckResult], quiet: bool = False, gate: Gate | None = None) -> str:
    """Every check's lines (with `quiet`, only those the `gate` fails)."""
    gate = default_gate(gate)
    gate.judge(results)
    shown = [r for r in results if not quiet or gate.fails(r)]
    return "\n".join(line for r in shown for line in result_text(r))


def text_report(
    results: list[CheckResult], spec_errors: int = 0, quiet: bool = False, gate: Gate | None = None
) -> str:
    """Every check's lines (with `quiet`, only those the `gate` fails) and the summary."""
    checks = results_text(results, quiet, gate)
    summary = summary_line(results, spec_errors)
    return f"{checks}\n{summary}" if checks else summary


class Report(list):
    """The `CheckResult`s of a run, in order; `str()` is the CLI's text report."""

    @property
    def failures(self) -> list[CheckResult]:
        """Checks that did not end as their `expect` says (or, without one, proved)."""
        return [r for r in self if not r.passed]

    @property
    def ok(self) -> bool:
        return not self.failures

    def __str__(self) -> str:
        return text_report(self)


def _cex_json(cex: Counterexample | None):
    if cex is None:
        return None
    return {
        "summary": cex.summary,
        "instance": cex.instance,
        "notes": list(cex.notes),
        "explanation": [{"label": label, "text": text} for label, text in cex.explanation],
        "suggestion": _suggestion_json(cex.suggestion),
        "lanes": [
            {
                "lane": r.lane,
                "label": r.label or None,
                "coord": list(r.coord),
                "address": r.address,
                "words": list(r.words),
                "banks": list(r.banks),
            }
            for r in cex.rows
        ],
    }


def _suggestion_json(suggestion: str):
    if not suggestion:
        return None
    layout, detail = suggestion.split("\n", 1)
    return {"layout": layout, "detail": detail}


def result_json(r: CheckResult) -> dict:
    return {
        "spec": r.file,
        "line": r.line,
        "property": r.property,
        "status": r.status.value,
        "expect": r.expect,
        "implicit": r.implicit,
        "max_ways": r.max_ways,
        "wavefronts": r.wavefronts,
        "ideal_wavefronts": r.ideal_wavefronts,
        "model_fidelity": r.fidelity,
        "engine": r.engine or None,
        "wall_seconds": round(r.seconds, 6),
        "solver_seconds": round(r.solver_seconds, 6),
        "facts": r.facts,
        "reason": r.reason or None,
        "counterexample": _cex_json(r.counterexample),
        "ok": r.matches_expectation,
    }


def json_report(
    results: list[CheckResult], errors: Sequence[ErrorRecord] = (), gate: Gate | None = None
) -> str:
    """One document; each error is its ``file:line:col: error: ...`` line (the
    source excerpt is for people). Each check's ``level`` is what the `gate`
    makes of it, as every format shows it: ``error`` and ``warning`` fail the
    run, ``notice`` is a failure a baseline accepts, null a pass."""
    gate = default_gate(gate)
    gate.judge(results)
    doc = {
        "schema_version": JSON_SCHEMA_VERSION,
        "checks": [{**result_json(r), "level": gate.level(r)} for r in results],
        "errors": [e.header for e in errors],
        "summary": summary_counts(results, len(errors)),
    }
    return json.dumps(doc, indent=2)


def by_file(results: list[CheckResult], errors: list[ErrorRecord]):
    """[(file, its results, its errors)] in the order files first appear."""
    files: dict[str, tuple[list, list]] = {}
    for r in results:
        files.setdefault(r.file, ([], []))[0].append(r)
    for e in errors:
        files.setdefault(e.file, ([], []))[1].append(e)
    return [(file, found, failed) for file, (found, failed) in files.items()]
