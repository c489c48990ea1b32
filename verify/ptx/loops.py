"""Loop counters as the tracer classifies them: the placeholder substitution, the
affine step of ``r += c``, and the concrete runs that find a cycling counter's
values and a group of counters' joint states (`verify.ptx.trace`)."""

from __future__ import annotations

from collections.abc import Mapping

from verify.errors import SpecError
from verify.model.expr import BinOp, Const, Expr, Range, Var, evaluate, free_vars, substitute
from verify.ptx.values import Unknown, Value

MAX_CYCLE = 64  # values a cycling counter may take


def named(names: set[str]) -> set[str]:
    return {n.split("_", 1)[1] if n.startswith("h") and "_" in n else n for n in names}


def apply(v: Value, subst: Mapping[str, Value]) -> Value:
    if isinstance(v, Unknown):
        return v
    names = free_vars(v)
    for n in names:
        s = subst.get(n)
        if isinstance(s, Unknown):
            return s
    return substitute(v, {n: s for n, s in subst.items() if n in names and isinstance(s, Expr)})


def affine_step(latch: Expr, holder: Var, width: int) -> int | None:
    """c where latch is holder + c modulo 2^width."""
    e = latch
    if isinstance(e, BinOp) and e.op == "%" and e.b == Const(1 << width):
        e = e.a
    if isinstance(e, BinOp) and e.op == "+" and e.a == holder and isinstance(e.b, Const):
        return e.b.value % (1 << width)
    if isinstance(e, BinOp) and e.op == "+" and e.a == holder:
        inner = e.b  # holder + (2^w - c)
        constant = isinstance(inner, BinOp) and inner.op == "-"
        if constant and isinstance(inner.a, Const) and isinstance(inner.b, Const):  # type: ignore[union-attr]
            return (inner.a.value - inner.b.value) % (1 << width)  # type: ignore[union-attr]
    return None


def terms(e: Expr) -> list[Expr]:
    out, stack = [], [e]
    while stack:
        x = stack.pop()
        if isinstance(x, BinOp) and x.op == "+":
            stack += [x.b, x.a]
        else:
            out.append(x)
    return out


def next_state(state: dict[str, int], update: Mapping[str, Expr]) -> dict[str, int]:
    return {h: evaluate(u, state) for h, u in update.items() if h in state}


def inside(values: Mapping[str, int], ranges: Mapping[str, Range]) -> bool:
    """Every placeholder's value within the range its update was followed in."""
    return all(ranges[h].lo <= v < ranges[h].hi for h, v in values.items())


def joint_states(
    start: dict[str, int], update: Mapping[str, Expr], ranges: Mapping[str, Range]
) -> list[dict[str, int]] | None:
    """The joint states from `start` until one repeats (at most MAX_CYCLE)."""
    seen: list[dict[str, int]] = []
    state = dict(start)
    while state not in seen:
        if len(seen) >= MAX_CYCLE or not inside(state, ranges):
            return None
        seen.append(state)
        try:
            state = next_state(state, update)
        except SpecError:
            return None
    return seen


def repeat_position(states: list[dict[str, int]], start, update) -> int:
    """The position the last state leads back to."""
    return states.index(next_state(states[-1], {h: update[h] for h in start}))


def cycle(latch: Expr, holder: Var, init: Expr, ranges: Mapping[str, Range]) -> list[int] | None:
    """The values a counter updated by `latch` takes from a constant start."""
    if not isinstance(init, Const) or free_vars(latch) != {holder.name}:
        return None
    seen: list[int] = []
    v = init.value
    while v not in seen:
        if len(seen) >= MAX_CYCLE or not inside({holder.name: v}, ranges):
            return None
        seen.append(v)
        try:
            v = evaluate(latch, {holder.name: v})
        except SpecError:
            return None
    return seen
