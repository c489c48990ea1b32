"""What one check may spend: z3 resource units, wall-clock seconds, or both.

A resource limit (z3's `rlimit`) counts the solver's work -- propagations,
conflicts, rewriting steps -- so a query answers alike on a quiet machine and a
loaded one; a wall-clock limit is for a person waiting at a terminal, and its
UNKNOWNs come and go with the load. Tests give resource limits only.

z3 counts resource units per context, cumulatively over every query in it; a
solver's "rlimit" parameter is a further allowance measured from the count when its
`check` starts (z3's `reslimit::push(delta)`, used by `Z3_solver_check` through
`scoped_rlimit`). So each query is given what the check has left, and what the
query spent is the context's count after it less the count before.

Z3-free, so that option handling at start-up does not load the solver.
"""

from __future__ import annotations

import time

# z3's largest timeout and rlimit (unsigned 32-bit): "no limit".
UNLIMITED = (1 << 32) - 1


class Budget:
    """The allowance of one check, shared by all its queries: `seconds` of wall time
    and/or `rlimit` z3 resource units (None: no limit of that kind).

    The enumeration engine counts no resource units: its work is fixed by the
    domain (the solver's decides larger ones), so only seconds can stop it."""

    def __init__(self, seconds: float | None = None, rlimit: int | None = None):
        self.seconds = seconds
        self.rlimit = rlimit
        self.start = time.monotonic()
        self.solver_seconds = 0.0
        self.units = 0  # z3 resource units spent so far

    def remaining_ms(self) -> int:
        """Milliseconds left (UNLIMITED without a time limit)."""
        if self.seconds is None:
            return UNLIMITED
        return int(1000 * (self.seconds - (time.monotonic() - self.start)))

    def remaining_units(self) -> int:
        """Resource units left (UNLIMITED without a resource limit)."""
        if self.rlimit is None:
            return UNLIMITED
        return self.rlimit - self.units

    def spent(self) -> str:
        """Why the budget is spent ("" while it is not)."""
        if self.remaining_ms() <= 0:
            return self.timeout_reason()
        if self.remaining_units() <= 0:
            return self.rlimit_reason()
        return ""

    def limit_reason(self) -> str:
        """Why a search that stopped short of its answer stopped: the limit spent,
        else the limit it runs under."""
        if self.spent():
            return self.spent()
        return self.timeout_reason() if self.seconds is not None else self.rlimit_reason()

    def timeout_reason(self) -> str:
        return f"timeout after {self.seconds:g} s"

    def rlimit_reason(self) -> str:
        return f"resource limit of {self.rlimit} z3 units spent"
