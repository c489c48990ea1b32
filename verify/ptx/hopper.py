"""wgmma's descriptors and TMA's boxes in a traced kernel: placement, cost and
writer = reader, from the registers the PTX builds.

A ``wgmma.mma_async`` reads its shared operands through 64-bit matrix
descriptors (PTX ISA 9.7.15.5.1.2 "Shared Memory Matrix Layout" and
9.7.15.5.1.2.2 "Matrix Descriptor Format"); the kernel builds each one with
shifts, masks and ors of a shared address (Triton: ``bfe.u32 r, addr, 4, 15``
then ``or.b64`` of the fields; CuTe: ``shr``, ``and 16383``, ``or.b64``, a
stage offset added to the low half through ``mov.b64 {lo, hi}``). The tracer
(`verify.ptx.trace`) gives the descriptor register as an expression of the
allocation's address (``smem_N``), the loop's stage counters and the thread; this
module evaluates it for every value of those variables and every base the
allocation can have (every multiple of its alignment below BASE_PERIOD: the
descriptor keeps address bits 4-17 and wgmma's XOR reads bits 4-9, so a base
4096 bytes further reads the same pattern 4096 bytes further, as long as the
buffer lies below 2^18, which every sm_90 shared address does), decodes each
value with `verify.model.wgmma` and checks:

* **placement** -- where the allocation's writers are thread instructions
  (st.shared, stmatrix, cp.async), their addresses are the base plus an offset
  (`verify.ptx.memory` places nothing else), so the tile they write moves with
  the base byte for byte. wgmma XORs absolute address bits, so what it reads
  moves with the base only where the base is on the pattern's repeat (256, 512,
  1024 bytes for 32B/64B/128B) or the descriptor's base offset follows it.
  PROVED: for every base, every element wgmma reads sits at the byte it reads at
  base 0 plus the base. REFUTED names the base, the element, the byte the writer
  put it at and the byte wgmma reads (issue 25: Fuser#4096's 256/512/1024 bases).
  This proves that the kernel reads at every base what it reads at an aligned
  one; that the two agree at the aligned base is writer = reader below.
* **cost** -- `verify.model.wgmma.read_wavefronts`: operand bytes / 128 per
  instruction, exact on the H200 for 64x16 and 128x16 f16 operands
  (benchmarks/results/wgmma_h200.md; wgmma_kernels_h200.md: Triton's tutorial
  matmul and CuTe's wgmma_sm90 to the wavefront), the model's count elsewhere.
* **writer = reader**: for cp.async writers, the chunks wgmma reads hold one
  block of one matrix in order, from the copies' global sources (the section
  "writer = reader for cp.async writers" below); for a TMA writer
  (``cp.async.bulk.tensor`` into the allocation), the box's layout from the
  tensor map (`--tma-map`, a host object the PTX does not hold) against the
  descriptor, element for element, at every base, by
  `verify.model.tma.wgmma_reads_box` (verify's runner). A 16-byte st.shared of
  the registers one unpredicated ld.global of the same width loaded, in order, in
  the same straight-line run (Triton's attention Q), is read as a copy of that
  load's global bytes; other st.shared and stmatrix writers: UNKNOWN (which
  elements their registers hold is not followed).

* **k_blocks** -- the wgmma of one accumulator, their operands proved blocks of
  their matrices, add A's K columns against the same K rows of B, each K slice
  once (the section "the k-blocks of one accumulation" below).

A TMA copy gets ``aligned 128`` (PTX ISA "cp.async.bulk.tensor": the shared
address is 128-byte aligned; the H200 refuses 16 bytes off) and, where thread
instructions read (a load) or write (a store) the same allocation, placement:
TMA swizzles absolute addresses (measured, benchmarks/results/wgmma_h200.md), a
thread instruction's address is the base plus an offset, so they agree at every
base only when the box starts on its pattern's repeat (tilelang#2379: a
128-byte swizzle 128 bytes past a 1024-byte boundary).
"""

from __future__ import annotations

import itertools
import math
import os
import re
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from verify.engines.enumeration import Vectorised
from verify.errors import SpecError
from verify.model import tma as tma_model
from verify.model.expr import (
    BinOp,
    Const,
    Expr,
    Range,
    Var,
    add,
    bounds,
    compiled,
    evaluate,
    free_vars,
)
from verify.model.wgmma import (
    BASE_PERIOD,
    OPERAND_BITS,
    MatrixDescriptor,
    Operand,
    SwizzleMode,
    operand,
    read_address,
    read_wavefronts,
)
from verify.ptx import ir, memory
from verify.ptx.trace import Event, Trace
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
MEASURED = {(64, 16, 16), (128, 16, 16)}
_SHAPE = re.compile(r"m\d+n\d+k\d+$")


def handles(instr: ir.Instr) -> bool:
    """Instructions this module checks (the PTX reader lists them as not modelled)."""
    parts = instr.parts
    return (
        (parts[0] == "wgmma" and "mma_async" in parts)
        or parts[:4] == ["cp", "async", "bulk", "tensor"]
        or _blackwell(instr)
    )


def _blackwell(instr: ir.Instr) -> bool:
    """tcgen05.mma and tcgen05.cp: sm_100 reads of shared memory through descriptors,
    whose format is on paper only (`SM100_TCGEN05`): reported UNKNOWN, never passed."""
    return instr.parts[0] == "tcgen05" and instr.parts[1:2] in (["mma"], ["cp"])


BLACKWELL = (
    "sm_100 tcgen05 operands: the descriptor format is on paper only (no sm_100 machine "
    "here; docs/hardware.md), and Tensor Memory is not modelled"
)


# -- the tensor map, stated by the user -----------------------------------------------


@dataclass(frozen=True)
class MapOption:
    """One ``--tma-map``: the tensor map a copy reads (`param`, or every copy)."""

    param: str | None
    tmap: tma_model.TensorMap


def parse_tma_map(text: str) -> MapOption:
    """``dataType=FLOAT16,boxDim={64,128},swizzle=128B[,param=NAME]``: the
    ``cuTensorMapEncodeTiled`` arguments that fix the shared layout (the
    ``CU_TENSOR_MAP_`` prefixes may be left out)."""
    fields: dict[str, str] = {}
    for m in re.finditer(r"(\w+)\s*=\s*(\{[^}]*\}|[^,]+)", text):
        fields[m[1]] = m[2].strip()
    unknown = set(fields) - {"dataType", "boxDim", "swizzle", "param"}
    if unknown or not {"dataType", "boxDim"} <= set(fields):
        raise SpecError(
            "--tma-map: expected dataType=TYPE,boxDim={INNER,OUTER},swizzle=MODE[,param=NAME], "
            f"found {text!r}"
        )
    try:
        box = tuple(int(x) for x in fields["boxDim"].strip("{}").split(","))
    except ValueError:
        raise SpecError(
            f"--tma-map boxDim: expected {{INNER,OUTER}}, found {fields['boxDim']}"
        ) from None
    tmap = tma_model.TensorMap.encode_tiled(
        _prefixed(fields["dataType"], "CU_TENSOR_MAP_DATA_TYPE_"),
        box,
        swizzle=_prefixed(fields.get("swizzle", "NONE"), "CU_TENSOR_MAP_SWIZZLE_"),
    )
    return MapOption(fields.get("param"), tmap)


def _prefixed(value: str, prefix: str) -> str:
    return value if value.startswith(prefix) else prefix + value


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


@dataclass(frozen=True)
class Copy:
    """One ``cp.async.bulk.tensor``: a load (global -> shared) or a store."""

    event: Event
    load: bool
    shared: Value  # the shared address
    map_name: str | None  # the parameter holding the tensor map, where visible


def tma_copy(event: Event, fn: ir.Function, symbol) -> Copy | Unknown:
    """``cp.async.bulk.tensor.Nd.dst.src... [dst], [map, {c...}], ...``: the shared
    side is operand 0 for a load, operand 1 for a store (PTX ISA "cp.async.bulk.tensor")."""
    parts = event.instr.parts
    for what in ("im2col", "multicast::cluster"):
        if any(p.startswith(what) for p in parts):
            return Unknown(f"a TMA copy with .{what}: not modelled")
    load = parts[5].startswith("shared")
    ops = event.instr.operands
    shared_op, tensor = (ops[0], ops[1]) if load else (ops[1], ops[0])
    if not isinstance(shared_op, ir.Addr) or not isinstance(tensor, ir.TensorAddr):
        return Unknown("a TMA copy whose operands this reader does not read")
    return Copy(event, load, _shared_address(event, shared_op, symbol), _map_name(fn, tensor))


def _shared_address(event: Event, addr: ir.Addr, symbol) -> Value:
    if isinstance(addr.base, ir.Reg):
        base = event.state.get(addr.base.name, Unknown(f"{addr.base.name} is unset"))
    elif isinstance(addr.base, ir.Sym):
        base = symbol(addr.base.name)
    else:
        return Unknown("an absolute shared address")
    if isinstance(base, Unknown) or not addr.offset:
        return base
    return BinOp("+", base, Const(addr.offset))


def _map_name(fn: ir.Function, tensor: ir.TensorAddr) -> str | None:
    """The parameter the tensor map operand names: itself, or the symbol its register
    was moved or converted from (Triton: ``mov.b32 %r17, k_param_0``, ``cvt.u64.u32``,
    ``cvta.param.u64``)."""
    operand: ir.Operand = tensor.tensor_map
    for _ in range(8):  # a chain of movs and conversions, never a loop
        if isinstance(operand, ir.Sym):
            return operand.name
        defining = [
            i
            for i in fn.body
            if isinstance(i, ir.Instr)
            and i.operands[:1] == (operand,)
            and i.parts[0] in ("mov", "cvt", "cvta")
            and len(i.operands) == 2
        ]
        if len(defining) != 1:
            return None
        operand = defining[0].operands[1]
    return None


# -- evaluating a register over every point ------------------------------------------


@dataclass(frozen=True)
class Points:
    """The allocation a value lies in and the values of everything else it reads."""

    allocation: str
    others: list[dict[str, int]]


def points(value: Value, ranges) -> Points | Unknown:
    if isinstance(value, Unknown):
        return value
    names = free_vars(value)
    bases = sorted(n for n in names if n.startswith(memory.SHARED_SYMBOL))
    if len(bases) != 1:
        return Unknown("its address is not one shared variable's address plus an offset")
    rest = sorted(names - set(bases))
    sizes = [ranges[n].size for n in rest]
    if math.prod(sizes) > MAX_POINTS:
        return Unknown(
            f"it depends on {', '.join(rest)} ({math.prod(sizes)} values; at most "
            f"{MAX_POINTS} are enumerated)"
        )
    spans = [range(ranges[n].lo, ranges[n].hi) for n in rest]
    return Points(bases[0], [dict(zip(rest, v)) for v in itertools.product(*spans)])


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


def _executes(event: Event, env: dict[str, int]) -> bool:
    """False only where the instruction's condition is known to be 0 there."""
    cond = event.condition
    if isinstance(cond, Unknown) or not free_vars(cond) <= set(env):
        return True
    return evaluate(cond, env) != 0


# -- placement of a wgmma read ---------------------------------------------------------


@dataclass(frozen=True)
class Moved:
    """An element whose byte does not move with the base."""

    row: int
    k: int
    expected: int  # the byte at base 0, plus the base: where the writer put it
    read: int


def _chunks(op: Operand) -> list[tuple[int, int]]:
    """The first element of each 16-byte chunk: the XOR moves chunks whole."""
    t = op.per_chunk
    if op.major == "K":
        return [(r, k) for r in range(op.rows) for k in range(0, op.k, t)]
    return [(r, k) for r in range(0, op.rows, t) for k in range(op.k)]


@lru_cache(maxsize=256)
def _reader(lbo: int, sbo: int, mode: SwizzleMode, op: Operand):
    desc = MatrixDescriptor(0, lbo, sbo, mode)
    at = compiled(read_address(desc, op, Var("row"), Var("k"), Var("start"), Var("bo")))
    return lambda start, bo: [
        at({"row": r, "k": k, "start": start, "bo": bo}) for r, k in _chunks(op)
    ]


@lru_cache(maxsize=65536)
def moved(at0: MatrixDescriptor, atb: MatrixDescriptor, base: int, op: Operand) -> Moved | None:
    """The first element whose byte under `atb` (the buffer at `base`) is not its
    byte under `at0` (at base 0) plus `base`, or None. Only address bits below 2^10
    and the distance between the starts decide it (wgmma's XOR reads bits 4-9), so
    both starts are taken modulo 1024 before the enumeration."""
    start0 = at0.start_address % 1024
    shift = atb.start_address - base - at0.start_address
    startb = base % 1024 + start0 + shift
    before = _reader(at0.leading_byte_offset, at0.stride_byte_offset, at0.swizzle, op)(
        start0, at0.base_offset
    )
    after = _reader(atb.leading_byte_offset, atb.stride_byte_offset, atb.swizzle, op)(
        startb, atb.base_offset
    )
    for (row, k), b0, bb in zip(_chunks(op), before, after):
        if bb - base % 1024 != b0:
            return Moved(
                row, k, b0 - start0 + at0.start_address + base, bb - startb + atb.start_address
            )
    return None


# -- results -------------------------------------------------------------------------


def _source(kernel, instr: ir.Instr) -> tuple[str, int]:
    outer = instr.source.outer
    return outer if outer is not None else (kernel.module.file, instr.line)


def _result(kernel, event: Event, what: str, status: Status, **fields) -> CheckResult:
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


def _unknown(kernel, event: Event, what: str, reason: str) -> CheckResult:
    return _result(kernel, event, what, Status.UNKNOWN, reason=reason)


# -- the checks ------------------------------------------------------------------------


def check(kernel, trace: Trace, placed: dict[str, list[memory.Access]]) -> list[CheckResult]:
    """Every wgmma operand and TMA copy of the trace, checked (module doc)."""
    maps = [parse_tma_map(t) for t in kernel.options.tma_maps]
    copies: list[tuple[Copy, Points]] = []
    written: dict[tuple, Generations | str] = {}  # per allocation and writers: their sources
    blocks: Blocks = {}  # the matrix blocks cp.async-written operands were proved to be
    results: list[CheckResult] = []
    for event in trace.events:
        if handles(event.instr) and event.instr.parts[0] == "cp":
            results += _copy_results(kernel, trace, event, placed, maps, copies)
    for event in trace.events:
        if handles(event.instr) and event.instr.parts[0] == "wgmma":
            results += _wgmma_results(kernel, trace, event, placed, maps, copies, written, blocks)
        elif _blackwell(event.instr):
            results.append(_unknown(kernel, event, "not modelled", BLACKWELL))
    return results + _k_blocks(kernel, trace, blocks)


def decoded(kernel, trace: Trace, read: Read):
    """(allocation, [(point, base, descriptor at base 0, at base)]) or Unknown."""
    where = points(read.desc, trace.ranges)
    if isinstance(where, Unknown):
        return where
    assert isinstance(read.desc, Expr), "points() refuses an Unknown"
    at = compiled(read.desc)
    cases = []
    try:
        for point in where.others:
            at0 = MatrixDescriptor.decode(at({**point, where.allocation: 0}))
            for base in base_residues(kernel, where.allocation):
                env = {**point, where.allocation: base}
                if _executes(read.event, env):
                    cases.append((point, base, at0, MatrixDescriptor.decode(at(env))))
    except SpecError as e:
        return Unknown(f"its value cannot be evaluated: {e.message}")
    return where.allocation, cases


def _wgmma_results(
    kernel, trace, event, placed, maps, copies, written, blocks
) -> list[CheckResult]:
    reads = wgmma_reads(event)
    if isinstance(reads, Unknown):
        return [_unknown(kernel, event, "not modelled", reads.reason)]
    results = []
    for read in reads:
        what = f"operand {read.which} of"
        found = decoded(kernel, trace, read)
        if isinstance(found, Unknown):
            results.append(_unknown(kernel, event, f"descriptor {what}", found.reason))
            continue
        allocation, cases = found
        if not cases:
            continue
        facts = {
            "operand": read.which,
            "descriptor": str(cases[0][3]),
            "allocation": kernel.shared_label(allocation),
            "major": read.op.major,
        }
        results.append(_cost(kernel, event, read, what, facts))
        writers = [a for a in placed.get(allocation, []) if _writes(a)]
        tma_writers = [(c, p) for c, p in copies if c.load and p.allocation == allocation]
        feeding = _feeding(trace, event, writers)
        if feeding:
            results.append(_placement(kernel, event, read, what, cases, feeding, facts))
            key = (allocation, tuple(id(a) for a in feeding))
            if key not in written:
                written[key] = copied(kernel, trace, feeding)
            results.append(
                _copied_reader(kernel, event, read, what, cases, written[key], facts, blocks)
            )
        if tma_writers:
            results.append(_tma_reader(kernel, event, read, what, cases, tma_writers, maps, facts))
        if not feeding and not tma_writers:
            results.append(
                _unknown(
                    kernel,
                    event,
                    f"placement {what}",
                    f"no writer of {kernel.shared_label(allocation)} is placed in the kernel",
                )
            )
    return results


def _feeding(trace: Trace, event: Event, writers: list[memory.Access]) -> list[memory.Access]:
    """The writers that may have written what `event` reads: those before it in the
    trace and those in a loop around it (an epilogue's stores after the last read
    of the loop, reusing the buffer, cannot)."""
    order = {id(e): i for i, e in enumerate(trace.events)}
    at = order[id(event)]
    return [a for a in writers if order[id(a.event)] < at or set(a.event.loops) & set(event.loops)]


def _writes(access: memory.Access) -> bool:
    head = access.event.instr.parts[0]
    return head in ("st", "stmatrix", "cp")


def _cost(kernel, event, read: Read, what: str, facts: dict) -> CheckResult:
    op = read.op
    exact = (op.rows, op.k, op.elem_bits) in MEASURED
    n = read_wavefronts(op)
    result = _result(
        kernel,
        event,
        f"wavefronts {what}",
        Status.PROVED,
        wavefronts=n,
        ideal_wavefronts=n,
        fidelity=(
            "exact (matches H200 measurements)"
            if exact
            else "model (operand bytes / 128; measured on 64x16 and 128x16 f16 operands)"
        ),
        engine="wgmma model",
        facts={**facts, "operand_bytes": op.rows * op.k * op.elem_bytes},
    )
    return result


def _placement(kernel, event, read: Read, what: str, cases, writers, facts) -> CheckResult:
    lines = sorted({a.event.instr.line for a in writers})
    writer = f"{writers[0].instruction} at PTX line {lines[0]}" + (
        f" and {len(lines) - 1} more" if len(lines) > 1 else ""
    )
    for point, base, at0, atb in cases:
        miss = moved(at0, atb, base, read.op)
        if miss is None:
            continue
        summary = (
            f"with the buffer at byte {base}: element (row {miss.row}, k {miss.k}) of operand "
            f"{read.which} is written at byte {miss.expected} (its writers, {writer}, place "
            f"the tile relative to the buffer) but wgmma reads byte {miss.read} "
            f"({atb.swizzle.label} XORs absolute address bits; descriptor {atb})"
        )
        cex = Counterexample(summary, {"base": base, **point, "row": miss.row, "k": miss.k})
        return _result(
            kernel,
            event,
            f"placement {what}",
            Status.REFUTED,
            counterexample=cex,
            engine="enumeration",
            facts=facts,
        )
    bases = sorted({base for _, base, _, _ in cases})
    step = bases[1] - bases[0] if len(bases) > 1 else BASE_PERIOD
    return _result(
        kernel,
        event,
        f"placement {what}",
        Status.PROVED,
        engine="enumeration",
        facts={**facts, "bases": f"every multiple of {step}", "points": len(cases)},
    )


# -- TMA copies ----------------------------------------------------------------------


def _map_for(copy: Copy, maps: list[MapOption]) -> tma_model.TensorMap | None:
    """The --tma-map naming the copy's parameter, else the one naming none."""
    named = [m.tmap for m in maps if m.param is not None and m.param == copy.map_name]
    anonymous = [m.tmap for m in maps if m.param is None]
    found = named or anonymous
    return found[0] if found else None


def _no_map(kernel, event, what: str) -> CheckResult:
    return _unknown(
        kernel,
        event,
        what,
        "the tensor map is a host object the PTX does not hold: state it with --tma-map "
        "dataType=FLOAT16,boxDim={64,128},swizzle=128B[,param=NAME] (cuTensorMapEncodeTiled's "
        "arguments)",
    )


def _copy_results(kernel, trace, event, placed, maps, copies) -> list[CheckResult]:
    copy = tma_copy(event, kernel.fn, kernel.symbol)
    if isinstance(copy, Unknown):
        return [_unknown(kernel, event, "not modelled", copy.reason)]
    where = points(copy.shared, trace.ranges)
    if isinstance(where, Unknown):
        return [_unknown(kernel, event, "aligned 128", f"its shared address: {where.reason}")]
    copies.append((copy, where))
    assert isinstance(copy.shared, Expr), "points() refuses an Unknown"
    at = compiled(copy.shared)
    cases = [
        (point, base, at({**point, where.allocation: base}))
        for point in where.others
        for base in base_residues(kernel, where.allocation)
        if _executes(event, {**point, where.allocation: base})
    ]
    facts = {"allocation": kernel.shared_label(where.allocation), "tensor_map": copy.map_name}
    results = [_aligned(kernel, event, cases, facts)]
    tmap = _map_for(copy, maps)
    heads = ("ld", "ldmatrix") if copy.load else ("st", "stmatrix", "cp")
    peers = [a for a in placed.get(where.allocation, []) if a.event.instr.parts[0] in heads]
    if tmap is not None:
        box = (min(d for _, b, d in cases if b == 0), max(d for _, b, d in cases if b == 0))
        peers = [a for a in peers if _may_touch(a, box[0], box[1] + tmap.bytes, trace)]
    if peers and tmap is None:
        results.append(_no_map(kernel, event, "placement"))
    elif peers and tmap is not None:
        results.append(_box_placement(kernel, event, cases, tmap, peers, copy.load, facts))
    return results


def _may_touch(access: memory.Access, lo: int, hi: int, trace: Trace) -> bool:
    """Whether the access's bytes at base 0 may fall in [lo, hi) (True where its
    offset cannot be bounded)."""
    if not isinstance(access.offset, Expr):
        return True
    try:
        first, last = bounds(access.offset, trace.ranges)
    except SpecError:
        return True
    return first < hi and last + access.bytes > lo


def _aligned(kernel, event, cases, facts) -> CheckResult:
    for point, base, dest in cases:
        if dest % tma_model.DESTINATION_ALIGN:
            cex = Counterexample(
                f"with the buffer at byte {base}: the box's shared address is byte {dest}, "
                f"not a multiple of {tma_model.DESTINATION_ALIGN}",
                {"base": base, **point},
            )
            return _result(
                kernel,
                event,
                "aligned 128",
                Status.REFUTED,
                counterexample=cex,
                engine="enumeration",
                facts=facts,
            )
    return _result(kernel, event, "aligned 128", Status.PROVED, engine="enumeration", facts=facts)


def tma_swizzle(address: int, span: int) -> int:
    """The byte a TMA box's byte lands at under a `span`-byte swizzle: CuTe's
    Swizzle<B,4,3> on the absolute shared address (`verify.model.tma`)."""
    if not span:
        return address
    bits = {32: 1, 64: 2, 128: 3}[span]
    return address ^ (((address >> 7) & ((1 << bits) - 1)) << 4)


def _box_placement(kernel, event, cases, tmap, peers, load: bool, facts) -> CheckResult:
    """The box moves with the base byte for byte, as the thread peers' addresses do."""
    inner = tmap.inner_bytes
    chunks = [(r, c) for r in range(tmap.rows) for c in range(0, inner, 16)]
    by_point = {tuple(sorted(p.items())): d for p, b, d in cases if b == 0}
    peer = peers[0]
    role = "reads" if load else "writes"
    for point, base, dest in cases:
        dest0 = by_point.get(tuple(sorted(point.items())))
        if dest0 is None or not tmap.swizzle:
            continue
        for r, c in chunks:
            there = tma_swizzle(dest + r * inner + c, tmap.swizzle)
            here = tma_swizzle(dest0 + r * inner + c, tmap.swizzle) + base
            if there != here:
                summary = (
                    f"with the buffer at byte {base} the box starts at byte {dest}, "
                    f"{dest % tma_model.PATTERN_BYTES[tmap.swizzle]} bytes past its "
                    f"{tma_model.PATTERN_BYTES[tmap.swizzle]}-byte {tmap.swizzle}B pattern: "
                    f"element (inner {c // tmap.elem_bytes}, row {r}) is at byte "
                    f"{there}, but {peer.instruction} at PTX line {peer.event.instr.line} "
                    f"{role} it at byte {here} (its address moves with the buffer; "
                    "TMA swizzles absolute addresses: tilelang#2379)"
                )
                cex = Counterexample(summary, {"base": base, **point, "row": r})
                return _result(
                    kernel,
                    event,
                    "placement",
                    Status.REFUTED,
                    counterexample=cex,
                    engine="enumeration",
                    facts=facts,
                )
    return _result(kernel, event, "placement", Status.PROVED, engine="enumeration", facts=facts)


def _box_coords(tmap, boxes: int, op: Operand, delta: int) -> tuple[str, str] | str:
    """The box coordinates (inner, row) of the operand's element (row, k), as spec
    expressions, where the operand starts `delta` bytes into a run of `boxes` boxes
    of `tmap` laid end to end; or why it does not fit there. The run is one box of
    `boxes` times the rows (`TensorMap.rows`); an MN-major operand wider than a
    box's inner extent continues in the next box (Triton splits a 128-wide B so)."""
    elem, inner, rows = tmap.elem_bytes, tmap.box[0], tmap.rows
    if elem * 8 != op.elem_bits:
        return f"the box holds {elem * 8}-bit elements, wgmma reads {op.elem_bits}-bit ones"
    if delta % elem:
        return f"the descriptor starts {delta} bytes into the box, inside an element"
    if op.major == "K":
        row0, k0 = divmod(delta // elem, inner)
        if k0 + op.k > inner or row0 + op.rows > rows * boxes:
            return "the operand reads past the boxes written"
        return f"k + {k0}", f"row + {row0}"
    box, within = divmod(delta, tmap.bytes)
    k0, n_in = divmod(within // elem, inner)
    n0 = box * inner + n_in
    if n0 + op.rows > inner * boxes or k0 + op.k > rows:
        return "the operand reads past the boxes written"
    return f"(row + {n0}) % {inner}", f"k + {k0} + {rows} * ((row + {n0}) / {inner})"


def _tma_reader(kernel, event, read: Read, what: str, cases, copies, maps, facts) -> CheckResult:
    """writer = reader: the operand is the box the TMA copy wrote, at every base. The
    descriptor at base 0, counted from the box, is decided at every base at once; a
    base where it differs (a base offset computed from the address) at that base."""
    groups: dict = {}
    for point, base, at0, atb in cases:
        found = _containing(kernel, copies, at0.start_address, maps)
        if isinstance(found, str):
            return _unknown(kernel, event, f"writer_reader {what}", found)
        copy, tmap, boxes, dest0, align = found
        coords = _box_coords(tmap, boxes, read.op, at0.start_address - dest0)
        if isinstance(coords, str):
            return _unknown(kernel, event, f"writer_reader {what}", coords)
        run = tma_model.TensorMap(tmap.dtype, (tmap.box[0], tmap.rows * boxes), tmap.swizzle)
        desc = _from_box(at0, dest0)
        moved_desc = _from_box(atb, dest0 + base)
        at_base = None if moved_desc == desc else base
        groups.setdefault((run, moved_desc, coords, align, at_base), (copy, point))
    for (tmap, desc, coords, align, at_base), (copy, point) in groups.items():
        status, mismatch = _box_verdict(tmap, desc, read.op, align, coords, at_base)
        if status is Status.PROVED:
            continue
        if mismatch is None:
            return _unknown(
                kernel, event, f"writer_reader {what}", "verify's runner decided nothing"
            )
        summary = (
            f"{mismatch}: the box of the TMA copy at PTX line {copy.event.instr.line} "
            f"(its boxes, end to end: {tmap.layout_text()}) read through {desc} as "
            f"operand {read.which}"
        )
        cex = Counterexample(
            summary, {**point, "base": mismatch.base, "row": mismatch.row, "k": mismatch.k}
        )
        return _result(
            kernel,
            event,
            f"writer_reader {what}",
            Status.REFUTED,
            counterexample=cex,
            engine="verify runner",
            facts=facts,
        )
    return _result(
        kernel,
        event,
        f"writer_reader {what}",
        Status.PROVED,
        engine="verify runner",
        facts={**facts, "boxes": len(groups)},
    )


def _from_box(desc: MatrixDescriptor, destination: int) -> MatrixDescriptor:
    """The descriptor with its start counted from the box's destination."""
    return MatrixDescriptor(
        desc.start_address - destination,
        desc.leading_byte_offset,
        desc.stride_byte_offset,
        desc.swizzle,
        desc.base_offset,
    )


def _containing(kernel, copies, start: int, maps):
    """(copy, map, boxes, destination at base 0, destination alignment) of the TMA
    box that holds byte `start` at base 0 and the boxes of the same map laid end to
    end after it (at most MAX_BOX rows in all), or why there is none."""
    placed: list[tuple[int, Copy, tma_model.TensorMap, str]] = []
    for copy, where in copies:
        tmap = _map_for(copy, maps)
        if tmap is None:
            return "the tensor map of a copy into it is not stated (--tma-map)"
        at = compiled(copy.shared)
        placed += [
            (at({**p, where.allocation: 0}), copy, tmap, where.allocation) for p in where.others
        ]
    # one box per destination (a prologue's and a loop's copies write the same stages)
    placed = sorted(
        {(d, id(m)): (d, c, m, a) for d, c, m, a in placed}.values(), key=lambda x: x[0]
    )
    for i, (dest0, copy, tmap, allocation) in enumerate(placed):
        if not dest0 <= start < dest0 + tmap.bytes:
            continue
        last = i  # the boxes after it, end to end, that the operand may run into
        while (
            last + 1 < len(placed)
            and last - i + 1 < tma_model.MAX_BOX // tmap.rows
            and placed[last + 1][2] == tmap
            and placed[last + 1][0] == placed[last][0] + tmap.bytes
        ):
            last += 1
        boxes = last - i + 1
        step = base_residues(kernel, allocation)[1:2] or [BASE_PERIOD]
        return copy, tmap, boxes, dest0, _alignment(dest0, step[0])
    return "no TMA box written in the kernel holds the descriptor's start"


def _alignment(dest0: int, step: int) -> int:
    """The alignment every destination has: the base's (`step`) and its offset's.
    (Below the PTX's 128 bytes `aligned 128` refutes the copy.)"""
    return min(step, dest0 & -dest0 if dest0 else BASE_PERIOD)


@lru_cache(maxsize=256)
def _box_verdict(tmap, desc: MatrixDescriptor, op: Operand, align: int, coords, at_base=None):
    report, mismatch = tma_model.wgmma_reads_box(
        tmap,
        desc,
        op,
        align=max(align, tma_model.DESTINATION_ALIGN),
        coords=coords,
        at_base=at_base,
    )
    verdict = next(r for r in report if r.property.startswith("equivalent"))
    return verdict.status, mismatch


# -- writer = reader for cp.async writers ---------------------------------------------
#
# A cp.async copies 16 bytes of global memory: which elements it puts where is its
# global source, an offset from a pointer parameter (`verify.ptx.memory`). The tile
# wgmma reads is right when the chunks it reads hold one block of one matrix in
# order: along the chunk, consecutive elements (K-major: k; MN-major: rows), and
# from one chunk row to the next a constant pitch, the matrix's row stride. That is
# decided at base 0 (placement carries it to every base) for every lane, warp and
# loop value, the parameters at their --assume values, CTA 0 (a source that moves
# with the CTA by one constant per copy, checked at CTA 1, reads the same block
# shifted there). A 16-byte st.shared of an ld.global's registers, in order, is such
# a copy (`_loaded_source`); other st.shared and stmatrix write registers whose
# elements the PTX reader does not follow: UNKNOWN.

MAX_WRITER_POINTS = 1 << 16  # lane x warp x loop values enumerated per copy


@dataclass(frozen=True)
class Source:
    """What one 16-byte shared chunk holds: global bytes of a parameter's matrix."""

    param: str
    offset: int
    line: int  # the copy's PTX line
    writer: str = "cp.async"  # or st.shared (of an ld.global's registers)


# Per generation (the values of the loop variables around the copies), the chunk
# at each shared byte offset (None where two copies of one generation disagree).
Generations = dict[tuple, dict[int, Source | None]]


def copied(kernel, trace: Trace, writers: list[memory.Access]) -> Generations | str:
    """The chunks the allocation's cp.async copies (and 16-byte stores of registers
    loaded straight from global memory) write, or why they cannot be read."""
    generations: Generations = {}
    for access in writers:
        if access.instruction.startswith("st.shared"):
            loaded = _loaded_source(kernel, access)
            if isinstance(loaded, str):
                return loaded
            access = replace(access, source_param=loaded[0], source=loaded[1])
        why = _copy_problem(access)
        if why:
            return why
        assert isinstance(access.offset, Expr) and isinstance(access.source, Expr)
        names = free_vars(access.offset) | free_vars(access.source)
        unassumed = sorted(n for n in names if n.startswith(memory.POINTER))
        if unassumed:
            return (
                f"the global source of cp.async at PTX line {access.event.instr.line} depends "
                f"on {', '.join(unassumed)}: --assume gives it a value"
            )
        ctas = sorted(n for n in names if n.startswith("ctaid_"))
        rest = sorted(names - set(ctas))
        if math.prod(trace.ranges[n].size for n in rest) > MAX_WRITER_POINTS:
            return f"cp.async at PTX line {access.event.instr.line} has too many instances"
        why = _fill(generations, access, rest, ctas, trace)
        if why:
            return why
    return generations


def _copy_problem(access: memory.Access) -> str:
    line = access.event.instr.line
    if access.source is None:
        return (
            f"{access.instruction} at PTX line {line} writes registers whose elements the PTX "
            "reader does not follow (only cp.async's global sources and 16-byte stores of "
            "an ld.global's registers name them)"
        )
    if access.bytes != 16:
        return f"cp.async at PTX line {line} copies {access.bytes} bytes, not a 16-byte chunk"
    if isinstance(access.source, Unknown):
        return f"the global source of cp.async at PTX line {line}: {access.source.reason}"
    if access.source_param is None or access.source is None:
        return f"the global source of cp.async at PTX line {line} is not a pointer parameter's"
    return ""


_BRANCHES = ("bra", "ret", "exit", "call", "brx")


def _loaded_source(kernel, access: memory.Access) -> tuple[str, Value] | str:
    """(pointer parameter, global offset) of the 16 bytes an st.shared writes when its
    registers are, in order, those of one unpredicated ld.global of the same width
    earlier in its straight-line run, the load's address register unchanged since
    (so the store's registers hold the load's value of it); else why not (UNKNOWN)."""
    instr = access.event.instr
    line = instr.line
    if access.bytes != 16:
        return f"{access.instruction} at PTX line {line} writes {access.bytes} bytes, not 16"
    data = instr.operands[1] if len(instr.operands) > 1 else None
    regs = data.items if isinstance(data, ir.Vec) else (data,)
    body = kernel.fn.body
    at = next(i for i, item in enumerate(body) if item is instr)
    for i in range(at - 1, -1, -1):
        item = body[i]
        if isinstance(item, ir.Label) or item.parts[0] in _BRANCHES:
            break
        if not set(_written(item)) & set(regs):
            continue
        if not (item.parts[:2] == ["ld", "global"] and _written(item) == tuple(regs)):
            break
        if item.guard is not None:
            return (
                f"the ld.global at PTX line {item.line} that st.shared at PTX line {line} "
                "stores is predicated: the lanes it masks keep other values"
            )
        address = item.operands[1]
        if not isinstance(address, ir.Addr) or not isinstance(address.base, ir.Reg):
            break
        if any(address.base in _written(x) for x in body[i + 1 : at] if isinstance(x, ir.Instr)):
            break
        base = access.event.state.get(address.base.name, Unknown("unset"))
        if isinstance(base, Unknown):
            return f"the address of the ld.global at PTX line {item.line}: {base.reason}"
        value = kernel.ctx.rebuild(add(base, Const(address.offset)))
        placed = memory.split_base(value, memory.POINTER)
        if isinstance(placed, Unknown):
            return f"the ld.global at PTX line {item.line} does not read a pointer parameter"
        return placed
    return (
        f"{access.instruction} at PTX line {line} writes registers not loaded, in order, by "
        "one ld.global just before it: which elements they hold is not followed"
    )


def _written(item: ir.Instr | ir.Label) -> tuple[ir.Operand, ...]:
    """The registers an instruction writes: its first operand's (stores write none)."""
    if isinstance(item, ir.Label) or item.parts[0] in ("st", "red", "cp") or not item.operands:
        return ()
    first = item.operands[0]
    items = first.items if isinstance(first, ir.Vec) else (first,)
    return tuple(x for x in items if isinstance(x, ir.Reg))


def _fill(generations: Generations, access, rest, ctas, trace) -> str:
    """Every instance's chunk into `generations`, evaluated over all of them at once."""
    line = access.event.instr.line
    cond = access.event.condition
    known = isinstance(cond, Expr) and free_vars(cond) <= set(rest) | set(ctas)
    exprs = [access.offset, access.source, *([cond] if known else [])]
    values = _evaluate_all(exprs, rest, {c: 0 for c in ctas}, trace.ranges)
    shifted = _evaluate_all([access.source], rest, {c: 1 for c in ctas}, trace.ranges)
    if values is None or shifted is None:
        return f"the addresses of cp.async at PTX line {line} cannot be evaluated"
    at, src = values[0], values[1]
    runs = values[2] != 0 if known else np.ones(at.shape, dtype=bool)
    if ctas and len(set((shifted[0] - src)[runs].tolist())) > 1:
        return (
            f"the global source of cp.async at PTX line {line} does not move with the CTA "
            "by one constant"
        )
    loops = [k for k, n in enumerate(rest) if n not in ("lane", "warp")]
    grid = _grid(rest, trace.ranges)
    writer = ".".join(access.instruction.split(".")[:2])
    for i in np.flatnonzero(runs).tolist():
        key = tuple((rest[k], int(grid[k][i])) for k in loops)
        chunks = generations.setdefault(key, {})
        here = Source(access.source_param, int(src[i]), line, writer)
        offset = int(at[i])
        chunks[offset] = here if chunks.get(offset, here) == here else None
    return ""


def _grid(names: list[str], ranges) -> list[np.ndarray]:
    """Every combination of the variables' values, one flat array per variable."""
    axes = [np.arange(ranges[n].lo, ranges[n].hi, dtype=np.int64) for n in names]
    return [g.ravel() for g in np.meshgrid(*axes, indexing="ij")] if axes else []


def _evaluate_all(exprs, names, fixed, ranges) -> list[np.ndarray] | None:
    """`exprs` at every combination of `names` with `fixed` set, as `evaluate` would
    give them (verify's vectorised enumeration), or None where they may not be
    evaluable (a subtraction that may be negative, a divisor that may be 0)."""
    grid = _grid(names, ranges)
    size = grid[0].size if grid else 1
    env = {n: g for n, g in zip(names, grid)}
    env.update({n: np.full(size, v, dtype=np.int64) for n, v in fixed.items()})
    bound = {**ranges, **{n: Range(v, v + 1) for n, v in fixed.items()}}
    try:
        vectorised = Vectorised(exprs, bound)
    except SpecError:
        return None
    return [np.asarray(vectorised(e, env, (size,))) for e in exprs]


def _copied_reader(
    kernel, event, read: Read, what: str, cases, written, facts, blocks
) -> CheckResult:
    name = f"writer_reader {what}"
    if isinstance(written, str):
        return _unknown(kernel, event, name, written)
    checked = 0
    for point, base, at0, _ in cases:
        if base:
            continue
        chunks = _reader(at0.leading_byte_offset, at0.stride_byte_offset, at0.swizzle, read.op)(
            at0.start_address, at0.base_offset
        )
        for key, gen in written.items():
            if any(point.get(n, v) != v for n, v in key):
                continue  # another value of a variable the read shares
            held = [gen.get(c) for c in chunks]
            if None in held:
                continue  # this generation does not write all of it
            wrong = _not_a_block(read.op, held)
            checked += 1
            if wrong is not None:
                return _refuted_block(
                    kernel, event, read, name, point, key, gen, chunks, wrong, facts
                )
            pitch = held[_chunks(read.op).index((1, 0) if read.op.major == "K" else (0, 1))]
            where = (tuple(sorted(point.items())), key)
            blocks.setdefault((id(event), read.which), (event, read.op, {}))[2][where] = Block(
                held[0].param, held[0].offset, pitch.offset - held[0].offset
            )
    if not checked:
        return _unknown(
            kernel, event, name, "no iteration's cp.async copies write every chunk wgmma reads"
        )
    return _result(
        kernel,
        event,
        name,
        Status.PROVED,
        engine="enumeration",
        facts={**facts, "generations": checked},
    )


def _not_a_block(op: Operand, held: list[Source]) -> tuple[int, int | None] | None:
    """The first chunk that breaks the block (its index, and the global offset it
    should hold, None where the rows would overlap): one parameter, chunks 16 bytes
    apart along the chunk (k for K-major, rows for MN-major), a constant pitch from
    one chunk line to the next, wide enough for the block."""
    coords = _chunks(op)
    t = op.per_chunk
    if op.major == "K":
        lines, extent, next_line = [(r, k // t) for r, k in coords], op.k // t, (1, 0)
    else:
        lines, extent, next_line = [(k, r // t) for r, k in coords], op.rows // t, (0, 1)
    first = held[0]
    second = coords.index(next_line)
    pitch = held[second].offset - first.offset
    if pitch < 16 * extent:
        return second, None
    for i, (src, (line, step)) in enumerate(zip(held, lines)):
        expected = first.offset + line * pitch + step * 16
        if src.param != first.param or src.offset != expected:
            return i, expected
    return None


def _refuted_block(kernel, event, read, name, point, key, gen, chunks, wrong, facts):
    index, expected = wrong
    row, k = _chunks(read.op)[index]
    src = gen[chunks[index]]
    first = gen[chunks[0]]
    holder = next(
        (
            at
            for at, s in gen.items()
            if s is not None and (s.param, s.offset) == (first.param, expected)
        ),
        None,
    )
    where = f"was written at byte {holder}" if holder is not None else "was not copied there"
    if expected is None:
        where, expected = "overlaps the chunk line before", src.offset
    summary = (
        f"element (row {row}, k {k}) of operand {read.which}: wgmma reads byte {chunks[index]}, "
        f"which holds global byte {src.offset} of {src.param} "
        f"({src.writer} at PTX line {src.line}); "
        f"the block it reads starts at global byte {first.offset}, so the element is global "
        f"byte {expected}, which {where}"
    )
    cex = Counterexample(summary, {**point, **dict(key), "base": 0, "row": row, "k": k})
    return _result(
        kernel,
        event,
        name,
        Status.REFUTED,
        counterexample=cex,
        engine="enumeration",
        facts=facts,
    )


# -- the k-blocks of one accumulation --------------------------------------------------
#
# The wgmma of one accumulator (the same D registers, in one loop body) add A_i x B_i:
# right when A_i's K columns are B_i's K rows and no K slice is added twice. With
# each operand proved a block of its matrix (writer = reader above), that is: every
# A_i reads the same rows of A and every B_i the same columns of B, and the K offset
# of A_i from the group's first K column equals B_i's, distinct over the group
# (tile-ai/tilelang#2965: a K-panel stride that does not match the layout written).


@dataclass(frozen=True)
class Block:
    """The block of a matrix an operand reads: its parameter, the global byte of its
    element (0, 0) and the bytes from one chunk line to the next."""

    param: str
    origin: int
    pitch: int


# (event id, "A"/"B") -> (event, operand, {(point, generation): Block})
Blocks = dict[tuple[int, str], tuple[Event, Operand, dict[tuple, Block]]]


def _k_blocks(kernel, trace: Trace, blocks: Blocks) -> list[CheckResult]:
    groups: dict[tuple, list[Event]] = {}
    for event in trace.events:
        if (id(event), "A") in blocks and (id(event), "B") in blocks:
            accumulator = event.instr.operands[0]
            groups.setdefault((repr(accumulator), tuple(event.loops)), []).append(event)
    return [_k_group(kernel, events, blocks) for events in groups.values() if len(events) > 1]


def _k_offset(op: Operand, block: Block, origin: int) -> tuple[int, int] | None:
    """(K offset, offset across K) in elements of `block` from a block at `origin`
    of the same matrix and pitch, or None where it is not on the element grid."""
    delta = block.origin - origin
    along, across = divmod(delta, block.pitch)  # chunk lines, then bytes within one
    if across % op.elem_bytes:
        return None
    within = across // op.elem_bytes
    # K-major: lines are rows (M or N), K runs within a line; MN-major the reverse.
    return (within, along) if op.major == "K" else (along, within)


def _k_group(kernel, events: list[Event], blocks: Blocks) -> CheckResult:
    first = events[0]
    name = f"k_blocks of {len(events)} wgmma into one accumulator, first"
    keys = set.intersection(*(set(blocks[(id(e), w)][2]) for e in events for w in ("A", "B")))
    if not keys:
        return _unknown(
            kernel, first, name, "no stage is proved a block of its matrix for all of them"
        )
    for key in sorted(keys):
        wrong = _k_mismatch(events, blocks, key)
        if wrong:
            cex = Counterexample(wrong, dict(key[0]) | dict(key[1]))
            return _result(
                kernel, first, name, Status.REFUTED, counterexample=cex, engine="enumeration"
            )
    return _result(
        kernel, first, name, Status.PROVED, engine="enumeration", facts={"stages": len(keys)}
    )


def _k_mismatch(events: list[Event], blocks: Blocks, key) -> str:
    """Why the group's operands at `key` do not add up to one product, or ''."""
    offsets: dict[str, list[tuple[int, int] | None]] = {}
    for which in ("A", "B"):
        found = [(blocks[(id(e), which)][1], blocks[(id(e), which)][2][key]) for e in events]
        if len({(b.param, b.pitch) for _, b in found}) > 1:
            return f"the {which} operands read blocks of different matrices or pitches"
        origin = min(b.origin for _, b in found)
        offsets[which] = [_k_offset(op, b, origin) for op, b in found]
    for i, (a, b) in enumerate(zip(offsets["A"], offsets["B"])):
        line = events[i].instr.line
        if a is None or b is None or a[1] or b[1]:
            return f"the wgmma at PTX line {line} reads other rows of A or columns of B"
        if a[0] != b[0]:
            return (
                f"the wgmma at PTX line {line} multiplies A's K columns from {a[0]} by B's "
                f"K rows from {b[0]}"
            )
    ks = [a[0] for a in offsets["A"] if a is not None]
    if len(set(ks)) != len(ks):
        return f"a K slice is added twice: the group's K offsets are {ks}"
    return ""
