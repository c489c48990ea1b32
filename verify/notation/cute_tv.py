"""CuTe thread-value (TV) layouts of a TiledCopy, with its copy atom, as thread maps.

Overview
--------
``print(tiled_copy.get_layoutS_TV())`` (the shared-memory side of a load;
``get_layoutD_TV()`` of a store) prints a layout (thread, value) -> index into
the copy's tile ``Tiler_MN``, e.g. ``((_32,_4),_8):((_8,_256),_1)`` over a
(64, 16)... tile. Written after ``by`` with the atom as the instruction,

    access rd = SM75_U32x4_LDSM_N A by ((32,4),8):((8,256),1) tile (32, 32)

it becomes an access: thread t = lane + 32 * warp (threads are numbered as
threadIdx.x, warps of 32 consecutive threads), and the tile's index is split
colexicographically (CuTe's ``idx2crd``) into a coordinate of the tile, which is
repeated over the layout A (``zipped_divide`` by the tile: repeat s_k adds
``tile_k * s_k``). Without ``tile``, the tile is A's whole shape.

Which values one instruction moves
----------------------------------
``tile2thrfrg`` (cute/atom/copy_atom.hpp) divides the TV layout by the atom's
(threads, values): the first values of the value mode are one atom's, the
next the following atom's. On the shared-memory side every atom verify models
gives each thread one contiguous run of bits:

* ``SM75_U32x{1,2,4}_LDSM_N`` / ``SM75_U16x{2,4,8}_LDSM_T``
  (cute/atom/copy_traits_sm75.hpp): ``SrcLayout`` ``(32,128):(128,1)`` for .x4,
  ``((16,2),128):((128,0),1)`` for .x2 and ``((8,4),128):((128,0),1)`` for .x1:
  thread t supplies the 128-bit row t (the other threads repeat rows and
  their addresses are unused);
* ``SM90_U32x*_STSM_N`` / ``SM90_U16x*_STSM_T`` (cute/atom/copy_traits_sm90.hpp):
  ``DstLayout`` is the LDSM atom's ``SrcLayout``, the same rows;
* ``UniversalCopy<uintN_t>`` (cute/atom/copy_traits.hpp, ``ThrID`` 1 thread,
  N bits each): spell it as ``ld.shared`` / ``st.shared`` of N bits
  (``uint128_t`` is ``ld.shared.v4.b32``).

So an instruction moves K = (bytes per address) / (element bytes) values per
thread: values r*K .. r*K+K-1 of thread t, its address lane supplying the first;
the values must lie at consecutive offsets of A (CuTe refuses to partition
otherwise), which is checked over the whole tile.

The math
--------
coordinate(lane, warp, r, s) = idx2crd(TV(lane + 32 * warp, K * r), tile) + tile * s.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from verify.errors import Pos, SpecError
from verify.model.expr import Const, Range, Var, add, compiled, mul
from verify.model.instructions import Instruction
from verify.model.layout import CuteLayout, flatten, idx2crd
from verify.notation.threads import MAX_POINTS, element_offsets, layout_extents
from verify.spec.ast import LayoutDef

WARP = 32


def _size(shape) -> int:
    out = 1
    for n in flatten(shape):
        out *= n
    return out


@dataclass(frozen=True)
class CuteThreads:
    """A TV layout (thread, value) -> tile index, and the tile it indexes."""

    tv: CuteLayout
    tile: tuple[int, ...] | None
    pos: Pos

    @classmethod
    def read(cls, tv: CuteLayout, tile, pos: Pos) -> CuteThreads:
        if isinstance(tv.shape, int) or len(tv.shape) != 2:
            raise SpecError(f"a TV layout has two modes, (thread, value): found {tv}", pos)
        threads = _size(tv.shape[0])
        if threads % WARP:
            raise SpecError(
                f"TV layout {tv}: {threads} threads, expected whole warps of {WARP}", pos
            )
        if tile is not None:
            tile = (tile,) if isinstance(tile, int) else tile
            if any(not isinstance(n, int) or n < 1 for n in tile):
                raise SpecError(f"tile: expected flat positive extents, found {tile}", pos)
        return cls(tv, tile, pos)

    def coordinates(self, name: str, instr: Instruction, ldef: LayoutDef, elem_bytes: int):
        """(coordinates, loops) of the access (see the module doc)."""
        extents = layout_extents(ldef)
        tile = self.tile or extents
        repeats = self._repeats(tile, extents, ldef.name)
        per_thread = instr.bytes_per_address // elem_bytes
        assert isinstance(self.tv.shape, tuple), f"TV layout {self.tv}: (thread, value) modes"
        values = _size(self.tv.shape[1])
        if per_thread < 1 or instr.bytes_per_address % elem_bytes or values % per_thread:
            raise SpecError(
                f"{instr.name} moves {instr.bytes_per_address} bytes per thread: "
                f"expected a TV layout whose {values} values per thread come in "
                f"runs of {instr.bytes_per_address} bytes of {elem_bytes}-byte "
                "elements",
                self.pos,
            )
        top = self._cosize()
        if top > _size(tile):
            raise SpecError(
                f"TV layout {self.tv} reaches tile index {top - 1}: expected "
                f"below {_size(tile)}, the size of the tile {tile}",
                self.pos,
            )
        loops = [("r", values // per_thread), ("warp", _size(self.tv.shape[0]) // WARP)]
        loops += [(f"s{k}", n) for k, n in enumerate(repeats)]
        loops = [(v, n) for v, n in loops if n > 1]
        runs = [self._exprs(tile, per_thread, dict(loops), v) for v in range(per_thread)]
        self._check_runs(runs, dict(loops), instr, ldef, elem_bytes)
        return runs[0], [(v, Range(0, n)) for v, n in loops]

    def _cosize(self) -> int:
        """One past the largest tile index the TV layout reaches."""
        return 1 + sum((n - 1) * d for n, d in zip(flatten(self.tv.shape), flatten(self.tv.stride)))

    def _repeats(self, tile, extents, name: str) -> list[int]:
        if len(tile) != len(extents) or any(e % t for t, e in zip(tile, extents)):
            raise SpecError(
                f"tile {tuple(tile)}: expected extents dividing those of layout "
                f"'{name}', {tuple(extents)}",
                self.pos,
            )
        return [e // t for t, e in zip(tile, extents)]

    def _exprs(self, tile, per_thread: int, loops: dict, v: int):
        """The coordinate of value K*r + v of thread lane + 32*warp, tile repeat s."""
        thread = add(Var("lane"), mul(Const(WARP), Var("warp"))) if "warp" in loops else Var("lane")
        value = mul(Const(per_thread), Var("r")) if "r" in loops else Const(0)
        index = self.tv.crd2idx([thread, add(value, Const(v))])
        crd = idx2crd(index, [Range(0, n) for n in tile])
        return [
            add(c, mul(Const(t), Var(f"s{k}"))) if f"s{k}" in loops else c
            for k, (c, t) in enumerate(zip(crd, tile))
        ]

    def _check_runs(self, runs, loops: dict, instr: Instruction, ldef: LayoutDef, elem_bytes: int):
        """Each thread's K values of one instruction sit at consecutive offsets of the
        layout, as the atom's contiguous run of bits needs (checked for every lane,
        warp, instruction and tile repeat: a swizzle may break a run anywhere)."""
        offset = element_offsets(ldef, len(runs[0]), elem_bytes)
        fns = [[compiled(c) for c in coords] for coords in runs]
        names = sorted(loops)
        points = instr.address_lanes * len(runs)
        for n in loops.values():
            points *= n
        if points > MAX_POINTS:
            raise SpecError(
                f"{points} (thread, value) points: expected at most {MAX_POINTS}", self.pos
            )
        for values in itertools.product(*(range(loops[n]) for n in names)):
            env = dict(zip(names, values))
            for lane in range(instr.address_lanes):
                env["lane"] = lane
                got = [offset(tuple(f(env) for f in run)) for run in fns]
                bad = next((v for v, o in enumerate(got) if o != got[0] + v), None)
                if bad is not None:
                    raise SpecError(
                        f"{instr.name} moves {len(runs)} consecutive elements per thread: "
                        f"value {bad} of thread {lane + WARP * env.get('warp', 0)} "
                        f"(instruction r={env.get('r', 0)}) is at element {got[bad]} of "
                        f"layout '{ldef.name}', expected {got[0] + bad}",
                        self.pos,
                    )
