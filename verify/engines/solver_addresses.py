"""The solver engine's address questions: alignment and bounds of one access, the
stage alignment of a buffer, a layout's bijectivity and footprint, and the
equivalence of two address expressions.

Each searches for a violation over every coordinate, lane, loop value, stage and
aligned base; UNSAT proves the property, and a model is decoded into plain
integers and replayed by `verify.engines.witness` before anything is reported.
`verify.engines.solver`, the whole z3 engine, re-exports these beside its bank and
cp.async encodings, and builds its queries with the helpers here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import z3

from verify.engines import witness
from verify.errors import SpecError
from verify.model.expr import Expr, Range, Var, bounds, evaluate, substitute
from verify.model.layout import coordinate_vars
from verify.model.program import BASE, STAGE, Access, Program
from verify.results import Counterexample, Verdict
from verify.smt import bv
from verify.smt.solve import Budget, maximize, new_solver, search, violation_status
from verify.spec.ast import LayoutDef
from verify.verdicts import Status

# -- helpers the bank and copy encodings share ---------------------------------


def query_context(exprs: list[Expr], ranges: dict[str, Range], extra: int = 0) -> bv.Context:
    return bv.Context(bv.width_for(exprs, ranges, extra), ranges)


def in_ranges(ctx: bv.Context, names) -> list[z3.BoolRef]:
    return [ctx.in_range(n) for n in names]


def decode(ctx: bv.Context, model: z3.ModelRef, names) -> dict[str, int]:
    return {n: ctx.value(model, n) for n in names}


def search_violation(
    ctx: bv.Context,
    names,
    violation: z3.BoolRef,
    budget: Budget,
    replay: Callable[[dict[str, int]], Counterexample],
) -> Verdict:
    """Values of `names` (each in its range) that satisfy `violation`, if any:
    UNSAT proves the property; a model's values are replayed into the counterexample.
    """
    solver = new_solver(ctx)
    solver.add(in_ranges(ctx, names))
    solver.add(violation)
    result = search(solver, budget)
    status = violation_status(result)
    if status != Status.REFUTED:
        return Verdict(status, reason=result.reason)
    return Verdict(status, replay(decode(ctx, result.model, names)))


# -- alignment and bounds of one access ---------------------------------------


def aligned(program: Program, access: Access, n: int, budget: Budget) -> Verdict:
    """Every lane's address is a multiple of n, for every instance and aligned base."""
    if n <= 0 or n & (n - 1):
        raise SpecError(f"aligned: expected a power of two, found {n}")
    ranges = {**access.ranges, BASE: program.base_range(access.layout, n)}
    ctx = query_context([access.address], ranges)
    misaligned = bv.not_(bv.low_bits_zero(ctx.lower(access.address), n.bit_length() - 1))
    return search_violation(
        ctx,
        ranges,
        misaligned,
        budget,
        lambda values: witness.misaligned(program, access, n, values),
    )


def base_aligned(program: Program, ldef: LayoutDef, budget: Budget) -> Verdict:
    """Every stage of the buffer starts at a multiple of ``ldef.required_align``."""
    n = ldef.required_align
    start = program.stage_start()
    ranges = {STAGE: Range(0, program.spec.buffer.stages), BASE: program.base_range(ldef, n)}
    ctx = query_context([start], ranges)
    misaligned = bv.not_(bv.low_bits_zero(ctx.lower(start), n.bit_length() - 1))
    return search_violation(
        ctx,
        ranges,
        misaligned,
        budget,
        lambda values: witness.stage_misaligned(program, ldef, values),
    )


def in_bounds(program: Program, access: Access, budget: Budget) -> Verdict:
    """Every coordinate an access names lies inside its layout's domain."""
    coords, limits = access.definition.coords, access.coordinate_ranges
    ctx = query_context(list(coords), access.ranges, max(r.hi for r in limits))
    outside = ctx.any(
        [
            ctx.any([bv.ult(ctx.lower(c), ctx.num(r.lo)), bv.uge(ctx.lower(c), ctx.num(r.hi))])
            for c, r in zip(coords, limits)
        ]
    )
    return search_violation(
        ctx,
        access.ranges,
        outside,
        budget,
        lambda values: witness.out_of_bounds(program, access, values),
    )


# -- layouts -----------------------------------------------------------------


def _layout_domain(program: Program, ldef: LayoutDef):
    coords = coordinate_vars(ldef.function)
    return coords, {**dict(coords), **program.buffer_ranges(ldef)}


def _renamed(expr: Expr, names, suffix: str) -> Expr:
    return substitute(expr, {n: Var(n + suffix) for n in names})


@dataclass
class OverlapQuery:
    """Two (coordinate, stage) pairs, named with suffixes 'a and 'b, that overlap."""

    ctx: bv.Context
    solver: z3.Solver
    address: Expr
    coords: list  # (name, Range) of each layout coordinate
    own: list[str]  # the coordinate names and the stage
    elem_bytes: int


def overlap_query(program: Program, ldef: LayoutDef) -> OverlapQuery:
    coords, ranges = _layout_domain(program, ldef)
    if ldef.pointer_swizzle is None:
        # Both addresses get the same base added, and overlap is invariant under a
        # common shift: base 0 decides every base (and keeps the query small).
        ranges[BASE] = Range(0, 1)
    eb = program.elem_bytes(ldef.pos, ldef)
    addr = program.address(ldef, [Var(n) for n, _ in coords], ldef.pos)
    program.check_window(addr, ranges, ldef.pos)
    own = [n for n, _ in coords] + [STAGE]
    a, b = _renamed(addr, own, "'a"), _renamed(addr, own, "'b")
    both = {**{n + s: ranges[n] for n in own for s in ("'a", "'b")}, BASE: ranges[BASE]}
    ctx = query_context([a, b], both, extra=2 * eb)
    solver = new_solver(ctx)
    solver.add(in_ranges(ctx, both))
    solver.add(ctx.any([bv.ne(ctx.var(n + "'a"), ctx.var(n + "'b")) for n in own]))
    ta, tb = ctx.lower(a), ctx.lower(b)
    solver.add(bv.ule(ta, tb), bv.ult(tb, bv.add(ta, ctx.num(eb))))
    return OverlapQuery(ctx, solver, addr, coords, own, eb)


def bijective(program: Program, ldef: LayoutDef, budget: Budget) -> Verdict:
    """No two (coordinate, stage) pairs overlap in memory, for every aligned base."""
    query = overlap_query(program, ldef)
    result = search(query.solver, budget)
    status = violation_status(result)
    if status != Status.REFUTED:
        return Verdict(status, reason=result.reason)
    ctx, own = query.ctx, query.own
    va = {n: ctx.value(result.model, n + "'a") for n in own}
    vb = {n: ctx.value(result.model, n + "'b") for n in own}
    base = ctx.value(result.model, BASE)
    return Verdict(
        status,
        witness.overlap(program, ldef, query.address, query.coords, va, vb, base, query.elem_bytes),
    )


def footprint(program: Program, ldef: LayoutDef, budget: Budget) -> dict:
    """cosize: 1 + the largest element offset (base 0, stage 0)."""
    coords = coordinate_vars(ldef.function)
    names = [n for n, _ in coords]
    eb = program.elem_bytes(ldef.pos, ldef)
    value = ldef.value([Var(n) for n in names])
    ranges = dict(coords)
    ctx = query_context([value], ranges)

    def query() -> z3.Solver:
        solver = new_solver(ctx)
        solver.add(in_ranges(ctx, names))
        return solver

    term = ctx.lower(value)
    scale = eb if ldef.pointer_swizzle else 1

    def score(v):
        return evaluate(value, v)

    # Start from the highest corner of the domain: for a layout without a swizzle
    # that is the maximum, and the ascent needs one query to prove it.
    corners = [{n: (r.hi - 1 if high else r.lo) for n, r in coords} for high in (True, False)]
    best = maximize(
        query,
        lambda k: bv.uge(term, ctx.num(k)),
        lambda m: decode(ctx, m, names),
        score,
        max(corners, key=score),
        bounds(value, ranges)[1],
        budget,
    )
    cosize = best.value // scale + 1
    facts = {"size": ldef.function.size(), "cosize": cosize if best.exact else None}
    if best.exact:
        facts["cosize_bytes"] = cosize * eb
    return facts


def equivalent(lhs: Expr, rhs: Expr, loops, budget: Budget) -> Verdict:
    """lhs == rhs for every value of the loop variables."""
    ranges = dict(loops)
    ctx = query_context([lhs, rhs], ranges)
    return search_violation(
        ctx,
        ranges,
        bv.ne(ctx.lower(lhs), ctx.lower(rhs)),
        budget,
        lambda values: witness.unequal(lhs, rhs, values),
    )
