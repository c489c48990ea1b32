"""A layout's meaning: its coordinate domain and the offset of every coordinate.

Overview
--------
A `Layout` is read as CuTe reads ``outer_n o off_n o ... o outer_1 o off_1 o inner``:

* ``inner`` supplies the domain -- a pycute Layout (CuTe modes, lower bounds 0),
  or a table over named coordinate ranges (a formula ``F(r in 1..3, ...)``, a
  Triton encoding over ``d0, d1, ...``);
* each outer function takes the previous value as an integer: a swizzle, a CuTe
  layout called with a 1-D index (pycute's ``Layout.__call__``), or another whole
  layout called with its 1-D index;
* optionally a pointer swizzle ``Sw<..> o smem_ptr[Nb]`` that acts on absolute
  byte addresses, applied by the address builder (`oracle.facts`).

Worked example
--------------
``Sw<3,3,3> o (8,64):(64,1)``: inner (8,64):(64,1), outer Sw<3,3,3>. Coordinate
(5, 3) has 1-D index 5 + 8*3 = 29; inner offset 5*64 + 3 = 323; the swizzle
flips bits 3..5 with bits 6..8: 323 ^ (0b101 << 3) = 363.

The math
--------
Coordinates: one integer per top-level mode k, in [lo_k, lo_k + n_k), or one
integer for the whole layout (a 1-D index in [0, size)). The 1-D index is
colexicographic, ``i = sum_k (c_k - lo_k) * prod_{j<k} n_j``; the inverse gives
coordinate ``c_k = lo_k + (i / prod_{j<k} n_j) % n_k`` (the lower bounds count).
`table` holds the element offset of every 1-D index, computed once per layout.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cached_property
from math import prod

import numpy as np

from oracle import cute
from oracle.errors import OracleRefusal
from oracle.formulas import narrow, scaled

Outer = tuple[int, Callable[[np.ndarray], np.ndarray]]


class _Limit:
    """The largest domain enumerated: points of a layout, lane evaluations of an
    access or of an `equivalent` check. Past it the oracle refuses."""

    value = 2_000_000


LIMIT = _Limit()


@dataclass(frozen=True)
class PointerSwizzle:
    """``Sw<B,M,S> o smem_ptr[Nb]``: the swizzle applies to absolute byte addresses."""

    params: tuple[int, int, int]
    element_bytes: int

    @cached_property
    def apply(self):
        return cute.swizzle(*self.params)

    @property
    def touched_bits(self) -> int:
        return cute.swizzle_bits_touched(*self.params)


@dataclass(frozen=True)
class Inner:
    """The domain and the first offsets: a pycute Layout, or a table over ranges."""

    lows: tuple[int, ...]
    sizes: tuple[int, ...]
    cute_layout: object = None  # pycute.Layout, or None for a table
    values: np.ndarray | None = field(default=None, compare=False)
    what: str = ""

    @staticmethod
    def of_cute(layout) -> Inner:
        modes = cute.top_modes(layout)
        return Inner((0,) * len(modes), tuple(modes), layout, what=str(layout))

    @property
    def size(self) -> int:
        return prod(self.sizes)

    def at_index(self, index: np.ndarray) -> np.ndarray:
        """Offsets at 1-D indices; a CuTe layout extrapolates past its size as CuTe does."""
        if self.cute_layout is not None:
            return cute.offsets(self.cute_layout, index)
        if np.max(index) >= self.size:
            raise OracleRefusal(
                f"{self.what} is applied to index {int(np.max(index))}, past its size {self.size}"
            )
        assert self.values is not None, f"{self.what}: an Inner is a CuTe layout or a table"
        return self.values[narrow(index)]


@dataclass(frozen=True)
class Layout:
    """A layout read from a spec (see module doc)."""

    inner: Inner
    outers: tuple[Outer, ...] = ()
    pointer: PointerSwizzle | None = None
    required_align: int = 1  # bytes every buffer stage must be aligned to
    named_bytes: int | None = None  # element size the notation names (nvmma)

    @property
    def lows(self) -> tuple[int, ...]:
        return self.inner.lows

    @property
    def sizes(self) -> tuple[int, ...]:
        return self.inner.sizes

    @property
    def size(self) -> int:
        return self.inner.size

    @property
    def is_plain_cute(self) -> bool:
        return self.inner.cute_layout is not None and not self.outers and self.pointer is None

    def apply_index(self, index: np.ndarray) -> np.ndarray:
        """Element offsets at 1-D indices (before any pointer swizzle)."""
        if self.__dict__.get("table") is not None and np.max(index) < self.size:
            return self.table[narrow(index)]
        value = self.inner.at_index(index)
        for offset, fn in self.outers:
            value = fn(value + offset if offset else value)
        return value

    @cached_property
    def table(self) -> np.ndarray:
        """Element offset of every 1-D index, in CuTe's colexicographic order."""
        if self.size > LIMIT.value:
            raise OracleRefusal(f"a layout of {self.size} points is beyond the limit {LIMIT.value}")
        return narrow(np.asarray(self.apply_index(np.arange(self.size, dtype=np.int64))))

    def then(self, offset: int, fn) -> Layout:
        """``fn o offset o self``: a swizzle or a CuTe layout applied to this one's value."""
        self._refuse_if_pointer()
        return replace(self, outers=self.outers + ((offset, fn),))

    def under(self, offset: int, outer: Layout) -> Layout:
        """``outer o offset o self``, outer a whole layout called with its 1-D index; a
        pointer swizzle of `outer` stays outermost."""
        self._refuse_if_pointer()
        return Layout(
            self.inner,
            self.outers + ((offset, outer.apply_index),),
            outer.pointer,
            max(self.required_align, outer.required_align),
            outer.named_bytes or self.named_bytes,
        )

    def _refuse_if_pointer(self):
        if self.pointer is not None:
            raise OracleRefusal(
                "a layout that swizzles byte addresses (smem_ptr, a GMMA "
                "atom, a TMA box) must be the outermost term"
            )

    def index_of(self, coords: list[np.ndarray], at: str) -> tuple[np.ndarray, np.ndarray]:
        """(1-D index, inside-domain mask) of coordinates; see module doc."""
        if len(coords) == 1 and len(self.sizes) > 1:
            i = coords[0]
            return i, (i >= 0) & (i < self.size)
        if len(coords) != len(self.sizes):
            raise OracleRefusal(
                f"{at}: the layout takes {len(self.sizes)} coordinates (or one "
                f"1-D index), found {len(coords)}"
            )
        index: int | np.ndarray = 0
        inside: bool | np.ndarray = True
        scale = 1
        for c, lo, n in zip(coords, self.lows, self.sizes):
            inside = inside & (c >= lo) & (c < lo + n)
            index, scale = index + (c - lo) * scale, scale * n
        return np.asarray(index), np.asarray(inside)

    def elements_at(self, coords: list[np.ndarray], at: str) -> np.ndarray:
        """Element offsets of coordinates that must lie inside the domain."""
        index, inside = self.index_of(coords, at)
        if not np.all(inside):
            raise OracleRefusal(
                f"{at}: a coordinate lies outside the layout's domain {self.describe_domain()}"
            )
        return self.table[narrow(np.where(inside, index, 0))]

    def value_at(self, args: list[np.ndarray], at: str) -> np.ndarray:
        """The layout's value in an expression: elements, or for a pointer swizzle its
        byte offset at base 0."""
        elements = self.elements_at(args, at)
        if self.pointer is None:
            return elements
        return self.pointer.apply(scaled(elements, self.pointer.element_bytes))

    def describe_domain(self) -> str:
        return ", ".join(f"{lo}..{lo + n}" for lo, n in zip(self.lows, self.sizes))


def cute_outer(layout) -> Callable[[np.ndarray], np.ndarray]:
    """A CuTe layout as an outer term: called with the inner value as a 1-D index."""
    return lambda value: cute.offsets(layout, value)
