"""Deciding a property case by case: the verdict of a check that enumerates a finite
domain itself (the Hopper checks of `verify.ptx.hopper`: every point, base and
box), given its cases and a test of one case.

This is where such an enumeration's outcome becomes a verdict, as
`verify.engines.decide` is for the spec engines: PROVED only when every case was
checked and passed and the domain is complete; REFUTED at the first case whose
test gives a counterexample, however many others were undecided (a counterexample
stands on its own); otherwise UNKNOWN, never a pass: a case the test could not
decide, one that raised evaluating it, or an incomplete domain, with the reason.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

from verify.errors import SpecError
from verify.results import Counterexample, Verdict
from verify.verdicts import Status

Case = TypeVar("Case")


@dataclass(frozen=True)
class Undecided:
    """A case the test can neither pass nor refute, and why."""

    reason: str


Outcome = Counterexample | Undecided | None  # None: the case holds


def decide_cases(
    cases: Iterable[Case], test: Callable[[Case], Outcome], incomplete: str = ""
) -> Verdict:
    """The verdict of `test` over `cases`, in order. `incomplete` says why the cases
    are not the whole domain ('' where they are). The figures hold how many cases
    were tested ("cases") and, when REFUTED, the refuting case ("case"). A test that
    raises SpecError or an arithmetic error leaves its case undecided."""
    tested = 0
    undecided = ""
    for case in cases:
        tested += 1
        try:
            outcome = test(case)
        except (SpecError, ArithmeticError) as e:
            outcome = Undecided(f"a case cannot be evaluated: {e}")
        if isinstance(outcome, Counterexample):
            return Verdict(
                Status.REFUTED, counterexample=outcome, figures={"cases": tested, "case": case}
            )
        if isinstance(outcome, Undecided):
            undecided = undecided or outcome.reason
    reason = undecided or incomplete
    if reason:
        return Verdict(Status.UNKNOWN, reason=reason, figures={"cases": tested})
    return Verdict(Status.PROVED, figures={"cases": tested})


def closed_form() -> Verdict:
    """A figure a model gives for every case at once (wgmma's operand bytes / 128):
    PROVED; whether the model is exact is the figure's fidelity, not the verdict."""
    return Verdict(Status.PROVED)
