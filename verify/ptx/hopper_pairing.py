"""TMA boxes laid end to end, paired by their copies' box coordinates: whether the
box after a TMA box continues it in the global tensor (`run_continues`), for
`verify.ptx.hopper_tma`'s runs of boxes an operand reads across. Decided on the
coordinates' expressions as the trace evaluates them (``cp.async.bulk.tensor``'s
``[map, {c0, c1, ...}]``, PTX ISA "cp.async.bulk.tensor").
"""

from __future__ import annotations

from verify.model.expr import BinOp, Const, Expr, evaluate, free_vars, render
from verify.model.wgmma import Operand
from verify.ptx import ir


def run_continues(tmap, op: Operand, by_dest, dest0: int, j: int) -> bool:
    """Whether every copy writing the box at `dest0` has one writing the box `j`
    boxes after it whose box continues its box there in the global tensor: along
    the box's inner dimension by j inner extents (an MN-major operand, rows along
    it) or along its rows by j box rows (K-major; a 2-D box, or outer extents 1)."""
    if op.major == "K" and any(b != 1 for b in tmap.box[2:]):
        return False
    dim, extent = (1, tmap.box[1]) if op.major == "K" else (0, tmap.box[0])
    there = by_dest.get((dest0 + j * tmap.bytes, id(tmap)), [])
    return all(
        any(_continues(x, y, dim, j * extent) for y in there)
        for x in by_dest.get((dest0, id(tmap)), [])
    )


def _continues(x, y, dim: int, amount: int) -> bool:
    """Whether copy instance y's box coordinates are copy instance x's plus `amount`
    along `dim` and equal along the others (`coordinate_offset`)."""
    offset = coordinate_offset(x, y)
    return offset is not None and offset == tuple(
        amount if d == dim else 0 for d in range(len(offset))
    )


def coordinate_offset(x, y) -> tuple[int, ...] | None:
    """Copy instance y's box coordinates minus copy instance x's, where that is the
    same for every value of what the points do not fix (an instance: (Copy, point)),
    else None. The points must agree on every variable both have but the warp (the
    copies of one iteration). Decided on the coordinates' terms: those the points do
    not fix must be the same in both (they cancel), the others are evaluated."""
    (cx, px), (cy, py) = x, y
    if any(px[v] != py[v] for v in set(px) & set(py) if v != "warp"):
        return None
    ax, ay = _coordinates(cx), _coordinates(cy)
    if ax is None or ay is None or len(ax) != len(ay):
        return None
    found = []
    for ex, ey in zip(ax, ay):
        diff = _difference(ex, px, ey, py)
        if diff is None:
            return None
        found.append(diff)
    return tuple(found)


def _coordinates(copy) -> tuple[Expr, ...] | None:
    ops = copy.event.instr.operands
    tensor = ops[1] if copy.load else ops[0]
    if not isinstance(tensor, ir.TensorAddr):
        return None
    values: list[Expr] = []
    for c in tensor.coords:
        if isinstance(c, ir.Reg):
            value = copy.event.state.get(c.name)
        elif isinstance(c, ir.Imm):
            value = Const(c.value)
        else:
            return None
        if not isinstance(value, Expr):
            return None
        values.append(value)
    return tuple(values)


def _difference(ex: Expr, px: dict, ey: Expr, py: dict) -> int | None:
    """ey at py minus ex at px where that is a constant: their terms (a sum, split
    at its +) with no variable the point fixes must be the same in both."""
    fixed_x, free_x = _terms(ex, px)
    fixed_y, free_y = _terms(ey, py)
    if fixed_x is None or fixed_y is None or sorted(free_x) != sorted(free_y):
        return None
    return fixed_y - fixed_x


def _terms(e: Expr, point: dict) -> tuple[int | None, list[str]]:
    """(the sum of the terms the point fixes, the other terms as text), or None
    first where a term mixes both."""
    stack, fixed, free = [e], 0, []
    while stack:
        t = stack.pop()
        if isinstance(t, BinOp) and t.op == "+":
            stack += [t.a, t.b]
            continue
        names = free_vars(t)
        if names <= set(point):
            fixed += evaluate(t, point)
        elif names & set(point):
            return None, []
        else:
            free.append(render(t))
    return fixed, free
