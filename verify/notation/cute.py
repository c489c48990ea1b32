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
  repeated over each mode (``blocked_product`` with the repeats laid out in
  column-major order, or in the given order), a swizzle kept outermost.

Each swizzle pattern repeats every 8 rows (256/512/1024 bytes). Hardware applies
it to absolute addresses, and CUTLASS's wgmma descriptors (base offset 0) and
code that computes swizzled offsets from the buffer start assume the buffer is
aligned to that repeat: `required_alignment` returns it and verify checks it.
"""
from __future__ import annotations

import re
from math import prod

from verify.errors import Pos, SpecError
from verify.layout import Composed, CuteLayout, IntTuple, Layout, Swizzle, flatten

_SWIZZLE_BITS = {"INTER": 0, "SW32": 1, "SW64": 2, "SW128": 3}
GMMA_ATOM = re.compile(r"(GMMA::)?Layout_(?P<major>K|MN)_(?P<mode>INTER|SW32|SW64|SW128)_Atom$")
TMA_MODE = re.compile(r"(CU_TENSOR_MAP_)?SWIZZLE_(?P<bytes>32|64|128)B$")

TYPE_BITS = {
    **{t: 8 for t in ("int8_t", "uint8_t", "i8", "u8", "s8", "b8", "f8", "e4m3", "e5m2",
                      "float_e4m3_t", "float_e5m2_t")},
    **{t: 16 for t in ("half_t", "bfloat16_t", "f16", "bf16", "i16", "u16", "b16")},
    **{t: 32 for t in ("float", "tfloat32_t", "f32", "tf32", "int32_t", "uint32_t", "i32",
                       "u32", "b32")},
    # 64-bit elements: TMA boxes only (CU_TENSOR_MAP_DATA_TYPE_FLOAT64, INT64, UINT64);
    # GMMA atoms take 8-, 16- and 32-bit types.
    **{t: 64 for t in ("double", "f64", "int64_t", "uint64_t", "i64", "u64", "s64", "b64")},
}


def type_bits(name: str, pos: Pos, allowed=(8, 16, 32)) -> int:
    bits = TYPE_BITS.get(name)
    if bits not in allowed:
        found = f"found a {bits}-bit type" if bits else "found an unknown type"
        raise SpecError(f"element type '{name}': expected one of "
                        f"{', '.join(sorted(t for t, b in TYPE_BITS.items() if b in allowed))}"
                        f" ({'/'.join(map(str, allowed))} bits), {found}", pos)
    return bits


def _byte_swizzle(bits: int) -> Swizzle:
    return Swizzle(bits, 4, 3)


def gmma_atom(name: str, elem: str, pos: Pos) -> tuple[Swizzle, int, CuteLayout]:
    """(byte swizzle, element bits, layout) of ``Layout_<major>_<mode>_Atom<elem>``."""
    m = GMMA_ATOM.match(name)
    if not m:
        raise SpecError(f"expected Layout_{{K,MN}}_{{INTER,SW32,SW64,SW128}}_Atom, found {name}",
                        pos)
    bits = type_bits(elem, pos)
    b = _SWIZZLE_BITS[m["mode"]]
    width = (128 << b) // bits                  # elements in one 16*2^B-byte row
    layout = (CuteLayout((8, width), (width, 1)) if m["major"] == "K"
              else CuteLayout((width, 8), (1, width)))
    return _byte_swizzle(b), bits, layout


def tma_box(mode: str, elem: str, box: IntTuple, pos: Pos) -> tuple[Swizzle, int, CuteLayout]:
    """(byte swizzle, element bits, layout) of a TMA box (inner, outer)."""
    m = TMA_MODE.match(mode)
    if not m:
        raise SpecError(f"TMA swizzle mode: expected SWIZZLE_32B, SWIZZLE_64B or "
                        f"SWIZZLE_128B, found {mode}", pos)
    bits = type_bits(elem, pos, (8, 16, 32, 64))
    if isinstance(box, int) or len(box) != 2 or any(not isinstance(x, int) for x in box):
        raise SpecError(f"TMA box: expected (inner, outer) extents, found {box}", pos)
    span, (inner, outer) = int(m["bytes"]), box
    row_bytes = inner * bits // 8
    if row_bytes > span or row_bytes % 16:
        raise SpecError(f"TMA box inner extent {inner} is {row_bytes} bytes: expected a "
                        f"multiple of 16 bytes, at most the {span}-byte swizzle span", pos)
    return _byte_swizzle(span.bit_length() - 5), bits, CuteLayout((inner, outer), (1, inner))


def required_alignment(swizzle: Swizzle) -> int:
    """Bytes after which a byte swizzle ``Sw<B,4,3>`` repeats: 256 << (B - 1)."""
    return 1 << (swizzle.base + swizzle.bits + max(0, swizzle.shift)) if swizzle.bits else 16


def _cosize(layout: CuteLayout) -> int:
    return 1 + sum((s - 1) * d for s, d in zip(flatten(layout.shape), flatten(layout.stride)))


def _repeat_strides(reps: list[int], order: list[int], unit: int) -> list[int]:
    """Strides of the repeat counts `reps`, the mode with the lowest order first."""
    strides, scale = [0] * len(reps), unit
    for i in sorted(range(len(reps)), key=lambda i: (order[i], i)):
        strides[i], scale = scale, scale * reps[i]
    return strides


def tile_to_shape(atom: Layout, shape: IntTuple, order: IntTuple | None, pos: Pos) -> Layout:
    """CuTe's tile_to_shape. Requires: each extent of `shape` a multiple of the atom's."""
    if isinstance(atom, Composed):
        return Composed(atom.outer, atom.offset, tile_to_shape(atom.inner, shape, order, pos))
    if not isinstance(atom, CuteLayout):
        raise SpecError(f"tile_to_shape: expected a CuTe layout (or a swizzle composed with "
                        f"one) as the atom, found {atom}", pos)
    target = [shape] if isinstance(shape, int) else list(shape)
    modes = list(zip(*((atom.shape, atom.stride) if isinstance(atom.shape, tuple)
                       else ((atom.shape,), (atom.stride,)))))
    if any(not isinstance(t, int) for t in target) or len(target) < len(modes):
        raise SpecError(f"tile_to_shape: expected a flat shape of rank >= {len(modes)}, "
                        f"found {shape}", pos)
    modes += [(1, 0)] * (len(target) - len(modes))
    sizes = [prod(flatten(s)) for s, _ in modes]
    if any(t % n for t, n in zip(target, sizes)):
        raise SpecError(f"tile_to_shape: shape {shape} is not a multiple of the atom's "
                        f"extents {tuple(sizes)}", pos)
    reps = [t // n for t, n in zip(target, sizes)]
    order = list(range(len(reps))) if order is None else (
        [order] if isinstance(order, int) else list(order))
    if len(order) != len(reps):
        raise SpecError(f"tile_to_shape: order {order} has {len(order)} modes, expected "
                        f"{len(reps)}", pos)
    rep_strides = _repeat_strides(reps, order, _cosize(atom))
    shapes, strides = [], []
    for (s, d), r, rd in zip(modes, reps, rep_strides):
        shapes.append((s, r) if r > 1 and s != 1 else (r if s == 1 else s))
        strides.append((d, rd) if r > 1 and s != 1 else (rd if s == 1 else d))
    return CuteLayout(tuple(shapes), tuple(strides))
