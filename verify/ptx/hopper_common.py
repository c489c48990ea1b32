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
from verify.ptx.periods import joint_period
from verify.ptx.trace import Event
from verify.ptx.values import Unknown, Value
from verify.results import CheckResult, Counterexample
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


def executes(event: Event) -> Callable[[dict[str, int]], bool]:
    """env -> False only where the instruction's condition is known to be 0 there
    (evaluated once per value of the variables it reads)."""
    cond = event.condition
    if isinstance(cond, Unknown):
        return lambda env: True
    names = sorted(free_vars(cond))
    at = compiled(cond)
    seen: dict[tuple[int, ...], bool] = {}

    def runs(env: dict[str, int]) -> bool:
        if any(n not in env for n in names):
            return True
        key = tuple(env[n] for n in names)
        if key not in seen:
            seen[key] = at(env) != 0
        return seen[key]

    return runs


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


def refuted_result(
    kernel, event: Event, what: str, cex: Counterexample, engine="enumeration", facts=None
) -> CheckResult:
    """REFUTED by the case `cex` names, found by `engine`'s enumeration."""
    return check_result(
        kernel, event, what, Status.REFUTED, counterexample=cex, engine=engine, facts=facts or {}
    )
