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
  block of one matrix in order, from the copies' global sources
  (`verify.ptx.hopper_copies`); for a TMA writer
  (``cp.async.bulk.tensor`` into the allocation), the box's layout from the
  tensor map (`--tma-map`, a host object the PTX does not hold) against the
  descriptor, element for element, at every base, by
  `verify.model.tma.wgmma_reads_box` (verify's runner). A 16-byte st.shared of
  the registers one unpredicated ld.global of the same width loaded, in order, in
  the same straight-line run (Triton's attention Q), is read as a copy of that
  load's global bytes; other st.shared and stmatrix writers: UNKNOWN (which
  elements their registers hold is not followed). Thread writers on no path to the
  wgmma (threads parted by a thread-dependent branch considered), or writing no
  byte it reads, are dropped first (`verify.ptx.hopper_writers`), as are zero-fills
  the TMA copies overwrite (`verify.ptx.hopper_copies.overwritten_by_tma`). A
  shared store not placed at a bounded offset that may run before the wgmma makes
  writer = reader UNKNOWN, whatever the placed writers and boxes prove.

* **k_blocks** -- the wgmma of one accumulator, their operands proved blocks of
  their matrices (cp.async-fed: in the global tensor; TMA-fed: inside one box),
  add A's K columns against the same K rows of B, each K slice once; UNKNOWN where
  one wgmma of the accumulator is not proved so (`verify.ptx.hopper_kblocks`).

A TMA copy gets ``aligned 128`` (PTX ISA "cp.async.bulk.tensor": the shared
address is 128-byte aligned; the H200 refuses 16 bytes off) and, where thread
instructions read (a load) or write (a store) the same allocation, placement:
TMA swizzles absolute addresses (measured, benchmarks/results/wgmma_h200.md), a
thread instruction's address is the base plus an offset, so they agree at every
base only when the box starts on its pattern's repeat (tilelang#2379: a
128-byte swizzle 128 bytes past a 1024-byte boundary).

This module decodes the descriptors and decides placement and cost; TMA copies are
`verify.ptx.hopper_tma`, writer = reader for thread writers `verify.ptx.hopper_copies`,
the writers that count `verify.ptx.hopper_writers`, the k-blocks
`verify.ptx.hopper_kblocks`, what they share `verify.ptx.hopper_common`,
boxes paired by their coordinates `verify.ptx.hopper_pairing`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

from verify.engines.cases import Outcome, closed_form, decide_cases
from verify.errors import SpecError
from verify.model.expr import Expr, compiled
from verify.model.wgmma import BASE_PERIOD, MatrixDescriptor, Operand, read_wavefronts
from verify.ptx import cfg, memory
from verify.ptx.hopper_common import (
    BLACKWELL,
    Points,
    Read,
    base_residues,
    blackwell,
    check_result,
    chunk_reader,
    executes,
    handles,
    operand_chunks,
    points,
    unknown_result,
    verdict_result,
    wgmma_reads,
)
from verify.ptx.hopper_copies import Generations, copied, copied_reader, overwritten_by_tma
from verify.ptx.hopper_kblocks import Blocks, k_blocks
from verify.ptx.hopper_tma import Copy, copy_results, parse_tma_map, tma_reader
from verify.ptx.hopper_writers import WriterFilter
from verify.ptx.trace import Event, Trace
from verify.ptx.values import Unknown
from verify.results import CheckResult, Counterexample
from verify.smt.solve import Status

# Operands whose wavefronts the H200 counted (rows, k, bits): the figure is exact there
# (benchmarks/results/wgmma_h200.md, wgmma_kernels_h200.md: Triton's 128x16 B).
MEASURED = {(64, 16, 16), (128, 16, 16)}


# -- placement of a wgmma read ---------------------------------------------------------


@dataclass(frozen=True)
class Moved:
    """An element whose byte does not move with the base."""

    row: int
    k: int
    expected: int  # the byte at base 0, plus the base: where the writer put it
    read: int


@lru_cache(maxsize=65536)
def moved(at0: MatrixDescriptor, atb: MatrixDescriptor, base: int, op: Operand) -> Moved | None:
    """The first element whose byte under `atb` (the buffer at `base`) is not its
    byte under `at0` (at base 0) plus `base`, or None. Only address bits below 2^10
    and the distance between the starts decide it (wgmma's XOR reads bits 4-9), so
    both starts are taken modulo 1024 before the enumeration."""
    start0 = at0.start_address % 1024
    shift = atb.start_address - base - at0.start_address
    startb = base % 1024 + start0 + shift
    before = chunk_reader(at0.leading_byte_offset, at0.stride_byte_offset, at0.swizzle, op)(
        start0, at0.base_offset
    )
    after = chunk_reader(atb.leading_byte_offset, atb.stride_byte_offset, atb.swizzle, op)(
        startb, atb.base_offset
    )
    for (row, k), b0, bb in zip(operand_chunks(op), before, after):
        if bb - base % 1024 != b0:
            return Moved(
                row, k, b0 - start0 + at0.start_address + base, bb - startb + atb.start_address
            )
    return None


# -- the checks ------------------------------------------------------------------------


def check(kernel, trace: Trace, placed: dict[str, list[memory.Access]]) -> list[CheckResult]:
    """Every wgmma operand and TMA copy of the trace, checked (module doc)."""
    maps = [parse_tma_map(t) for t in kernel.options.tma_maps]
    copies: list[tuple[Copy, Points]] = []
    written: dict[tuple, Generations | str] = {}  # per allocation and writers: their sources
    blocks: Blocks = {}  # the matrix blocks cp.async-written operands were proved to be
    results: list[CheckResult] = []
    orders: dict | None = None  # `_orders`, made at the first wgmma
    for event in trace.events:
        if handles(event.instr) and event.instr.parts[0] == "cp":
            results += copy_results(kernel, trace, event, placed, maps, copies)
    for event in trace.events:
        if handles(event.instr) and event.instr.parts[0] == "wgmma":
            orders = orders or _orders(kernel, trace, placed)
            results += _wgmma_results(
                kernel, trace, event, placed, maps, copies, written, blocks, orders
            )
        elif blackwell(event.instr):
            results.append(unknown_result(kernel, event, "not modelled", BLACKWELL))
    return results + k_blocks(kernel, trace, blocks)


def _orders(kernel, trace: Trace, placed: dict[str, list[memory.Access]]) -> dict:
    """The thread writers TMA copies overwrite (overwritten_by_tma), and the filter of
    those that cannot reach or do not meet what a wgmma reads (hopper_writers): a
    control-flow graph of the kernel, made only for a kernel with a wgmma (it cost
    every sm_80 kernel milliseconds)."""
    writer_filter = WriterFilter.of(kernel, trace)
    return {
        "graph": writer_filter.graph,
        "writers": writer_filter,
        "unplaced": _unplaced_stores(trace, placed),
    }


def decoded(kernel, trace: Trace, read: Read):
    """(allocation, [(point, base, descriptor at base 0, at base)]) or Unknown."""
    where = points(read.desc, trace.ranges)
    if isinstance(where, Unknown):
        return where
    assert isinstance(read.desc, Expr), "points() refuses an Unknown"
    at = compiled(read.desc)
    cases = []
    runs = executes(kernel, read.event, trace.ranges)
    bases = base_residues(kernel, where.allocation)
    try:
        for point in where.others:
            at0 = MatrixDescriptor.decode(at({**point, where.allocation: 0}))
            for base in bases:
                env = {**point, where.allocation: base}
                if runs(env) is not False:
                    cases.append((point, base, at0, MatrixDescriptor.decode(at(env))))
    except SpecError as e:
        return Unknown(f"its value cannot be evaluated: {e.message}")
    return where.allocation, cases


def _wgmma_results(
    kernel, trace, event, placed, maps, copies, written, blocks, orders
) -> list[CheckResult]:
    reads = wgmma_reads(event)
    if isinstance(reads, Unknown):
        return [unknown_result(kernel, event, "not modelled", reads.reason)]
    results = []
    runs = executes(kernel, event, trace.ranges)
    for read in reads:
        what = f"operand {read.which} of"
        found = decoded(kernel, trace, read)
        if isinstance(found, Unknown):
            results.append(unknown_result(kernel, event, f"descriptor {what}", found.reason))
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
        first = len(results)
        writers = [a for a in placed.get(allocation, []) if _writes(a)]
        tma_writers = [(c, p) for c, p in copies if c.load and p.allocation == allocation]
        feeding, dropped = _thread_writers(kernel, event, read, cases, writers, tma_writers, orders)
        facts.update(dropped)
        if feeding:
            results.append(_placement(kernel, event, read, what, cases, feeding, facts))
            key = (allocation, tuple(id(a) for a in feeding))
            if key not in written:
                written[key] = copied(kernel, trace, feeding)
            results.append(
                copied_reader(kernel, event, read, what, cases, written[key], facts, blocks)
            )
        if tma_writers:
            results.append(
                tma_reader(kernel, event, read, what, cases, tma_writers, maps, facts, blocks)
            )
        if not feeding and not tma_writers:
            results.append(
                unknown_result(
                    kernel,
                    event,
                    f"placement {what}",
                    f"no writer of {kernel.shared_label(allocation)} is placed in the kernel",
                )
            )
        results += _unplaced_writer(kernel, event, what, orders)
        results[first:] = [_runs_at_counterexample(r, runs, allocation) for r in results[first:]]
    return results


def _runs_at_counterexample(result: CheckResult, runs, allocation: str) -> CheckResult:
    """A refutation of a wgmma read stands only where the wgmma is known to run at its
    counterexample (`hopper_common.executes`); else UNKNOWN saying why."""
    cex = result.counterexample
    if result.status is not Status.REFUTED or cex is None:
        return result
    ran = runs({**cex.instance, allocation: cex.instance["base"]})
    if ran is True:
        return result
    return replace(result, status=Status.UNKNOWN, reason=ran, counterexample=None, engine="")


def _unplaced_stores(trace: Trace, placed: dict[str, list[memory.Access]]) -> list[Event]:
    """The stores into shared memory (st, stmatrix, atom, red, cp.async) the kernel
    reader could not place at a bounded offset of one allocation: where they write
    is not known, so they may write what any wgmma reads."""
    at = {id(a.event) for accesses in placed.values() for a in accesses}
    return [e for e in trace.events if _shared_store(e.instr) and id(e) not in at]


def _shared_store(instr) -> bool:
    p = instr.parts
    if not any(q.startswith("shared") for q in p):
        return False
    return p[0] in ("st", "stmatrix", "atom", "red") or (
        p[:2] == ["cp", "async"] and "bulk" not in p
    )


def _unplaced_writer(kernel, event, what: str, orders) -> list[CheckResult]:
    """writer = reader UNKNOWN where an unplaced store may run before the read
    (`hopper_writers.WriterFilter.may_precede`), whatever the other writers prove."""
    for store in orders["unplaced"]:
        if orders["writers"].may_precede(store.instr, event.instr):
            why = (
                f"{store.instr.opcode} at PTX line {store.instr.line} may write the buffer: "
                "where it stores is not placed (its own result says why)"
            )
            return [unknown_result(kernel, event, f"writer_reader {what}", why)]
    return []


def _thread_writers(
    kernel, event, read: Read, cases, writers, tma_writers, orders
) -> tuple[list[memory.Access], dict[str, str]]:
    """The thread writers that may have written what `read` reads, and facts naming
    those dropped: overwritten by the TMA copies (`_not_overwritten`), on no path to
    the wgmma or writing no byte it reads (`verify.ptx.hopper_writers`)."""
    facts: dict[str, str] = {}
    if writers and tma_writers:
        kept = _not_overwritten(kernel, writers, [c.event.instr for c, _ in tma_writers], orders)
        if len(kept) < len(writers):
            lines = sorted({a.event.instr.line for a in writers if a not in kept})
            facts["overwritten_by_tma"] = ", ".join(f"PTX line {n}" for n in lines)
        writers = kept
    writers, dropped = orders["writers"].keep(event, read, cases, writers)
    return writers, {**facts, **dropped}


def _not_overwritten(kernel, feeding, copies, orders) -> list[memory.Access]:
    """The writers in `feeding` the TMA copies do not overwrite: a st.shared run once,
    ordered before every copy by a fence.proxy.async and a bar.sync
    (`verify.ptx.hopper_copies.overwritten_by_tma`), writes nothing wgmma reads."""
    if "graph" not in orders:
        orders["graph"] = cfg.build(kernel.fn)
    kept = []
    for a in feeding:
        key = (id(a.event.instr), tuple(id(c) for c in copies))
        if key not in orders:
            once = a.instruction.startswith("st.shared") and not a.event.loops
            orders[key] = once and overwritten_by_tma(orders["graph"], a.event.instr, copies)
        if not orders[key]:
            kept.append(a)
    return kept


def _writes(access: memory.Access) -> bool:
    head = access.event.instr.parts[0]
    return head in ("st", "stmatrix", "cp")


def _cost(kernel, event, read: Read, what: str, facts: dict) -> CheckResult:
    op = read.op
    exact = (op.rows, op.k, op.elem_bits) in MEASURED
    n = read_wavefronts(op)
    result = check_result(
        kernel,
        event,
        f"wavefronts {what}",
        closed_form().status,
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

    def misplaced(case) -> Outcome:
        point, base, at0, atb = case
        miss = moved(at0, atb, base, read.op)
        if miss is None:
            return None
        summary = (
            f"with the buffer at byte {base}: element (row {miss.row}, k {miss.k}) of operand "
            f"{read.which} is written at byte {miss.expected} (its writers, {writer}, place "
            f"the tile relative to the buffer) but wgmma reads byte {miss.read} "
            f"({atb.swizzle.label} XORs absolute address bits; descriptor {atb})"
        )
        return Counterexample(summary, {"base": base, **point, "row": miss.row, "k": miss.k})

    verdict = decide_cases(cases, misplaced)
    name = f"placement {what}"
    if verdict.status is not Status.PROVED:
        return verdict_result(kernel, event, name, verdict, "enumeration", facts)
    bases = sorted({base for _, base, _, _ in cases})
    step = bases[1] - bases[0] if len(bases) > 1 else BASE_PERIOD
    facts = {**facts, "bases": f"every multiple of {step}", "points": len(cases)}
    return verdict_result(kernel, event, name, verdict, "enumeration", facts)
