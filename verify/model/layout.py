"""Layouts as functions from logical coordinates to offsets, lowered to `Expr`.

Overview
--------
A layout maps a coordinate to an offset. verify knows three kinds, with CuTe's
semantics where CuTe defines them:

* `CuteLayout` -- ``shape:stride`` with hierarchical (nested) modes. A coordinate
  is one integer per top-level mode (or one integer for the whole layout); an
  integer inside a nested mode is split colexicographically (column-major), as
  CuTe's ``crd2idx`` does.
* `Swizzle` -- ``Sw<B,M,S>`` XORs bits [M+S, M+S+B) into [M, M+B) (S < 0: the
  other way). It is a function on integers, an involution.
* `Formula` -- an expression over named coordinates with ranges.

`Composed` is CuTe's ``A o offset o B``: ``A(offset + B(c))``.

Every kind answers the same questions (`LayoutBase`): ``size()`` (coordinates in
its domain), ``cosize()`` (1 + its largest offset, where a closed form exists),
``crd2idx(coords)`` (the offset, as an `Expr`) and ``idx2crd(index)`` (the
coordinates of a CuTe 1-D index, as `Expr`s; ``index_to_coords`` is the same map
on integers). A swizzle's domain is the span of the bits it reads and writes,
beyond which it repeats.

Worked example
--------------
``Sw<3,3,3> o (_8,_64):(_64,_1)`` at coordinate (r, c) = (5, 3)::

    B(5, 3) = 5*64 + 3*1 = 323 = 0b101_000_011
    Sw<3,3,3>(323) = 323 ^ ((323 & 0b111_000_000) >> 3) = 0b101_101_011 = 363

Every layout lowers to one `Expr` (``crd2idx``), so the concrete evaluator and the
bit-vector encoder see the same function.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from math import prod
from typing import TypeAlias

from verify.errors import SpecError
from verify.model.expr import BinOp, Const, Expr, Range, Var, add, compiled, mul, render, substitute

IntTuple: TypeAlias = int | tuple["IntTuple", ...]


def size(shape: IntTuple) -> int:
    """Number of coordinates of a (possibly nested) shape."""
    return shape if isinstance(shape, int) else prod(size(s) for s in shape)


def depth(t: IntTuple) -> int:
    return 0 if isinstance(t, int) else 1 + max((depth(s) for s in t), default=0)


def flatten(t: IntTuple) -> list[int]:
    return [t] if isinstance(t, int) else [x for s in t for x in flatten(s)]


def crd2idx(coord: Expr, shape: IntTuple, stride: IntTuple) -> Expr:
    """Offset of a 1-D coordinate within a mode, as CuTe/pycute compute it.

    Requires: `shape` and `stride` congruent. The integer is split
    colexicographically; the last sub-mode takes the remainder without a
    modulo, exactly like pycute's ``crd2idx(int, tuple, tuple)``.
    """
    if isinstance(shape, int):
        assert isinstance(stride, int), f"stride {stride} not congruent with shape {shape}"
        return mul(coord, Const(stride))
    assert isinstance(stride, tuple), f"stride {stride} not congruent with shape {shape}"
    result: Expr = Const(0)
    rest = coord
    for sub_shape, sub_stride in zip(shape[:-1], stride[:-1]):
        n = size(sub_shape)
        result = add(result, crd2idx(_mod(rest, n), sub_shape, sub_stride))
        rest = _div(rest, n)
    return add(result, crd2idx(rest, shape[-1], stride[-1]))


def _mod(e: Expr, n: int) -> Expr:
    return Const(0) if n == 1 else BinOp("%", e, Const(n))


def _div(e: Expr, n: int) -> Expr:
    return e if n == 1 else BinOp("/", e, Const(n))


_INDEX = "index"


class LayoutBase:
    """What every layout answers; each kind gives `mode_sizes`, `crd2idx` and `cosize`.

    A coordinate is one integer per top-level mode, each mode spanning `domain()`
    (from 0, or from a formula's own lower bounds)."""

    @property
    def mode_sizes(self) -> list[int]:
        raise NotImplementedError

    def crd2idx(self, coords: Sequence[Expr]) -> Expr:
        raise NotImplementedError

    def cosize(self) -> int | None:
        """1 + the largest offset, where a closed form gives it; None where only a
        search over the domain does (the engines' `footprint`)."""
        return None

    def domain(self) -> list[Range]:
        return [Range(0, n) for n in self.mode_sizes]

    def outer_swizzle(self) -> Swizzle | None:
        """The swizzle applied last to the offsets (`verify map` draws it), if any."""
        return None

    def size(self) -> int:
        return prod(self.mode_sizes)

    def idx2crd(self, index: Expr) -> list[Expr]:
        """Top-level coordinates of the CuTe 1-D index `index` (module `idx2crd`)."""
        return idx2crd(index, self.domain())

    def index_to_coords(self, index: int) -> tuple[int, ...]:
        """`idx2crd` on an integer in [0, size)."""
        return tuple(f({_INDEX: index}) for f in self._idx2crd_compiled)

    @cached_property
    def _idx2crd_compiled(self):
        return [compiled(c) for c in self.idx2crd(Var(_INDEX))]


@dataclass(frozen=True)
class CuteLayout(LayoutBase):
    shape: IntTuple
    stride: IntTuple

    @property
    def mode_sizes(self) -> list[int]:
        shape = self.shape if isinstance(self.shape, tuple) else (self.shape,)
        return [size(s) for s in shape]

    def cosize(self) -> int:
        """CuTe's cosize, L(size - 1) + 1: every stride is non-negative."""
        return 1 + sum((s - 1) * d for s, d in zip(flatten(self.shape), flatten(self.stride)))

    def crd2idx(self, coords: Sequence[Expr]) -> Expr:
        if len(coords) == 1:
            return crd2idx(coords[0], self.shape, self.stride)
        shape, stride = self.shape, self.stride
        if isinstance(shape, int) or len(coords) != len(shape):
            raise SpecError(
                f"layout {self} takes {len(self.mode_sizes)} coordinates "
                f"(or one 1-D index), found {len(coords)}"
            )
        assert isinstance(stride, tuple), f"stride {stride} not congruent with shape {shape}"
        terms = [crd2idx(c, s, d) for c, s, d in zip(coords, shape, stride)]
        total: Expr = Const(0)
        for t in terms:
            total = add(total, t)
        return total

    def __str__(self) -> str:
        return f"{fmt_tuple(self.shape)}:{fmt_tuple(self.stride)}"


def fmt_tuple(t: IntTuple) -> str:
    """CuTe's printed form of an integer tuple: (8,(2,4))."""
    return str(t) if isinstance(t, int) else "(" + ",".join(fmt_tuple(s) for s in t) + ")"


@dataclass(frozen=True)
class Swizzle(LayoutBase):
    """CuTe ``Swizzle<B, M, S>``: B mask bits, M kept low bits, shift S.

    As a layout it takes one integer over the span of the bits it reads and
    writes, a bijection onto that span (it repeats beyond)."""

    bits: int
    base: int
    shift: int

    def __post_init__(self):
        if self.bits < 0 or self.base < 0:
            raise SpecError(
                f"Swizzle<{self.bits},{self.base},{self.shift}>: expected B >= 0 and M >= 0"
            )
        if abs(self.shift) < self.bits:
            raise SpecError(
                f"Swizzle<{self.bits},{self.base},{self.shift}>: "
                f"expected |S| >= B so the two bit fields do not overlap, "
                f"found |S| = {abs(self.shift)} < B = {self.bits}"
            )

    @property
    def source_mask(self) -> int:
        """CuTe's ``yyy_msk``: the bits that are read."""
        return ((1 << self.bits) - 1) << (self.base + max(0, self.shift))

    @property
    def target_mask(self) -> int:
        """CuTe's ``zzz_msk``: the bits that are flipped."""
        return ((1 << self.bits) - 1) << (self.base - min(0, self.shift))

    def apply_expr(self, x: Expr) -> Expr:
        if self.bits == 0:
            return x
        picked = BinOp("&", x, Const(self.source_mask))
        moved = (
            BinOp(">>", picked, Const(self.shift))
            if self.shift >= 0
            else BinOp("<<", picked, Const(-self.shift))
        )
        return BinOp("^", x, moved)

    @property
    def mode_sizes(self) -> list[int]:
        return [1 << (self.source_mask | self.target_mask).bit_length()]

    def cosize(self) -> int:
        return self.size()

    def outer_swizzle(self) -> Swizzle:
        return self

    def crd2idx(self, coords: Sequence[Expr]) -> Expr:
        if len(coords) != 1:
            raise SpecError(f"{self} takes one integer, found {len(coords)} coordinates")
        return self.apply_expr(coords[0])

    def diagram(self) -> str:
        """ASCII picture of which offset bits are read (Y) and flipped (Z)."""
        top = max(self.source_mask, self.target_mask, 1).bit_length()
        cells = []
        for bit in reversed(range(top)):
            m = 1 << bit
            cells.append("Y" if self.source_mask & m else "Z" if self.target_mask & m else ".")
        header = " ".join(f"{b % 10}" for b in reversed(range(top)))
        return f"bit {header}\n    {' '.join(cells)}\n    (Y read, Z ^= Y)"

    def __str__(self) -> str:
        return f"Sw<{self.bits},{self.base},{self.shift}>"


@dataclass(frozen=True)
class Formula(LayoutBase):
    """A user's expression over named coordinates, e.g. ``64*r + (c ^ ((r & 7) << 3))``."""

    params: tuple[tuple[str, Range], ...]
    body: Expr

    @property
    def mode_sizes(self) -> list[int]:
        return [r.size for _, r in self.params]

    def domain(self) -> list[Range]:
        return [r for _, r in self.params]

    def crd2idx(self, coords: Sequence[Expr]) -> Expr:
        if len(coords) == 1 and len(self.params) > 1:  # a CuTe 1-D index
            coords = self.idx2crd(coords[0])
        if len(coords) != len(self.params):
            raise SpecError(
                f"formula layout takes {len(self.params)} coordinates, found {len(coords)}"
            )
        return substitute(self.body, {n: c for (n, _), c in zip(self.params, coords)})

    def __str__(self) -> str:
        ps = ", ".join(f"{n} in {r}" for n, r in self.params)
        return f"({ps}) -> {render(self.body)}"


def idx2crd(index: Expr, ranges: list[Range]) -> list[Expr]:
    """Coordinates of the 1-D index `index` over modes spanning `ranges`.

    CuTe's order: colexicographic, the first mode fastest. A mode whose range
    starts at ``lo`` gets ``lo + (index mod size)``: index 0 is the first
    coordinate of the domain, whatever its lower bound. The last mode takes
    the remainder, as in `crd2idx`. `LayoutBase.index_to_coords` is this map,
    compiled, on Python integers.
    """
    coords, rest = [], index
    for i, r in enumerate(ranges):
        last = i == len(ranges) - 1
        coords.append(add(rest if last else _mod(rest, r.size), Const(r.lo)))
        rest = _div(rest, r.size)
    return coords


@dataclass(frozen=True)
class Composed(LayoutBase):
    """CuTe's ComposedLayout ``outer o offset o inner``: outer(offset + inner(c))."""

    outer: Layout
    offset: int
    inner: Layout

    @property
    def mode_sizes(self) -> list[int]:
        return self.inner.mode_sizes

    def domain(self) -> list[Range]:
        return self.inner.domain()

    def crd2idx(self, coords: Sequence[Expr]) -> Expr:
        return self.outer.crd2idx([add(Const(self.offset), self.inner.crd2idx(coords))])

    def outer_swizzle(self) -> Swizzle | None:
        return self.outer if isinstance(self.outer, Swizzle) else None

    def __str__(self) -> str:
        mid = f" o {self.offset}" if self.offset else ""
        return f"{self.outer}{mid} o {self.inner}"


Layout: TypeAlias = CuteLayout | Swizzle | Formula | Composed


def coordinate_vars(layout: Layout, prefix: str = "m") -> list[tuple[str, Range]]:
    """One variable per top-level mode, spanning the whole domain of `layout`."""
    if isinstance(layout, Formula):
        return list(layout.params)
    if isinstance(layout, Composed):
        return coordinate_vars(layout.inner, prefix)
    return [(f"{prefix}{i}", r) for i, r in enumerate(layout.domain())]


def domain_shape(layout: Layout) -> IntTuple:
    """The shape of the coordinates a layout takes (its right-most CuTe shape)."""
    if isinstance(layout, Composed):
        return domain_shape(layout.inner)
    if isinstance(layout, CuteLayout):
        return layout.shape
    return tuple(layout.mode_sizes)


def offsets(layout: Layout) -> list[int]:
    """[L(0), L(1), ..., L(size-1)] in CuTe's 1-D (colexicographic) index order."""
    at = compiled(layout.crd2idx(layout.idx2crd(Var(_INDEX))))
    return [at({_INDEX: i}) for i in range(layout.size())]
