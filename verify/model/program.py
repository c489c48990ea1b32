"""A parsed spec resolved into address functions: the input of every property.

Variables that every address depends on:

* ``lane``            -- the lane supplying an address (0 .. address lanes);
* the access's loop variables (``q``, ``warp``, ``k`` ...) with their ranges;
* ``$stage``          -- the pipeline stage, 0 .. stages;
* ``$base``           -- the buffer base in units of its alignment: ``align *
                         $base`` is an aligned byte address.

A proof quantifies over all of them; a counterexample gives each a value.

Bases: one period stands for the whole window
---------------------------------------------
Every property verify checks (bounds, alignment, overlap, banks, distinct words)
is unchanged when the same multiple of 2^t is added to every address, for 2^t a
multiple of 128 (the bank pattern: word bits 0..4 are address bits 2..6) that
lies above every bit a pointer swizzle reads or writes. Adding K * 2^t to the
base adds exactly K * 2^t to every address: the swizzle only moves bits below
2^t, and bits below 2^t do not change. So the aligned bases below
``base_period(layout)`` reach every behaviour of every aligned base of the 32-bit
shared window, and `$base` ranges over them alone. This keeps bit-vectors
narrow (a full-window base forces 34-bit terms, and division or remainder by a
non-power of two at that width made some queries 20x slower).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property
from math import gcd

from verify.errors import Pos, SpecError
from verify.model.bank import BANKS, LINE_BYTES, SHARED_WINDOW, WORD_BYTES
from verify.model.dtypes import DTYPE_BYTES
from verify.model.expr import Const, Expr, Range, Var, add, bounds, compiled, mul
from verify.model.instructions import Instruction, parse_instruction
from verify.model.layout import coordinate_vars
from verify.spec.ast import AccessDef, LayoutDef, MappedAccessDef, Spec

BASE, STAGE, LANE = "$base", "$stage", "lane"
# A cp.async.cg's global base, in bytes, in a copy figure's witness (`Program.global_bases`).
GBASE = "$gbase"


class _Latest:
    """The accesses resolved last, of one spec, by the id of each definition:
    `verify.spec.resolve` resolves every access of a spec for its errors, then
    the runner's own Program resolves them again. Only the latest spec's are
    kept (each entry holds its definition, so its id is not reused meanwhile)."""

    def __init__(self):
        self.spec: Spec | None = None
        self.accesses: dict[int, tuple[tuple, Access]] = {}


_LATEST = _Latest()


def base_period(ldef: LayoutDef) -> int:
    """2^t such that base and base + K*2^t behave identically (see module doc)."""
    top = BANKS * WORD_BYTES  # the bank pattern's period
    if ldef.pointer_swizzle is not None:
        masks = ldef.pointer_swizzle.source_mask | ldef.pointer_swizzle.target_mask
        top = max(top, 1 << masks.bit_length())
    return top


@dataclass(frozen=True)
class Access:
    """One instruction touching a layout: per-lane byte addresses over instances."""

    definition: AccessDef
    instruction: Instruction
    layout: LayoutDef
    address: Expr  # byte address, over lane, loops, $stage, $base
    ranges: dict[str, Range]  # every variable of `address`
    source: Access | None = None  # cp.async: the global side (`Program.copy_source`)

    @property
    def name(self) -> str:
        return self.definition.name

    def lane_addresses(self, values: dict[str, int]) -> list[int]:
        """Every address lane's byte address at one instance, by plain evaluation."""
        env = dict(values)
        out = []
        for lane in range(self.instruction.address_lanes):
            env[LANE] = lane
            out.append(self._address_fn(env))
        return out

    def lane_coordinates(self, values: dict[str, int]) -> list[tuple[int, ...]]:
        """Every address lane's coordinate at one instance, by plain evaluation."""
        env = dict(values)
        out = []
        for lane in range(self.instruction.address_lanes):
            env[LANE] = lane
            out.append(tuple(f(env) for f in self._coordinate_fns))
        return out

    @cached_property
    def _address_fn(self):
        return compiled(self.address)

    @cached_property
    def _coordinate_fns(self):
        return [compiled(c) for c in self.definition.coords]

    @property
    def instance_vars(self) -> list[str]:
        """Everything except the lane: the values shared by all lanes of one execution."""
        return [v for v in self.ranges if v != LANE]

    @cached_property
    def coordinate_ranges(self) -> list[Range]:
        if len(self.definition.coords) == 1 and len(coordinate_vars(self.layout.function)) > 1:
            return [Range(0, self.layout.function.size())]
        return [r for _, r in coordinate_vars(self.layout.function)]


class Program:
    """Name resolution and address construction for one spec."""

    def __init__(self, spec: Spec):
        self.spec = spec
        self._accesses: dict[str, Access] = {}
        self._validate_buffer()

    @property
    def file(self) -> str:
        return self.spec.file

    def elem_bytes(self, where: Pos, ldef: LayoutDef | None = None) -> int:
        dtype = self.spec.dtype
        if dtype is None and ldef is not None and ldef.pointer_bits:
            return ldef.pointer_bits // 8
        if dtype is None:
            raise SpecError(
                "expected a 'dtype' statement (f16, bf16, f32, tf32, i8, f8, f64, "
                "b8..b64) before addresses can be computed",
                where,
            )
        if dtype not in DTYPE_BYTES:
            raise SpecError(
                f"unknown dtype '{dtype}': expected one of {', '.join(sorted(DTYPE_BYTES))}",
                self.spec.dtype_pos,
            )
        # The parser has refused every layout whose notation names another element width.
        return DTYPE_BYTES[dtype]

    def _validate_buffer(self):
        buf = self.spec.buffer
        if buf.align <= 0 or buf.align & (buf.align - 1):
            raise SpecError(f"buffer align: expected a power of two, found {buf.align}", buf.pos)
        if buf.stages < 1:
            raise SpecError(f"buffer stages: expected at least 1, found {buf.stages}", buf.pos)
        if buf.stages > 1 and buf.stage_bytes <= 0:
            raise SpecError(
                "buffer with several stages: expected 'stage_bytes N' "
                "(stage k starts at base + k*N)",
                buf.pos,
            )

    def layout(self, name: str, where: Pos | None = None) -> LayoutDef:
        if name not in self.spec.layouts:
            raise SpecError(
                f"unknown layout '{name}': expected one of "
                f"{sorted(self.spec.layouts) or 'the layouts defined in the spec'}",
                where,
            )
        return self.spec.layouts[name]

    def access(self, name: str, where: Pos | None = None) -> Access:
        if name not in self.spec.accesses:
            raise SpecError(
                f"unknown access '{name}': expected one of "
                f"{sorted(self.spec.accesses) or 'the accesses defined in the spec'}",
                where,
            )
        if name not in self._accesses:  # resolved once: a thread map takes ms
            self._accesses[name] = self._resolved(self.spec.accesses[name])
        return self._accesses[name]

    def _resolved(self, adef: AccessDef) -> Access:
        """`_resolve_access`, or the Access `_LATEST` holds for `adef`: found from
        the very same objects (`is`), which is all a resolution reads, it is the
        Access the resolution would give again. A failure is not kept: it is found
        again, with its error."""
        reads = self._resolution_reads(adef)
        if _LATEST.spec is not self.spec:
            _LATEST.spec, _LATEST.accesses = self.spec, {}
        kept = _LATEST.accesses.get(id(adef))
        if kept is not None and all(a is b for a, b in zip(kept[0], reads, strict=True)):
            return kept[1]
        access = self._resolve_access(adef)
        _LATEST.accesses[id(adef)] = (reads, access)
        return access

    def _resolution_reads(self, adef: AccessDef) -> tuple:
        """Everything `_resolve_access` reads of a successful resolution: the
        definition, its layouts, the element type and the buffer and global tile's
        alignment (positions only place errors, and errors are not kept)."""
        spec = self.spec
        source = adef.source and spec.layouts.get(adef.source.layout)
        return (
            adef,
            spec.layouts.get(adef.layout),
            source,
            spec.dtype,
            spec.buffer,
            spec.global_align,
        )

    def buffer_ranges(self, ldef: LayoutDef) -> dict[str, Range]:
        """Stages, and the aligned bases of one period of `ldef` (see module doc)."""
        return {STAGE: Range(0, self.spec.buffer.stages), BASE: self.base_range(ldef)}

    def base_range(self, ldef: LayoutDef, modulus: int = 1) -> Range:
        """$base values covering every behaviour; a question about addresses modulo a
        power of two `modulus` above the period (``aligned 1024``) needs that many."""
        period = max(base_period(ldef), modulus)
        return Range(0, max(1, period // self.spec.buffer.align))

    def stage_start(self) -> Expr:
        """Byte address where stage `$stage` of the buffer begins."""
        buf = self.spec.buffer
        return add(mul(Const(buf.align), Var(BASE)), mul(Const(buf.stage_bytes), Var(STAGE)))

    def address(self, ldef: LayoutDef, coords: list[Expr], where: Pos) -> Expr:
        """Byte address of `coords` in `ldef` for symbolic base and stage."""
        start = self.stage_start()
        eb = self.elem_bytes(where, ldef)
        absolute = add(start, mul(Const(eb), ldef.function.crd2idx(coords)))
        if ldef.pointer_swizzle is None:
            return absolute
        return ldef.pointer_swizzle.apply_expr(absolute)

    def check_window(self, address: Expr, ranges: dict[str, Range], where: Pos):
        """Byte addresses must stay inside the 32-bit shared window: beyond it the
        hardware wraps, so two elements 2^32 bytes apart would share a slot that
        verify's unbounded arithmetic keeps apart."""
        top = bounds(address, ranges)[1]
        if top >= SHARED_WINDOW:
            raise SpecError(
                f"byte addresses reach {top}: expected them below 2^32, the "
                "shared-memory window (is a stride or an extent too large?)",
                where,
            )

    def _resolve_access(self, adef: AccessDef) -> Access:
        try:
            instr = parse_instruction(adef.instr_text)
        except SpecError as e:
            raise SpecError(e.message, adef.instr_pos) from None
        ldef = self.layout(adef.layout, adef.layout_pos)
        if isinstance(adef, MappedAccessDef):  # ``... by THREAD_MAP``: derive coordinates
            adef = adef.expand(instr, ldef, self.elem_bytes(adef.pos, ldef))
        ranges = {
            LANE: Range(0, instr.address_lanes),
            **dict(adef.loops),
            **self.buffer_ranges(ldef),
        }
        try:
            address = self.address(ldef, list(adef.coords), adef.pos)
        except SpecError as e:
            raise SpecError(e.message, e.pos if e.pos.line else adef.layout_pos) from None
        for c in adef.coords:
            bounds(c, ranges)  # names unknown variables and negative terms early
        self.check_window(address, ranges, adef.pos)
        access = Access(adef, instr, ldef, address, ranges)
        if instr.is_copy or adef.source is not None:
            return replace(access, source=self.copy_source(access))
        return access

    def copy_source(self, access: Access) -> Access:
        """A cp.async's global side, as an access of the global tile at base 0; the
        bases that stand for every aligned global base are `global_bases`.

        Alignment: a base that is a multiple of `global align N` keeps each source's
        alignment modulo the copy size when N is a multiple of that size, so base 0
        decides the implicit ``aligned`` and ``in_bounds`` checks of the source, and a
        smaller N is refused.
        """
        adef, instr = access.definition, access.instruction
        if adef.source is None:
            raise SpecError(
                f"{instr.name} copies from global memory and its cost depends on "
                "the sources: expected 'from G(coords)' after the destination, G a "
                "layout of the global tile",
                adef.instr_pos,
            )
        if not instr.is_copy:
            raise SpecError(
                f"'from' names a global source: only cp.async has one, not {instr.name}",
                adef.source.pos,
            )
        align = self.spec.global_align
        if align <= 0 or align % instr.bytes_per_address:
            raise SpecError(
                f"{instr.name} copies {instr.bytes_per_address}-byte aligned global "
                f"memory: expected 'global align N' with N a multiple of "
                f"{instr.bytes_per_address}, found {align}",
                self.spec.global_pos if self.spec.global_pos.line else adef.instr_pos,
            )
        gdef = self.layout(adef.source.layout, adef.source.pos)
        if gdef.pointer_swizzle is not None:
            raise SpecError(
                f"layout '{gdef.name}' swizzles shared-memory addresses: a global "
                "tile's layout maps coordinates to element offsets",
                adef.source.pos,
            )
        coords = list(adef.source.coords)
        for c in coords:
            bounds(c, access.ranges)
        address = mul(Const(self.elem_bytes(adef.source.pos, gdef)), gdef.function.crd2idx(coords))
        definition = replace(
            adef, layout=gdef.name, coords=tuple(coords), source=None, layout_pos=adef.source.pos
        )
        return Access(definition, instr, gdef, address, access.ranges)

    def global_bases(self, access: Access) -> range:
        """The global bases (bytes) a copy's cost is evaluated at, standing for every
        multiple of `global align N`.

        .ca (rule C) and bound G: a figure depends on a source only through its bank,
        (address / 4) mod 32, for global addresses too. Moving every source by the
        same number of words rotates the source banks, which leaves rule C's
        out(a) + in(b) - both(a, b) and bound G unchanged: base 0 stands for all.
        .cg (rule S, `copy_rule_s`): the cost also depends on which sources share a 128-byte global
        line and on each source's 16-byte chunk in its line, both unchanged when every
        source moves by a multiple of 128 bytes but not by less. So the base matters
        modulo 128: the multiples of N reach the residues that are multiples of
        gcd(N, 128), and each of those is a base here (8 for the default N = 16,
        only 0 when N is a multiple of 128).
        """
        if not self.copy_rule_s(access):
            return range(0, 1)
        return range(0, LINE_BYTES, gcd(self.spec.global_align, LINE_BYTES))

    def copy_rule_s(self, access: Access) -> bool:
        """A .cg copy gets rule S, unless its sources are known only modulo 128 bytes
        (`Spec.sources_modulo_128`): then bound G, which reads no source."""
        return access.instruction.cache == "cg" and not self.spec.sources_modulo_128
