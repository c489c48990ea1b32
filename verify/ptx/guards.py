"""A result about an instruction that runs under a guard or branch condition.

The spec checks every lane and instance; the instruction runs only where its
condition (a 0/1 expression, `verify.ptx.trace.Event.condition`) holds. So:

* PROVED stands: it holds for every lane and instance, so for those that run.
  One exception: where the condition depends on the lane, masked-off lanes
  change which lanes a wavefront serves; removing lanes never adds a distinct
  word to a bank, so the phase model's figures (32-bit and narrower accesses,
  ldmatrix, stmatrix) stay bounds, but rule L's merged phases and cp.async's
  rules need the lanes that run: those bank results become UNKNOWN.
* REFUTED stands only if the condition holds for every lane the counterexample
  shows, at its instance; variables of the condition the counterexample does
  not fix are searched over a few values of their ranges (a parameter bound,
  say); if no value makes it hold, the result is UNKNOWN, never a guess.
* Where a loop's trip count varies with the block or warp, its iteration ranges
  up to the largest count; each access in it runs under ``[it < its own count]``
  (`verify.ptx.trace.LoopInfo.runs`), so a counterexample naming both is checked
  as against a guard; where the count is not written, it is UNKNOWN.
* A counterexample over loop counters whose relation to each other the trace
  could not keep (a cycling stage counter beside the iteration of a loop whose
  trip count is unknown) may be unreachable: UNKNOWN. Where the trip count is
  known the stage is a function of the iteration (`verify.ptx.trace`), so a
  counterexample names one iteration that runs, and the iterations where the
  guard is off for every lane are stated beside it.
"""

from __future__ import annotations

import itertools
import math

from verify.errors import SpecError
from verify.model.expr import Const, Expr, Range, Var, evaluate, free_vars
from verify.model.instructions import parse_instruction
from verify.ptx.values import Unknown
from verify.results import CheckResult
from verify.smt.solve import Status

MAX_TRIES = 4096
# Cases (lanes times the other variables' values) enumerated to show that a guard
# naming the lane still runs a warp's lanes all or none.
MAX_UNIFORM_CASES = 1 << 16


def condition(access, kernel) -> Expr | Unknown:
    cond = access.event.condition
    if isinstance(cond, Unknown) or kernel.threads % 32 == 0:
        return cond
    t = kernel.ctx.op("+", kernel.ctx.op("*", Var("warp"), Const(32)), Var("lane"))
    in_block = kernel.ctx.less(t, Const(kernel.threads))
    return in_block if isinstance(in_block, Unknown) else kernel.ctx.op("*", cond, in_block)


def _access_vars(access) -> set[str]:
    out = set(free_vars(access.offset)) if isinstance(access.offset, Expr) else set()
    if access.source_vars is not None:
        out |= access.source_vars
    elif isinstance(access.source, Expr):
        out |= free_vars(access.source)
    return out


def _candidates(r: Range) -> list[int]:
    picks = {r.lo, r.lo + 1, r.hi - 1, (r.lo + r.hi) // 2}
    picks |= {1 << k for k in range(64) if r.lo <= 1 << k < r.hi}
    return sorted(v for v in picks if r.lo <= v < r.hi)


def _holds_somewhere(cond: Expr, fixed: dict[str, int], ranges: dict[str, Range]) -> bool:
    free = sorted(free_vars(cond) - set(fixed))
    choices = [_candidates(ranges.get(v, Range(0, 1))) for v in free]
    for n, values in enumerate(itertools.product(*choices)):
        if n >= MAX_TRIES:
            return False
        try:
            if evaluate(cond, {**fixed, **dict(zip(free, values))}) == 1:
                return True
        except SpecError:
            continue
    return False


def _same_for_every_lane(cond: Expr, ranges: dict[str, Range]) -> bool:
    """At every value of its other variables, `cond` is one value across the lanes
    (a K-tail mask ``offs_k < K - k*BLOCK_K`` at K a multiple of BLOCK_K: the warp
    runs whole or not at all), shown by enumerating every case; False where the
    cases are too many or a variable has no range."""
    others = sorted(free_vars(cond) - {"lane"})
    spans = [ranges.get(v) for v in others]
    lanes = ranges.get("lane", Range(0, 32))
    if any(r is None for r in spans):
        return False
    sizes = [r.hi - r.lo for r in spans if r is not None]
    if math.prod(sizes) * (lanes.hi - lanes.lo) > MAX_UNIFORM_CASES:
        return False
    for values in itertools.product(*(range(r.lo, r.hi) for r in spans if r is not None)):
        fixed = dict(zip(others, values))
        try:
            seen = {evaluate(cond, {**fixed, "lane": lane}) for lane in range(lanes.lo, lanes.hi)}
        except SpecError:
            return False
        if len(seen) > 1:
            return False
    return True


def settle(result: CheckResult, access, trace, kernel) -> CheckResult:
    cond = condition(access, kernel)
    bank = result.property.split()[0] in ("conflict_free", "wavefronts", "max_ways")
    if bank and access.full != Const(1):
        # a cp.async whose src-size may be below its size zero-fills: its cost is
        # modelled for full copies only; one whose src-size is 0 or its size is a
        # predicated copy (`memory._zero_or`): the lanes at 0 are masked off
        if result.status == Status.PROVED and not access.masks:
            why = (
                access.full.reason
                if isinstance(access.full, Unknown)
                else "not proved equal to it for every lane and instance"
            )
            return _unknown(
                result,
                f"its src-size operand may be below the copy size (zero fill, not modelled): {why}",
            )
        cond = _both(cond, access.full, kernel)
    if result.status == Status.PROVED:
        lane_masked = (
            isinstance(cond, Expr)
            and "lane" in free_vars(cond)
            and not _same_for_every_lane(cond, kernel.ctx.ranges)
        )
        if bank and lane_masked and not parse_instruction(access.instruction).exact:
            return _unknown(
                result,
                "a guard masks lanes off, and this instruction's cost "
                "(merged phases or copy rules) depends on which lanes run",
            )
        if isinstance(cond, Unknown):
            result.facts["condition"] = f"runs under a condition not resolved: {cond.reason}"
        return result
    if result.status != Status.REFUTED:
        return result
    loose = _access_vars(access) & trace.loose
    loops_used = {v for v in _access_vars(access) if v in trace.loops}
    if loose and (len(loose) > 1 or loops_used):
        return _unknown(
            result,
            "its counterexample combines loop counters whose relation "
            "this reader does not keep, so it may not happen",
        )
    used = _access_vars(access)
    for name in used & set(trace.loops):
        if trace.loops[name].bounded & used and trace.loops[name].runs is None:
            return _unknown(
                result,
                f"its counterexample's iteration of {name} may be past the trip count "
                f"at its {', '.join(sorted(trace.loops[name].bounded & used))}",
            )
    if cond == Const(1):
        return result
    if isinstance(cond, Unknown):
        return _unknown(
            result,
            f"it runs under a condition this reader cannot resolve "
            f"({cond.reason}), so the counterexample may not happen",
        )
    cex = result.counterexample
    if cex is None:
        return _unknown(result, "its counterexample cannot be checked against its guard")
    if free_vars(cond) & access.reduced:
        return _unknown(
            result,
            "its guard reads a variable its global source is taken modulo 128 bytes over, "
            "so the counterexample's source may not meet the guard",
        )
    fixed = {k: v for k, v in cex.instance.items() if isinstance(v, int)}
    lanes: list[int | None] = [row.lane for row in cex.rows if row.lane is not None] or [None]
    for lane in lanes:
        env = dict(fixed) if lane is None else {**fixed, "lane": lane}
        if not _holds_somewhere(cond, env, kernel.ctx.ranges):
            return _unknown(result, "its guard may mask off the lanes of the counterexample")
    result.facts["condition"] = "the guard holds at the counterexample" + _tail(
        cond, fixed, trace, kernel.ctx.ranges
    )
    return result


def _tail(cond: Expr, fixed: dict[str, int], trace, ranges: dict[str, Range]) -> str:
    """The iterations of a loop around the access, at the counterexample's other
    values, where the guard is off for every lane (Triton's last prefetches,
    predicated off), each shown by enumerating every lane and other value; ''
    where there are none or the cases are too many."""
    parts = []
    for name in sorted(free_vars(cond) & set(trace.loops)):
        trip = trace.loops[name].trip
        rest = sorted(free_vars(cond) - set(fixed) - {name})
        spans = [ranges.get(v) for v in rest]
        if trip is None or any(r is None for r in spans):
            continue
        cases = [range(r.lo, r.hi) for r in spans if r is not None]
        if trip * math.prod(len(c) for c in cases) > MAX_UNIFORM_CASES:
            continue
        off = [k for k in range(trip) if _off_everywhere(cond, {**fixed, name: k}, rest, cases)]
        if off:
            parts.append(f"{name} = {', '.join(map(str, off))} of {trip}")
    return f"; at its other values, off for every lane at {'; '.join(parts)}" if parts else ""


def _off_everywhere(cond: Expr, fixed: dict[str, int], names: list[str], cases) -> bool:
    try:
        return all(
            evaluate(cond, {**fixed, **dict(zip(names, values))}) == 0
            for values in itertools.product(*cases)
        )
    except SpecError:
        return False


def _both(a, b, kernel):
    if isinstance(a, Unknown):
        return a
    if isinstance(b, Unknown):
        return b
    return kernel.ctx.op("*", a, b)


def _unknown(result: CheckResult, reason: str) -> CheckResult:
    result.status = Status.UNKNOWN
    result.reason = reason
    result.counterexample = None
    return result
