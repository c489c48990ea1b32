"""What a parsed spec says, before names are resolved into address functions."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Protocol

from verify.errors import Pos
from verify.model.expr import Const, Expr, Range, mul
from verify.model.layout import Layout, Swizzle

if TYPE_CHECKING:
    from verify.model.instructions import Instruction


@dataclass(frozen=True)
class LayoutDef:
    """A named layout.

    The byte address of coordinate c, for a buffer at `base` and stage k, is
    ``base + k*stage_bytes + elem_bytes * function(c)``; with a pointer swizzle
    (CuTe's ``Sw<..> o smem_ptr[Nb] o L``) the swizzle is applied to that whole
    absolute byte address, as CuTe's swizzled smem pointers do.
    """

    name: str
    function: Layout
    pos: Pos
    pointer_swizzle: Swizzle | None = None
    pointer_bits: int | None = None
    required_align: int = 1  # bytes the buffer must be aligned to (TMA, wgmma, nvmma)

    def value(self, coords: Sequence[Expr]) -> Expr:
        """The layout's own offset: elements, or bytes at base 0 for a pointer swizzle."""
        value = self.function.crd2idx(coords)
        if self.pointer_swizzle is None:
            return value
        assert self.pointer_bits is not None, "a pointer swizzle comes with its pointer width"
        return self.pointer_swizzle.apply_expr(mul(Const(self.pointer_bits // 8), value))


@dataclass(frozen=True)
class Buffer:
    align: int = 16
    stages: int = 1
    stage_bytes: int = 0
    pos: Pos = Pos()


@dataclass(frozen=True)
class AccessDef:
    """``access NAME = INSTR LAYOUT(coords) for loop in lo..hi, ...``"""

    name: str
    instr_text: str
    layout: str
    coords: tuple[Expr, ...]
    loops: tuple[tuple[str, Range], ...]
    pos: Pos
    instr_pos: Pos = Pos()
    layout_pos: Pos = Pos()
    weight: int = 1  # how much its wavefronts count in `verify synth`
    source: SourceDef | None = None  # cp.async's ``from G(coords)``


@dataclass(frozen=True)
class SourceDef:
    """``from G(coords)``: where in the global tile G each lane of a cp.async reads."""

    layout: str
    coords: tuple[Expr, ...]
    pos: Pos


@dataclass(frozen=True)
class CheckDef:
    """``check PROPERTY ... [expect proved|refuted]``.

    kind is one of: bijective, aligned, conflict_free, max_ways, wavefronts,
    equivalent_layouts, equivalent_exprs. `target` names the layout or access.
    """

    kind: str
    pos: Pos
    target: str = ""
    second: str = ""
    bound: int = 0
    exact: bool = False  # "max_ways == k" rather than "<= k"
    lhs: Expr | None = None
    rhs: Expr | None = None
    loops: tuple[tuple[str, Range], ...] = ()
    expect: str | None = None
    text: str = ""  # the property as written in the spec


@dataclass(frozen=True)
class UnknownLayout:
    """``layout NAME = ?(R, C)``: an R x C tile whose layout `verify synth` finds.

    Its coordinates are (r, c) with c the contiguous one: a lane's vector holds
    (r, c), (r, c+1), ... The spec's `layouts` holds a row-major stand-in so that
    names resolve; `verify SPEC` refuses to check it (`verify.engines.runner.run_spec`).
    """

    name: str
    rows: int
    cols: int
    pos: Pos


@dataclass
class Spec:
    file: str
    dtype: str | None = None
    dtype_pos: Pos = Pos()
    buffer: Buffer = field(default_factory=Buffer)
    global_align: int = 16  # ``global align N``: the base of cp.async's global tile
    global_pos: Pos = Pos()
    # The 'from G(...)' addresses are known only modulo 128 bytes, term by term (verify
    # ttgir's traced sources): right for banks (rule C, bound G), not for the 128-byte
    # lines rule S reads, so a .cg copy then gets bound G (`Program.copy_rule_s`).
    sources_modulo_128: bool = False
    layouts: dict[str, LayoutDef] = field(default_factory=dict)
    accesses: dict[str, AccessDef] = field(default_factory=dict)
    checks: list[CheckDef] = field(default_factory=list)
    unknown_layouts: dict[str, UnknownLayout] = field(default_factory=dict)


class ThreadMap(Protocol):
    """What ``by THREAD_MAP`` names: a Triton distributed layout or a CuTe TV layout."""

    def coordinates(
        self, name: str, instr: Instruction, ldef: LayoutDef, elem_bytes: int
    ) -> tuple[Sequence[Expr], Sequence[tuple[str, Range]]]: ...


@dataclass(frozen=True)
class MappedAccessDef(AccessDef):
    """An access written ``... LAYOUT by THREAD_MAP``: no coordinates or loops of
    its own until `expand` derives them from the thread map."""

    threads: ThreadMap | None = None

    def expand(self, instr: Instruction, ldef: LayoutDef, elem_bytes: int) -> AccessDef:
        """The plain access the thread map gives for `instr` on `ldef`."""
        assert self.threads is not None, f"{self.name}: the parser gives it its thread map"
        coords, loops = self.threads.coordinates(self.name, instr, ldef, elem_bytes)
        return replace(self, coords=tuple(coords), loops=tuple(loops))
