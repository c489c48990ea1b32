"""Which thread writers of a wgmma operand's buffer can change what it reads
(`verify.ptx.hopper` asks before writer = reader and placement):

* **reachability** -- a writer no control-flow path leads from to the wgmma runs,
  in every thread, only after the thread's last execution of the wgmma, or on a
  path that never reaches it (tutorial 09's persistent kernel zeroes its C buffer
  on the path taken when K has no tiles, which exits; an epilogue after the loop
  reuses the stage buffers). That holds for two threads as long as they follow one
  path: they part first at a branch on a thread-dependent predicate
  (`thread_dependent`) and meet again at its immediate post-dominator, so a writer
  is dropped only where no such branch has the writer or the wgmma between the
  two (`divergent_regions`; Triton's mbarrier wait loops part threads only inside
  the loop). A write after the read in every thread's own order that reaches
  another thread's read of the same instance is a race between them, which is the
  kernel's barriers' to order, not this check's.
* **disjoint bytes** -- a writer whose bytes (its offset in the allocation over
  every lane, warp and loop value, plus its width; stmatrix: the 16-byte row of
  each lane that supplies an address, lanes 0-7, 0-15 or 0-31 for .x1/.x2/.x4)
  never meet the bytes the operand reads (every chunk of every case
  `hopper.decoded` gives, relative to the base) cannot change them. Decided by
  enumeration where the writer's offset reads only bounded variables; one reading
  a parameter, a CTA index or too many values is kept.

Each writer dropped is named in the result's facts (`unreachable_writers`,
`disjoint_writers`); one kept for want of a decision in `writers_kept`, which the
UNKNOWN writer = reader result's reason repeats.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from verify.model.expr import Expr, Range, free_vars
from verify.model.instructions import parse_instruction
from verify.ptx import cfg, ir, memory
from verify.ptx.hopper_common import Read, chunk_reader
from verify.ptx.hopper_copies import evaluate_all
from verify.ptx.ops import destinations
from verify.ptx.trace import Trace

MAX_WRITER_POINTS = 1 << 16  # lane x warp x loop values of one writer's offset
MAX_SPAN = 1 << 22  # bytes of the window the two byte sets are compared in
CHUNK = 16  # bytes of one chunk wgmma reads, and of one stmatrix row

# Instructions whose result is a function of their operands alone: equal operands in
# two threads give equal results. Everything else (loads, shuffles, votes, mbarrier
# waits, atomics) may give each thread its own value.
_PURE = {
    "abs", "add", "addc", "and", "bfe", "bfi", "bfind", "brev", "clz", "cnot", "copysign",
    "cvt", "cvta", "div", "fma", "lop3", "mad", "mad24", "madc", "max", "min", "mov", "mul",
    "mul24", "neg", "not", "or", "popc", "prmt", "rem", "sad", "selp", "set", "setp", "shf",
    "shl", "shr", "slct", "sub", "subc", "testp", "xor",
}  # fmt: skip
# Special registers one CTA's threads all read the same value of.
_CTA_UNIFORM = (
    "%ctaid", "%nctaid", "%ntid", "%nwarpid", "%clusterid", "%nclusterid", "%cluster_ctaid",
    "%cluster_nctaid", "%cluster_ctarank", "%cluster_nctarank", "%dynamic_smem_size",
    "%total_smem_size",
)  # fmt: skip


def thread_dependent(fn: ir.Function, seed: frozenset[str] = frozenset()) -> set[str]:
    """Registers whose value may differ between two threads of one CTA that followed
    the same path: `seed`, and those written from a special register other than
    `_CTA_UNIFORM`'s, by an instruction outside `_PURE` (ld.param and ld.const read
    one value for all), under such a guard, or from such a register
    (flow-insensitive, to a fixpoint)."""
    instrs = [i for i in fn.body if isinstance(i, ir.Instr)]
    written = {d for i in instrs for d in destinations(i)}
    tainted = set(seed)
    changed = True
    while changed:
        changed = False
        for instr in instrs:
            dests = set(destinations(instr)) - tainted
            if dests and _may_differ(instr, written, tainted):
                tainted |= dests
                changed = True
    return tainted


def _may_differ(instr: ir.Instr, written: set[str], tainted: set[str]) -> bool:
    parts = instr.parts
    if parts[0] not in _PURE and not (parts[0] == "ld" and parts[1:2] in (["param"], ["const"])):
        return True
    if instr.guard is not None and instr.guard[0] in tainted | ({instr.guard[0]} - written):
        return True
    for reg in _sources(instr.operands[1:]):
        if reg in tainted or (reg not in written and not reg.startswith(_CTA_UNIFORM)):
            return True
    return False


def _sources(operands) -> list[str]:
    out: list[str] = []
    for op in operands:
        if isinstance(op, ir.Reg):
            out.append(op.name)
        elif isinstance(op, ir.NotReg):
            out.append(op.reg.name)
        elif isinstance(op, ir.Addr) and isinstance(op.base, ir.Reg):
            out.append(op.base.name)
        elif isinstance(op, (ir.Vec, ir.Group)):
            out += _sources(op.items)
        elif isinstance(op, ir.RegPair):
            out += [op.first.name, op.second.name]
    return out


def divergent_regions(graph: cfg.Graph, fn: ir.Function) -> dict[int, set[int]]:
    """Per block ending in a branch on a thread-dependent predicate, the blocks
    reachable from it before its immediate post-dominator, where threads that took
    different edges meet again (a wait loop's region is the loop). A register
    written in a region may differ between threads after they meet, so it is
    thread-dependent from then on, which can make more branches divergent: to a
    fixpoint."""
    written = {d for i in fn.body if isinstance(i, ir.Instr) for d in destinations(i)}
    meet = cfg.immediate_post_dominators(graph)
    tainted = thread_dependent(fn)
    while True:
        regions = {
            b.index: _region(graph, b.index, meet[b.index])
            for b in graph.blocks
            if len(b.succs) > 1
            and not all(g is not None and g[0] in written - tainted for _, g in b.succs)
        }
        inside = {
            d for r in regions.values() for b in r for i in graph.blocks[b].instrs
            for d in destinations(i)
        }  # fmt: skip
        if inside <= tainted:
            return regions
        tainted = thread_dependent(fn, frozenset(tainted | inside))


def _region(graph: cfg.Graph, branch: int, meet: int | None) -> set[int]:
    seen: set[int] = set()
    work = [s for s, _ in graph.blocks[branch].succs]
    while work:
        b = work.pop()
        if b != meet and b not in seen:
            seen.add(b)
            work += [s for s, _ in graph.blocks[b].succs]
    return seen


@dataclass
class WriterFilter:
    """The control flow and byte sets the two rules need, built once per kernel."""

    trace: Trace
    graph: cfg.Graph
    # per block ending in a branch two threads may take different ways: the blocks
    # they may be in before they meet again (`divergent_regions`)
    regions: dict[int, set[int]]
    where: dict[int, tuple[int, int]] = field(default_factory=dict)  # instr id -> (block, k)
    _reach: dict[int, set[int]] = field(default_factory=dict)
    _bytes: dict[int, np.ndarray | str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for b in self.graph.blocks:
            for k, instr in enumerate(b.instrs):
                self.where[id(instr)] = (b.index, k)

    @classmethod
    def of(cls, kernel, trace) -> WriterFilter:
        graph = cfg.build(kernel.fn)
        return cls(trace, graph, divergent_regions(graph, kernel.fn))

    def keep(
        self, event, read: Read, cases, writers: list[memory.Access]
    ) -> tuple[list[memory.Access], dict[str, str]]:
        """The writers of `writers` that may change what `read` reads, and facts
        naming the others (module doc)."""
        why: dict[int, str] = {}  # a kept writer's reason where it is not plainly kept
        kept = []
        for a in writers:
            reach = self.may_precede(a.event.instr, event.instr)
            if isinstance(reach, str):
                why[id(a)] = reach
            if reach:
                kept.append(a)
        facts = _lines_fact({}, "unreachable_writers", writers, kept)
        reads = _read_bytes(read, cases) if kept else np.zeros(0, dtype=np.int64)
        near: list[memory.Access] = []
        for a in kept:
            written = self._written_bytes(a)
            meets = written if isinstance(written, str) else _meet(reads, written, _width(a))
            if isinstance(meets, str):
                why[id(a)] = meets
            if meets:
                near.append(a)
        facts = _lines_fact(facts, "disjoint_writers", kept, near)
        undecided: dict[str, list[int]] = {}
        for a in near:
            if id(a) in why:
                undecided.setdefault(why[id(a)], []).append(a.event.instr.line)
        if undecided:
            facts["writers_kept"] = "; ".join(
                f"{_lines(lines)}: {reason}" for reason, lines in undecided.items()
            )
        return near, facts

    # -- reachability --------------------------------------------------------------

    def may_precede(self, writer: ir.Instr, reader: ir.Instr) -> bool | str:
        """Whether some thread's `reader` may read after some thread's `writer`
        writes: True where a path leads there, a reason where the only order is
        the asynchronous read's (below), False where none."""
        if self.graph.problems or id(writer) not in self.where or id(reader) not in self.where:
            return True
        (wb, wk), (rb, rk) = self.where[id(writer)], self.where[id(reader)]
        if (wb == rb and wk < rk) or rb in self._reachable(wb):
            return True
        if any(
            (wb in region or rb in region) and {wb, rb} <= self._reachable(b)
            for b, region in self.regions.items()
        ):
            return True
        if self._unwaited((rb, rk + 1), writer):
            return (
                "it may run after the wgmma with no wgmma.wait_group 0 between them "
                "(wgmma reads its operands asynchronously, until that wait)"
            )
        return False

    def _unwaited(self, start: tuple[int, int], target: ir.Instr) -> bool:
        """Whether a path from instruction `start` (block, index) reaches `target`
        without passing an unguarded ``wgmma.wait_group 0``, the wait after which a
        wgmma issued before has read its operands (PTX ISA "wgmma.wait_group")."""
        seen: set[int] = set()
        work = [start]
        while work:
            b, k = work.pop()
            for instr in self.graph.blocks[b].instrs[k:]:
                if instr is target:
                    return True
                if _waits_all(instr):
                    break
            else:
                for s, _ in self.graph.blocks[b].succs:
                    if s not in seen:
                        seen.add(s)
                        work.append((s, 0))
        return False

    def _reachable(self, block: int) -> set[int]:
        """The blocks a path of at least one edge from `block` enters."""
        if block not in self._reach:
            seen: set[int] = set()
            work = [s for s, _ in self.graph.blocks[block].succs]
            while work:
                b = work.pop()
                if b not in seen:
                    seen.add(b)
                    work += [s for s, _ in self.graph.blocks[b].succs]
            self._reach[block] = seen
        return self._reach[block]

    # -- bytes ---------------------------------------------------------------------

    def _written_bytes(self, access: memory.Access) -> np.ndarray | str:
        """The first bytes (offsets in the allocation) of every instance of the
        writer, or why they are not enumerated."""
        if id(access) not in self._bytes:
            self._bytes[id(access)] = _enumerate_writer(access, self.trace.ranges)
        return self._bytes[id(access)]


def _waits_all(instr: ir.Instr) -> bool:
    ops = instr.operands
    return (
        instr.parts[:2] == ["wgmma", "wait_group"]
        and instr.guard is None
        and len(ops) == 1
        and isinstance(ops[0], ir.Imm)
        and ops[0].value == 0
    )


def _enumerate_writer(access: memory.Access, ranges) -> np.ndarray | str:
    offset = access.offset
    if not isinstance(offset, Expr):
        return "its offset is not known"
    names = sorted(free_vars(offset))
    unbounded = [
        n
        for n in names
        if n.startswith((memory.POINTER, "ctaid_", memory.SHARED_SYMBOL)) or n not in ranges
    ]
    if unbounded:
        return f"its offset depends on {', '.join(unbounded)}"
    bound = dict(ranges)
    if access.instruction.startswith("stmatrix"):
        lanes = parse_instruction(access.instruction).address_lanes
        bound["lane"] = Range(0, lanes)  # the lanes that supply row addresses
    if math.prod(bound[n].size for n in names) > MAX_WRITER_POINTS:
        return f"its offset takes more than {MAX_WRITER_POINTS} values"
    values = evaluate_all([offset], names, {}, bound)
    if values is None:
        return "its offset cannot be evaluated at every value"
    return np.unique(values[0])


def _width(access: memory.Access) -> int:
    return CHUNK if access.instruction.startswith("stmatrix") else access.bytes


def _read_bytes(read: Read, cases) -> np.ndarray:
    """The first byte of every chunk the operand reads, relative to the buffer's
    base, over every case (point and base) `decoded` gives."""
    starts: set[int] = set()
    seen: set[tuple] = set()
    for _, base, _, atb in cases:
        key = (atb.leading_byte_offset, atb.stride_byte_offset, atb.swizzle, atb.start_address,
               atb.base_offset, base)  # fmt: skip
        if key in seen:
            continue
        seen.add(key)
        reader = chunk_reader(atb.leading_byte_offset, atb.stride_byte_offset, atb.swizzle, read.op)
        starts.update(c - base for c in reader(atb.start_address, atb.base_offset))
    return np.array(sorted(starts), dtype=np.int64)


def _meet(reads: np.ndarray, writes: np.ndarray, width: int) -> bool | str:
    """Whether some chunk [r, r + 16) meets some write [w, w + width), or why that
    is not decided (the window holding both too wide to mark byte by byte)."""
    if not len(reads) or not len(writes):
        return False
    lo = int(min(reads.min(), writes.min()))
    hi = int(max(reads.max() + CHUNK, writes.max() + width))
    if hi - lo > MAX_SPAN:
        return f"its bytes and the operand's span more than {MAX_SPAN} bytes"
    marked = np.zeros(hi - lo, dtype=bool)
    marked[(reads[:, None] - lo + np.arange(CHUNK)).ravel()] = True
    return bool(marked[(writes[:, None] - lo + np.arange(width)).ravel()].any())


def _lines(lines: list[int]) -> str:
    lines = sorted(set(lines))
    return f"PTX line {lines[0]}" if len(lines) == 1 else "PTX lines " + ", ".join(map(str, lines))


def _lines_fact(facts: dict[str, str], key: str, before, after) -> dict[str, str]:
    still = {id(a) for a in after}
    dropped = [a.event.instr.line for a in before if id(a) not in still]
    return {**facts, key: _lines(dropped)} if dropped else facts
