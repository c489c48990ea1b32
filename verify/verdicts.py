"""The verdict vocabulary every layer shares: a check's `Status` and a figure's
`Maximum`. Plain data importing nothing of verify, and no solver, so that reports
and the command line read verdicts without loading z3."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


class Status(str, Enum):
    """A check's verdict, ordered from best to worst: proved < unknown < refuted.

    A refutation is a replayed violation, while UNKNOWN only says that none was
    found in time, so a run with both is refuted (the command line's exit status
    and a sweep's verdict are the worst status of their checks). The members are
    listed in report order (proved, refuted, unknown), which is not this order.
    """

    PROVED = "proved"
    REFUTED = "refuted"
    UNKNOWN = "unknown"

    @property
    def rank(self) -> int:
        return _RANK[self]

    # str's own comparisons would order the values alphabetically.
    def __lt__(self, other):
        return self.rank < other.rank if isinstance(other, Status) else NotImplemented

    def __le__(self, other):
        return self.rank <= other.rank if isinstance(other, Status) else NotImplemented

    def __gt__(self, other):
        return self.rank > other.rank if isinstance(other, Status) else NotImplemented

    def __ge__(self, other):
        return self.rank >= other.rank if isinstance(other, Status) else NotImplemented

    @classmethod
    def worst(cls, statuses) -> Status:
        """The worst of `statuses`; PROVED when there are none."""
        return max(statuses, default=cls.PROVED)


_RANK = {Status.PROVED: 0, Status.UNKNOWN: 1, Status.REFUTED: 2}


@dataclass
class Maximum:
    """Largest value of a metric over all instances, with an instance attaining it."""

    value: int
    witness: dict
    exact: bool  # the solver proved that nothing exceeds `value`
    reason: str = ""
    queries: int = field(default=0)


def bound_status(best: Maximum, bound: int, equal: bool) -> Status:
    """Verdict for "metric <= bound" (or "== bound") given the ascent's result."""
    if best.value > bound:
        return Status.REFUTED  # a replayed instance exceeds the bound
    if not best.exact:
        return Status.UNKNOWN
    if equal and best.value != bound:
        return Status.REFUTED
    return Status.PROVED
