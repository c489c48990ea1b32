"""What a check found: plain data shared by the engines, reports and the CLI.

`str(result)` is the CLI's text for it; the text is rendered by
`verify.report.text`, which reads these classes for their types only.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass, field

from verify.report.text import result_text
from verify.verdicts import Maximum, Status


@dataclass(frozen=True)
class LaneRow:
    """One lane of a counterexample, every figure replayed concretely."""

    lane: int | None
    coord: tuple[int, ...]
    address: int
    words: tuple[int, ...] = ()
    banks: tuple[int, ...] = ()
    label: str = ""


@dataclass(frozen=True)
class Counterexample:
    summary: str  # one line a person can act on
    instance: dict[str, int]  # loop values, stage, base (bytes)
    rows: tuple[LaneRow, ...] = ()
    notes: tuple[str, ...] = ()
    # ("why" | "fix", sentence): what the layout does to the colliding lanes
    # (verify.engines.explain)
    explanation: tuple[tuple[str, str], ...] = ()
    suggestion: str = ""  # a layout that fixes it, re-checked (verify.synth.repair)


@dataclass(frozen=True)
class Verdict:
    """What one engine answers about one property: every engine and every check
    returns one, never a loose tuple.

    `counterexample` is set exactly when the status is REFUTED by a replayed
    violation; `reason` says why a verdict is UNKNOWN (or why bank figures are
    undefined); `figures` are the measured facts a report shows beside the
    verdict (cosize and onto for bijective, exactness of bank maxima)."""

    status: Status
    counterexample: Counterexample | None = None
    reason: str = ""
    figures: dict = field(default_factory=dict)


@dataclass(frozen=True)
class BankFigures:
    """Max-ways and wavefronts of one access, each an exact or bounded maximum."""

    ways: Maximum
    wavefronts: Maximum

    def of(self, metric: str) -> Maximum:
        """The maximum a bank check bounds: "ways" or "wavefronts"."""
        return self.ways if metric == "ways" else self.wavefronts


@dataclass
class CheckResult:
    file: str
    line: int
    property: str  # as written, e.g. "conflict_free rd"
    status: Status
    expect: str | None = None
    max_ways: int | None = None
    wavefronts: int | None = None
    ideal_wavefronts: int | None = None
    fidelity: str | None = None
    seconds: float = 0.0  # wall time of the check
    solver_seconds: float = 0.0  # of which inside the engine (solver or enumeration)
    engine: str = ""  # "z3" or "enumeration": which engine decided it
    counterexample: Counterexample | None = None
    facts: dict = field(default_factory=dict)
    reason: str = ""
    implicit: bool = False

    # builtins.property: the field `property` above names the check, not the decorator.
    @builtins.property
    def matches_expectation(self) -> bool | None:
        return None if self.expect is None else self.expect == self.status.value

    @builtins.property
    def passed(self) -> bool:
        """Ended as its `expect` says, or proved when it has none (`--check-expect`)."""
        return self.status.value == (self.expect or "proved")

    def __str__(self) -> str:
        """The result as the CLI prints it."""
        return "\n".join(result_text(self))
