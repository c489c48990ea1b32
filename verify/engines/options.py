"""How checks are run: which engine decides them and what each may spend.

One `RunOptions` travels from the public API, the command line, sweeps, synthesis
and the GPU spot check down to the runner, which gives every check a fresh
`Budget` of its own. Z3-free, so building options at start-up loads no solver.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from verify.smt.budget import Budget

AUTO, Z3, ENUMERATION = "auto", "z3", "enumeration"
ENGINE_NAMES = (AUTO, Z3, ENUMERATION)
DEFAULT_SECONDS = 60.0  # per check: the command line's --timeout default
# Set to a count of z3 resource units, the default wall-clock allowance becomes that
# many units instead (tests and CI set it, so that a command run as a subprocess
# decides alike on a loaded machine); an explicit other --timeout still counts seconds.
WORK_ENV = "VERIFY_RLIMIT"


@dataclass(frozen=True)
class RunOptions:
    """`engine`: "auto" (enumeration for small domains, the solver for large ones),
    "z3" or "enumeration". Each check may spend `seconds` of wall time and/or
    `rlimit` z3 resource units (None: no limit of that kind). Wall time is for a
    person waiting; resource units count work, so their verdicts do not change
    with the machine's load (what tests and caches want)."""

    engine: str = AUTO
    seconds: float | None = DEFAULT_SECONDS
    rlimit: int | None = None

    def __post_init__(self):
        if self.engine not in ENGINE_NAMES:
            raise ValueError(
                f"engine: expected one of {', '.join(ENGINE_NAMES)}, found {self.engine!r}"
            )

    @classmethod
    def of(cls, options: RunOptions | float | None = None, engine: str | None = None):
        """Options from the older (timeout, engine) pair that callers still pass:
        `options` may be a RunOptions (kept, its engine replaced by `engine` if
        given) or seconds."""
        if isinstance(options, RunOptions):
            return options if engine is None else cls(engine, options.seconds, options.rlimit)
        seconds = DEFAULT_SECONDS if options is None else float(options)
        return cls(engine or AUTO, seconds)

    @classmethod
    def units(cls, rlimit: int, engine: str = AUTO) -> RunOptions:
        """Options that count work only: no wall-clock limit."""
        return cls(engine, None, rlimit)

    def budget(self) -> Budget:
        """A fresh allowance for one check."""
        return Budget(*self.limits())

    def limits(self) -> tuple[float | None, int | None]:
        """(seconds, rlimit) a check gets: the default seconds become `WORK_ENV`'s
        units where that is set and no units were asked for."""
        units = os.environ.get(WORK_ENV, "")
        if units.isdigit() and self.rlimit is None and self.seconds == DEFAULT_SECONDS:
            return None, int(units)
        return self.seconds, self.rlimit

    def key(self) -> tuple:
        """What a cached answer depends on."""
        return (self.engine, *self.limits())
