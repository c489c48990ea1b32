"""CuTe's meaning of the spec's CuTe constructs, computed with pycute.

Overview
--------
pycute (CuTe's Python model, in the ``nvidia-cutlass`` wheel) supplies
``Layout``, ``Swizzle``, ``composition``, ``complement``, ``logical_product``,
``coalesce`` and ``shape_div``. CuTe constructs that pycute lacks are built here
from those pieces the way CuTe's C++ builds them:

* ``tile_to_shape(atom, shape, order)`` (cute/layout.hpp)::

      product_shape = ceil_div(product_each(shape), product_each(shape(atom)))
      coalesce(blocked_product(append<R>(atom), make_ordered_layout(product_shape, order)),
               product_shape)

  with ``blocked_product(A, B) = zip(logical_product(append<R>(A), append<R>(B)))``
  and ``make_ordered_layout`` giving mode i the stride ``prod{shape_j : order_j <
  order_i}`` (cute/stride.hpp, ``compact_order``: equal orders share a stride).
  A shape that the atom does not divide is padded up (CuTe's behaviour for
  dynamic shapes; with both shapes static CuTe rejects it at compile time).
* the SM90 GMMA atoms (cute/atom/mma_traits_sm90_gmma.hpp), defined on bits::

      Layout_K_SW128_Atom_Bits  = ComposedLayout<Swizzle<3,4,3>, smem_ptr_flag,
                                                 Layout<Shape<_8,_1024>,Stride<_1024,_1>>>
      Layout_MN_SW128_Atom_Bits = ComposedLayout<Swizzle<3,4,3>, smem_ptr_flag,
                                                 Layout<Shape<_1024,_8>,Stride<_1,_1024>>>

  (INTER/SW32/SW64/SW128: 128/256/512/1024 bits per row, Swizzle<0/1/2/3,4,3>),
  and ``Layout_K_SW128_Atom<T> = upcast<sizeof_bits<T>>(..._Bits)``, where
  upcast<N> maps each mode s:d to ``shape_div(s, shape_div(N, |d|)) :
  shape_div(d, N)`` (cute/layout.hpp). The swizzle acts on byte addresses.

Worked example
--------------
``tile_to_shape((2,4):(1,5), (4,4))``: product_shape (2,1), ordered layout
(2,1):(1,2); ``logical_product`` gives ``((2,4),(2,1)):((1,5),(2,4))`` (the
repeat stride 2 is the first gap of complement((2,4):(1,5)), not the atom's
cosize 17); zipped and coalesced per mode this is ``(4,4):(1,5)``, cosize 19.

The math
--------
An offset of a CuTe layout at 1-D index i is ``crd2idx(i, shape, stride)``: i
split colexicographically over the flattened modes, the last flat mode taking
the remainder, so indices past the size extrapolate along it. `offsets`
evaluates that on numpy arrays; tests compare it with pycute's ``Layout.__call__``.

pycute gaps, each pinned by a test in tests/oracle/test_oracle.py:

* ``Swizzle(0, M, 0)`` recurses forever (``shiftr`` and ``shiftl`` call each
  other for a zero shift); `swizzle` treats a zero-bit swizzle as the identity.
* ``complement`` and ``composition`` assert on some layouts CuTe rejects
  (overlapping modes, non-divisible strides): refused. But ``complement`` of the
  interleaved (2,8):(4,1) returns a mode of extent 0 instead: refused too.
* ``composition`` skips CuTe's shape divisibility condition and silently drops
  points (and so does ``logical_product``, which calls it): `compose` and
  `tile_to_shape` check that every mode kept its size, and refuse otherwise.
* pycute has no ``tile_to_shape``, ``blocked_product``, ``make_ordered_layout``,
  ``upcast`` or GMMA atoms: built here as described above.
"""

from __future__ import annotations

from math import prod

import numpy as np

from oracle.errors import OracleRefusal, OracleUnavailable

try:
    import pycute
except ImportError:  # pragma: no cover - the test extra installs it
    pycute = None

INT64_SAFE = 1 << 62
SWIZZLE_MODES = {"INTER": 0, "SW32": 1, "SW64": 2, "SW128": 3}


def _pycute():
    if pycute is None:
        raise OracleUnavailable(
            "pycute (the nvidia-cutlass wheel) is not installed: the "
            "oracle needs it for CuTe layouts"
        )
    return pycute


def flatten(t) -> list[int]:
    return [t] if isinstance(t, int) else [x for s in t for x in flatten(s)]


def size(t) -> int:
    return prod(flatten(t))


def congruent(shape, stride) -> bool:
    if isinstance(shape, int) or isinstance(stride, int):
        return isinstance(shape, int) and isinstance(stride, int)
    return len(shape) == len(stride) and all(congruent(s, d) for s, d in zip(shape, stride))


def make_layout(shape, stride):
    """A pycute Layout; refuses incongruent shape/stride or an extent below 1."""
    if not congruent(shape, stride):
        raise OracleRefusal(f"shape {shape} and stride {stride} are not congruent")
    if any(n < 1 for n in flatten(shape)):
        raise OracleRefusal(f"shape {shape} has an extent below 1")
    return _pycute().Layout(shape, stride)


def top_modes(layout) -> list[int]:
    """Sizes of the top-level modes: one coordinate each."""
    shape = layout.shape
    return [shape] if isinstance(shape, int) else [size(s) for s in shape]


def offsets(layout, index: np.ndarray) -> np.ndarray:
    """crd2idx(index, shape, stride) for an array of non-negative 1-D indices."""
    shapes, strides = flatten(layout.shape), flatten(layout.stride)
    # Each flat coordinate is at most index / (product of the extents before it), so
    # the offset is at most (number of modes) * max stride * (index + 1).
    big = len(shapes) * max(abs(d) for d in strides) * (int(np.max(index)) + 1) >= INT64_SAFE
    rest = index.astype(object) if big else index
    total = np.zeros_like(rest)
    for n, d in zip(shapes[:-1], strides[:-1]):
        total = total + (rest % n) * d
        rest = rest // n
    return total + rest * strides[-1]


# -- swizzles ------------------------------------------------------------------------


def swizzle(bits: int, base: int, shift: int):
    """CuTe Swizzle<B,M,S> as a function on integer arrays (pycute's, except B = 0)."""
    if bits < 0 or base < 0 or abs(shift) < bits:
        raise OracleRefusal(f"Sw<{bits},{base},{shift}>: expected B >= 0, M >= 0, |S| >= B")
    if bits == 0:
        return lambda x: x  # pycute.Swizzle(0, M, 0) never returns; B = 0 is identity
    sw = _pycute().Swizzle(bits, base, shift)
    if max(sw.yyy_msk, sw.zzz_msk) >= INT64_SAFE:
        raise OracleRefusal(
            f"Sw<{bits},{base},{shift}> reaches bit {base + bits + abs(shift)}: expected below 62"
        )
    return sw


def swizzle_bits_touched(bits: int, base: int, shift: int) -> int:
    """Mask of every bit the swizzle reads or writes."""
    if bits == 0:
        return 0
    sw = _pycute().Swizzle(bits, base, shift)
    return sw.yyy_msk | sw.zzz_msk


# -- tile_to_shape -------------------------------------------------------------------


def _ordered_layout(shape: list[int], order: list[int]):
    """make_ordered_layout(shape, order) per cute/stride.hpp compact_order."""
    strides = [prod(s for s, o in zip(shape, order) if o < mine) for mine in order]
    return _pycute().Layout(tuple(shape), tuple(strides))


def tile_to_shape(atom, target, order):
    """CuTe's tile_to_shape of a plain pycute Layout (see module doc)."""
    pc = _pycute()
    target = (target,) if isinstance(target, int) else tuple(target)
    shape = atom.shape if isinstance(atom.shape, tuple) else (atom.shape,)
    stride = atom.stride if isinstance(atom.stride, tuple) else (atom.stride,)
    rank = len(target)
    if len(shape) > rank:
        raise OracleRefusal(
            f"tile_to_shape: the atom has rank {len(shape)}, the target shape {target} only {rank}"
        )
    block = pc.Layout(shape + (1,) * (rank - len(shape)), stride + (0,) * (rank - len(shape)))
    wanted, have = [size(t) for t in target], [size(s) for s in block.shape]
    reps = [-(-w // h) for w, h in zip(wanted, have)]
    order = (
        list(range(rank)) if order is None else ([order] if isinstance(order, int) else list(order))
    )
    if len(order) != rank or any(not isinstance(o, int) for o in order):
        raise OracleRefusal(f"tile_to_shape: order {order} is not a flat tuple of {rank} ints")
    tiler = _ordered_layout(reps, order)
    try:
        product = pc.logical_product(block, tiler)
    except (AssertionError, ZeroDivisionError):
        product = None
    # pycute's composition inside logical_product skips CuTe's shape divisibility
    # check (see `compose`): the repeat modes must keep the repeat counts.
    if product is None or 0 in flatten(product.shape) or top_modes(product[1]) != reps:
        raise OracleRefusal(
            f"tile_to_shape: CuTe's logical_product of the atom {atom} is "
            "undefined (its complement or composition preconditions fail)"
        )
    zipped = pc.make_layout(pc.make_layout(product[0][i], product[1][i]) for i in range(rank))
    return pc.coalesce(zipped, tuple(reps))


def compose(a, b):
    """pycute.composition(a, b) of two plain layouts; CuTe's preconditions refused.

    pycute checks CuTe's stride divisibility condition (an assertion) but not its
    shape divisibility condition: composition((2,3,8):(30,24,12), 8:2) floors 8/3
    and returns (3,2):(24,12), six points for B's eight. Each mode of the result
    must keep its mode of B's size, which holds exactly when every division was
    exact, so a size that shrank is refused as CuTe would reject it.

    CuTe's result refines B's shape (4:4 may come back as (2,2):(104,13)); the
    spec's coordinates are B's, so a refined one-mode result stays one mode.
    """
    pc = _pycute()
    try:
        result = pc.composition(a, b)
    except (AssertionError, ZeroDivisionError):
        raise OracleRefusal(
            f"composition({a}, {b}): CuTe's stride divisibility condition fails"
        ) from None
    if isinstance(b.shape, int) and isinstance(result.shape, tuple):
        result = pc.Layout((result.shape,), (result.stride,))  # B's one mode, refined
    if top_modes(result) != top_modes(b):
        raise OracleRefusal(f"composition({a}, {b}): CuTe's shape divisibility condition fails")
    return result


# -- SM90 GMMA atoms and TMA boxes ---------------------------------------------------


def upcast(n_bits: int, shape, stride):
    """cute::upcast<N> of a layout given in bits (cute/layout.hpp)."""
    pc = _pycute()
    if isinstance(shape, tuple):
        modes = [upcast(n_bits, s, d) for s, d in zip(shape, stride)]
        return tuple(s for s, _ in modes), tuple(d for _, d in modes)
    if stride == 0:
        return shape, stride
    return pc.shape_div(shape, pc.shape_div(n_bits, abs(stride))), pc.shape_div(stride, n_bits)


def gmma_atom(major: str, mode: str, bits: int):
    """(swizzle bits B, pycute layout in elements of `bits`) of Layout_<major>_<mode>_Atom."""
    b = SWIZZLE_MODES[mode]
    row_bits = 128 << b
    shape, stride = (
        ((8, row_bits), (row_bits, 1)) if major == "K" else ((row_bits, 8), (1, row_bits))
    )
    return b, make_layout(*upcast(bits, shape, stride))


def byte_swizzle_alignment(b: int) -> int:
    """Bytes the buffer must be aligned to for a byte swizzle Sw<B,4,3>: the pattern's
    repeat, 256 << (B-1) (8 rows of 16*2^B bytes); 16 for B = 0 (INTER: only the
    16-byte core matrices)."""
    return 256 << (b - 1) if b else 16
