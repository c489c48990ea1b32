"""Which engine decides a check: exhaustive evaluation or the solver.

Both engines answer every property over the same domain (every lane, loop value,
stage, aligned base of one period, coordinate) with the same verdicts and the
same exact figures; `tests/engines/test_engines.py` compares them. They differ in cost:
enumeration grows with the domain and is predictable, the solver's cost barely
grows with the domain but varies with the formula (a 4-phase wavefront maximum
took 49 s before its encoding was reworked; it takes 0.07 s now, and the next
hard formula is unknown). So `auto` enumerates every domain up to
ENUMERATION_LIMIT points and asks the solver above it.

No band runs both engines in a race. Each query gets a fixed seed so that a spec
always gets the same answer and the same counterexample; a race would make the
engine, and so the witness printed, depend on the machine's load. It would also
double the CPU time of every check in the band on the 2-core machines verify runs
on, and numpy cannot be interrupted mid-operation to cancel the loser. Nor does a
solver that runs out of time fall back to enumeration: the check's timeout is
spent by then, and above the limit enumerating takes seconds to minutes; the
UNKNOWN says so, and `--engine enumeration` asks for it explicitly.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod
from typing import Protocol

from verify.engines import enumeration as enumeration_engine
from verify.engines.cp_async import CopyFigures
from verify.engines.options import AUTO, ENGINE_NAMES, ENUMERATION, Z3
from verify.model.expr import Expr, Range
from verify.model.layout import coordinate_vars
from verify.model.program import BASE, STAGE, Access, Program
from verify.results import BankFigures, Verdict
from verify.smt.budget import Budget
from verify.spec.ast import LayoutDef


class Engine(Protocol):
    """What each engine module answers, over one domain and with one budget per
    decision: `verify.engines.solver` (z3) and `verify.engines.enumeration`. The
    runner asks through this and nothing else; tests/engines/test_engines.py holds them to
    the same answers."""

    def in_bounds(self, program: Program, access: Access, budget: Budget) -> Verdict: ...

    def aligned(self, program: Program, access: Access, n: int, budget: Budget) -> Verdict: ...

    def base_aligned(self, program: Program, ldef: LayoutDef, budget: Budget) -> Verdict: ...

    def bank_figures(self, access: Access, budget: Budget) -> BankFigures: ...

    def copy_wavefronts(self, program: Program, access: Access, budget: Budget) -> CopyFigures: ...

    def bijective(self, program: Program, ldef: LayoutDef, budget: Budget) -> Verdict: ...

    def footprint(self, program: Program, ldef: LayoutDef, budget: Budget) -> dict: ...

    def equivalent(self, lhs: Expr, rhs: Expr, loops, budget: Budget) -> Verdict: ...


def engine_module(name: str) -> Engine:
    """The engine called `name` (Z3 or ENUMERATION). The solver's module, and z3
    with it, is imported on first use: a spec decided by enumeration, such as the
    seed's, never loads the solver (benchmarks/results/startup.md)."""
    if name == Z3:
        from verify.engines import solver

        return solver
    return enumeration_engine


# Domain points (lane evaluations for an access, coordinate x stage x base
# evaluations for a layout) up to which `auto` enumerates. From
# benchmarks/results/engines.md (2-core dev box at a load average of 1.5; about
# twice as slow at 4.6): enumeration costs 0.01-0.1 us per point, bank figures
# and bijectivity alike, so 2^22 points take 50-210 ms; the solver took 14-530 ms
# on the same questions at every size, and far longer on formulas it finds hard
# (a wavefront maximum took 49 s on 2,048 points before its encoding changed).
# Up to 2^22 points enumeration is thus never much slower than the solver and
# always predictable; at 2^24 it takes 0.8-0.9 s while the solver still answers
# these questions in 25-510 ms, so the line sits at 2^22. cp.async is dearer to
# enumerate (rule C compares every pair of a phase's 32 edges): about 1.1 us per
# lane evaluation, so 2-5 s near the line, against 0.1-0.4 s for the solver at any
# size measured (benchmarks/results/hw_symbolic.md); it keeps the one line all the
# same, as every other access does.
ENUMERATION_LIMIT = 1 << 22
# cp.async.cg's figure: both engines evaluate rule S, but the solver's rule S
# (`properties.RuleSQuery`) is a hard formula: on the SM80 producer of
# benchmarks/results/hw_symbolic.md (global bases counted) it took 5.2 s at 2^19.6
# lane evaluations, 12.1 s at 2^23.6, 18.2 s at 2^26.6 and 14-16 s up to 2^33.6,
# where enumeration took 0.3 s, 4.8 s and 38 s (2 cores at a load of about 3). So
# enumeration stays the faster below about 2^25, and `auto` keeps enumerating a .cg
# copy's figure up to 2^24 lane evaluations, four times the common line: rule S costs
# 0.4-1 us per lane evaluation vectorised (benchmarks/results/cg_enumeration.md).
CG_ENUMERATION_LIMIT = 1 << 24


def engine_for(requested: str, points: int, limit: int = ENUMERATION_LIMIT) -> str:
    """The engine that decides a check over `points` domain points, enumerating up to
    `limit` of them under `auto`."""
    if requested not in ENGINE_NAMES:
        raise ValueError(f"engine: expected one of {', '.join(ENGINE_NAMES)}, found {requested!r}")
    if requested != AUTO:
        return requested
    return ENUMERATION if points <= limit else Z3


def _points(ranges) -> int:
    return prod(r.size for r in ranges)


def access_points(program: Program, access: Access, modulus: int = 1) -> int:
    """Lanes x instances, with the bases an `aligned modulus` question needs."""
    ranges = {**access.ranges, BASE: program.base_range(access.layout, modulus)}
    return _points(ranges.values())


def copy_points(program: Program, access: Access) -> int:
    """A copy figure's domain: lanes x instances x global bases (`Program.global_bases`)."""
    return access_points(program, access) * len(program.global_bases(access))


def copy_limit(access: Access) -> int:
    """How far `auto` enumerates a copy's figure: further for .cg (rule S)."""
    return CG_ENUMERATION_LIMIT if access.instruction.cache == "cg" else ENUMERATION_LIMIT


def layout_points(program: Program, ldef: LayoutDef) -> int:
    """(coordinate, stage) pairs, times the bases when a pointer swizzle reads them."""
    coords = [r for _, r in coordinate_vars(ldef.function)]
    buffer = program.buffer_ranges(ldef)
    bases = buffer[BASE].size if ldef.pointer_swizzle else 1
    return _points(coords) * buffer[STAGE].size * bases


def stage_points(program: Program, ldef: LayoutDef) -> int:
    return program.spec.buffer.stages * program.base_range(ldef, ldef.required_align).size


def loop_points(loops: Sequence[tuple[str, Range]]) -> int:
    return _points(r for _, r in loops)
