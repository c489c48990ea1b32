"""`verify synth`'s report: text for people, JSON for tools.

Overview
--------
The text names the problem and family, the best layout with its figures, every
notation of it, whether it is proved optimal and by what (the solver's UNSAT
queries, or the exhaustive table summarised by its best rows), then the whole
re-checked spec's report. JSON carries the same, with at least ``layout``,
``family``, ``max_ways``, ``wavefronts`` and ``optimal``.

Worked example
--------------
``verify synth specs/synth/ldmatrix_x1_8x64.synth --json`` prints
``{"layout": "Sw<3,3,3> o (8,64):(64,1)", "family": "sw", "max_ways": 1,
"wavefronts": 8, "optimal": true, ...}``.
"""

from __future__ import annotations

import json

from verify.report.text import result_json, text_report
from verify.synth.certificate import Certificate
from verify.synth.problem import Problem
from verify.synth.search import Answer

# Rows of an enumerated family's table shown in the text report (JSON has all).
SHOWN_ROWS = 5


def _ranked(answer: Answer) -> list:
    feasible = [r for r in answer.rows if r.score.feasible]
    return sorted(feasible, key=lambda r: r.score.objective.key())


def _evidence_lines(answer: Answer) -> list[str]:
    if answer.method == "solver":
        return [
            f"  {s.query}: {s.answer.upper()} [{1000 * s.seconds:.0f} ms]" for s in answer.steps
        ]
    ranked = _ranked(answer)
    lines = [
        f"  {len(answer.rows)} members evaluated, {len(ranked)} meet every hard "
        f"constraint; best first (max_ways, wavefronts, footprint, xor terms):"
    ]
    for row in ranked[:SHOWN_ROWS]:
        lines.append(f"    {row.score.objective.key()}  {row.notation}")
    return lines


def _contender_lines(answer: Answer) -> list[str]:
    """--family all: each family's best figures, the winner marked."""
    if not answer.contenders:
        return []
    lines = [
        f"won by family {answer.family} over (max_ways, wavefronts, footprint, "
        "xor terms; * proved optimal in its family):"
    ]
    for family, a in answer.contenders.items():
        lines.append(f"  {family}: {_figures(a)}{' *' if a.optimal else ''}")
    return lines


def _figures(answer: Answer) -> str:
    if answer.objective:
        return str(answer.objective.key())
    if answer.dominated:
        return "none better than the families before it (UNSAT)"
    return "no feasible member"


def _problem_line(problem: Problem, answer: Answer) -> str:
    u = problem.unknown
    accesses = ", ".join(
        f"{a.name} ({a.instruction.name}{', weight ' + str(a.weight) if a.weight > 1 else ''})"
        for a in problem.accesses
    )
    # --family all: the header names the question; the winner is named below it.
    family = "all" if answer.contenders else answer.family
    return (
        f"{problem.spec.file}: layout {u.name} = ?({u.rows}, {u.cols}) of "
        f"{problem.spec.dtype}, family {family}; accesses {accesses}"
    )


def text(problem: Problem, answer: Answer, cert: Certificate | None) -> str:
    lines = [_problem_line(problem, answer)]
    if answer.objective is None:
        if answer.core is not None:
            lines.append(
                f"INFEASIBLE in family {answer.family}: no member meets these "
                f"together: {'; '.join(answer.core)}"
            )
        else:
            lines.append(f"UNKNOWN: no layout found ({answer.reason})")
        return "\n".join(lines + _evidence_lines(answer))
    assert cert is not None, "synthesize_file certifies every layout it finds"
    o = answer.objective
    how = (
        "exhaustive: every member evaluated"
        if answer.method == "list"
        # A figure already at its least possible value (1-way, one wavefront a
        # phase, no padding, no xor terms) needs no query below it.
        else "the solver: UNSAT just below each figure above its least possible value"
    )
    lines += [
        f"best: {cert.layout}",
        f"  max_ways {o.max_ways}; wavefronts {o.wavefronts} (weighted sum over "
        f"accesses); footprint {o.footprint} elements; {o.xor_terms} xor terms",
        "  "
        + "; ".join(
            f"{name}: max_ways {w}, wavefronts {v}" for name, (w, v) in answer.per_access.items()
        ),
        f"optimal in family {answer.family}: "
        + (f"yes ({how})" if answer.optimal else f"NOT PROVED ({answer.reason})"),
        *_evidence_lines(answer),
        *_contender_lines(answer),
        "notations:",
        *[f"  {k}: {v}" for k, v in cert.notations.items()],
        "the spec with it, and the figures claimed:",
        text_report(cert.results),
    ]
    return "\n".join(lines)


def json_doc(problem: Problem, answer: Answer, cert: Certificate | None) -> str:
    o = answer.objective
    doc = {
        "spec": problem.spec.file,
        "unknown": problem.unknown.name,
        "shape": list(problem.shape),
        "family": answer.family,
        "layout": cert.layout if cert else None,
        "max_ways": o and o.max_ways,
        "wavefronts": o and o.wavefronts,
        "footprint": o and o.footprint,
        "xor_terms": o and o.xor_terms,
        "per_access": {
            n: {"max_ways": w, "wavefronts": v} for n, (w, v) in answer.per_access.items()
        },
        "optimal": answer.optimal and o is not None,
        "reason": answer.reason or None,
        "infeasible": answer.core,
        "notations": cert.notations if cert else {},
        "proof": _proof(answer),
        "rechecked_spec": cert.spec_text if cert else None,
        "checks": [result_json(r) for r in cert.results] if cert else [],
        "contenders": {
            f: {
                "objective": a.objective and list(a.objective.key()),
                "optimal": a.optimal,
                "layout": a.notation,
                "dominated": a.dominated,
            }
            for f, a in answer.contenders.items()
        }
        or None,
    }
    return json.dumps(doc, indent=2)


def _proof(answer: Answer) -> dict:
    if answer.method == "solver":
        return {
            "kind": "solver",
            "queries": [
                {"query": s.query, "answer": s.answer, "seconds": round(s.seconds, 4)}
                for s in answer.steps
            ],
        }
    return {
        "kind": "exhaustive",
        "members": len(answer.rows),
        "table": [
            {
                "layout": r.notation,
                "broken": r.score.broken or None,
                "objective": list(r.score.objective.key()) if r.score.objective else None,
            }
            for r in answer.rows
        ],
    }
