"""The answer of `verify synth` as a certificate.

Overview
--------
A synthesised layout is printed with everything needed to trust it:

* the layout in every notation that expresses it: CuTe (``Sw<B,M,S> o
  (R,C):(C,1)``), Triton's ``#ttg.swizzled_shared`` when some member of that
  family has the same offsets, and the formula `verify map` prints;
* the whole spec's report with the layout substituted and, appended, checks of
  the figures synthesis claims (``check max_ways == k a``, ``check wavefronts ==
  n a``, ``check bijective A``): the ordinary engines must prove every one, or
  the answer is an internal error, never printed as a result;
* the proof that no member of the family does better: the exhaustive table of an
  enumerated family, or the solver's queries with the UNSAT just below each
  figure for the XOR family.

Worked example
--------------
``layout A = ?(8, 64)`` answered by ``Sw<3,3,3> o (8,64):(64,1)`` is re-checked as
the spec with ``layout A = Sw<3,3,3> o (8,64):(64,1)`` and the added lines
``check bijective A``, ``check max_ways == 1 rd``, ``check wavefronts == 1 rd``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from verify.engines.runner import run_spec
from verify.errors import InternalError
from verify.model.expr import Var, render
from verify.model.layout import coordinate_vars
from verify.results import CheckResult
from verify.smt.solve import Status
from verify.spec.parser import parse_text
from verify.synth import families
from verify.synth.problem import Problem
from verify.synth.search import Answer


@dataclass
class Certificate:
    answer: Answer
    layout: str  # the notation `verify map` and specs take
    notations: dict  # "cute", "triton", "formula" -> text
    spec_text: str  # the spec re-checked
    results: list[CheckResult]

    @property
    def rechecked(self) -> bool:
        return all(r.status == Status.PROVED for r in self.results)


def spec_with(problem: Problem, layout: str, claims: list[str]) -> str:
    """The spec's text with the unknown layout replaced by `layout` (CuTe or Triton
    text, or a formula ``A(r in ..) = ...``) and the claimed checks appended."""
    name = problem.unknown.name
    line = f"layout {layout}" if layout.startswith(f"{name}(") else f"layout {name} = {layout}"
    pattern = re.compile(rf"layout\s+{re.escape(name)}\s*=\s*\?\s*\([^)]*\)")
    text = pattern.sub(lambda _: line, problem.source, count=1)
    return text.rstrip("\n") + "\n" + "".join(f"{c}\n" for c in claims)


def claims(problem: Problem, answer: Answer) -> list[str]:
    """Checks stating what synthesis found, for the ordinary engines to prove."""
    name = problem.unknown.name
    stated = any(c.kind == "bijective" and c.target == name for c in problem.spec.checks)
    out = [] if stated else [f"check bijective {name}"]
    for access in problem.accesses:
        ways, waves = answer.per_access[access.name]
        out += [
            f"check max_ways == {ways} {access.name}",
            f"check wavefronts == {waves} {access.name}",
        ]
    return out


def certify(problem: Problem, answer: Answer, timeout: float) -> Certificate:
    notations = equal_notations(problem, answer)
    layout = notations.get("cute") or notations["formula"]
    text = spec_with(problem, layout, claims(problem, answer))
    spec = parse_text(text, problem.spec.file)
    results = run_spec(spec, timeout)
    refuted = [r.property for r in results if r.status == Status.REFUTED]
    if refuted:
        raise InternalError(
            f"the synthesised layout {layout} fails the ordinary checks "
            f"{refuted}: synthesis and the engines disagree"
        )
    return Certificate(answer, layout, notations, text, results)


def equal_notations(problem: Problem, answer: Answer) -> dict:
    """Every notation (CuTe Sw or padded, Triton swizzled_shared, formula) whose
    offsets are the answer's; CuTe and Triton members are compared table to table."""
    notation, table = answer.notation, answer.table
    assert notation is not None and table is not None, "only a found layout is certified"
    out = {}
    if answer.family != "xor" and not notation.startswith("#"):
        out["cute"] = notation
    elif notation.startswith("#"):
        out["triton"] = notation
    rows, cols = problem.shape
    for family in ("sw", "triton"):
        key = "cute" if family == "sw" else "triton"
        if key in out:
            continue
        for member in families.members(family, rows, cols, problem.elem_bytes):
            if np.array_equal(member.build(), table):
                out[key] = member.notation
                break
    out["formula"] = (
        notation if answer.family == "xor" else _formula(problem, out.get("cute") or notation)
    )
    return out


def _formula(problem: Problem, notation: str) -> str:
    """``A(r in 0..R, c in 0..C) = ...``: the notation's offset as a spec formula
    (sympy's simplified form where it is exact, as `verify map` prints it)."""
    from verify.spec.layout_text import parse_layout

    rows, cols = problem.shape
    if notation.startswith("#"):
        body, shape = notation.rsplit(" shape ", 1)
        ldef = parse_layout(body, tuple(int(n) for n in shape.strip("()").split(",")))
    else:
        ldef = parse_layout(notation)
    value = ldef.value([Var("r"), Var("c")])
    return f"{problem.unknown.name}(r in 0..{rows}, c in 0..{cols}) = {render(value)}"


def simplified(problem: Problem, layout: str) -> str:
    """The formula `verify map` prints for `layout` (for people; not re-parsed)."""
    from verify.spec.layout_text import parse_layout

    ldef = parse_layout(layout)
    domain = coordinate_vars(ldef.function)
    from verify.report.formula import formula  # sympy: loaded only to print one

    return formula(ldef.value([Var(n) for n, _ in domain]), domain)
