"""TMA copies (``cp.async.bulk.tensor``) in a traced kernel: the tensor map the user
states (``--tma-map``), ``aligned 128``, the box's placement against thread
instructions on the same allocation, and writer = reader for a wgmma operand that
a TMA box feeds (`verify.model.tma.wgmma_reads_box`, verify's runner). The module
doc of `verify.ptx.hopper` says what each check proves.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from verify.engines.cases import Outcome, Undecided, decide_cases
from verify.errors import SpecError
from verify.model import tma as tma_model
from verify.model.expr import BinOp, Const, Expr, bounds, compiled
from verify.model.wgmma import BASE_PERIOD, MatrixDescriptor, Operand, ReadMap, SwizzleMode
from verify.ptx import ir, memory, tensormaps
from verify.ptx.hopper_common import (
    Read,
    base_residues,
    executes,
    points,
    run_condition,
    unknown_result,
    verdict_result,
)
from verify.ptx.hopper_kblocks import TMA_BLOCK, Block
from verify.ptx.hopper_pairing import coordinate_offset, run_continues
from verify.ptx.trace import Event, Trace
from verify.ptx.values import Unknown, Value
from verify.results import CheckResult, Counterexample
from verify.smt.solve import Status

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
    unknown = set(fields) - {"dataType", "boxDim", "swizzle", "param", "globalStrides"}
    if unknown or not {"dataType", "boxDim"} <= set(fields):
        raise SpecError(
            "--tma-map: expected dataType=TYPE,boxDim={INNER,OUTER},swizzle=MODE"
            f"[,globalStrides={{BYTES,...}}][,param=NAME], found {text!r}"
        )
    box = _integers(fields, "boxDim", "{INNER,OUTER}")
    strides = (
        _integers(fields, "globalStrides", "{BYTES,...}") if "globalStrides" in fields else None
    )
    tmap = tma_model.TensorMap.encode_tiled(
        _prefixed(fields["dataType"], "CU_TENSOR_MAP_DATA_TYPE_"),
        box,
        swizzle=_prefixed(fields.get("swizzle", "NONE"), "CU_TENSOR_MAP_SWIZZLE_"),
        globalStrides=strides,
    )
    return MapOption(fields.get("param"), tmap)


def _integers(fields: dict[str, str], name: str, form: str) -> tuple[int, ...]:
    try:
        return tuple(int(x) for x in fields[name].strip("{}").split(","))
    except ValueError:
        raise SpecError(f"--tma-map {name}: expected {form}, found {fields[name]}") from None


def _prefixed(value: str, prefix: str) -> str:
    return value if value.startswith(prefix) else prefix + value


@dataclass(frozen=True)
class Copy:
    """One ``cp.async.bulk.tensor``: a load (global -> shared) or a store."""

    event: Event
    load: bool
    shared: Value  # the shared address
    map_name: str | None  # the parameter holding the tensor map, where visible
    rank: int = 0  # the copy's .Nd: its box's dimensions (0: not read)


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
    rank = int(parts[4][:-1]) if re.fullmatch(r"[1-5]d", parts[4]) else 0
    shared = _shared_address(event, shared_op, symbol)
    return Copy(event, load, shared, _map_name(fn, tensor), rank)


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
    """The key of the map a copy reads: the parameter its operand names, or the register
    a device-built map was fenced through (`tensormaps.map_root`)."""
    return tensormaps.map_root(fn, tensor.tensor_map)


# -- TMA copies ----------------------------------------------------------------------


def _map_for(copy: Copy, maps: list[MapOption]) -> tma_model.TensorMap | str | None:
    """The --tma-map naming the copy's parameter, else the one naming none; why it
    cannot be the copy's map where its box has other dimensions than the copy's .Nd
    (PTX ISA "cp.async.bulk.tensor": the dimension must match the map's rank)."""
    named = [m.tmap for m in maps if m.param is not None and m.param == copy.map_name]
    anonymous = [m.tmap for m in maps if m.param is None]
    found = named or anonymous
    if found and copy.rank and len(found[0].box) != copy.rank:
        return (
            f"the tensor map stated for the copy at PTX line {copy.event.instr.line} has a "
            f"box of {len(found[0].box)} dimensions, the copy is .{copy.rank}d"
        )
    return found[0] if found else None


def _no_map(kernel, event, what: str) -> CheckResult:
    return unknown_result(
        kernel,
        event,
        what,
        "the tensor map is a host object the PTX does not hold: state it with --tma-map "
        "dataType=FLOAT16,boxDim={64,128},swizzle=128B[,param=NAME] (cuTensorMapEncodeTiled's "
        "arguments)",
    )


def copy_results(kernel, trace, event, placed, maps, copies) -> list[CheckResult]:
    copy = tma_copy(event, kernel.fn, kernel.symbol)
    if isinstance(copy, Unknown):
        return [unknown_result(kernel, event, "not modelled", copy.reason)]
    where = points(copy.shared, trace.ranges, run_condition(kernel, event, trace.ranges))
    if isinstance(where, Unknown):
        return [unknown_result(kernel, event, "aligned 128", f"its shared address: {where.reason}")]
    copies.append((copy, where))
    assert isinstance(copy.shared, Expr), "points() refuses an Unknown"
    at = compiled(copy.shared)
    runs = executes(kernel, event, trace.ranges)
    bases = base_residues(kernel, where.allocation)
    # (point, base, destination, True or why it is not known to run there)
    cases = [
        (point, base, at(env), ran)
        for point in where.others
        for base in bases
        for env in [{**point, where.allocation: base}]
        for ran in [runs(env)]
        if ran is not False
    ]
    facts = {"allocation": kernel.shared_label(where.allocation), "tensor_map": copy.map_name}
    if where.periods:  # what the address was decided over: a residue class each value
        facts["modulo"] = ", ".join(f"{n} modulo {p}" for n, p in sorted(where.periods.items()))
    results = [_aligned(kernel, event, cases, where.periods, trace, facts)]
    tmap = _map_for(copy, maps)
    if isinstance(tmap, str):
        return [*results, unknown_result(kernel, event, "placement", tmap)]
    heads = ("ld", "ldmatrix") if copy.load else ("st", "stmatrix", "cp")
    peers = [a for a in placed.get(where.allocation, []) if a.event.instr.parts[0] in heads]
    if tmap is not None:
        box = (min(d for _, b, d, _ in cases if b == 0), max(d for _, b, d, _ in cases if b == 0))
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


def _aligned(kernel, event, cases, periods, trace, facts) -> CheckResult:
    def misaligned(case) -> Outcome:
        point, base, dest, ran = case
        if not dest % tma_model.DESTINATION_ALIGN:
            return None
        loose = set(point) & trace.loose
        if loose and (len(loose) > 1 or set(point) & set(trace.loops)):
            return Undecided(_LOOSE)
        if ran is not True:
            return Undecided(ran)
        return Counterexample(
            f"with the buffer at byte {base}: the box's shared address is byte {dest}, "
            f"not a multiple of {tma_model.DESTINATION_ALIGN}{_classes(point, periods)}",
            {"base": base, **point},
        )

    verdict = decide_cases(cases, misaligned)
    return verdict_result(kernel, event, "aligned 128", verdict, "enumeration", facts)


_LOOSE = (
    "its misaligned address combines loop counters whose relation this reader does not "
    "keep, so it may not happen"
)


def _classes(point: dict[str, int], periods: dict[str, int]) -> str:
    """What a point enumerated modulo `periods` stands for, as a clause."""
    if not periods:
        return ""
    each = ", ".join(f"{n} = {point[n]} mod {p}" for n, p in sorted(periods.items()))
    return f" (the same address at every {each}: it reads them only modulo that)"


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
    by_point = {tuple(sorted(p.items())): d for p, b, d, _ in cases if b == 0}
    peer = peers[0]
    role = "reads" if load else "writes"

    def misplaced(case) -> Outcome:
        point, base, dest, ran = case
        dest0 = by_point.get(tuple(sorted(point.items())))
        if dest0 is None or not tmap.swizzle:
            return None
        for r, c in chunks:
            there = tma_swizzle(dest + r * inner + c, tmap.swizzle)
            here = tma_swizzle(dest0 + r * inner + c, tmap.swizzle) + base
            if there != here and ran is not True:
                return Undecided(ran)
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
                return Counterexample(summary, {"base": base, **point, "row": r})
        return None

    verdict = decide_cases(cases, misplaced)
    return verdict_result(kernel, event, "placement", verdict, "enumeration", facts)


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


def tma_reader(
    kernel, event, read: Read, what: str, cases, copies, maps, facts, blocks=None
) -> CheckResult:
    """writer = reader: the operand is the box the TMA copy wrote, at every base. The
    descriptor at base 0, counted from the box, is decided at every base at once; a
    base where it differs (a base offset computed from the address) at that base.
    Where what the operand reads of the box is not rows of one global row each (it
    reads past a box row, or its rows cross an outer dimension of a box of 3 or more),
    it is decided in the global tensor from the map's globalStrides
    (`_global_mismatch`), every element enumerated; without them UNKNOWN. PROVED by
    verify's runner, the operand's block of its box goes into `blocks` for k_blocks
    (`tma_block`)."""
    groups: dict = {}
    found_blocks: dict = {}
    strided: dict = {}  # decided in the global tensor: (map, desc, dest) -> case
    memo: dict = {}
    frames: dict = {}
    for point, base, at0, atb in cases:
        found = _containing(kernel, copies, at0.start_address, maps, read.op, memo)
        if isinstance(found, str):
            return unknown_result(kernel, event, f"writer_reader {what}", found)
        copy, tmap, boxes, dest0, align, cut = found
        delta = at0.start_address - dest0
        coords = _box_coords(tmap, boxes, read.op, delta)
        if isinstance(coords, str) and cut:
            why = _UNPAIRED.format(at=dest0 + boxes * tmap.bytes, line=copy.event.instr.line)
            return unknown_result(kernel, event, f"writer_reader {what}", why)
        outer = None if isinstance(coords, str) else _outer_dims(tmap, read.op, delta)
        past_row = isinstance(coords, str) and _past_box_row(tmap, read.op, delta)
        if isinstance(coords, str) and not (past_row or _wider_than_box(tmap, read.op, delta)):
            return unknown_result(kernel, event, f"writer_reader {what}", coords)
        if isinstance(coords, str) or (outer is not None and outer[0] > 1):
            if tmap.strides is None:
                why = _NO_STRIDES_OUTER if not isinstance(coords, str) else _NO_STRIDES
                return unknown_result(
                    kernel, event, f"writer_reader {what}", _PAST_ROW if past_row else why
                )
            if outer is not None and outer[1]:
                return unknown_result(kernel, event, f"writer_reader {what}", _SECOND_BOX)
            case = _global_case(tmap, atb, dest0 + base)
            strided.setdefault(case, (copy, point, base, past_row))
            continue
        assert not isinstance(coords, str)
        run = tma_model.TensorMap(tmap.dtype, (tmap.box[0], tmap.rows * boxes), tmap.swizzle)
        desc = _from_box(at0, dest0)
        moved_desc = _from_box(atb, dest0 + base)
        at_base = None if moved_desc == desc else base
        groups.setdefault((run, moved_desc, coords, align, at_base), (copy, point))
        if not base:
            frame = _frame(copies, maps, copy, tmap, dest0, frames)
            found_blocks[tuple(sorted(point.items())), ()] = tma_block(
                copy, tmap, read.op, dest0, delta, frame
            )
    name = f"writer_reader {what}"

    def in_global(item) -> Outcome:
        """writer = reader of one box decided in the global tensor (`_global_mismatch`)."""
        (tmap, desc, dest), (copy, point, base, past_row) = item
        wrong = _global_mismatch(tmap, desc, read.op, dest)
        if wrong is None:
            return Undecided(_PAST_ROW) if past_row else None
        row, k, summary, decided = wrong
        if not decided:
            return Undecided(summary)
        return Counterexample(
            f"{summary} (the TMA copy at PTX line {copy.event.instr.line}, read through "
            f"{desc} as operand {read.which}, the box at byte {dest})",
            {**point, "base": base, "row": row, "k": k},
        )

    def by_runner(item) -> Outcome:
        """writer = reader of one run of boxes, by verify's runner (`_box_verdict`)."""
        (tmap, desc, coords, align, at_base), (copy, point) = item
        status, mismatch = _box_verdict(tmap, desc, read.op, align, coords, at_base)
        if status is Status.PROVED:
            return None
        if mismatch is None:
            return Undecided("verify's runner decided nothing")
        summary = (
            f"{mismatch}: the box of the TMA copy at PTX line {copy.event.instr.line} "
            f"(its boxes, end to end: {tmap.layout_text()}) read through {desc} as "
            f"operand {read.which}"
        )
        return Counterexample(
            summary, {**point, "base": mismatch.base, "row": mismatch.row, "k": mismatch.k}
        )

    tests = [(in_global, item) for item in strided.items()]
    tests += [(by_runner, item) for item in groups.items()]
    verdict = decide_cases(tests, lambda test: test[0](test[1]))
    if verdict.status is Status.REFUTED:
        runner = verdict.figures["case"][0] is by_runner
        engine = "verify runner" if runner else "enumeration"
        return verdict_result(kernel, event, name, verdict, engine, facts)
    if verdict.status is Status.PROVED and blocks is not None and found_blocks and not strided:
        blocks.setdefault((id(event), read.which), (event, read.op, {}))[2].update(found_blocks)
    engine = "verify runner" if groups else "enumeration"
    boxes = {**facts, "boxes": len(groups) + len(strided)}
    return verdict_result(kernel, event, name, verdict, engine, boxes)


_LINE = 1 << 24  # its pitch: more bytes than any run of boxes holds in a line


def tma_block(copy: Copy, tmap, op: Operand, dest0: int, delta: int, frame=None) -> Block:
    """The block of its box an operand proved to read it reads, for k_blocks: in the
    coordinates of the box its box is moved from (`frame`: the root's destination and
    the move, `_frame`; the box's own where none), not the global tensor's
    (`TMA_BLOCK` + the map and the root's destination name them; rows or k a `_LINE`
    apart), so that operands of one accumulation are compared only inside boxes
    paired by their copies' coordinates (k_blocks leaves other blocks UNKNOWN)."""
    elem, inner = tmap.elem_bytes, tmap.box[0]
    root, (moved_inner, moved_rows) = frame or (dest0, (0, 0))
    if op.major == "K":
        row0, k0 = divmod(delta // elem, inner)
        origin = row0 * _LINE + k0 * elem
    else:
        box, within = divmod(delta, tmap.bytes)
        k0, n_in = divmod(within // elem, inner)
        origin = k0 * _LINE + (box * inner + n_in) * elem
    origin += moved_rows * _LINE + moved_inner * elem
    return Block(f"{TMA_BLOCK}{copy.map_name}@{root}", origin, _LINE)


MAX_PAIRS = 4096  # pairs of copy instances compared to pair two boxes (`_frame`)


def _frame(copies, maps, copy: Copy, tmap, dest0: int, memo: dict) -> tuple[int, tuple[int, int]]:
    """(root, move): the box at `dest0` (base 0) holds the elements of the tensor map's
    box at `root` moved by `move` box coordinates (inner, row), both at least 0, so
    that operands read from the two compare in the root's coordinates (`tma_block`).
    Paired by the copies' coordinates (`hopper_pairing.coordinate_offset`): every
    copy instance writing one box has one of the same iteration writing the other,
    all the same move apart. The root is the first box (by destination) that precedes
    it so and that no other box precedes; (dest0, (0, 0)) where there is none or the
    map's copies cannot be paired (a box of 3 or more dimensions, a copy enumerated
    by residues). A move of (0, 0) (the same elements twice) precedes only from a
    lower destination, so that two such boxes share a root."""
    key = (copy.map_name, dest0)
    if key not in memo:
        boxes = _boxes_of(copies, maps, copy.map_name, tmap)
        memo[key] = _root(boxes, dest0, tmap) if boxes else (dest0, (0, 0))
    return memo[key]


def _boxes_of(copies, maps, map_name: str | None, tmap) -> dict[int, list] | None:
    """The instances (copy, point) of the copies reading the map `map_name`, by their
    destination at base 0; None where they cannot be paired (`_frame`)."""
    if map_name is None or len(tmap.box) != 2:
        return None
    boxes: dict[int, list] = {}
    for copy, where in copies:
        if copy.map_name != map_name or _map_for(copy, maps) != tmap:
            continue
        if where.periods:
            return None  # a point stands for many iterations, its coordinates for one
        at = compiled(copy.shared)
        for p in where.others:
            boxes.setdefault(at({**p, where.allocation: 0}), []).append((copy, p))
    return boxes


def _root(boxes: dict[int, list], dest0: int, tmap) -> tuple[int, tuple[int, int]]:
    """`_frame` over the boxes of one map."""

    def move(frm: int, to: int) -> tuple[int, int] | None:
        """The move from box `frm` to box `to` where `frm` precedes it."""
        found = _common_move(boxes[frm], boxes[to])
        if found is None or min(found) < 0 or (found == (0, 0) and frm >= to):
            return None
        if (found[0] + tmap.box[0]) * tmap.elem_bytes >= _LINE:
            return None  # past a line of the frame's rows
        return found

    for root in sorted(boxes):
        found = None if root == dest0 else move(root, dest0)
        if found is not None and all(move(q, root) is None for q in boxes if q != root):
            return root, found
    return dest0, (0, 0)


def _common_move(rs: list, xs: list) -> tuple[int, int] | None:
    """The one coordinate offset from the instances `rs` to the instances `xs` where
    every instance of each has one of the same iteration (points over the same
    variables, equal but for the warp) in the other, all that offset apart; else None."""
    if len(rs) * len(xs) > MAX_PAIRS:
        return None
    moves = {
        (i, j): coordinate_offset(r, x)
        for i, r in enumerate(rs)
        for j, x in enumerate(xs)
        if set(r[1]) == set(x[1])
    }
    found = {m for m in moves.values() if m is not None}
    paired_r = {i for (i, _), m in moves.items() if m is not None}
    paired_x = {j for (_, j), m in moves.items() if m is not None}
    if len(found) != 1 or len(paired_r) < len(rs) or len(paired_x) < len(xs):
        return None
    (offset,) = found
    return (offset[0], offset[1]) if len(offset) == 2 else None


_NO_STRIDES = (
    "the operand reads more k than the unswizzled box holds in a row: which global "
    "elements the box's further rows hold is the tensor map's globalStrides: "
    "state them (--tma-map ...,globalStrides={BYTES,...}, cuTensorMapEncodeTiled's argument)"
)

_NO_STRIDES_OUTER = (
    "the operand's rows cross an outer dimension of the box (3 or more dimensions): "
    "whether they are rows of one matrix in the global tensor is the tensor map's "
    "globalStrides: state them (--tma-map ...,globalStrides={BYTES,...}, "
    "cuTensorMapEncodeTiled's argument)"
)

_UNPAIRED = (
    "the operand runs on into the box at byte {at} (at base 0), which its copies' box "
    "coordinates do not prove the continuation of the box of the copy at PTX line {line} "
    "(paired by coordinates: the same iteration, the first box's plus its extent along "
    "the operand's rows, every other coordinate the same)"
)

_PAST_ROW = (
    "the MN-major operand reads past a box row into the next (its lines wrap): a block "
    "of one matrix only where the tensor's rows are exactly a box row apart, and then "
    "whether the tensor's row goes on past the box is its extent and the copy's "
    "coordinates, which are not read (with the map's globalStrides a read that is no "
    "block is REFUTED)"
)

_SECOND_BOX = (
    "the operand's rows cross an outer dimension of the box and continue into a second "
    "box: boxes are not paired by their coordinates (not modelled)"
)


def _wider_than_box(tmap, op: Operand, delta: int) -> bool:
    """A K-major operand read from an unswizzled box whose rows hold less K than it
    reads (CUTLASS's core matrices: 8 f16 a box row), starting inside the box: its
    k past a box row are decided in the global tensor. (Other reads past a box row,
    an MN-major one wrapping into the next row, stay UNKNOWN: that a line of the
    block stays inside one row of the tensor is its coordinates', not read.)"""
    return (
        op.major == "K"
        and not tmap.swizzle
        and tmap.elem_bytes * 8 == op.elem_bits
        and 0 <= delta < tmap.bytes
        and not delta % tmap.elem_bytes
        and (delta // tmap.elem_bytes) % tmap.box[0] + op.k > tmap.box[0]
    )


def _past_box_row(tmap, op: Operand, delta: int) -> bool:
    """An MN-major operand read from a 2-D box whose lines (its rows) start inside a
    box row and run on into the next one, as `_box_coords` refuses it: decided in the
    global tensor where that is no block of one matrix (`_global_mismatch`), else
    UNKNOWN (`_PAST_ROW`)."""
    elem, inner = tmap.elem_bytes, tmap.box[0]
    return (
        op.major != "K"
        and len(tmap.box) == 2
        and elem * 8 == op.elem_bits
        and 0 <= delta < tmap.bytes
        and not delta % elem
        and (delta // elem) % inner + op.rows > inner
    )


def _outer_dims(tmap, op: Operand, delta: int) -> tuple[int, bool]:
    """How many outer dimensions of the box the rows the operand reads (as
    `_box_coords` places it) take more than one index of, and whether it continues
    into a further box. One: rows one stride apart in the global tensor, whatever the
    strides (a 2-D box always)."""
    elem, inner, rows = tmap.elem_bytes, tmap.box[0], tmap.rows
    if op.major == "K":
        row0 = (delta // elem) // inner
        flat, further = range(row0, min(row0 + op.rows, rows)), row0 + op.rows > rows
    else:
        k0, n_in = divmod((delta % tmap.bytes) // elem, inner)
        flat, further = range(k0, k0 + op.k), n_in + op.rows > inner
    outer = [tmap.coordinates(f * inner)[1:] for f in flat]
    varying = sum(len({c[d] for c in outer}) > 1 for d in range(len(tmap.box) - 1))
    return varying, further


def _global_case(tmap, desc: MatrixDescriptor, dest: int):
    """(map, descriptor, destination) with both addresses moved down together by a
    multiple of 1024 bytes (every swizzle's pattern), to destination 0 where neither
    swizzles: the same box bytes read, so bases that differ only so are decided once."""
    unswizzled = not tmap.swizzle and desc.swizzle is SwizzleMode.NONE
    shift = dest if unswizzled else dest - dest % tma_model.PATTERN_BYTES[128]
    return tmap, _from_box(desc, shift), dest - shift


def _global_mismatch(tmap, desc: MatrixDescriptor, op: Operand, dest: int):
    """writer = reader in the global tensor, every element enumerated: the element
    wgmma reads at (row, k) through `desc` (absolute addresses) is the global element
    the box at shared byte `dest` put at that byte (the map's swizzle, then its
    globalStrides), and those are one block of one matrix in order: along the
    operand's major dimension contiguous (`elem` bytes apart), along the other one
    pitch apart, the pitch at least the block's extent (else elements repeat). (row,
    k, why, decided) of the first element that is not (decided False: it reads past
    the box, which another copy may write), or None."""
    elem = tmap.elem_bytes
    read = ReadMap(desc, op)

    def held(row: int, k: int) -> tuple[int, int] | str:
        byte = tma_swizzle(read.address(row, k), tmap.swizzle) - dest
        if not 0 <= byte < tmap.bytes or byte % elem:
            return (
                f"element (row {row}, k {k}): wgmma reads byte {byte} of the box, which holds "
                f"{tmap.bytes} bytes (boxes are not paired by their coordinates)"
            )
        return byte, tmap.global_offset(byte // elem)

    k_major = op.major == "K"
    step = (1, 0) if k_major else (0, 1)  # the element one pitch from the first
    first, next_ = held(0, 0), held(*step)
    if isinstance(first, str) or isinstance(next_, str):
        bad = first if isinstance(first, str) else next_
        assert isinstance(bad, str)
        row, k = (0, 0) if isinstance(first, str) else step
        return row, k, bad, False
    pitch, extent = next_[1] - first[1], (op.k if k_major else op.rows) * elem
    if abs(pitch) < extent:
        row, k = step
        return (
            row,
            k,
            f"element (row {row}, k {k}) is global byte {next_[1]}, {pitch} bytes from "
            f"element (0, 0): lines of {extent} bytes that close overlap (the same global "
            "element is read twice)",
            True,
        )
    for row in range(op.rows):
        for k in range(op.k):
            here = held(row, k)
            if isinstance(here, str):
                return row, k, here, False
            want = first[1] + (row * pitch + k * elem if k_major else row * elem + k * pitch)
            if here[1] == want:
                continue
            coords = tmap.coordinates(here[0] // elem)
            return (
                row,
                k,
                f"element (row {row}, k {k}): wgmma reads byte {here[0]} of the box, which "
                f"holds the box's element {coords}, global byte {here[1]} from the box's "
                f"first; the block it reads starts at global byte {first[1]} with "
                f"{'rows' if k_major else 'k'} {pitch} bytes apart, so the element is global "
                f"byte {want}",
                True,
            )
    return None


def _from_box(desc: MatrixDescriptor, destination: int) -> MatrixDescriptor:
    """The descriptor with its start counted from the box's destination."""
    return MatrixDescriptor(
        desc.start_address - destination,
        desc.leading_byte_offset,
        desc.stride_byte_offset,
        desc.swizzle,
        desc.base_offset,
    )


def _containing(kernel, copies, start: int, maps, op: Operand, memo: dict | None = None):
    """(copy, map, boxes, destination at base 0, destination alignment, cut) of the TMA
    box that holds byte `start` at base 0 and the boxes of the same map laid end to
    end after it (at most MAX_BOX rows in all) that continue it in the global tensor
    along the operand's rows (paired by their coordinates: `verify.ptx.hopper_pairing`),
    or why there is none. A box after it that is not proved to continue it ends the run there
    (cut: True); so does every box after one a copy enumerated by residues writes
    (`Points.periods`: the coordinates it evaluates there are one iteration's of many)."""
    if memo is not None and (start, op) in memo:
        return memo[start, op]
    placed: list[tuple[int, Copy, tma_model.TensorMap, str, dict]] = []
    periodic = {id(copy): bool(where.periods) for copy, where in copies}
    for copy, where in copies:
        tmap = _map_for(copy, maps)
        if tmap is None:
            return "the tensor map of a copy into it is not stated (--tma-map)"
        if isinstance(tmap, str):
            return tmap
        at = compiled(copy.shared)
        placed += [
            (at({**p, where.allocation: 0}), copy, tmap, where.allocation, p) for p in where.others
        ]
    by_dest: dict[tuple[int, int], list] = {}
    unpaired: set[tuple[int, int]] = set()  # boxes a copy enumerated by residues writes
    for d, c, m, _, p in placed:
        by_dest.setdefault((d, id(m)), [])
        if periodic[id(c)]:
            # its point stands for a class of iterations, its coordinates for one of them
            unpaired.add((d, id(m)))
        else:
            by_dest[d, id(m)].append((c, p))
    # one box per destination (a prologue's and a loop's copies write the same stages)
    boxes_at = sorted(
        {(d, id(m)): (d, c, m, a) for d, c, m, a, _ in placed}.values(), key=lambda x: x[0]
    )
    found: tuple | str = "no TMA box written in the kernel holds the descriptor's start"
    for i, (dest0, copy, tmap, allocation) in enumerate(boxes_at):
        if not dest0 <= start < dest0 + tmap.bytes:
            continue
        last = i  # the boxes after it, end to end, that the operand may run into
        while (
            last + 1 < len(boxes_at)
            and last - i + 1 < tma_model.MAX_BOX // tmap.rows
            and boxes_at[last + 1][2] == tmap
            and boxes_at[last + 1][0] == boxes_at[last][0] + tmap.bytes
            and (dest0, id(tmap)) not in unpaired
            and run_continues(tmap, op, by_dest, dest0, last + 1 - i)
        ):
            last += 1
        boxes = last - i + 1
        cut = (
            last + 1 < len(boxes_at)
            and boxes_at[last + 1][2] == tmap
            and boxes_at[last + 1][0] == boxes_at[last][0] + tmap.bytes
        )
        step = base_residues(kernel, allocation)[1:2] or [BASE_PERIOD]
        found = copy, tmap, boxes, dest0, _alignment(dest0, step[0]), cut
        break
    if memo is not None:
        memo[start, op] = found
    return found


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
