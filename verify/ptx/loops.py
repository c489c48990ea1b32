"""Loop counters as the tracer classifies them: the placeholder substitution, the
affine step of ``r += c``, and the concrete runs that find a cycling counter's
values and a group of counters' joint states (`verify.ptx.trace`)."""

from __future__ import annotations

from collections.abc import Mapping

from verify.errors import SpecError
from verify.model.expr import (
    BinOp,
    Const,
    Expr,
    Range,
    Var,
    bounds,
    evaluate,
    free_vars,
    substitute,
)
from verify.ptx.values import Context, Unknown, Value

MAX_CYCLE = 64  # values a cycling counter may take
MAX_LOOKUP = 64  # changes (or values) of a trip count not affine in its variable


def named(names: set[str]) -> set[str]:
    return {n.split("_", 1)[1] if n.startswith("h") and "_" in n else n for n in names}


def apply(v: Value, subst: Mapping[str, Value]) -> Value:
    if isinstance(v, Unknown) or not subst:
        return v
    names = free_vars(v)
    for n in names:
        s = subst.get(n)
        if isinstance(s, Unknown):
            return s
    env = {n: s for n, s in subst.items() if n in names and isinstance(s, Expr)}
    return substitute(v, env) if env else v  # with nothing to replace, `v` itself


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


def trip_expression(
    names: list[str], values: Mapping[tuple[int, ...], int], ctx: Context
) -> Expr | None:
    """An expression over the variables `names` that is `values[point]` at every
    point of their ranges (a loop's last iteration where its trip count varies with
    ``%ctaid.x``): affine ``a + sum c_v * v`` where that fits every point, else, for
    one variable, a step function (`_steps`); None otherwise."""
    ranges = ctx.ranges
    base = tuple(ranges[n].lo for n in names)
    if base not in values:
        return None
    steps = []
    for i in range(len(names)):
        nxt = base[:i] + (base[i] + 1,) + base[i + 1 :]
        steps.append(values[nxt] - values[base] if nxt in values else 0)
    intercept = values[base] - sum(c * lo for c, lo in zip(steps, base))
    fits = all(v == intercept + sum(c * x for c, x in zip(steps, p)) for p, v in values.items())
    if fits:
        plus: Expr = Const(max(0, intercept))
        minus: Expr = Const(max(0, -intercept))
        for n, c in zip(names, steps):
            if c > 0:
                plus = ctx.op("+", plus, ctx.op("*", Var(n), Const(c)))
            elif c < 0:
                minus = ctx.op("+", minus, ctx.op("*", Var(n), Const(-c)))
        out = plus if minus == Const(0) else ctx.op("-", plus, minus)
        try:
            if bounds(out, ranges)[0] >= 0:
                return out
        except SpecError:
            pass  # an interval that may dip below 0: looked up instead
    if len(names) != 1:
        return None
    return _steps(names[0], values, ctx)


def _steps(name: str, values: Mapping[tuple[int, ...], int], ctx: Context) -> Expr | None:
    """values[x] over one variable x as its first value plus each change: a rise of d
    at k is ``d * [x >= k]``, a fall of d is ``d * [x < k]`` less d (every term
    non-negative), for at most MAX_LOOKUP changes; else each value looked up."""
    seq = [v for _, v in sorted(values.items())]
    lo = min(values)[0]
    rises: list[tuple[int, int]] = []
    falls: list[tuple[int, int]] = []
    for k in range(1, len(seq)):
        d = seq[k] - seq[k - 1]
        if d:
            (rises if d > 0 else falls).append((lo + k, abs(d)))
    start = seq[0] - sum(d for _, d in falls)
    x = Var(name)
    if start >= 0 and len(rises) + len(falls) <= MAX_LOOKUP:
        out: Expr = Const(start)
        for k, d in rises:
            pick = ctx.less(Const(k - 1), x)
            if isinstance(pick, Unknown):
                return None
            out = ctx.op("+", out, ctx.op("*", pick, Const(d)))
        for k, d in falls:
            pick = ctx.less(x, Const(k))
            if isinstance(pick, Unknown):
                return None
            out = ctx.op("+", out, ctx.op("*", pick, Const(d)))
        return out
    if len(seq) > MAX_LOOKUP:
        return None
    lookup: Expr = Const(0)
    for k, v in enumerate(seq):
        pick = ctx.equal(x, Const(lo + k))
        if isinstance(pick, Unknown):
            return None
        lookup = ctx.op("+", lookup, ctx.op("*", pick, Const(v)))
    return lookup


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
