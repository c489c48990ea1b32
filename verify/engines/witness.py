"""Counterexamples from concrete values, whichever engine found them.

Both engines (the solver in `verify.engines.solver`, exhaustive evaluation in
`verify.engines.enumeration`) end a refutation with plain integers: an instance, a lane, a
pair of coordinates. Everything printed is computed here from those integers with
the concrete evaluator (`verify.model.expr.evaluate`) and bank model (`verify.model.bank`), so
a witness that does not violate the property is an InternalError, never a verdict,
and both engines show their witnesses in one format.
"""

from __future__ import annotations

from verify.engines import explain
from verify.errors import InternalError
from verify.model.bank import BANKS, bank_cost, lane_words
from verify.model.expr import Expr, evaluate
from verify.model.program import BASE, LANE, STAGE, Access, Program
from verify.report.text import ranges_text
from verify.results import Counterexample, LaneRow
from verify.spec.ast import LayoutDef


def shown_instance(program: Program, values: dict[str, int]) -> dict[str, int]:
    """Instance for people: base in bytes, stage only when there are stages."""
    shown = {k: v for k, v in values.items() if k not in (BASE, STAGE, LANE)}
    if STAGE in values and program.spec.buffer.stages > 1:
        shown["stage"] = values[STAGE]
    if BASE in values:
        shown["base"] = values[BASE] * program.spec.buffer.align
    return shown


def lane_row(access: Access, lane: int, values: dict[str, int]) -> LaneRow:
    env = {**values, LANE: lane}
    address = evaluate(access.address, env)
    coord = tuple(evaluate(c, env) for c in access.definition.coords)
    words = tuple(lane_words(access.instruction, address))
    return LaneRow(lane, coord, address, words, tuple(w % BANKS for w in words))


def misaligned(program: Program, access: Access, n: int, values: dict[str, int]):
    """`values` (with the lane) must give an address that is not a multiple of n."""
    row = lane_row(access, values[LANE], values)
    if row.address % n == 0:
        raise InternalError(f"alignment counterexample does not replay: {values}")
    return Counterexample(
        f"{access.instruction.name}: lane {row.lane} uses byte address {row.address}, "
        f"which is {row.address % n} past a multiple of {n}",
        shown_instance(program, values),
        (row,),
        explanation=explain.alignment_explanation(program, access, row, n, values),
    )


def stage_misaligned(program: Program, ldef: LayoutDef, values: dict[str, int]):
    """`values` (stage and base) must start a stage off a multiple of the layout's need."""
    n = ldef.required_align
    address = evaluate(program.stage_start(), values)
    if address % n == 0:
        raise InternalError(f"base alignment counterexample does not replay: {values}")
    return Counterexample(
        f"layout {ldef.name} needs its buffer aligned to {n} bytes ({_swizzle_model(ldef, n)}), "
        f"but a buffer stage can start at byte {address}",
        shown_instance(program, values),
    )


def _swizzle_model(ldef: LayoutDef, n: int) -> str:
    """Why the alignment matters, as verify models the layout's swizzle."""
    if ldef.pointer_swizzle is not None:
        return f"its swizzle repeats every {n} bytes and is applied to absolute addresses"
    # nvmma_shared: an element-offset formula, which is where the hardware's
    # absolute-address swizzle puts the data only from an aligned start.
    return (
        f"verify places its elements by offsets from the buffer start, which is where "
        f"TMA and wgmma put them only when the buffer starts at a multiple of the "
        f"swizzle's {n}-byte repeat"
    )


def out_of_bounds(program: Program, access: Access, values: dict[str, int]):
    """`values` (with the lane) must name a coordinate outside the layout's domain."""
    limits = access.coordinate_ranges
    row = lane_row(access, values[LANE], values)
    bad = [i for i, (c, r) in enumerate(zip(row.coord, limits)) if not r.lo <= c < r.hi]
    if not bad:
        raise InternalError(f"bounds counterexample does not replay: {values}")
    i = bad[0]
    return Counterexample(
        f"{access.instruction.name}: lane {row.lane} names coordinate {row.coord}, whose "
        f"mode {i} value {row.coord[i]} is outside {limits[i]}",
        shown_instance(program, values),
        (row,),
    )


def overlap(
    program: Program,
    ldef: LayoutDef,
    addr: Expr,
    coords,
    va: dict,
    vb: dict,
    base: int,
    elem_bytes: int,
) -> Counterexample:
    """Two (coordinate, stage) pairs, `va` below `vb`, whose elements share bytes."""
    rows = []
    for v in (va, vb):
        address = evaluate(addr, {**v, BASE: base})
        coord = tuple(v[n] for n, _ in coords)
        label = f"stage {v[STAGE]}" if program.spec.buffer.stages > 1 else ""
        rows.append(LaneRow(None, coord, address, label=label))
    if va == vb or not rows[0].address <= rows[1].address < rows[0].address + elem_bytes:
        raise InternalError(f"overlap counterexample does not replay: {va} {vb}")
    summary = (
        f"layout {ldef.name}: coordinates {rows[0].coord} and {rows[1].coord} share "
        f"memory (byte addresses {rows[0].address} and {rows[1].address})"
    )
    explanation = explain.overlap_explanation(
        program,
        ldef,
        (rows[0].coord, rows[1].coord),
        (va[STAGE], vb[STAGE]),
        (rows[0].address, rows[1].address),
    )
    return Counterexample(
        summary, {"base": base * program.spec.buffer.align}, tuple(rows), explanation=explanation
    )


def unequal(lhs: Expr, rhs: Expr, values: dict[str, int]) -> Counterexample:
    """`values` must give the two sides different values."""
    left, right = evaluate(lhs, values), evaluate(rhs, values)
    if left == right:
        raise InternalError(f"equivalence counterexample does not replay: {values}")
    shown = ", ".join(f"{k}={v}" for k, v in values.items())
    return Counterexample(f"at {shown}: left side is {left}, right side is {right}", values)


def bank_counterexample(
    program: Program, access: Access, values: dict[str, int], metric: str
) -> Counterexample:
    """Lanes of the worst phase that hit its busiest banks, all figures replayed."""
    cost = bank_cost(access.instruction, access.lane_addresses(values))
    worst = max(cost.phases, key=lambda p: p.ways)
    hot = [b for b, ws in worst.words_by_bank.items() if len(ws) == worst.ways]
    rows = [
        r
        for r in (lane_row(access, lane, values) for lane in worst.lanes)
        if set(r.banks) & set(hot)
    ]
    name = access.instruction.name
    lanes = ranges_text([r.lane for r in rows if r.lane is not None])  # lane_row: all
    if metric == "ways":
        summary = (
            f"{name}: lanes {lanes} hit bank{'s' if len(hot) > 1 else ''} "
            f"{ranges_text(hot)} with {worst.ways} distinct words: {worst.ways}-way"
        )
    else:
        per_phase = ", ".join(
            f"lanes {p.lanes.start}-{p.lanes.stop - 1}: {p.ways}" for p in cost.phases
        )
        summary = (
            f"{name}: {cost.wavefronts} wavefront{'s' if cost.wavefronts != 1 else ''} "
            f"(ideal {cost.ideal}); per phase {per_phase}"
        )
    return Counterexample(
        summary,
        shown_instance(program, values),
        tuple(rows),
        explanation=explain.bank_explanation(program, access, tuple(rows), hot[0], values),
    )
