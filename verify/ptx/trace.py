"""Symbolic execution of one kernel for one thread of a block.

A thread is ``warp * 32 + lane`` (its linear index in the block, x fastest), so
``%tid.{x,y,z}`` are expressions over ``lane`` and ``warp``; ``%ctaid`` and the
kernel's ``.param`` values are variables with the ranges their types allow
(unless an assumption fixes them); loops contribute their iteration variable.

Blocks run in reverse postorder over forward edges. A block's condition (0/1,
when it executes) is the sum over its incoming edges of the predecessor's
condition times the branch predicate; a register that differs between incoming
edges is the same sum of its values. A loop's header gives each register the
loop writes a placeholder; at the latch each placeholder is classified:

* invariant (the latch value is the placeholder): its value on entry;
* affine ``r += c``: ``r0 + c * it``, ``it`` the loop's iteration variable;
* a counter that cycles through a few values (``s = s + 1 == 3 ? 0 : s + 1``,
  found by running its update from its constant start): where the trip count
  is known, the value of each iteration, picked by the iteration variable (so
  a stage and the iteration stay tied); otherwise a variable over them,
  ``a + d * s``, when they form a progression;
* anything else: `Unknown`, with the reason.

The trip count is found by running the loop's own counters concretely from
their starts until the back edge is not taken; where that needs a value not
known here (a parameter, a lane), the trip count is unknown, and so is every
shared address that depends on the iteration variable (`verify.ptx.memory`).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field

from verify.errors import SpecError
from verify.model.expr import BinOp, Const, Expr, Range, Var, evaluate, free_vars, substitute
from verify.ptx import cfg, ir, loops
from verify.ptx.ops import Machine, destinations
from verify.ptx.values import MAX_NODES, Context, Unknown, Value

MAX_TRIP = 1 << 16  # iterations simulated to find a trip count
MAX_OUTER = 4096  # values of the variables a trip count reads that are run one by one
MAX_LOOP_DEPTH = 6  # loops nested deeper are not followed (each level doubles the work)
UNKNOWN_TRIP = 1 << 20  # the range an iteration variable gets when its count is unknown


@dataclass
class LoopInfo:
    name: str  # the iteration variable, "it0"
    header_line: int
    trip: int | None
    why_no_trip: str = ""
    counters: list[str] = field(default_factory=list)  # cycling-counter variables
    # variables the trip count varies with (then `trip` is its largest value)
    bounded: set[str] = field(default_factory=set)
    # where `bounded`: the trip count at every point of those variables, in order
    trips: dict[tuple[int, ...], int] = field(default_factory=dict)
    # where `bounded` and the count is written: [it < its own count], in every event's
    # condition in the loop
    runs: Expr | None = None


@dataclass
class Event:
    """A memory instruction as one thread executes it."""

    instr: ir.Instr
    state: dict[str, Value]  # registers just before it
    condition: Value  # 0/1: when it executes (block condition times its guard)
    loops: list[str]  # the iteration variables of the loops around it
    block: Value = Const(1)  # 0/1: when its block runs (`condition` without its guard)


@dataclass
class Trace:
    events: list[Event]
    ranges: dict[str, Range]
    loops: dict[str, LoopInfo]
    problems: list[str]
    loose: set[str]  # variables standing for values whose relation to others is lost


@dataclass
class _Open:
    """A loop being traced: its first pass, then its second (`closing`)."""

    loop: cfg.Loop
    info: LoopInfo
    first_event: int
    holders: dict[str, tuple[Var, Value]]
    entry: dict[str, Value]  # the header's state on entry
    cond: Value  # the header's condition
    closing: bool = False


class Tracer:
    def __init__(self, fn: ir.Function, machine: Machine, ctx: Context, widths: dict[str, int]):
        self.fn, self.m, self.ctx, self.widths = fn, machine, ctx, widths
        self.graph = cfg.build(fn)
        self.out: dict[int, dict[str, Value]] = {}
        self.cond: dict[int, Value] = {}
        self.events: list[Event] = []
        self.loops: dict[str, LoopInfo] = {}
        self.loose: set[str] = set()
        self.open: list[_Open] = []

    def run(self, is_memory) -> Trace:
        self.is_memory = is_memory
        for b in self.graph.order:
            self._block(b)
        return Trace(self.events, self.ctx.ranges, self.loops, self.graph.problems, self.loose)

    # -- entering a block -----------------------------------------------------

    def _block(self, b: int) -> None:
        state, cond = self._merge(b)
        loop = self.graph.loops.get(b)
        if loop is not None:
            state = self._enter_loop(loop, state, cond)
        self._execute(b, state, cond)

    def _execute(self, b: int, state: dict[str, Value], cond: Value) -> None:
        block = self.graph.blocks[b]
        for instr in block.instrs:
            if self.is_memory(instr):
                guard = self._guard(state, instr)
                where = self._and(cond, guard)
                around = [entry.info.name for entry in self.open]
                self.events.append(Event(instr, dict(state), where, around, cond))
            self.m.step(state, instr)
        self.out[b], self.cond[b] = state, cond
        while self.open and self.open[-1].loop.latch == b and not self.open[-1].closing:
            if len(self.open) > MAX_LOOP_DEPTH:
                self._give_up_loop()
            else:
                self._close_loop(b)

    def _guard(self, state, instr: ir.Instr) -> Value:
        if instr.guard is None:
            return Const(1)
        reg, negated = instr.guard
        p = state.get(reg, Unknown(f"{reg} is read before it is written"))
        if isinstance(p, Unknown) or not negated:
            return p
        return self.ctx.negate(p)

    def _and(self, a: Value, b: Value) -> Value:
        if isinstance(a, Unknown):
            return a
        if isinstance(b, Unknown):
            return b
        return self.ctx.op("*", a, b)

    def _edge(self, p: int, guard, succ: int) -> Value:
        cond = self.cond.get(p, Const(0))
        if guard is None or self._exits_loop(p, succ):
            return cond  # a loop's exit from its latch is taken once, when the loop ends
        reg, negated, taken = guard
        pred = self.out[p].get(reg, Unknown(f"{reg} is read before it is written"))
        if isinstance(pred, Unknown):
            return Unknown(f"a branch on {pred.reason}")
        if negated != (not taken):
            pred = self.ctx.negate(pred)
        return self._and(cond, pred)

    def _exits_loop(self, p: int, succ: int) -> bool:
        return any(loop.latch == p and succ != h for h, loop in self.graph.loops.items())

    def _merge(self, b: int) -> tuple[dict[str, Value], Value]:
        preds = [(p, g) for p, g in self.graph.preds(b) if p in self.out]
        if b == 0 or not preds:
            return {}, Const(1 if b == 0 else 0)
        edges = [(self.out[p], self._edge(p, g, b)) for p, g in preds]
        if len(edges) == 1:
            return dict(edges[0][0]), edges[0][1]
        cond: Value = Const(0)
        for _, c in edges:
            cond = Unknown(c.reason) if isinstance(c, Unknown) else self._sum(cond, c)
        state: dict[str, Value] = {}
        for reg in {r for s, _ in edges for r in s}:
            values = [(s[reg], c) for s, c in edges if reg in s]
            if all(v == values[0][0] for v, _ in values):
                state[reg] = values[0][0]
            else:
                state[reg] = self._merged(values)
        return state, cond

    def _sum(self, a: Value, b: Expr) -> Value:
        return a if isinstance(a, Unknown) else self.ctx.op("+", a, b)

    def _merged(self, values: list[tuple[Value, Value]]) -> Value:
        out: Expr = Const(0)
        for v, c in values:
            if isinstance(v, Unknown):
                return v
            if isinstance(c, Unknown):
                return Unknown(f"a value merged under an unknown branch ({c.reason})")
            out = self.ctx.op("+", out, self.ctx.op("*", c, v))
        if self.ctx.nodes(out) > MAX_NODES:
            return Unknown("a value merged from more branches than this reader follows")
        return out

    # -- loops ------------------------------------------------------------------

    def _enter_loop(self, loop: cfg.Loop, state: dict[str, Value], cond: Value) -> dict[str, Value]:
        """The header's state for the first pass: a placeholder for each register
        the loop writes."""
        info = LoopInfo(f"it{len(self.loops)}", self._line(loop.header), None)
        self.loops[info.name] = info
        self.ctx.ranges[info.name] = Range(0, UNKNOWN_TRIP)
        written = {
            d
            for blk in loop.body
            for instr in self.graph.blocks[blk].instrs
            for d in destinations(instr)
        }
        holders: dict[str, tuple[Var, Value]] = {}
        entry = dict(state)
        for reg in sorted(written):
            width = self.widths.get(reg.rstrip("0123456789"), 64)
            holder = Var(f"h{len(self.loops) - 1}_{reg[1:].replace('.', '_')}")
            init = state.get(reg, Unknown(f"{reg} is read before it is written"))
            # A counter from a constant start below 2^(w-2) is followed in the first
            # pass as a value below 2^(w-2), so that its next value is a non-negative
            # signed one (mul.hi.s32 and setp.s32 need it); every value the
            # classification runs it through is checked to stay there.
            small = width > 2 and isinstance(init, Const) and init.value < 1 << (width - 2)
            self.ctx.ranges[holder.name] = Range(0, 1 << (width - 2 if small else width))
            holders[reg] = (holder, init)
            state[reg] = holder
        self.open.append(_Open(loop, info, len(self.events), holders, entry, cond))
        return state

    def _line(self, block: int) -> int:
        instrs = self.graph.blocks[block].instrs
        return instrs[0].line if instrs else 0

    def _give_up_loop(self) -> None:
        """A loop nested deeper than MAX_LOOP_DEPTH: each pass of a loop runs its
        inner loops twice, so depth is bounded; what it writes is unknown."""
        top = self.open.pop()
        why = Unknown(f"a loop nested deeper than {MAX_LOOP_DEPTH} (line {top.info.header_line})")
        top.info.why_no_trip = why.reason
        for event in self.events[top.first_event :]:
            event.state = {
                r: loops.apply(v, {h.name: why for h, _ in top.holders.values()})
                for r, v in event.state.items()
            }
        for blk in top.loop.body:
            self.out[blk] = {r: (why if r in top.holders else v) for r, v in self.out[blk].items()}

    def _close_loop(self, latch: int) -> None:
        """At the end of the first pass: classify the placeholders, then run the
        body again from the header with their values, so every op of the second
        pass sees the real ranges (a signed op, a wrap) and records its events."""
        top = self.open[-1]
        loop, info, holders = top.loop, top.info, top.holders
        after = self.out[latch]
        info.trip, info.why_no_trip = self._trip(loop, holders, after, info)
        if info.trip is not None:
            self.ctx.ranges[info.name] = Range(0, max(1, info.trip))
        it = Var(info.name)
        subst: dict[str, Value] = dict(self._joint(holders, after, info))
        for reg, (holder, init) in holders.items():
            if holder.name not in subst:
                subst[holder.name] = self._classify(reg, holder, init, after.get(reg), it, info)
        del self.events[top.first_event :]
        state = dict(top.entry)
        for reg, (holder, _) in holders.items():
            state[reg] = subst[holder.name]
        top.closing = True
        for blk in self.graph.order:
            if blk in loop.body:
                if blk == loop.header:
                    self._execute(blk, state, top.cond)
                else:
                    self._block(blk)  # an inner loop's header starts its own two passes
        self.open.pop()
        exit_subst: dict[str, Value] = {}
        if info.trip is not None:
            last = exit_subst[info.name] = self._last_iteration(info)
            if info.bounded and isinstance(last, Expr):
                self._runs_to(info, last, top.first_event)
        # the blocks of the loop share most of their registers' values: each once
        settled: dict[int, tuple[Value, Value]] = {}

        def on_exit(v: Value) -> Value:
            seen = settled.get(id(v))
            if seen is None or seen[0] is not v:
                seen = settled[id(v)] = (v, self._after(v, exit_subst, info))
            return seen[1]

        for blk in loop.body:
            self.out[blk] = {r: on_exit(v) for r, v in self.out[blk].items()}
            self.cond[blk] = on_exit(self.cond[blk])
        self.loose.update(info.counters)

    def _runs_to(self, info: LoopInfo, last: Expr, first_event: int) -> None:
        """Where the trip count varies with the block or warp, the iteration variable
        ranges up to the largest count: each event in the loop runs only where its
        iteration is at most its own block's last, ``[it < last + 1]``, a condition
        `verify.ptx.guards` checks a counterexample against (`LoopInfo.runs`)."""
        runs = self.ctx.less(Var(info.name), self.ctx.op("+", last, Const(1)))
        if isinstance(runs, Unknown):
            return
        info.runs = runs
        for event in self.events[first_event:]:
            event.condition = self._and(event.condition, runs)
            event.block = self._and(event.block, runs)

    def _last_iteration(self, info: LoopInfo) -> Value:
        """The iteration the loop leaves at: trip - 1, or, where the trip count varies
        with `LoopInfo.bounded` (``%ctaid.x`` in its bound), that count's exact
        expression in them (`loops.trip_expression`); never the largest count, which a
        counter read after the loop would take for every block."""
        assert info.trip is not None
        if not info.bounded:
            return Const(info.trip - 1)
        outer = sorted(info.bounded)
        last = loops.trip_expression(outer, {p: n - 1 for p, n in info.trips.items()}, self.ctx)
        if last is None:
            return Unknown(
                f"a value after the loop at line {info.header_line}, whose trip count "
                f"varies with {', '.join(sorted(loops.named(info.bounded)))} "
                "in a way this reader does not write"
            )
        return last

    def _after(self, v: Value, subst: Mapping[str, Value], info: LoopInfo) -> Value:
        v = loops.apply(v, subst)
        if not isinstance(v, Unknown) and info.name in free_vars(v):
            return Unknown(f"a value after the loop at line {info.header_line}")
        if isinstance(v, Expr) and info.bounded:
            v = self.ctx.rebuild(v)
        return v

    def _classify(
        self, reg: str, holder: Var, init: Value, latch: Value | None, it: Var, info: LoopInfo
    ) -> Value:
        if latch is None or latch == holder:
            return init
        if isinstance(init, Unknown):
            return init
        if isinstance(latch, Unknown):
            return Unknown(f"{reg} in the loop at line {info.header_line}: {latch.reason}")
        width = self.widths.get(reg.rstrip("0123456789"), 64)
        step = loops.affine_step(latch, holder, width)
        if step is not None:
            if step < 1 << (width - 1):
                up = self.ctx.op("+", init, self.ctx.op("*", it, Const(step)))
                return self._stays(up, holder, width, reg, info)
            down = self.ctx.op("*", it, Const((1 << width) - step))
            return self.ctx.sub(init, down, width)
        grows = self._grows(latch, holder, width, info)
        if grows is not None:
            return self._stays(self.ctx.op("+", init, grows), holder, width, reg, info)
        values = loops.cycle(latch, holder, init, self.ctx.ranges)
        if values is None:
            return Unknown(
                f"{reg} in the loop at line {info.header_line} is not an induction variable "
                "this reader follows"
            )
        return self._counter(values, latch, holder, info)

    def _joint(self, holders, after, info: LoopInfo) -> dict[str, Expr]:
        """Counters that step together (CuTe's read and write stages: the write stage
        is the read stage of the iteration before): the registers with a constant
        start whose updates read only each other, run together from their starts
        until their joint state repeats; one variable over the states seen indexes
        them all, and a register whose update reads only them (an address built
        from a stage) is looked up by the same variable."""
        # registers the loop writes but does not change: their value on entry
        fixed = {
            h.name: init
            for r, (h, init) in holders.items()
            if isinstance(init, Expr) and after.get(r) in (h, init)
        }
        after = {r: loops.apply(v, fixed) for r, v in after.items()}
        start: dict[str, int] = {}
        for reg, (holder, init) in holders.items():
            latch = after.get(reg)
            width = self.widths.get(reg.rstrip("0123456789"), 64)
            counts = isinstance(init, Const) and isinstance(latch, Expr) and latch != holder
            if counts and loops.affine_step(latch, holder, width) is None:
                start[holder.name] = init.value
        update = {h.name: after[r] for r, (h, _) in holders.items() if h.name in start}
        while True:
            keep = {h for h in start if free_vars(update[h]) <= set(start)}
            if keep == set(start):
                break
            start = {h: v for h, v in start.items() if h in keep}
        if len(start) < 2:
            return {}
        states = loops.joint_states(start, update, self.ctx.ranges)
        if states is None:
            return {}
        repeat = loops.repeat_position(states, start, update)
        picks = self._iteration_picks(info, len(states), repeat)
        if picks is None:
            name = f"s{len(self.loose) + len(info.counters)}_{info.name}"
            self.ctx.ranges[name] = Range(0, len(states))
            info.counters.append(name)
            picks = [self._is(Var(name), k) for k in range(len(states))]
        out = {h: self._lookup(picks, [Const(s[h]) for s in states]) for h in start}
        for reg, (holder, init) in holders.items():
            latch = after.get(reg)
            if holder.name in start or not isinstance(latch, Expr) or not isinstance(init, Expr):
                continue
            reads = {v for v in free_vars(latch) if v.startswith("h")}
            if not reads or not reads <= set(start):
                continue
            values = [init] + [
                self.ctx.rebuild(substitute(latch, {h: Const(s[h]) for h in start}))
                for s in states[:-1]
            ]
            closing = self.ctx.rebuild(substitute(latch, {h: Const(states[-1][h]) for h in start}))
            if closing == values[loops.repeat_position(states, start, update)]:
                out[holder.name] = self._lookup(picks, values)
        return out

    def _iteration_picks(self, info: LoopInfo, count: int, repeat: int) -> list[Expr] | None:
        """For states s_0..s_{count-1} met in the iterations 0, 1, ... with s_{count-1}
        followed by s_repeat again, the 0/1 condition on the iteration variable for
        each state: it == k before the cycle, (it - repeat) % period == k - repeat in
        it. So a result combining a stage with the iteration names only iterations
        that run (Triton's pipeline: its stage pair starts at (-1, 1), then cycles
        (0, 0), (1, 1)). Only where the trip count is known: otherwise an address
        reading the iteration is not decided (`verify.ptx.check`), and a bare stage
        variable keeps a stage-only address decidable; and only where the trip
        count is one for every block (`LoopInfo.bounded`): the value after the loop
        is taken at the last iteration."""
        if info.trip is None or info.bounded:
            return None
        it, period = Var(info.name), count - repeat
        in_cycle = self.ctx.less(Const(repeat - 1), it) if repeat else Const(1)
        phase = self.ctx.op("%", self.ctx.op("+", it, Const(-repeat % period)), Const(period))
        picks = [self.ctx.equal(it, Const(k)) for k in range(repeat)]
        for k in range(period):
            at = self.ctx.equal(phase, Const(k))
            picks.append(at if isinstance(at, Unknown) else self._both(in_cycle, at))
        known = [p for p in picks if isinstance(p, Expr)]
        return known if len(known) == len(picks) else None

    def _both(self, a: Value, b: Expr) -> Value:
        return a if isinstance(a, Unknown) else self.ctx.op("*", a, b)

    def _is(self, v: Var, k: int) -> Expr:
        pick = self.ctx.equal(v, Const(k))
        assert isinstance(pick, Expr), "a small variable compares with a constant"
        return pick

    def _lookup(self, picks: list[Expr], values: list[Expr]) -> Expr:
        """The k-th of `values` where the k-th of `picks` holds; terms every value shares
        stay outside (a base address stays a bare term)."""
        split = [loops.terms(v) for v in values]
        common = [t for t in split[0] if all(t in s for s in split[1:])]
        out: Expr = Const(0)
        for t in common:
            out = self.ctx.op("+", out, t)
        for k, terms in enumerate(split):
            rest = list(terms)
            for t in common:
                rest.remove(t)
            part: Expr = Const(0)
            for t in rest:
                part = self.ctx.op("+", part, t)
            out = self.ctx.op("+", out, self.ctx.op("*", picks[k], part))
        return out

    def _stays(self, value: Expr, holder: Var, width: int, reg: str, info: LoopInfo) -> Value:
        """`value` wrapped to the width, if it stays in the range its placeholder was
        followed in (a counter followed below 2^(w-2) must stay below it)."""
        top = self.ctx.top(value)
        limit = self.ctx.ranges[holder.name].hi
        if limit < 1 << width and (top is None or top >= limit):
            return Unknown(
                f"{reg} in the loop at line {info.header_line} may pass {limit}, "
                "where its update was not followed"
            )
        return self.ctx.wrap(value, width)

    def _grows(self, latch: Expr, holder: Var, width: int, info: LoopInfo) -> Expr | None:
        """``r += d`` with d a bounded value that changes between iterations (CuTe's
        ``k_tile_next += (k_tile_count > 1)``): r0 plus a variable over every sum
        the steps can reach, a superset of the values r takes, whose relation to
        the iteration is not kept (`Trace.loose`)."""
        e = latch
        if isinstance(e, BinOp) and e.op == "%" and e.b == Const(1 << width):
            e = e.a
        if not (isinstance(e, BinOp) and e.op == "+" and e.a == holder):
            return None
        step = e.b
        top = self.ctx.top(step)
        if holder.name in free_vars(step) or top is None or top >= 1 << (width - 1):
            return None
        iterations = info.trip if info.trip is not None else UNKNOWN_TRIP
        name = f"u{len(info.counters)}_{info.name}"
        self.ctx.ranges[name] = Range(0, top * max(0, iterations - 1) + 1)
        info.counters.append(name)
        return Var(name)

    def _counter(self, values: list[int], latch: Expr, holder: Var, info: LoopInfo) -> Value:
        ordered = sorted(values)
        if len(ordered) == 1:
            return Const(ordered[0])
        repeat = values.index(evaluate(latch, {holder.name: values[-1]}))
        picks = self._iteration_picks(info, len(values), repeat)
        if picks is not None:
            return self._lookup(picks, [Const(v) for v in values])
        name = f"s{len(self.loose) + len(info.counters)}_{info.name}"
        self.ctx.ranges[name] = Range(0, len(ordered))
        info.counters.append(name)
        d = ordered[1] - ordered[0]
        if all(b - a == d for a, b in zip(ordered, ordered[1:])):
            return self.ctx.op("+", Const(ordered[0]), self.ctx.op("*", Var(name), Const(d)))
        # any other set of values: the k-th value where the variable is k
        out: Expr = Const(0)
        for k, value in enumerate(ordered):
            pick = self.ctx.equal(Var(name), Const(k))
            assert isinstance(pick, Expr), "a small variable compares with a constant"
            out = self.ctx.op("+", out, self.ctx.op("*", pick, Const(value)))
        return out

    def _trip(self, loop: cfg.Loop, holders, after, info: LoopInfo) -> tuple[int | None, str]:
        """The loop's trip count, by running its counters from their starts. Where
        a start or the bound reads a variable of a few values other than the lane
        (``%ctaid.x`` under --grid, the warp), the loop is run for each and the
        largest count is the iteration's range (`LoopInfo.bounded` names them)."""
        block = self.graph.blocks[loop.latch]
        guard = next((g for s, g in block.succs if s == loop.header), None)
        if guard is None:
            return None, "the loop's back edge is not a conditional branch"
        reg, negated, _ = guard
        cond = after.get(reg)
        if not isinstance(cond, Expr):
            return None, "the loop's exit condition is not known"
        starts: dict[str, Expr] = {}
        updates: dict[str, Expr] = {}
        for r, (holder, init) in holders.items():
            if isinstance(init, Expr) and isinstance(after.get(r), Expr):
                starts[holder.name], updates[holder.name] = init, after[r]
        needed, work = set(free_vars(cond)), list(free_vars(cond))
        while work:
            v = work.pop()
            for u in (free_vars(updates[v]) | free_vars(starts[v])) if v in updates else ():
                if u not in needed:
                    needed.add(u)
                    work.append(u)
        holder_names = {h.name for h, _ in holders.values()}
        if needed & holder_names - set(updates):
            missing = needed & holder_names - set(updates)
            return None, f"the trip count depends on {', '.join(sorted(loops.named(missing)))}"
        outer = sorted(needed - holder_names)
        points = 1
        for v in outer:
            points *= self.ctx.ranges[v].size
        if "lane" in outer or points > MAX_OUTER:
            return None, f"the trip count depends on {', '.join(sorted(loops.named(set(outer))))}"
        counts: dict[tuple[int, ...], int] = {}
        for values in itertools.product(
            *(range(self.ctx.ranges[v].lo, self.ctx.ranges[v].hi) for v in outer)
        ):
            fixed = dict(zip(outer, values))
            count, why = self._run_counters(cond, negated, starts, updates, fixed, needed)
            if count is None:
                return None, why
            counts[values] = count
        varies = len(set(counts.values())) > 1
        info.bounded = set(outer) if varies else set()
        info.trips = counts if varies else {}
        return max(counts.values()), ""

    def _run_counters(self, cond, negated, starts, updates, fixed, needed):
        try:
            env = {**fixed, **{h: evaluate(s, fixed) for h, s in starts.items() if h in needed}}
        except SpecError:
            return None, "the loop's counters start outside the range this reader follows"
        if not loops.inside({h: env[h] for h in starts if h in env}, self.ctx.ranges):
            return None, "the loop's counters start outside the range this reader follows"
        for n in range(MAX_TRIP):
            try:
                taken = evaluate(cond, env) != int(negated)
                nxt = {h: evaluate(updates[h], env) for h in starts if h in env}
            except SpecError:
                return None, "the loop's counters leave the range this reader follows"
            if not taken:
                return n + 1, ""
            if not loops.inside(nxt, self.ctx.ranges):
                return None, "the loop's counters leave the range this reader follows"
            env.update(nxt)
        return None, f"the loop runs more than {MAX_TRIP} times"
