"""A layout that fixes a refuted bank check: the nearest of the same family,
found by `verify synth` and re-checked by the ordinary engines.

Overview
--------
When a bank check fails (refuted, and not expected to be), and its access reads
a 2-D layout of a family synthesis enumerates -- CuTe ``Sw<B,M,S> o (R,C):(C,1)``
or ``o (R,C):(1,R)`` (a plain row- or column-major tile counts, as Sw with no
bits), or a Triton ``#ttg.swizzled_shared`` encoding -- the spec is cut down to
that question: its dtype, buffer and layouts, the layout made unknown
(``?(R, C)``), the one access and the one check. `verify.synth` scores every
member of the family on it; among the members that meet the check (and keep the
access aligned, its vectors whole and the layout bijective), the one nearest
the layout as written is chosen, then the cut-down spec is run again with it in
place, and it is offered only when that run proves the check.

It is a suggestion, not a verdict: the nearest fix for this access, which the
spec's other accesses may not like. The search is cheap or skipped: at most
`SEARCH_SECONDS` per spec in all, so a run with many failing checks stays fast.

Worked example
--------------
``Sw<3,3,3> o (8,256):(256,1)`` fp16 read by ldmatrix.x4 rows is 4-way; the
nearest member that makes it conflict-free is ``Sw<3,3,5> o (8,256):(256,1)``
(S two steps up: it reads the row bits of 512-byte rows).

The math
--------
Nearness counts parameter steps: |dB| + |dM| + |dS| for CuTe (B = 0 for an
unswizzled tile, whose M and S do not matter), |d log2| of vec, perPhase and
maxPhase for Triton, and a change of major order before any of those. Ties go
to the better objective of `verify.synth.cost` (fewer ways, then wavefronts,
then footprint, then XOR terms).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from verify.errors import SpecError
from verify.layout import Composed, CuteLayout, Swizzle
from verify.notation.threads import MappedAccessDef
from verify.notation.triton import EncodedFormula
from verify.results import CheckResult
from verify.runner import run_spec
from verify.solve import Status
from verify.spec.ast import AccessDef, CheckDef, LayoutDef, Spec
from verify.spec.parser import parse_text, statement_texts

if TYPE_CHECKING:  # synthesis is imported where a suggestion is searched for
    from verify.synth.cost import Objective
    from verify.synth.problem import Problem

# Seconds of family search per spec, over all its failing checks.
SEARCH_SECONDS = 2.0

_CUTE = re.compile(r"(?:Sw<(\d+),(\d+),(-?\d+)> o )?\((\d+),(\d+)\):\((\d+),(\d+)\)$")
_TRITON = re.compile(r"vec = (\d+), perPhase = (\d+), maxPhase = (\d+), order = \[(\d)")


@dataclass(frozen=True)
class Place:
    """Where a layout sits in its family: major order and parameters."""

    family: str  # "sw" or "triton"
    major: str  # "row" / "column", or Triton's fastest dimension
    params: tuple[int, ...]  # (B, M, S); or log2 of (vec, perPhase, maxPhase)

    def distance(self, other: Place) -> tuple[int, int]:
        steps = (
            sum(abs(a - b) for a, b in zip(self.params, other.params))
            if self.family == "triton" or self.params[0] and other.params[0]
            else self.params[0] + other.params[0]
        )
        return (self.major != other.major, steps)


def attach(spec: Spec, results: list[CheckResult], source: str | None = None) -> list[CheckResult]:
    """`results` with a suggestion on each failing bank check that has a cheap one."""
    deadline = time.monotonic() + SEARCH_SECONDS
    for result in results:
        if time.monotonic() >= deadline:
            break
        check = _failing_bank_check(spec, result)
        if check is None:
            continue
        source = source if source is not None else _read(spec.file)
        text = suggestion(spec, source, check, deadline - time.monotonic())
        if text:
            assert result.counterexample is not None, "a refuted check has its counterexample"
            result.counterexample = replace(result.counterexample, suggestion=text)
    return results


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def _failing_bank_check(spec: Spec, result: CheckResult) -> CheckDef | None:
    if result.status != Status.REFUTED or result.passed or result.max_ways is None:
        return None
    return next(
        (
            c
            for c in spec.checks
            if c.pos.line == result.line
            and c.text == result.property
            and c.kind in ("max_ways", "wavefronts")
        ),
        None,
    )


def suggestion(spec: Spec, source: str, check: CheckDef, seconds: float) -> str:
    """'layout A = ...' and, on the next line, what it does (re-checked); '' when
    there is no cheap one."""
    from verify.synth.certificate import spec_with
    from verify.synth.problem import problem_of

    adef = spec.accesses[check.target]
    ldef = spec.layouts[adef.layout]
    here = place_of(ldef)
    if here is None or isinstance(adef, MappedAccessDef):
        return ""
    rows, cols = ldef.function.mode_sizes
    question = _question(source, adef, ldef, check, rows, cols)
    try:
        problem = problem_of(parse_text(question, spec.file), question)
    except SpecError:
        return ""
    started = time.monotonic()
    scored, fixes = _fixes(problem, here.family, seconds)
    if not fixes:
        return ""
    best = min(fixes, key=lambda fix: (here.distance(fix[2]), fix[1].key()))
    recheck = _recheck(spec_with(problem, best[0], []), spec.file, check)
    if recheck is None:
        return ""
    assert recheck.wavefronts is not None, "a proved bank check has its wavefronts"
    waves = f"{recheck.wavefronts} wavefront{'s' if recheck.wavefronts > 1 else ''}"
    return (
        f"layout {ldef.name} = {best[0]}\n"
        f"would make this access {recheck.max_ways}-way, {waves}: '{check.text}' "
        f"re-checked, proved. {len(fixes)} of the {scored} "
        f"{_family_name(here)} layouts of this tile {'fix' if len(fixes) > 1 else 'fixes'} "
        f"it; this is the nearest "
        f"({time.monotonic() - started:.1f} s; the spec's other accesses not considered)"
    )


def _fixes(
    problem: Problem, family: str, seconds: float
) -> tuple[int, list[tuple[str, Objective, Place]]]:
    """(members scored, [(notation, objective, place)] of those that meet every
    constraint and the check), listing the family with synthesis's own scoring until `seconds`."""
    from verify.synth.cost import score
    from verify.synth.families import members

    deadline = time.monotonic() + seconds
    scored = 0
    fixes: list[tuple[str, Objective, Place]] = []
    for member in members(family, *problem.shape, problem.elem_bytes):
        if time.monotonic() >= deadline:
            break
        result = score(problem, member.build(), member.xor_terms)
        scored += 1
        if result.feasible and (place := place_of_notation(member.notation)):
            fixes.append((member.notation, result.found, place))
    return scored, fixes


def _family_name(place: Place) -> str:
    return "Sw<B,M,S>" if place.family == "sw" else "swizzled_shared"


def _recheck(text: str, file: str, check: CheckDef) -> CheckResult | None:
    """The check's result with the suggested layout in place, when proved."""
    try:
        results = run_spec(parse_text(text, file))
    except SpecError:
        return None
    found = [r for r in results if r.property == check.text and not r.implicit]
    return found[0] if found and found[0].status == Status.PROVED else None


def _question(
    source: str, adef: AccessDef, ldef: LayoutDef, check: CheckDef, rows: int, cols: int
) -> str:
    """The spec cut down to one access and one check, its layout unknown."""
    kept = []
    for line, chunk in statement_texts(source):
        words = chunk.split()
        if words[0] in ("dtype", "buffer"):
            kept.append(chunk)
        elif words[0] == "layout" and words[1] == ldef.name:
            kept.append(f"layout {ldef.name} = ?({rows}, {cols})\n")
        elif words[0] == "layout" or line in (adef.pos.line, check.pos.line):
            kept.append(chunk)
    return "".join(c if c.endswith("\n") else c + "\n" for c in kept)


def place_of(ldef: LayoutDef) -> Place | None:
    """The layout's place in a family synthesis enumerates, if it has one."""
    function = ldef.function
    if ldef.pointer_swizzle is not None or len(function.mode_sizes) != 2:
        return None
    if isinstance(function, EncodedFormula):
        fields = function.encoding.fields
        if function.encoding.kind != "swizzled_shared":
            return None
        return Place(
            "triton",
            str(fields["order"][0]),
            tuple(fields[k].bit_length() - 1 for k in ("vec", "perPhase", "maxPhase")),
        )
    swizzle = (0, 0, 0)
    if (
        isinstance(function, Composed)
        and isinstance(function.outer, Swizzle)
        and not function.offset
    ):
        s = function.outer
        swizzle, function = (s.bits, s.base, s.shift), function.inner
    if not isinstance(function, CuteLayout):
        return None
    major = _major(function)
    return None if major is None else Place("sw", major, swizzle)


def _major(layout: CuteLayout) -> str | None:
    rows, cols = layout.mode_sizes
    if layout.stride == (cols, 1):
        return "row"
    if layout.stride == (1, rows):
        return "column"
    return None


def place_of_notation(notation: str) -> Place | None:
    """The place of a family member, from the notation synthesis writes."""
    m = _TRITON.search(notation)
    if m:
        return Place("triton", m[4], tuple(int(m[i]).bit_length() - 1 for i in (1, 2, 3)))
    m = _CUTE.match(notation)
    if m is None:
        return None
    rows, cols, stride = int(m[4]), int(m[5]), (int(m[6]), int(m[7]))
    major = _major(CuteLayout((rows, cols), stride))
    swizzle = tuple(int(v) for v in m.group(1, 2, 3)) if m[1] else (0, 0, 0)
    return None if major is None else Place("sw", major, swizzle)
