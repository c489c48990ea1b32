"""What the Hopper checks share (`verify.ptx.hopper`, `hopper_tma`, `hopper_copies`,
`hopper_kblocks`): which instructions are Hopper's, the descriptor operands of a
``wgmma.mma_async`` (PTX ISA 9.7.15.5.2), evaluating a traced register over every
value of the variables it reads and every base its allocation can have, the chunks
an operand reads, and the results' common fields.
"""

from __future__ import annotations

import itertools
import math
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from verify.engines.enumeration import Vectorised
from verify.errors import SpecError
from verify.model.expr import Expr, Range, Var, compiled, free_vars
from verify.model.wgmma import (
    BASE_PERIOD,
    OPERAND_BITS,
    MatrixDescriptor,
    Operand,
    SwizzleMode,
    operand,
    read_address,
)
from verify.ptx import ir, memory
from verify.ptx.ops import destinations
from verify.ptx.periods import joint_period
from verify.ptx.trace import Event
from verify.ptx.values import Unknown, Value
from verify.results import CheckResult, Verdict
from verify.smt.solve import Status

MAX_POINTS = 4096  # values of the variables a descriptor reads, besides the base
WGMMA_ALIGN = 16  # a descriptor keeps address bits 4-17: bases are multiples of 16
# Where a CTA's shared window starts for the kernel: the dynamic memory of a kernel
# with no static shared memory starts here, static memory first otherwise, the
# dynamic memory after it, 16-aligned (measured: benchmarks/results/smem_base_h200.txt;
# tile-ai/tilelang#2379's base "moves with the static shared memory").
WINDOW_START = 1024
# Operands whose wavefronts the H200 counted (rows, k, bits): the figure is exact there
# (benchmarks/results/wgmma_h200.md, wgmma_kernels_h200.md: Triton's 128x16 B).
_SHAPE = re.compile(r"m\d+n\d+k\d+$")


def handles(instr: ir.Instr) -> bool:
    """Instructions this module checks (the PTX reader lists them as not modelled)."""
    parts = instr.parts
    return (
        (parts[0] == "wgmma" and "mma_async" in parts)
        or parts[:4] == ["cp", "async", "bulk", "tensor"]
        or blackwell(instr)
    )


def blackwell(instr: ir.Instr) -> bool:
    """tcgen05.mma and tcgen05.cp: sm_100 reads of shared memory through descriptors,
    whose format is on paper only (`SM100_TCGEN05`): reported UNKNOWN, never passed."""
    return instr.parts[0] == "tcgen05" and instr.parts[1:2] in (["mma"], ["cp"])


BLACKWELL = (
    "sm_100 tcgen05 operands: the descriptor format is on paper only (no sm_100 machine "
    "here; docs/hardware.md), and Tensor Memory is not modelled"
)


# -- reading the instructions --------------------------------------------------------


@dataclass(frozen=True)
class Read:
    """One shared operand of one wgmma: its descriptor register's value."""

    event: Event
    which: str  # "A" or "B"
    op: Operand
    desc: Value


def wgmma_reads(event: Event) -> list[Read] | Unknown:
    """The descriptor operands of a ``wgmma.mma_async`` (A may be registers):
    ``d, a, b-desc, scale-d, imm-scale-a, imm-scale-b[, imm-trans-a], imm-trans-b``,
    the transposes only for .f16/.bf16 (PTX ISA 9.7.15.5.2 "wgmma.mma_async")."""
    instr = event.instr
    parts = instr.parts
    if "sp" in parts:
        return Unknown("sparse wgmma (.sp) is not modelled")
    shape = next((p for p in parts if _SHAPE.match(p)), None)
    types = [p for p in parts if p in OPERAND_BITS]
    if shape is None or len(types) < 2:
        return Unknown(
            f"a wgmma whose shape or operand types this reader does not know: {instr.opcode}"
        )
    atype, btype = types[-2], types[-1]
    ops = instr.operands
    a_desc = isinstance(ops[1], ir.Reg)
    transposes = [o.value for o in ops[6:] if isinstance(o, ir.Imm)]
    if atype in ("f16", "bf16"):
        want = 2 if a_desc else 1
        if len(transposes) != want:
            return Unknown(f"a wgmma without its {want} transpose immediates")
        trans_a, trans_b = transposes if a_desc else [0, transposes[0]]
    else:
        trans_a = trans_b = 0
    try:
        reads = [("B", btype, trans_b, ops[2])]
        if a_desc:
            reads.insert(0, ("A", atype, trans_a, ops[1]))
        return [
            Read(event, which, operand(shape, elem, which, trans), _register(event, reg))
            for which, elem, trans, reg in reads
        ]
    except SpecError as e:
        return Unknown(e.message)


def _register(event: Event, reg: ir.Operand) -> Value:
    if not isinstance(reg, ir.Reg):
        return Unknown("a descriptor operand that is not a register")
    return event.state.get(reg.name, Unknown(f"{reg.name} is unset"))


# -- evaluating a register over every point ------------------------------------------


@dataclass(frozen=True)
class Points:
    """The allocation a value lies in and the values of everything else it reads."""

    allocation: str
    others: list[dict[str, int]]
    # variables enumerated one value per residue class (`verify.ptx.periods`): name ->
    # period; every value of the variable gives what its class's value in `others` gives
    periods: dict[str, int] = field(default_factory=dict)


def points(value: Value, ranges, condition: Value | None = None) -> Points | Unknown:
    """Every point of the variables `value` reads besides its allocation's base. Given
    the `condition` it runs under, a variable the two read only modulo p (a stage
    index of a loop's iteration) is enumerated over p values (`Points.periods`),
    where all its values together are more than MAX_POINTS. (Without it, none is: a
    wgmma descriptor's points are matched to its writers' points, value for value.)"""
    if isinstance(value, Unknown):
        return value
    names = free_vars(value)
    bases = sorted(n for n in names if n.startswith(memory.SHARED_SYMBOL))
    if len(bases) != 1:
        return Unknown("its address is not one shared variable's address plus an offset")
    rest = sorted(names - set(bases))
    spans = {n: range(ranges[n].lo, ranges[n].hi) for n in rest}
    total = math.prod(len(s) for s in spans.values())
    periods = {}
    if total > MAX_POINTS and condition is not None:
        periods = _periods(value, condition, spans)
        spans.update({n: range(spans[n].start, spans[n].start + p) for n, p in periods.items()})
    count = math.prod(len(s) for s in spans.values())
    if count > MAX_POINTS:
        return Unknown(_too_many(rest, total, count, periods))
    values = itertools.product(*(spans[n] for n in rest))
    return Points(bases[0], [dict(zip(rest, v)) for v in values], periods)


def _too_many(rest: list[str], total: int, count: int, periods: dict[str, int]) -> str:
    taken = ", ".join(f"{n} modulo {p}" for n, p in periods.items())
    reduced = f"; {count} with {taken}" if taken else ""
    return (
        f"it depends on {', '.join(rest)} ({total} values{reduced}; at most {MAX_POINTS} "
        "are enumerated)"
    )


def _periods(value: Expr, condition: Value, spans: dict[str, range]) -> dict[str, int]:
    """The variables that `value` and `condition` (where it is known) read only modulo
    a period below their number of values, with that period."""
    found = {}
    for name, span in spans.items():
        together = [value]
        if isinstance(condition, Expr) and name in free_vars(condition):
            together.append(condition)
        p = joint_period(together, name)
        if p is not None and p < len(span):
            found[name] = p
    return found


def base_residues(kernel, allocation: str) -> list[int]:
    """Every base of the allocation below BASE_PERIOD: multiples of its alignment,
    at least 16. That is its declared .align, or for dynamic memory --shared-align
    where given, else WINDOW_START where the kernel declares no static shared
    variable (the dynamic memory then starts the CTA's window), else the .align."""
    variable = kernel.shared_variable(allocation)
    align = variable.align or 1
    if variable.size is None and kernel.options.shared_align:
        align = max(align, kernel.options.shared_align)
    elif variable.size is None and all(v.size is None for _, v in kernel.shared.values()):
        align = max(align, WINDOW_START)
    step = max(align, WGMMA_ALIGN)
    return list(range(0, BASE_PERIOD, step)) if step < BASE_PERIOD else [0]


# Values of a condition's variables a case does not fix, tried to show that it holds
# there: every value of a variable of at most _ALL_VALUES (a lane, a warp), a few of a
# wider one (a parameter: its bounds, middle and powers of two, as verify.ptx.guards
# tries them), at most MAX_TRIES combinations.
_ALL_VALUES = 64
MAX_TRIES = 4096


def executes(kernel, event: Event, ranges) -> Callable[[dict[str, int]], bool | str]:
    """env -> True where the instruction is known to run there (its condition holds
    at some value of the variables env does not fix), False where it is known not
    to (0 at every value), else why neither is known. A counterexample stands only
    at a point where it runs (`verify.ptx.guards` does the same for thread accesses);
    a point whose condition is unresolved may be checked but refutes nothing. Under
    the leader predicate of a whole warp's ``elect.sync`` (`_elected`) it runs where
    its block does, at a point that does not fix the lane. Evaluated once per value
    of the variables env fixes."""
    cond = run_condition(kernel, event, ranges)
    elected = cond is not event.condition
    if isinstance(cond, Unknown):
        reason = _UNRESOLVED.format(cond.reason)
        return lambda env: reason
    names = sorted(free_vars(cond))
    at = compiled(cond)
    seen: dict[tuple, bool | str] = {}

    def runs(env: dict[str, int]) -> bool | str:
        if elected and "lane" in env:
            return _UNRESOLVED.format("which lane elect.sync elects")
        fixed = tuple((n, env[n]) for n in names if n in env)
        if fixed not in seen:
            seen[fixed] = _holds_somewhere(at, dict(fixed), names, ranges)
        return seen[fixed]

    return runs


def run_condition(kernel, event: Event, ranges) -> Value:
    """When the instruction runs: its traced condition, or where that is Unknown for
    an elect.sync's leader predicate, the condition of the warp's getting there
    (`_leader_condition`). Points enumerated by residues take it into their periods,
    so that a class's representative runs where its members do."""
    cond = event.condition
    leader = _leader_condition(kernel, event, ranges) if isinstance(cond, Unknown) else None
    return cond if leader is None else leader


def _leader_condition(kernel, event: Event, ranges) -> Expr | None:
    """The instruction's condition where its guard is the leader predicate of a whole
    warp's ``elect.sync d|p, -1``, alone or and-ed (``and.pred``) with predicates the
    trace knows, every register of it written by one instruction: its block's
    condition times those predicates, where each is one value across a warp's lanes
    (they all run alike, the leader with them); else None. Exactly one lane of each
    warp that gets there runs it (PTX ISA "elect.sync": one leader among the
    membermask's threads, all of which execute it)."""
    guard = event.instr.guard
    if guard is None or guard[1] or not isinstance(event.block, Expr):
        return None
    writers: dict[str, list[ir.Instr]] = {}
    for item in kernel.fn.body:
        if isinstance(item, ir.Instr):
            for reg in destinations(item):
                writers.setdefault(reg, []).append(item)
    factors: list[Expr] = [event.block]
    leaders, pending = 0, [guard[0]]
    while pending:
        reg = pending.pop()
        found = writers.get(reg, [])
        value = event.state.get(reg)
        if len(found) != 1:
            return None
        if _elects(found[0], reg):
            leaders += 1
        elif isinstance(value, Expr):
            factors.append(value)
        elif found[0].opcode == "and.pred" and all(
            isinstance(o, ir.Reg) for o in found[0].operands[1:]
        ):
            pending += [o.name for o in found[0].operands[1:] if isinstance(o, ir.Reg)]
        else:
            return None
    if leaders != 1 or not all(_warp_uniform(f, ranges) for f in factors):
        return None
    cond: Value = factors[0]
    for f in factors[1:]:
        cond = kernel.ctx.op("*", cond, f) if isinstance(cond, Expr) else cond
    return cond if isinstance(cond, Expr) else None


MAX_UNIFORM_CASES = 1 << 16  # lanes times other values enumerated by _warp_uniform


def _warp_uniform(cond: Expr, ranges) -> bool:
    """Whether `cond` is one value across the lanes of a warp at every value of its
    other variables (``tid.x < 64`` is), shown by enumerating every case; False where
    they are too many or a variable has no range."""
    names = sorted(free_vars(cond))
    if "lane" not in names:
        return True
    if any(n not in ranges for n in names):
        return False
    others = [n for n in names if n != "lane"]
    spans = [range(ranges[n].lo, ranges[n].hi) for n in others]
    lanes = range(ranges["lane"].lo, ranges["lane"].hi)
    if math.prod(len(r) for r in spans) * len(lanes) > MAX_UNIFORM_CASES:
        return False
    at = compiled(cond)
    try:
        return all(
            len({at({**dict(zip(others, values)), "lane": lane}) for lane in lanes}) == 1
            for values in itertools.product(*spans)
        )
    except SpecError:
        return False


def _elects(instr: ir.Instr, reg: str) -> bool:
    """Whether `instr` is ``elect.sync d|reg, -1``: every lane of the warp takes part."""
    ops = instr.operands
    return (
        instr.parts[:2] == ["elect", "sync"]
        and len(ops) == 2
        and isinstance(ops[0], ir.RegPair)
        and ops[0].second.name == reg
        and isinstance(ops[1], ir.Imm)
        and ops[1].value in (-1, 0xFFFFFFFF)
    )


_UNRESOLVED = (
    "it runs under a condition this reader cannot resolve ({}), so the counterexample "
    "may not happen"
)


def _holds_somewhere(at, fixed: dict[str, int], names: list[str], ranges) -> bool | str:
    """True, False or why neither (`executes`) at the values `fixed` gives; False
    only where every value of the other variables was tried."""
    free = [n for n in names if n not in fixed]
    if any(n not in ranges for n in free):
        return _UNRESOLVED.format(f"its condition reads {', '.join(free)}, not all ranged")
    spans = [ranges[n] for n in free]
    tried = [range(r.lo, r.hi) if r.hi - r.lo <= _ALL_VALUES else _candidates(r) for r in spans]
    every = all(len(t) == r.hi - r.lo for t, r in zip(tried, spans))
    every = every and math.prod(len(t) for t in tried) <= MAX_TRIES
    for values in itertools.islice(itertools.product(*tried), MAX_TRIES):
        try:
            if at({**fixed, **dict(zip(free, values))}) != 0:
                return True
        except SpecError:
            every = False
    if every:
        return False
    return _UNRESOLVED.format(
        f"its condition holds at none of the values of {', '.join(free)} tried"
    )


def _candidates(r: Range) -> list[int]:
    picks = {r.lo, r.lo + 1, r.hi - 1, (r.lo + r.hi) // 2}
    picks |= {1 << k for k in range(64) if r.lo <= 1 << k < r.hi}
    return sorted(v for v in picks if r.lo <= v < r.hi)


def operand_chunks(op: Operand) -> list[tuple[int, int]]:
    """The first element of each 16-byte chunk: the XOR moves chunks whole."""
    t = op.per_chunk
    if op.major == "K":
        return [(r, k) for r in range(op.rows) for k in range(0, op.k, t)]
    return [(r, k) for r in range(0, op.rows, t) for k in range(op.k)]


# The starts `chunk_reader` is asked about: a descriptor's (below 2^18), or one taken
# modulo 1024 plus a base and the distance between two starts (`hopper.moved`).
_STARTS = Range(0, 1 << 19)


@lru_cache(maxsize=256)
def chunk_reader(lbo: int, sbo: int, mode: SwizzleMode, op: Operand):
    """(start, base offset) -> the byte wgmma reads each chunk's first element from
    (`operand_chunks` order) under a descriptor of these fields: read_address over
    every chunk at once (verify's vectorised enumeration, as `evaluate` gives it)."""
    desc = MatrixDescriptor(0, lbo, sbo, mode)
    address = read_address(desc, op, Var("row"), Var("k"), Var("start"), Var("bo"))
    coords = operand_chunks(op)
    rows = np.array([r for r, _ in coords], dtype=np.int64)
    ks = np.array([k for _, k in coords], dtype=np.int64)
    ranges = {"row": Range(0, op.rows), "k": Range(0, op.k), "start": _STARTS, "bo": Range(0, 8)}
    at = Vectorised([address], ranges)
    scalar = compiled(address)

    def read(start: int, bo: int) -> list[int]:
        if not _STARTS.lo <= start < _STARTS.hi:
            return [scalar({"row": r, "k": k, "start": start, "bo": bo}) for r, k in coords]
        env = {"row": rows, "k": ks, "start": np.int64(start), "bo": np.int64(bo)}
        return at(address, env, (len(coords),)).tolist()

    return read


# -- results -------------------------------------------------------------------------


def _source(kernel, instr: ir.Instr) -> tuple[str, int]:
    outer = instr.source.outer
    return outer if outer is not None else (kernel.module.file, instr.line)


def check_result(kernel, event: Event, what: str, status: Status, **fields) -> CheckResult:
    instr = event.instr
    file, line = _source(kernel, instr)
    label = f"{instr.opcode} [{os.path.basename(kernel.module.file)}:{instr.line}]"
    facts = fields.pop("facts", {})
    result = CheckResult(file, line, f"{what} {label}", status, **fields)
    result.facts.update(
        {
            "instruction": instr.opcode,
            "ptx_line": instr.line,
            "kernel": kernel.fn.name,
            "source": [f"{f}:{n}" for f, n in instr.source.frames],
            "assumed": kernel.assumed(),
            **facts,
        }
    )
    return result


def unknown_result(kernel, event: Event, what: str, reason: str) -> CheckResult:
    return check_result(kernel, event, what, Status.UNKNOWN, reason=reason)


def verdict_result(kernel, event: Event, what: str, verdict: Verdict, engine: str, facts=None):
    """The check's result from the verdict `verify.engines.cases` gave: decided by
    `engine` with `facts`, or UNKNOWN with its reason alone."""
    if verdict.status is Status.UNKNOWN:
        return unknown_result(kernel, event, what, verdict.reason)
    return check_result(
        kernel,
        event,
        what,
        verdict.status,
        counterexample=verdict.counterexample,
        engine=engine,
        facts=facts or {},
    )
