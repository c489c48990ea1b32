"""CuTe building blocks people paste from real kernels.

* `gmma_atom` -- the SM90 GMMA shared-memory atoms of
  ``cute/atom/mma_traits_sm90_gmma.hpp``: ``Layout_{K,MN}_{INTER,SW32,SW64,SW128}_Atom<T>``.
  CuTe defines them on bits -- K-major ``Sw<B,4,3> o smem_ptr o (8, W):(W, 1)``
  with W = 128/256/512/1024 bits and B = 0/1/2/3 -- and ``upcast``s them to T, so
  for a T of N bits the atom is ``Sw<B,4,3> o smem_ptr[Nb] o (8, W/N):(W/N, 1)``
  (MN-major: ``(W/N, 8):(1, W/N)``). The swizzle acts on byte addresses.
* `tma_box` -- what a TMA copy with ``CU_TENSOR_MAP_SWIZZLE_{32B,64B,128B}`` leaves
  in shared memory for a box (inner, outer) (TMA numbers the contiguous
  dimension 0): rows of inner*N/8 bytes, one after another, under the same byte
  swizzle ``Sw<B,4,3>``; the inner extent may be at most the swizzle span.
* `tile_to_shape` -- CuTe's ``tile_to_shape(atom, shape[, order])``: the atom
  repeated over each mode (``blocked_product``: the repeats placed by the atom's
  `complement`, in column-major order or the given order), a swizzle kept
  outermost. `compose`, `complement` and `coalesce` are CuTe's layout algebra
  on shape:stride layouts, as pycute computes it.

Each swizzle pattern repeats every 8 rows (256/512/1024 bytes). Hardware applies
it to absolute addresses, and CUTLASS's wgmma descriptors (base offset 0) and
code that computes swizzled offsets from the buffer start assume the buffer is
aligned to that repeat: `required_alignment` returns it and verify checks it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from math import prod
from typing import TypeGuard

from verify.errors import Pos, SpecError
from verify.model.dtypes import CUTE_TYPE_BITS
from verify.model.layout import Composed, CuteLayout, IntTuple, Layout, Swizzle, flatten

_SWIZZLE_BITS = {"INTER": 0, "SW32": 1, "SW64": 2, "SW128": 3}
GMMA_ATOM = re.compile(r"(GMMA::)?Layout_(?P<major>K|MN)_(?P<mode>INTER|SW32|SW64|SW128)_Atom$")
TMA_MODE = re.compile(r"(CU_TENSOR_MAP_)?SWIZZLE_(?P<bytes>32|64|128)B$")


def type_bits(name: str, pos: Pos, allowed=(8, 16, 32)) -> int:
    """Bits of element type `name`; GMMA atoms take 8-, 16- and 32-bit types, TMA
    boxes 64-bit ones too (CU_TENSOR_MAP_DATA_TYPE_FLOAT64, INT64, UINT64)."""
    bits = CUTE_TYPE_BITS.get(name)
    if bits is None or bits not in allowed:
        found = f"found a {bits}-bit type" if bits else "found an unknown type"
        raise SpecError(
            f"element type '{name}': expected one of "
            f"{', '.join(sorted(t for t, b in CUTE_TYPE_BITS.items() if b in allowed))}"
            f" ({'/'.join(map(str, allowed))} bits), {found}",
            pos,
        )
    return bits


def _byte_swizzle(bits: int) -> Swizzle:
    return Swizzle(bits, 4, 3)


def gmma_atom(name: str, elem: str, pos: Pos) -> tuple[Swizzle, int, CuteLayout]:
    """(byte swizzle, element bits, layout) of ``Layout_<major>_<mode>_Atom<elem>``."""
    m = GMMA_ATOM.match(name)
    if not m:
        raise SpecError(
            f"expected Layout_{{K,MN}}_{{INTER,SW32,SW64,SW128}}_Atom, found {name}", pos
        )
    bits = type_bits(elem, pos)
    b = _SWIZZLE_BITS[m["mode"]]
    width = (128 << b) // bits  # elements in one 16*2^B-byte row
    layout = (
        CuteLayout((8, width), (width, 1))
        if m["major"] == "K"
        else CuteLayout((width, 8), (1, width))
    )
    return _byte_swizzle(b), bits, layout


def tma_box(mode: str, elem: str, box: IntTuple, pos: Pos) -> tuple[Swizzle, int, CuteLayout]:
    """(byte swizzle, element bits, layout) of a TMA box (inner, outer)."""
    m = TMA_MODE.match(mode)
    if not m:
        raise SpecError(
            f"TMA swizzle mode: expected SWIZZLE_32B, SWIZZLE_64B or SWIZZLE_128B, found {mode}",
            pos,
        )
    bits = type_bits(elem, pos, (8, 16, 32, 64))
    if isinstance(box, int) or len(box) != 2 or not _ints(box):
        raise SpecError(f"TMA box: expected (inner, outer) extents, found {box}", pos)
    span, (inner, outer) = int(m["bytes"]), box
    row_bytes = inner * bits // 8
    if row_bytes > span or row_bytes % 16:
        raise SpecError(
            f"TMA box inner extent {inner} is {row_bytes} bytes: expected a "
            f"multiple of 16 bytes, at most the {span}-byte swizzle span",
            pos,
        )
    return _byte_swizzle(span.bit_length() - 5), bits, CuteLayout((inner, outer), (1, inner))


def required_alignment(swizzle: Swizzle) -> int:
    """Bytes after which a byte swizzle ``Sw<B,4,3>`` repeats: 256 << (B - 1)."""
    return 1 << (swizzle.base + swizzle.bits + max(0, swizzle.shift)) if swizzle.bits else 16


def _modes(layout: CuteLayout) -> list[tuple[int, int]]:
    """The (extent, stride) pairs of `layout`'s flattened modes."""
    return list(zip(flatten(layout.shape), flatten(layout.stride)))


def _from_modes(modes: list[tuple[int, int]]) -> CuteLayout:
    """A flat layout of `modes` (an integer layout when there is one mode)."""
    if not modes:
        return CuteLayout(1, 0)
    if len(modes) == 1:
        return CuteLayout(*modes[0])
    return CuteLayout(tuple(s for s, _ in modes), tuple(d for _, d in modes))


def coalesce(layout: CuteLayout) -> CuteLayout:
    """CuTe's coalesce: the same function on 1-D indices with the fewest modes.

    Postcondition: coalesce(L)(i) == L(i) for every i < size(L). Size-1 modes
    go; a mode whose stride is its predecessor's extent times stride continues
    it (``(4,8):(1,4)`` is ``32:1``).
    """
    merged: list[tuple[int, int]] = []
    for s, d in _modes(layout):
        if s == 1:
            continue
        if merged and d == merged[-1][0] * merged[-1][1]:
            merged[-1] = (merged[-1][0] * s, merged[-1][1])
        else:
            merged.append((s, d))
    return _from_modes(merged)


def complement(layout: CuteLayout, cotarget: int, pos: Pos = Pos()) -> CuteLayout:
    """CuTe's complement as pycute computes it: the layout of the offsets `layout`
    does not reach, repeating it up to `cotarget`.

    Worked example: ``(2,4):(1,5)`` reaches 0,1,5,6,...: after the stride-1 mode
    the next offset free is 2, and the stride-5 mode leaves room for 5 // 2 = 2
    copies at stride 2; after it, copies go at 4*5 = 20. So
    ``complement((2,4):(1,5), 16)`` is ``2:2`` (coalesced) -- the holes 2,3 are
    filled by a copy, nothing lies beyond 20 below 16.

    The math: modes sorted by stride (size-1 and stride-0 modes dropped); with
    ``idx`` the first index past the modes so far (1 at the start), each mode
    (s, d) contributes ``(d // idx) : idx`` and moves idx to s*d; last comes
    ``ceil(cotarget / idx) : idx``.

    Requires: no mode starts inside the span of the smaller-stride modes before
    it (pycute would give it extent 0; CuTe's C++ asserts).
    """
    result, idx = [], 1
    for d, s in sorted((d, s) for s, d in _modes(layout) if s != 1 and d != 0):
        if d < idx:
            raise SpecError(
                f"complement of {layout}: its mode {s}:{d} starts inside the span "
                f"[0, {idx}) of its smaller-stride modes; expected modes that "
                "do not interleave, as CuTe's complement requires",
                pos,
            )
        result.append((d // idx, idx))
        idx = s * d
    result.append((-(-cotarget // idx), idx))
    return coalesce(_from_modes(result))


def compose(outer: CuteLayout, inner: CuteLayout, pos: Pos) -> CuteLayout:
    """CuTe's composition of two layouts: the layout R with R(c) = outer(inner(c)),
    by inner's modes (R has inner's shape, nested as inner's top-level modes).

    Requires: at each of outer's modes the remaining stride divides its extent or
    the extent divides the stride, and the remaining extent splits evenly, as
    CuTe's algorithm requires; otherwise no layout is the composition.
    """
    shape, stride = inner.shape, inner.stride
    if isinstance(shape, tuple):
        assert isinstance(stride, tuple), f"{inner}: stride not congruent with shape"
        parts = [compose(outer, CuteLayout(s, d), pos) for s, d in zip(shape, stride)]
        return CuteLayout(tuple(p.shape for p in parts), tuple(p.stride for p in parts))
    assert isinstance(stride, int), f"{inner}: stride not congruent with shape"
    return _from_modes(_compose_mode(outer, shape, stride, pos))


def composition(outer: Layout, inner: Layout, pos: Pos) -> Layout:
    """``composition(outer, inner)`` as CuTe builds it: a layout when both are
    shape:stride layouts; for a ComposedLayout outer (a swizzle over a layout),
    the swizzle and offset kept and the inner layouts composed; otherwise the
    function ``outer(inner(c))``."""
    if isinstance(outer, CuteLayout) and isinstance(inner, CuteLayout):
        return compose(outer, inner, pos)
    if isinstance(outer, Composed):
        return Composed(outer.outer, outer.offset, composition(outer.inner, inner, pos))
    return Composed(outer, 0, inner)


def _compose_mode(outer: CuteLayout, extent: int, stride: int, pos: Pos) -> list[tuple[int, int]]:
    """outer o (extent:stride): walk outer's coalesced modes, taking `extent`
    indices `stride` apart from as many modes as they span."""
    if stride == 0:
        return [(extent, 0)]
    *firsts, (_, last_stride) = _modes(coalesce(outer))
    result = []
    for s, d in firsts:
        if extent == 1:
            break
        if s % stride and stride % s:
            raise _not_composable(outer, extent, stride, f"stride {stride} and extent {s}", pos)
        take = min(max(1, s // stride), extent)
        if extent % take:
            raise _not_composable(outer, extent, stride, f"{extent} indices into {take}", pos)
        if take != 1:
            result.append((take, stride * d))
        extent, stride = extent // take, -(-stride // s)
    if extent != 1 or not result:
        result.append((extent, stride * last_stride))
    return result


def _not_composable(outer: CuteLayout, extent: int, stride: int, why: str, pos: Pos):
    return SpecError(
        f"composition({outer}, {extent}:{stride}): expected the inner layout "
        f"to split evenly over the outer's modes, found {why} that do not "
        "divide one another; CuTe cannot represent this composition",
        pos,
    )


def _ints(values: Sequence[IntTuple]) -> TypeGuard[Sequence[int]]:
    """Every value a plain integer (no nested mode)."""
    return all(isinstance(v, int) for v in values)


def ordered_layout(extents: list[int], order: Sequence[int]) -> CuteLayout:
    """CuTe's make_ordered_layout: compact, the mode with the lowest order fastest
    (ties by position)."""
    strides, scale = [0] * len(extents), 1
    for i in sorted(range(len(extents)), key=lambda i: (order[i], i)):
        strides[i], scale = scale, scale * extents[i]
    return CuteLayout(tuple(extents), tuple(strides))


def tile_to_shape(atom: Layout, shape: IntTuple, order: IntTuple | None, pos: Pos) -> Layout:
    """CuTe's tile_to_shape: ``blocked_product(atom, ordered_layout(reps, order))``,
    each mode coalesced.

    The repeats are laid out by the atom's complement, as in CuTe's
    logical_product: ``complement(atom, size(atom) * size(reps)) o ordered``. A
    compact atom's repeats follow each other at its cosize; an atom with holes
    or padding gets its holes filled first (``(2,4):(1,5)`` tiled to (4,4) puts
    the second copy at offset 2). A ComposedLayout atom (a swizzle) keeps its
    outer function and tiles its inner layout, as CuTe does.

    Requires: each extent of `shape` a multiple of the atom's extent in that mode.
    """
    if isinstance(atom, Composed):
        return Composed(atom.outer, atom.offset, tile_to_shape(atom.inner, shape, order, pos))
    if not isinstance(atom, CuteLayout):
        raise SpecError(
            f"tile_to_shape: expected a CuTe layout (or a swizzle composed with "
            f"one) as the atom, found {atom}",
            pos,
        )
    block, reps = _block_and_repeats(atom, shape, pos)
    orders: list[IntTuple] = (
        list(range(len(reps)))
        if order is None
        else ([order] if isinstance(order, int) else list(order))
    )
    if len(orders) != len(reps) or not _ints(orders):
        raise SpecError(f"tile_to_shape: order {orders}: expected {len(reps)} integers", pos)
    tiler = ordered_layout(reps, orders)
    if tiler.size() == 1:  # one copy: the atom itself, whatever its complement
        return block
    rest = compose(complement(block, block.size() * tiler.size(), pos), tiler, pos)
    # block: one mode per target dimension; rest: as many, the tiler's (a tuple).
    assert isinstance(block.shape, tuple) and isinstance(block.stride, tuple)
    assert isinstance(rest.shape, tuple) and isinstance(rest.stride, tuple)
    modes = [
        coalesce(CuteLayout((s, r), (d, q)))
        for (s, d), r, q in zip(zip(block.shape, block.stride), rest.shape, rest.stride)
    ]
    return CuteLayout(tuple(m.shape for m in modes), tuple(m.stride for m in modes))


def _block_and_repeats(atom: CuteLayout, shape: IntTuple, pos: Pos):
    """The atom padded with 1:0 modes to the target's rank, and the repeat counts."""
    target = [shape] if isinstance(shape, int) else list(shape)
    shapes = atom.shape if isinstance(atom.shape, tuple) else (atom.shape,)
    strides = atom.stride if isinstance(atom.stride, tuple) else (atom.stride,)
    modes: list[tuple[IntTuple, IntTuple]] = list(zip(shapes, strides))
    if not _ints(target) or len(target) < len(modes):
        raise SpecError(
            f"tile_to_shape: expected a flat shape of rank >= {len(modes)}, found {shape}", pos
        )
    modes += [(1, 0)] * (len(target) - len(modes))
    sizes = [prod(flatten(s)) for s, _ in modes]
    if any(t % n for t, n in zip(target, sizes)):
        raise SpecError(
            f"tile_to_shape: shape {shape} is not a multiple of the atom's extents {tuple(sizes)}",
            pos,
        )
    block = CuteLayout(tuple(s for s, _ in modes), tuple(d for _, d in modes))
    return block, [t // n for t, n in zip(target, sizes)]
