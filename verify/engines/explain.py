"""Why a counterexample happens, and what to change, from the layout's structure.

Overview
--------
A refuted bank check names the lanes that share a bank. This module says why,
from the figures alone: two of those lanes' byte addresses, their difference
(two words share a bank exactly when they are a multiple of 128 bytes apart:
32 banks of 4 bytes), which address bits differ, and -- when the layout has a
swizzle verify can see (CuTe's ``Sw<B,M,S>`` on element offsets or on byte
addresses, or a Triton swizzled_shared encoding that is one) -- which bits the
swizzle reads and writes, and whether the differing bits are among them. No
text is chosen per spec: every sentence is computed from those values.

Worked example
--------------
``Sw<3,3,3> o (8,256):(256,1)`` fp16, read by ldmatrix rows 0, 2, 4 and 6 at
column 0: lanes 0 and 2 are at bytes 0 and 1024 (1024 = 8 x 128: one bank).
Before the swizzle they are elements 0 and 512, differing in element bit 9
only; Sw<3,3,3> reads element bits 6-8, so it XORs the same value into both and
they stay together: the swizzle would have to read bit 9 too.

The math
--------
bank(a) = (a / 4) mod 32, so two words collide iff their byte addresses agree
in bits 2-6; a naturally aligned access of w >= 4 bytes then collides iff its
lanes agree in bits log2(w)-6. A swizzle ``x ^ ((x & Y) >> S)`` gives two
values the same XOR iff they agree on the read bits Y; values that differ
only above bit 6 keep their bank under the same XOR.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from verify.model.bank import BANKS, WORD_BYTES
from verify.model.expr import Const, evaluate, render
from verify.model.layout import Composed, CuteLayout, Formula, Layout, Swizzle, offsets, size
from verify.model.program import BASE, STAGE, Access, Program
from verify.notation.threads import TritonThreads
from verify.notation.triton import as_cute_swizzle
from verify.results import LaneRow
from verify.spec.ast import LayoutDef

BANK_PERIOD = BANKS * WORD_BYTES  # 128 bytes: one turn of the banks
BANK_TOP_BIT = BANK_PERIOD.bit_length() - 2  # byte bit 6, the highest that picks a bank


@dataclass(frozen=True)
class SwizzleView:
    """A swizzle as it acts on a layout: on element offsets or byte addresses."""

    swizzle: Swizzle
    name: str  # as the spec says it, e.g. "Sw<3,3,3>"
    unit_bits: int  # log2 bytes per unit of its input: 0 bytes, 1 for f16 ...
    before: Callable[[dict, tuple[int, ...]], int]  # its input for (instance, coordinate)

    def mask(self, value: int) -> int:
        """What it XORs into `value`."""
        picked = value & self.swizzle.source_mask
        s = self.swizzle.shift
        return picked >> s if s >= 0 else picked << -s

    def bits(self, mask: int) -> str:
        """Bits of its input, also in bytes when its input is elements."""
        if self.unit_bits == 0:
            return f"byte {bits_text(mask)}"
        return f"element {bits_text(mask)} (byte {bits_text(mask << self.unit_bits)})"


def bits_text(mask: int) -> str:
    """0b1110000000 -> 'bits 7-9'; one bit -> 'bit 9'; gaps -> 'bits 3, 9'."""
    bits = [i for i in range(mask.bit_length()) if mask >> i & 1]
    if not bits:
        return "no bits"
    runs: list[str] = []
    start: int | None = bits[0]
    for prev, cur in zip(bits, bits[1:] + [None]):
        if cur != prev + 1:
            runs.append(str(start) if start == prev else f"{start}-{prev}")
            start = cur
    return ("bit " if len(bits) == 1 else "bits ") + ", ".join(runs)


def swizzle_view(program: Program, access: Access) -> SwizzleView | None:
    """The layout's outermost swizzle, with how to compute its input for a lane;
    None when the layout has none verify can see."""
    ldef = access.layout
    eb = program.elem_bytes(access.definition.pos, ldef)
    if ldef.pointer_swizzle is not None and ldef.pointer_swizzle.bits == 0:
        return None  # Sw<0,M,S> (an INTER GMMA atom) moves no bit: no swizzle to explain
    if ldef.pointer_swizzle is not None:
        start = program.stage_start()

        def absolute(values, coord):
            offset = evaluate(ldef.function.crd2idx([Const(c) for c in coord]), {})
            return evaluate(start, values) + eb * offset

        return SwizzleView(
            ldef.pointer_swizzle, f"{ldef.pointer_swizzle} on byte addresses", 0, absolute
        )
    function = ldef.function
    if isinstance(function, Composed) and isinstance(function.outer, Swizzle):
        name, swizzle, offset, inner = (
            str(function.outer),
            function.outer,
            function.offset,
            function.inner,
        )
    elif (cute_swizzle := as_cute_swizzle(function)) is not None:
        swizzle, inner = cute_swizzle
        name, offset = f"the encoding's swizzle (CuTe's {swizzle})", 0
    else:
        return None
    if swizzle.bits == 0:
        return None

    def element_offset(values, coord):
        return offset + evaluate(inner.crd2idx([Const(c) for c in coord]), {})

    return SwizzleView(swizzle, name, eb.bit_length() - 1, element_offset)


def has_no_swizzle(access: Access) -> bool:
    """Plain shape:stride layouts (compositions of them included): nothing XORs."""
    ldef = access.layout

    def plain(function) -> bool:
        if isinstance(function, Composed):
            return plain(function.outer) and plain(function.inner)
        return isinstance(function, CuteLayout)

    fields = getattr(getattr(ldef.function, "encoding", None), "fields", {})
    return ldef.pointer_swizzle is None and (plain(ldef.function) or fields.get("maxPhase") == 1)


def colliding_pair(rows: tuple[LaneRow, ...], hot_bank: int) -> tuple[LaneRow, LaneRow] | None:
    """The first two lanes that need different words of `hot_bank`."""
    first = None
    for row in rows:
        words = [w for w in row.words if w % BANKS == hot_bank]
        if not words:
            continue
        if first is None:
            first = (row, words[0])
        elif words[0] != first[1]:
            return first[0], row
    return None


def bank_bits(access: Access) -> int:
    """Byte-address bits that tell two naturally aligned lanes' banks apart."""
    low = max(WORD_BYTES, access.instruction.bytes_per_address).bit_length() - 1
    return ((1 << (BANK_TOP_BIT + 1)) - 1) & ~((1 << low) - 1)


def bank_explanation(
    program: Program,
    access: Access,
    rows: tuple[LaneRow, ...],
    hot_bank: int,
    values: dict[str, int],
) -> tuple[tuple[str, str], ...]:
    """("why" | "fix", sentence) pairs for lanes `rows` that share `hot_bank`."""
    pair = colliding_pair(rows, hot_bank)
    if pair is None:
        return ()
    a, b = pair
    word_a, word_b = (4 * next(w for w in r.words if w % BANKS == hot_bank) for r in (a, b))
    apart = abs(word_b - word_a)
    why = (
        "why",
        f"lanes {a.lane} and {b.lane} at {_coord(a)} and {_coord(b)} need words "
        f"{apart} bytes apart (bytes {word_a} and {word_b}): a multiple of the "
        f"{BANK_PERIOD}-byte bank period, so one bank serves them one after the other",
    )
    view = swizzle_view(program, access)
    if view is not None:
        return (why, *_swizzle_lines(view, access, a, b, values))
    if has_no_swizzle(access):
        return (why, *_plain_lines(program, access, a, b, rows))
    return (why,)


def _tiling_hint(view: SwizzleView) -> str:
    """How CuTe keeps rows within a swizzle's repeat (Triton encodings have no atoms)."""
    return (
        " (tile the swizzled atom with tile_to_shape instead of stretching it)"
        if view.name.startswith("Sw<")
        else ""
    )


def _coord(row: LaneRow) -> str:
    return "(" + ", ".join(map(str, row.coord)) + ")"


def bank_bits_text(access: Access) -> str:
    """The bank bits named the one way every sentence names them: which byte bits,
    for which access width (a wider access's low bits lie inside its own bytes)."""
    width = max(WORD_BYTES, access.instruction.bytes_per_address)
    return f"byte {bits_text(bank_bits(access))}, the bits that pick a {width}-byte access's bank"


def _plain_lines(
    program: Program, access: Access, a: LaneRow, b: LaneRow, rows: tuple[LaneRow, ...]
) -> tuple[tuple[str, str], ...]:
    differ = (a.address ^ b.address) & ~bank_bits(access)
    # The fix must part every colliding lane, not just the pair shown: XOR in
    # every bit in which any of them differs from the first.
    spread = 0
    for row in rows:
        spread |= (row.address ^ rows[0].address) & ~bank_bits(access)
    fix = f"XOR byte {bits_text(spread)} into byte {bits_text(bank_bits(access))} (a swizzle)"
    return (
        (
            "why",
            f"the layout has no swizzle: their addresses differ only in byte "
            f"{bits_text(differ)}, above {bank_bits_text(access)}",
        ),
        ("fix", fix + _padding_hint(program, access, a, b)),
    )


def _padding_hint(program: Program, access: Access, a: LaneRow, b: LaneRow) -> str:
    """', or pad mode i's stride': when the lanes differ along a mode of a
    shape:stride layout whose step is a whole number of bank turns."""
    function = access.layout.function
    if (
        not isinstance(function, CuteLayout)
        or isinstance(function.stride, int)
        or len(a.coord) != len(function.stride)
        or isinstance(getattr(access.definition, "threads", None), TritonThreads)
    ):
        # A Triton thread map (`by #ttg...`) needs a layout linear over GF(2), which a
        # padded stride is not: that spec would refuse the fix (issue 27).
        return ""
    eb = program.elem_bytes(access.definition.pos, access.layout)
    pad = max(WORD_BYTES, access.instruction.bytes_per_address, eb) // eb
    for mode, step in enumerate(function.stride):
        if (
            isinstance(step, int)
            and a.coord[mode] != b.coord[mode]
            and step * eb % BANK_PERIOD == 0
        ):
            return (
                f", or pad mode {mode}'s stride of {step * eb} bytes (a multiple of "
                f"{BANK_PERIOD}) by {pad * eb} bytes: {step} -> {step + pad} elements"
            )
    return ""


def _swizzle_lines(
    view: SwizzleView, access: Access, a: LaneRow, b: LaneRow, values: dict[str, int]
) -> tuple[tuple[str, str], ...]:
    before_a, before_b = (view.before(values, r.coord) for r in (a, b))
    differ = before_a ^ before_b
    reads, writes = view.swizzle.source_mask, view.swizzle.target_mask
    head = f"{view.name} reads {view.bits(reads)} and XORs them into {view.bits(writes)}"
    if not differ & reads:
        period = 1 << reads.bit_length()
        unit = "bytes" if view.unit_bits == 0 else "elements"
        return (
            (
                "why",
                f"{head}; before it these lanes are at {before_a} and {before_b}, which "
                f"differ only in {view.bits(differ)}: it reads none of them, so it XORs "
                f"the same value into both (its pattern repeats every {period} {unit})",
            ),
            (
                "fix",
                f"a swizzle that also reads {view.bits(differ)}, or a tile whose "
                f"colliding rows stay within one {period}-{unit[:-1]} repeat"
                f"{_tiling_hint(view)}",
            ),
        )
    moved = (view.mask(before_a) ^ view.mask(before_b)) << view.unit_bits
    if not moved & bank_bits(access):
        return (
            (
                "why",
                f"{head}; it reads {view.bits(differ & reads)}, where these lanes "
                f"differ, but it writes none of {bank_bits_text(access)}",
            ),
            ("fix", f"a swizzle that writes byte {bits_text(bank_bits(access))} (a different M)"),
        )
    return (
        (
            "why",
            f"{head}; it gives these lanes XOR values {view.mask(before_a)} and "
            f"{view.mask(before_b)}, which move them from {before_a} and {before_b} "
            f"onto one bank",
        ),
    )


def alignment_explanation(
    program: Program, access: Access, row: LaneRow, n: int, values: dict[str, int]
) -> tuple[tuple[str, str], ...]:
    """Why lane `row`'s address is not a multiple of `n`: a swizzle that writes
    inside the lane's own bytes, or a stride that is not a multiple of them."""
    view = swizzle_view(program, access)
    inside = n - 1
    if view is not None and (view.swizzle.target_mask << view.unit_bits) & inside:
        lowest = (view.swizzle.target_mask << view.unit_bits) & -(
            view.swizzle.target_mask << view.unit_bits
        )
        return (
            (
                "why",
                f"{view.name} XORs into {view.bits(view.swizzle.target_mask)}, "
                f"inside the {n} bytes one lane addresses (byte "
                f"{bits_text(inside)}): it moves part of a vector and leaves the "
                f"address {row.address % n} bytes past a multiple of {n}",
            ),
            (
                "fix",
                f"a swizzle whose lowest written bit is byte bit "
                f"{n.bit_length() - 1} or above (it writes byte bit "
                f"{lowest.bit_length() - 1} now)",
            ),
        )
    return _stride_explanation(program, access, n)


def _stride_explanation(program: Program, access: Access, n: int) -> tuple[tuple[str, str], ...]:
    """A shape:stride layout with a stride that is not a multiple of the access's bytes."""
    function = access.layout.function
    if not isinstance(function, CuteLayout) or isinstance(function.stride, int):
        return ()
    if isinstance(function.shape, int):  # congruent with its stride: never here
        return ()
    eb = program.elem_bytes(access.definition.pos, access.layout)
    shape, stride = function.shape, function.stride
    for mode, (extent, step) in enumerate(zip(shape, stride)):
        if isinstance(step, int) and isinstance(extent, int) and extent > 1 and step * eb % n:
            good = -(-step * eb // n) * n // eb
            return (
                (
                    "why",
                    f"mode {mode} of {function} steps {step} elements = {step * eb} "
                    f"bytes, not a multiple of {n}: lanes that step along it land "
                    f"off the {n}-byte grid",
                ),
                (
                    "fix",
                    f"a stride that is a multiple of {n // eb} elements in mode "
                    f"{mode} (for example {good})",
                ),
            )
    return ()


def overlap_explanation(
    program: Program,
    ldef: LayoutDef,
    coords: tuple[tuple[int, ...], tuple[int, ...]],
    stages: tuple[int, int],
    addresses: tuple[int, int],
) -> tuple[tuple[str, str], ...]:
    """Why two (coordinate, stage) pairs of a refuted `bijective` share memory:
    stages that start closer than the layout spans, a swizzle (a bijection)
    fed one offset by its inner layout, strides that add up to the same offset
    (with the stride that would keep them apart), or a formula that maps both
    to one offset. Every figure is computed from the two coordinates."""
    eb = program.elem_bytes(ldef.pos, ldef)
    (ca, cb), (sa, sb) = coords, stages
    if sa != sb:
        return _stage_lines(program, ldef, coords, stages, addresses, eb)
    lines: list[tuple[str, str]] = []
    function = ldef.function
    if ldef.pointer_swizzle is not None:
        start = evaluate(program.stage_start(), {BASE: 0, STAGE: sa})
        pre = tuple(start + eb * _offset(function, c) for c in coords)
        swz = ldef.pointer_swizzle
        if pre[0] != pre[1]:
            return (
                (
                    "why",
                    f"before {swz} on byte addresses they are at bytes {pre[0]} and "
                    f"{pre[1]}; it XORs byte {bits_text(swz.target_mask)} and moves them "
                    f"within {eb} bytes of each other",
                ),
            )
        lines.append(
            (
                "why",
                f"{swz} on byte addresses is a bijection (it XORs bits it reads into "
                f"bits it does not), so it cannot map two addresses together: before it "
                f"both are at byte {pre[0]}, the collision is in {function}",
            )
        )
    named = _swizzled(function)
    if named is not None:
        name, swizzle, offset, inner = named
        pre = tuple(offset + _offset(inner, c) for c in coords)
        if pre[0] != pre[1]:  # a swizzle is a bijection: never reached, said if it is
            return (*lines, ("why", f"{name} maps element offsets {pre[0]} and {pre[1]} together"))
        lines.append(
            (
                "why",
                f"{name} is a bijection on offsets (it XORs bits it reads into bits it "
                f"does not), so it cannot map two offsets together: before it both are at "
                f"element {pre[0]}, the collision is in {inner}",
            )
        )
        function = inner
    if isinstance(function, CuteLayout):
        return (*lines, *_stride_lines(function, ca, cb))
    offset = _offset(function, ca)
    if isinstance(function, Formula):
        names = ", ".join(n for n, _ in function.params)
        return (
            *lines,
            (
                "why",
                f"the formula {render(function.body)} gives ({names}) = {_tuple(ca)} and "
                f"{_tuple(cb)} the same offset, {offset}",
            ),
            ("fix", "a formula that is one-to-one on its coordinates' ranges"),
        )
    return (
        *lines,
        ("why", f"{function} maps {_tuple(ca)} and {_tuple(cb)} to one offset, {offset}"),
    )


def _offset(function, coord: tuple[int, ...]) -> int:
    return evaluate(function.crd2idx([Const(c) for c in coord]), {})


def _tuple(coord: tuple[int, ...]) -> str:
    return "(" + ", ".join(map(str, coord)) + ")"


def _swizzled(function) -> tuple[str, Swizzle, int, Layout] | None:
    """(name, swizzle, offset, inner) of a layout that is a swizzle of an inner one."""
    if isinstance(function, Composed) and isinstance(function.outer, Swizzle):
        return str(function.outer), function.outer, function.offset, function.inner
    if (cute := as_cute_swizzle(function)) is not None:
        swizzle, inner = cute
        return f"the encoding's swizzle (CuTe's {swizzle})", swizzle, 0, inner
    return None


def _span(ldef: LayoutDef, eb: int) -> tuple[int, int] | None:
    """(lowest, highest + 1) byte offset of the layout in one stage, before a
    pointer swizzle; None for a domain too large to walk."""
    function = ldef.function
    if isinstance(function, CuteLayout):
        return 0, function.cosize() * eb
    if function.size() > SPAN_WALK_LIMIT:
        return None
    values = offsets(function)
    return min(values) * eb, (max(values) + 1) * eb


SPAN_WALK_LIMIT = 1 << 16  # coordinates walked to find a layout's span


def _stage_lines(
    program: Program,
    ldef: LayoutDef,
    coords: tuple[tuple[int, ...], tuple[int, ...]],
    stages: tuple[int, int],
    addresses: tuple[int, int],
    eb: int,
) -> tuple[tuple[str, str], ...]:
    """Two stages' elements in one place: the stages start closer than the layout spans."""
    step = program.spec.buffer.stage_bytes
    (ca, cb), (sa, sb) = coords, stages
    (lo_stage, lo_coord), (hi_stage, hi_coord) = sorted(((sa, ca), (sb, cb)))
    gap = (hi_stage - lo_stage) * step
    head = (
        f"{_tuple(hi_coord)} of stage {hi_stage} and {_tuple(lo_coord)} of stage "
        f"{lo_stage} meet at byte {addresses[0]}"
        + ("" if addresses[0] == addresses[1] else f" and {addresses[1]}")
    )
    span = _span(ldef, eb)
    if span is None or gap >= span[1] - span[0]:
        return (("why", f"{head}: stage {hi_stage} starts {gap} bytes after stage {lo_stage}"),)
    width = span[1] - span[0]
    return (
        (
            "why",
            f"{head}: stage {hi_stage} starts {gap} bytes after stage {lo_stage} but the "
            f"layout spans {width} bytes",
        ),
        ("fix", f"stage_bytes of at least {width} (it is {step}) keeps the stages apart"),
    )


def _flat_modes(shape, stride, coord: int, label: str):
    """(label, extent, stride, coordinate) of each flat sub-mode of one top-level
    mode at 1-D coordinate `coord`, split colexicographically as CuTe does."""
    if isinstance(shape, int):
        return [(label, shape, stride, coord)]
    out = []
    for i, (sub_shape, sub_stride) in enumerate(zip(shape, stride)):
        last = i == len(shape) - 1
        n = size(sub_shape)
        here = coord if last else coord % n
        out += _flat_modes(sub_shape, sub_stride, here, f"{label}.{i}")
        coord //= n
    return out


def _modes(layout: CuteLayout, coord: tuple[int, ...]):
    if isinstance(layout.shape, int) or len(coord) == 1:
        return _flat_modes(layout.shape, layout.stride, coord[0], "mode 0")
    return [
        m
        for i, (shape, stride) in enumerate(zip(layout.shape, layout.stride))  # type: ignore[arg-type]
        for m in _flat_modes(shape, stride, coord[i], f"mode {i}")
    ]


def _stride_lines(
    layout: CuteLayout, ca: tuple[int, ...], cb: tuple[int, ...]
) -> tuple[tuple[str, str], ...]:
    """The sub-modes along which the two coordinates differ, what each step adds,
    and the stride that would keep them apart."""
    ma, mb = _modes(layout, ca), _modes(layout, cb)
    moved = [(a[0], a[1], a[2], b[3] - a[3]) for a, b in zip(ma, mb) if a[3] != b[3]]
    if not moved:
        return ()
    parts = []
    for label, _, stride, steps in moved:
        noun = "step" if abs(steps) == 1 else "steps"
        parts.append(f"{label} moves {steps:+d} {noun} of stride {stride} = {steps * stride:+d}")
    total = sum(steps * stride for _, _, stride, steps in moved)
    why = (
        "why",
        f"from {_tuple(ca)} to {_tuple(cb)} in {layout}: " + ", ".join(parts) + f", {total:+d} "
        "in all: the same offset",
    )
    if len(moved) == 1 or all(stride == 0 for _, _, stride, _ in moved):
        label, extent = moved[0][0], moved[0][1]
        return (
            why,
            (
                "fix",
                f"a nonzero stride for {label}: with stride 0 its {extent} coordinates "
                f"share one offset",
            ),
        )
    top = max(moved, key=lambda m: m[2])
    below = [m for m in ma if m[0] != top[0] and 0 <= m[2] <= top[2]]
    reach = sum((extent - 1) * stride for _, extent, stride, _ in below)
    names = ", ".join(m[0] for m in below)
    return (
        why,
        (
            "fix",
            f"a stride of {top[0]} of at least {reach + 1} (the modes below it, {names}, "
            f"reach offset {reach}) keeps them apart",
        ),
    )
