"""writer = reader for wgmma operands written by cp.async (and by 16-byte st.shared
of one ld.global's registers): the chunks wgmma reads hold one block of one matrix
in order, from the copies' global sources (`verify.ptx.hopper` calls it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from verify.engines.cases import Outcome, decide_cases
from verify.engines.enumeration import Vectorised
from verify.errors import SpecError
from verify.model.expr import Const, Expr, Range, add, free_vars
from verify.model.wgmma import Operand
from verify.ptx import ir, memory
from verify.ptx.hopper_common import (
    Read,
    check_result,
    chunk_reader,
    operand_chunks,
    verdict_result,
)
from verify.ptx.hopper_kblocks import Block
from verify.ptx.trace import Trace
from verify.ptx.values import Unknown, Value
from verify.results import CheckResult, Counterexample
from verify.smt.solve import Status

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
    if all(isinstance(r, (ir.Imm, ir.FloatImm)) for r in regs):
        return (
            f"{access.instruction} at PTX line {line} stores constants, not a matrix's "
            "elements, into the buffer wgmma reads (a TMA copy overwriting them is "
            "followed only for a store run once, fenced and barriered before every copy)"
        )
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
    values = evaluate_all(exprs, rest, {c: 0 for c in ctas}, trace.ranges)
    shifted = evaluate_all([access.source], rest, {c: 1 for c in ctas}, trace.ranges)
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
    names = [rest[k] for k in loops]
    columns = [grid[k].tolist() for k in loops]
    offsets, sources = at.tolist(), src.tolist()
    made: dict[int, Source] = {}  # one Source per global offset
    for i in np.flatnonzero(runs).tolist():
        key = tuple(zip(names, [column[i] for column in columns]))
        chunks = generations.setdefault(key, {})
        here = made.get(sources[i])
        if here is None:
            here = made[sources[i]] = Source(access.source_param, sources[i], line, writer)
        before = chunks.get(offsets[i], here)
        chunks[offsets[i]] = here if before is here or before == here else None
    return ""


def _grid(names: list[str], ranges) -> list[np.ndarray]:
    """Every combination of the variables' values, one flat array per variable."""
    axes = [np.arange(ranges[n].lo, ranges[n].hi, dtype=np.int64) for n in names]
    return [g.ravel() for g in np.meshgrid(*axes, indexing="ij")] if axes else []


def evaluate_all(exprs, names, fixed, ranges) -> list[np.ndarray] | None:
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


def copied_reader(
    kernel, event, read: Read, what: str, cases, written, facts, blocks
) -> CheckResult:
    name = f"writer_reader {what}"
    if isinstance(written, str):
        kept = facts.get("writers_kept")  # why hopper_writers kept them
        why = f"{written} (kept as writers: {kept})" if kept else written
        return check_result(kernel, event, name, Status.UNKNOWN, reason=why, facts=facts)

    def generations():
        """(point, generation key, its chunks, the chunks wgmma reads, what they hold)
        for every generation of copies writing every chunk the read reads, at base 0."""
        for point, base, at0, _ in cases:
            if base:
                continue
            chunks = chunk_reader(
                at0.leading_byte_offset, at0.stride_byte_offset, at0.swizzle, read.op
            )(at0.start_address, at0.base_offset)
            for key, gen in written.items():
                if any(point.get(n, v) != v for n, v in key):
                    continue  # another value of a variable the read shares
                held = [gen.get(c) for c in chunks]
                if None not in held:  # else this generation does not write all of it
                    yield point, key, gen, chunks, held

    def not_a_block(case) -> Outcome:
        point, key, gen, chunks, held = case
        wrong = _not_a_block(read.op, held)
        if wrong is not None:
            return _block_counterexample(read, point, key, gen, chunks, wrong)
        pitch = held[operand_chunks(read.op).index((1, 0) if read.op.major == "K" else (0, 1))]
        where = (tuple(sorted(point.items())), key)
        blocks.setdefault((id(event), read.which), (event, read.op, {}))[2][where] = Block(
            held[0].param, held[0].offset, pitch.offset - held[0].offset
        )
        return None

    found = list(generations())
    none = "" if found else "no iteration's cp.async copies write every chunk wgmma reads"
    verdict = decide_cases(found, not_a_block, incomplete=none)
    if verdict.status is Status.PROVED:
        facts = {**facts, "generations": len(found)}
    return verdict_result(kernel, event, name, verdict, "enumeration", facts)


def _not_a_block(op: Operand, held: list[Source]) -> tuple[int, int | None] | None:
    """The first chunk that breaks the block (its index, and the global offset it
    should hold, None where the rows would overlap): one parameter, chunks 16 bytes
    apart along the chunk (k for K-major, rows for MN-major), a constant pitch from
    one chunk line to the next, wide enough for the block."""
    coords = operand_chunks(op)
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


def _block_counterexample(read, point, key, gen, chunks, wrong) -> Counterexample:
    index, expected = wrong
    row, k = operand_chunks(read.op)[index]
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
    return Counterexample(summary, {**point, **dict(key), "base": 0, "row": row, "k": k})


# -- thread writes the TMA overwrites ---------------------------------------------------
#
# A st.shared before the kernel's TMA copies (the zero-fill of the shared template
# a device-built tensor map is made in, a buffer's initial zeros) writes nothing
# wgmma reads when every TMA copy into the allocation is ordered after it: on every
# path from the store to a copy, and never followed by the store again, an
# unguarded `fence.proxy.async` (shared state space) and then, in the same block, an
# unguarded `bar.sync` of the whole CTA (PTX ISA "Memory consistency model": the
# fence orders the thread's generic-proxy writes before the async proxy's, the
# barrier before the thread issuing the copy). The TMA check then decides the bytes
# wgmma reads from the boxes alone; bytes no box writes stay UNKNOWN there.


def _cuts(block) -> list[tuple[int, int]]:
    """(fence index, barrier index) pairs of one block, as above."""
    out = []
    for k, instr in enumerate(block.instrs):
        p = instr.parts
        if instr.guard is None and p[:3] == ["fence", "proxy", "async"]:
            if len(p) > 3 and not p[3].startswith("shared"):
                continue
            for j in range(k + 1, len(block.instrs)):
                b = block.instrs[j]
                if b.guard is None and b.parts[0] in ("bar", "barrier") and b.parts[1] == "sync":
                    if len(b.operands) == 1:  # no thread count: the whole CTA
                        out.append((k, j))
                    break
    return out


def _reaches(graph, start: tuple[int, int], targets: set[int], cut) -> bool:
    """Whether a path from instruction `start` (block, index), included, reaches
    one of `targets` (instruction ids) before instruction `cut` (block, index; None:
    none). A path entering the cut's block reaches its fence before its barrier."""
    seen: set[int] = set()
    work = [start]
    while work:
        b, k = work.pop()
        block = graph.blocks[b]
        for i in range(k, len(block.instrs)):
            if (b, i) == cut:
                break
            if id(block.instrs[i]) in targets:
                return True
        else:
            for succ, _ in block.succs:
                if succ not in seen:
                    seen.add(succ)
                    work.append((succ, 0))
    return False


def overwritten_by_tma(graph, store: ir.Instr, copies: list[ir.Instr]) -> ir.Instr | None:
    """The fence that orders `store` before every TMA copy in `copies` (above), or None."""
    where = {id(i): (b.index, k) for b in graph.blocks for k, i in enumerate(b.instrs)}
    if id(store) not in where or not copies or any(id(c) not in where for c in copies):
        return None
    sb, si = where[id(store)]
    if any(_reaches(graph, where[id(c)], {id(store)}, None) for c in copies):
        return None  # a copy may run before the store
    targets = {id(c) for c in copies} | {id(store)}
    for block in graph.blocks:
        for fence, barrier in _cuts(block):
            if block.index == sb and fence < si < barrier:
                continue  # the store between the fence and the barrier
            cut = (block.index, barrier)
            if _reaches(graph, (sb, si + 1), targets, cut):
                continue  # a copy (or the store again) on a path around the barrier
            if _reaches(graph, (block.index, barrier + 1), {id(store)}, None):
                continue  # the store runs again after the barrier
            return block.instrs[fence]
    return None
